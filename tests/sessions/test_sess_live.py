"""The live API (create/append/end without files), delete, prune and stats."""

from __future__ import annotations

import json

import pytest
from sess_helpers import matching_ids, text_index_problems

from hermes_store.sessions import SessionIndex, SessionNotFound, index_paths, parse_age

DAY = 86400.0
_fts_ids = matching_ids



@pytest.fixture
def store(engine_store):
    """Every test of this module runs on each storage engine."""
    return engine_store

def test_create_append_end_and_search(store):
    index = SessionIndex(store)
    sid = index.create_session(source="telegram", model="hermes-4", title="trip plan",
                               workspace="/home/u", meta={"chat_id": 42})
    assert len(sid.split("_")) == 3  # YYYYMMDD_HHMMSS_hex
    first = index.append_message(sid, "user", "book a ferry to Naxos", timestamp=1000.0)
    index.append_message(sid, "assistant", "", tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "web", "arguments": "{}"}}])
    index.append_message(sid, "tool", "ferry leaves Piraeus 07:25", tool_name="web", tool_call_id="c1")
    index.append_message(sid, "assistant", [{"type": "text", "text": "Booked the 07:25 ferry"}])
    index.end_session(sid, end_reason="user_exit")
    session = index.get_session(sid)
    assert session["origin_format"] == "live" and session["source"] == "telegram"
    assert session["message_count"] == 4 and session["ended_at"] is not None
    assert session["meta"] == {"chat_id": 42, "end_reason": "user_exit"}
    msgs = index.get_messages(sid)
    assert [m["seq"] for m in msgs] == [0, 1, 2, 3]
    assert json.loads(msgs[1]["tool_calls"])[0]["id"] == "c1"
    assert msgs[3]["content"] == "Booked the 07:25 ferry"
    assert _fts_ids(store, "naxos") == [first]
    assert len(_fts_ids(store, "ferry")) == 3


def test_live_errors(store):
    index = SessionIndex(store)
    with pytest.raises(SessionNotFound):
        index.append_message("nope", "user", "x")
    with pytest.raises(SessionNotFound):
        index.end_session("nope")
    sid = index.create_session("fixed-id")
    with pytest.raises(ValueError):
        index.create_session("fixed-id")
    with pytest.raises(ValueError):
        index.append_message(sid, "", "x")
    index.append_message(sid, "user", "nul\x00 and \ud800 surrogate")
    assert index.get_messages(sid)[0]["content"] == "nul and \ufffd surrogate"


def test_live_cjk_projection(store):
    index = SessionIndex(store)
    sid = index.create_session()
    mid = index.append_message(sid, "user", "请帮我修改youer服务端的配置")
    assert _fts_ids(store, "服务") == [mid]
    assert _fts_ids(store, "服务端") == [mid]
    assert _fts_ids(store, "youer服务端") == [mid]


def test_index_paths_accepts_home_and_path(home, fixtures):
    summary = index_paths(home, fixtures / "openai")
    assert set(summary) == {"files", "sessions_added", "messages_added", "skipped", "errors"}
    assert summary["messages_added"] == 8
    assert index_paths(home.db_path, [fixtures / "openai"])["skipped"] == 8


def test_delete_keeps_fts_consistent_and_reparents(store):
    index = SessionIndex(store)
    root = index.create_session("root")
    middle = index.create_session("middle", parent_session_id=root)
    leaf = index.create_session("leaf", parent_session_id=middle)
    for sid in (root, middle, leaf):
        index.append_message(sid, "user", f"unicorn {sid}")
    assert index.delete_session(middle) == 1
    assert index.get_session(middle) is None
    assert index.get_session(leaf)["parent_session_id"] == root
    assert len(_fts_ids(store, "unicorn")) == 2
    assert text_index_problems(store) == []
    with pytest.raises(SessionNotFound):
        index.delete_session(middle)


def test_prune_is_lineage_aware(store):
    index = SessionIndex(store)
    now = 1_800_000_000.0
    old = now - 100 * DAY
    # lineage A: all old and ended -> pruned
    a1 = index.create_session("a1", started_at=old)
    a2 = index.create_session("a2", started_at=old, parent_session_id=a1)
    # lineage B: old root with a recent child -> kept whole
    b1 = index.create_session("b1", started_at=old)
    b2 = index.create_session("b2", started_at=now - DAY, parent_session_id=b1)
    # C: old but never ended (still live) -> kept
    c1 = index.create_session("c1", started_at=old)
    for sid, ts in ((a1, old), (a2, old + 60), (b1, old), (b2, now - DAY), (c1, old)):
        index.append_message(sid, "user", f"kiwi {sid}", timestamp=ts)
    for sid, ts in ((a1, old + 10), (a2, old + 100), (b1, old + 10), (b2, now - DAY + 10)):
        index.end_session(sid, ended_at=ts)
    assert sorted(index.prune(30 * DAY, dry_run=True, now=now)) == ["a1", "a2"]
    assert index.stats()["sessions"] == 5
    assert sorted(index.prune(30 * DAY, now=now)) == ["a1", "a2"]
    assert sorted(s["id"] for s in index.list_sessions(limit=None)) == ["b1", "b2", "c1"]
    assert len(_fts_ids(store, "kiwi")) == 3
    assert text_index_problems(store) == []


@pytest.mark.parametrize("text, seconds", [
    ("30s", 30), ("15m", 900), ("5h", 18000), ("2d", 172800), ("1w", 604800), ("3", 259200),
])
def test_parse_age(text, seconds):
    assert parse_age(text) == seconds


def test_parse_age_iso_and_invalid():
    assert parse_age("2026-01-01T00:00:00Z", now=1767225600 + 3600) == 3600
    with pytest.raises(ValueError, match="invalid age"):
        parse_age("yesterday-ish")


def test_stats(store, fixtures):
    index_paths(store, [fixtures / "openai", fixtures / "codex"])
    data = SessionIndex(store).stats()
    assert data["sessions"] == 5 and data["messages"] == 13
    assert data["per_source"]["codex"] == {"sessions": 1, "messages": 5}
    assert data["per_source"]["cli"] == {"sessions": 4, "messages": 8}
    assert data["db_bytes"] > 0 and data["index_bytes"] > 0
