"""Idempotency, incremental appends, rewrites, snapshots growing, and state.db by id."""

from __future__ import annotations

import json
import shutil

import pytest
from sess_helpers import core, index_json, matching_ids, text_index_problems, write_jsonl

from hermes_store.db import Database
from hermes_store.sessions import SessionIndex


@pytest.fixture
def store(engine_store):
    """Every test of this module runs on each storage engine."""
    return engine_store

def test_idempotent(run, store, fixtures, state_db):
    code, first = index_json(run, *core(fixtures), state_db)
    assert code == 0 and first["messages_added"] == 36
    code, second = index_json(run, *core(fixtures), state_db)
    assert code == 0
    assert second["files"] == 7
    assert second["sessions_added"] == 0 and second["messages_added"] == 0
    assert second["skipped"] == 36 and second["errors"] == []
    totals = SessionIndex(store).stats()
    assert totals["messages"] == 36
    assert sum(row["messages"] for row in totals["per_source"].values()) == 36


def test_append_adds_only_new_lines(run, store, tmp_path):
    path = tmp_path / "sessions" / "20260201_120000_abcdef.jsonl"
    write_jsonl(path, [{"role": "session_meta", "model": "m", "platform": "cli"},
                       {"role": "user", "content": "first question about zebras"},
                       {"role": "assistant", "content": "first answer"}])
    assert index_json(run, path)[1]["messages_added"] == 2
    write_jsonl(path, [{"role": "user", "content": "second question about giraffes"},
                       {"role": "assistant", "content": "second answer"}], mode="a")
    code, summary = index_json(run, path)
    assert summary["messages_added"] == 2 and summary["skipped"] == 2 and summary["sessions_added"] == 0
    msgs = SessionIndex(store).get_messages("20260201_120000_abcdef")
    assert [m["seq"] for m in msgs] == [0, 1, 2, 3]
    assert msgs[2]["content"] == "second question about giraffes"
    assert SessionIndex(store).get_session("20260201_120000_abcdef")["message_count"] == 4
    assert len(matching_ids(store, "giraffes")) == 1


def test_partial_last_line_waits_for_its_newline(run, store, tmp_path):
    path = tmp_path / "sessions" / "20260201_120000_fedcba.jsonl"
    write_jsonl(path, [{"role": "user", "content": "complete line"}])
    with open(path, "a") as handle:
        handle.write('{"role": "assistant", "content": "half wri')
    code, summary = index_json(run, path)
    assert summary["messages_added"] == 1
    with open(path, "a") as handle:
        handle.write('tten"}\n')
    code, summary = index_json(run, path)
    assert code == 0 and summary["messages_added"] == 1 and summary["errors"] == []
    assert [m["content"] for m in SessionIndex(store).get_messages("20260201_120000_fedcba")] == [
        "complete line", "half written"]


def test_rewritten_file_is_reimported(run, store, tmp_path):
    path = tmp_path / "sessions" / "20260201_130000_aaaaaa.jsonl"
    write_jsonl(path, [{"role": "user", "content": "original wording"},
                       {"role": "assistant", "content": "original reply"}])
    index_json(run, path)
    write_jsonl(path, [{"role": "user", "content": "edited wording that is longer than before"},
                       {"role": "assistant", "content": "edited reply"},
                       {"role": "user", "content": "more"}])
    code, summary = index_json(run, path)
    assert summary["messages_added"] == 3
    msgs = SessionIndex(store).get_messages("20260201_130000_aaaaaa")
    assert [m["content"] for m in msgs][0] == "edited wording that is longer than before"
    assert matching_ids(store, "original") == []
    assert text_index_problems(store) == []


def test_snapshot_growth_adds_new_messages(run, store, fixtures):
    path = fixtures / "hermes_home/sessions/session_20260106_090000_d4e5f6.json"
    index_json(run, path)
    doc = json.loads(path.read_text())
    doc["messages"].append({"role": "user", "content": "and for whole wheat flour?"})
    path.write_text(json.dumps(doc))
    code, summary = index_json(run, path)
    assert summary["messages_added"] == 1 and summary["skipped"] == 4
    assert SessionIndex(store).get_session("20260106_090000_d4e5f6")["message_count"] == 5


