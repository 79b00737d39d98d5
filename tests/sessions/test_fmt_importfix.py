"""Importer gaps left by earlier audits (round "importfix"): the same message read the same way by
every reader of an agent's format, reverted and streamed rows, rows indexed by an older rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from format_helpers import index, messages


@pytest.fixture
def store(engine_store):
    """Every test of this module runs on each storage engine."""
    return engine_store


# OpenCode's compaction (packages/opencode/src/session/compaction.ts): a user message holding a
# ``compaction`` part, then an assistant message {summary: true, mode: "compaction"} whose text is
# the summary of the conversation so far.
SID = "ses_6a7b8c9d0ffeJsonSum1"
USER = {"id": "msg_d0000001", "sessionID": SID, "role": "user", "time": {"created": 1767001290000},
        "agent": "build", "model": {"providerID": "openrouter", "modelID": "qwen/qwen3-coder"}}
SUMMARY = {"id": "msg_d0000002", "sessionID": SID, "role": "assistant", "parentID": "msg_d0000001",
           "mode": "compaction", "agent": "compaction", "summary": True, "cost": 0,
           "path": {"cwd": "/srv/api", "root": "/srv/api"}, "modelID": "qwen/qwen3-coder",
           "providerID": "openrouter", "time": {"created": 1767001300000, "completed": 1767001310000},
           "finish": "stop"}
REPLY = {**SUMMARY, "id": "msg_d0000003", "mode": "build", "agent": "build", "time": {"created": 1767001400000}}
del REPLY["summary"]
PARTS = {
    "msg_d0000001": [{"id": "prt_d1", "type": "compaction", "auto": True}],
    "msg_d0000002": [{"id": "prt_d2", "type": "step-start"},
                     {"id": "prt_d3", "type": "text", "text": "## Goal\nPaginate /users with a cursor."},
                     {"id": "prt_d4", "type": "step-finish", "reason": "stop", "cost": 0}],
    "msg_d0000003": [{"id": "prt_d5", "type": "text", "text": "Cursor pagination is in place."}],
}


def _roles_by_text(rows: list[dict]) -> list[tuple[str, str]]:
    return [(r["role"], r["content"]) for r in rows]


EXPECTED = [("system", "## Goal\nPaginate /users with a cursor."), ("assistant", "Cursor pagination is in place.")]


def test_opencode_json_tree_compaction_summary_is_a_system_row(store, tmp_path):
    """The storage tree holds the same messages as ``opencode.db``: its compaction summary is a
    ``system`` row there too (it was an ``assistant`` row, the model's reply)."""
    storage = tmp_path / "opencode" / "storage"
    session_file = storage / "session" / "prj1" / f"{SID}.json"
    session_file.parent.mkdir(parents=True)
    session_file.write_text(json.dumps({"id": SID, "projectID": "prj1", "directory": "/srv/api", "title": "t",
                                        "version": "1.1.0", "time": {"created": 1767001290000,
                                                                     "updated": 1767001400000}}))
    for header in (USER, SUMMARY, REPLY):
        path = storage / "message" / SID / f"{header['id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(header))
        for part in PARTS[header["id"]]:
            ppath = storage / "part" / header["id"] / f"{part['id']}.json"
            ppath.parent.mkdir(parents=True, exist_ok=True)
            ppath.write_text(json.dumps({**part, "messageID": header["id"], "sessionID": SID}))
    result = index(store, session_file)
    assert result["errors"] == []
    assert _roles_by_text(messages(store, SID)) == EXPECTED


def test_opencode_export_compaction_summary_is_a_system_row(store, tmp_path):
    """``opencode export`` prints the same headers: the summary is a ``system`` row."""
    path: Path = tmp_path / "export.json"
    path.write_text(json.dumps({
        "info": {"id": SID, "projectID": "prj1", "directory": "/srv/api", "title": "t",
                 "time": {"created": 1767001290000, "updated": 1767001400000}},
        "messages": [{"info": h, "parts": PARTS[h["id"]]} for h in (USER, SUMMARY, REPLY)]}))
    result = index(store, path)
    assert result["errors"] == []
    assert _roles_by_text(messages(store, SID)) == EXPECTED


CRUSH_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0, updated_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL, summary_message_id TEXT, todos TEXT, revert_message_id TEXT);
CREATE TABLE files (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
  parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  finished_at INTEGER, provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL);
INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('s1', 'Retry the client', 1796000300, 1796000000);
"""


def _crush_message(conn, mid: str, role: str, text: str, created: int) -> None:
    conn.execute("INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES (?, 's1', ?, ?, ?, ?)",
                 (mid, role, json.dumps([{"type": "text", "data": {"text": text}}]), created, created))


def test_crush_reverted_messages_are_not_returned(store, tmp_path):
    """Crush's undo (charmbracelet/crush #2563) sets ``sessions.revert_message_id`` to the user message
    rewound to; its chat hides that message and every later one, a redo shows them again. The index
    returns what Crush shows: hidden messages are dropped when the mark appears after an index run,
    and come back (once each) when it is cleared."""
    import sqlite3

    from hermes_store.sessions.search import search_messages

    path = tmp_path / "proj" / ".crush" / "crush.db"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(CRUSH_SCHEMA)
    for n, (role, text) in enumerate([("user", "add retries"), ("assistant", "Retries added."),
                                      ("user", "now drop the backoff"), ("assistant", "Backoff removed.")]):
        _crush_message(conn, f"m{n + 1}", role, text, 1796000000 + 10 * n)

    def texts() -> list[str]:
        return [r["content"] for r in messages(store, "s1")]

    index(store, path)
    assert texts() == ["add retries", "Retries added.", "now drop the backoff", "Backoff removed."]
    conn.execute("UPDATE sessions SET revert_message_id = 'm3' WHERE id = 's1'")  # undo the last prompt
    assert index(store, path)["errors"] == []
    assert texts() == ["add retries", "Retries added."]
    assert not [h for h in search_messages(store, "backoff").results if h["session_id"] == "s1"]
    conn.execute("UPDATE sessions SET revert_message_id = NULL WHERE id = 's1'")  # redo
    index(store, path)
    assert texts() == ["add retries", "Retries added.", "now drop the backoff", "Backoff removed."]
    conn.execute("UPDATE sessions SET revert_message_id = 'm3' WHERE id = 's1'")  # undo, then a new prompt
    index(store, path)
    conn.execute("DELETE FROM messages WHERE created_at >= 1796000020")  # Crush's CleanupRevert
    conn.execute("UPDATE sessions SET revert_message_id = NULL WHERE id = 's1'")
    _crush_message(conn, "m5", "user", "keep the backoff, add jitter", 1796000100)
    index(store, path)
    assert texts() == ["add retries", "Retries added.", "keep the backoff, add jitter"]
    conn.close()
