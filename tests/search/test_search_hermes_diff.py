"""Regressions found by running Hermes' session_search tool (tools/session_search_tool.py) on a
state.db written by Hermes' own SessionDB, side by side with ours on its `sessions index` import.

The expected shapes quote the upstream behaviour; no upstream code is imported.
"""

from __future__ import annotations

import json

import pytest

from hermes_store.home import Home
from hermes_store.tools import handle_tool_call
from tests.search.conftest import T0, add_session


@pytest.fixture
def store(db):
    add_session(db, "alpha", [("user", "we fixed the postgres vacuum issue"), ("assistant", "ok")], start=T0)
    return db


def call(home: Home, args: dict) -> dict:
    return json.loads(handle_tool_call("session_search", args, home=home))


NO_MATCH = ("No matching sessions found. FTS5 ANDs all terms by default — broaden with OR "
            "(`alpha OR beta`), exact-match with quoted phrases, exclude with NOT, or prefix-match "
            "with `deploy*`.")


def test_discover_without_any_hit_has_hermes_keys_only(home, store):
    # Hermes _discover (zons 03d70b32), no FTS hit and no title match: _discover_payload with
    # the FTS5 hint as message -- no sessions_searched and no link_hint key.
    out = call(home, {"query": "zzzqqqnothing"})
    assert out == {"success": True, "mode": "discover", "query": "zzzqqqnothing", "detail": "adaptive",
                   "results": [], "count": 0, "message": NO_MATCH}


def test_discover_on_home_without_database_has_the_same_shape(home):
    out = call(home, {"query": "anything"})
    assert "sessions_searched" not in out and out["message"] == NO_MATCH


def test_discover_with_hits_keeps_sessions_searched_and_the_link_hint(home, store):
    out = call(home, {"query": "postgres"})
    assert out["count"] >= 1 and out["sessions_searched"] == out["count"]
    assert "message" not in out
    assert out["link_hint"] == (
        "When referring the user to a session, write its `link` value verbatim inline mid-sentence "
        "(it renders as a titled link) — never as markdown, in backticks, on its own line, or next "
        "to the title/id/date. To read more around a compact result, scroll: "
        "session_search(session_id=..., around_message_id=match_message_id).")
    assert list(out)[:7] == ["success", "mode", "query", "detail", "results", "count", "sessions_searched"]


def test_browse_last_active_is_the_newest_message_not_ended_at(home, db):
    # Hermes list_sessions_rich: last_active = COALESCE(MAX(messages.timestamp), started_at);
    # ended_at plays no part (a session closed long after its last message keeps that time).
    add_session(db, "closed", [("user", "hello"), ("assistant", "hi")], start=T0, step=60.0,
                ended_at=T0 + 5000)
    add_session(db, "silent", [], start=T0 + 100)
    out = call(home, {})
    by_id = {r["session_id"]: r for r in out["results"]}
    assert by_id["closed"]["last_active"] == T0 + 60.0
    assert by_id["silent"]["last_active"] == T0 + 100
    assert [r["session_id"] for r in out["results"]] == ["silent", "closed"]


def test_default_profile_link_reads_the_root_home(home, db):
    # Hermes: a session_id "default/<id>" means profile "default", which is the root home
    # (profiles.get_profile_dir("default") -> the default HERMES_HOME), so the read succeeds.
    add_session(db, "s1", [("user", "how do I deploy"), ("assistant", "with gunicorn")], start=T0)
    for sid in ("default/s1", "Default/s1"):
        out = call(home, {"session_id": sid})
        assert out["success"] and out["mode"] == "read" and out["session_id"] == "s1", out


def test_unknown_profile_error_is_worded_as_hermes(home, db):
    # Hermes: tool_error(f"profile '{profile}': {e}") with e = "profile '<canon>' does not exist"
    out = call(home, {"session_id": "s1", "profile": "Nope"})
    assert out["success"] is False
    assert out["error"] == "profile 'Nope': profile 'nope' does not exist"


def test_a_session_without_a_start_reads_when_unknown(home, db):
    # Hermes' _format_timestamp: None -> "unknown" (discovery entries and session_meta alike).
    from hermes_store.sessions.storage import open_session_storage
    storage = open_session_storage(db)
    storage.add_session("undated", origin_format="live", source="cli", title=None, model=None,
                        workspace=None, started_at=None, parent_session_id=None, meta={})
    storage.append_message("undated", role="user", content="the zebra migration plan", tool_name=None,
                           tool_calls=None, tool_call_id=None, timestamp=None, cjk="")
    hit = call(home, {"query": "zebra"})["results"][0]
    assert hit["session_id"] == "undated" and hit["when"] == "unknown"
    assert call(home, {"session_id": "undated"})["session_meta"]["when"] == "unknown"


def test_error_replies_are_shaped_as_hermes_tool_error(home, store):
    # Hermes' session_search answers every error with tool_error(msg, success=False): "error" first.
    from hermes_store.tools import handle_tool_call
    assert handle_tool_call("session_search", {"session_id": "nope", "around_message_id": 1}, home=home) == (
        '{"error": "session_id not found: nope", "success": false}')
    assert list(call(home, {"query": "x", "after": "last tuesday"})) == ["error", "success"]
    assert list(call(home, {"session_id": "nope"})) == ["error", "success"]


def test_message_keys_are_in_hermes_order(home, db):
    # Hermes' _shape_message: id, role, content, timestamp, tool fields, anchor, then
    # content_truncated / original_content_chars; a None value (content excepted) is left out.
    add_session(db, "long", [("user", "the needle " + "y " * 3000), ("assistant", "short reply")], start=T0)
    hit = call(home, {"query": "needle"})["results"][0]
    ours = ("ref", "flagged")  # our additions come last
    anchored = next(m for m in hit["messages"] if m.get("anchor"))
    assert [k for k in anchored if k not in ours] == [
        "id", "role", "content", "timestamp", "anchor", "content_truncated", "original_content_chars"]
    assert list(anchored)[-1] == "ref"
    read = call(home, {"session_id": "long"})["messages"]
    assert [k for k in read[1] if k not in ours] == ["id", "role", "content", "timestamp"]