def test_state_db_incremental_by_id(run, store, state_db):
    assert index_json(run, state_db)[1]["messages_added"] == 7
    hermes = Database(state_db, migrate=False)
    hermes.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES"
                   " ('20260110_090000_bbbbbb', 'assistant', 'uncordon the nodes now', 1768035640)")
    hermes.execute("UPDATE sessions SET ended_at=1768035700, title='k8s upgrade done'"
                   " WHERE id='20260110_090000_bbbbbb'")
    hermes.close()
    code, summary = index_json(run, state_db)
    assert summary["messages_added"] == 1 and summary["skipped"] == 7
    session = SessionIndex(store).get_session("20260110_090000_bbbbbb")
    assert session["title"] == "k8s upgrade done" and session["ended_at"] == 1768035700
    assert session["message_count"] == 4


def test_same_session_from_two_sources_is_not_duplicated(run, store, fixtures, tmp_path):
    original = fixtures / "hermes_home/sessions/20260105_101500_a1b2c3.jsonl"
    copy = tmp_path / "elsewhere" / "sessions" / original.name
    copy.parent.mkdir(parents=True)
    shutil.copy(original, copy)
    index_json(run, original)
    code, summary = index_json(run, copy)
    assert summary["messages_added"] == 0 and summary["skipped"] == 7
    assert SessionIndex(store).stats()["messages"] == 7


def test_replaced_state_db_is_reimported(run, store, state_db):
    assert index_json(run, state_db)[1]["messages_added"] == 7
    state_db.unlink()
    fresh = Database(state_db, migrate=False)
    fresh.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL);"
                  "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT,"
                  " content TEXT, timestamp REAL);"
                  "INSERT INTO sessions VALUES ('fresh_1', 'cli', 1700000000);"
                  "INSERT INTO messages VALUES (1, 'fresh_1', 'user', 'brand new database', 1700000001);")
    fresh.close()
    code, summary = index_json(run, state_db)
    assert code == 0 and summary["messages_added"] == 1
    assert [s["id"] for s in SessionIndex(store).list_sessions(limit=None)] == ["fresh_1"]
    assert text_index_problems(store) == []


def test_claude_and_codex_appends_are_incremental(run, store, fixtures):
    claude = fixtures / "claude/projects/-home-ana-webapp/7f3c2a10-5b6d-4e8f-9a0b-1c2d3e4f5a6b.jsonl"
    codex = next((fixtures / "codex").rglob("rollout-*.jsonl"))
    index_json(run, claude, codex)
    write_jsonl(claude, [{"type": "user", "sessionId": "7f3c2a10-5b6d-4e8f-9a0b-1c2d3e4f5a6b",
                          "message": {"role": "user", "content": "thanks, merged"},
                          "timestamp": "2025-11-20T15:00:00Z"}], mode="a")
    write_jsonl(codex, [{"timestamp": "2025-10-29T01:00:00Z", "type": "response_item",
                         "payload": {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": "now sort them"}]}}],
                mode="a")
    code, summary = index_json(run, claude, codex)
    assert summary["messages_added"] == 2 and summary["sessions_added"] == 0
    assert summary["skipped"] == 10 and summary["errors"] == []  # 5 claude + 5 codex (reasoning included)
    codex_msgs = SessionIndex(store).get_messages("019a2d7a-41c4-78b1-b7cc-a45d62a89cd5")
    assert codex_msgs[-1]["content"] == "now sort them" and codex_msgs[-1]["seq"] == 5


def test_pipelined_and_inline_writers_agree(tmp_path, fixtures, state_db):
    from hermes_store.sessions.loader import BulkLoader

    results = []
    for pipeline in (True, False):
        with Database(tmp_path / f"p{pipeline}.db") as db:
            summary = BulkLoader(db, batch_messages=5, pipeline=pipeline).run([*core(fixtures), state_db])
            rows = db.query("SELECT session_id, seq, role, content, tool_name FROM messages"
                            " ORDER BY session_id, seq")
            sessions = db.query("SELECT id, message_count, started_at, ended_at FROM sessions ORDER BY id")
            results.append((summary.as_dict(), rows, sessions))
    assert results[0] == results[1]
    assert results[0][0]["messages_added"] == 36
