"""GitHub Copilot Chat in VS Code's ``state.vscdb``: the ``interactive.sessions`` key (chats saved
before ``chatSessions/`` files), the ``chat.ChatSessionStore.index`` of those files, and a window
that never chatted. Before ``copilot-chat-db`` every one of them was ``unknown format``.

The databases are built here the way VS Code's storage service writes them: ``ItemTable(key
UNIQUE ON CONFLICT REPLACE, value BLOB)`` holding ``JSON.stringify`` of the chat service's list of
``ISerializableChatData`` (microsoft/vscode ``chatServiceImpl.ts`` ``saveState``, ``chatModel.ts``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from format_helpers import SQL_DIR, build_sqlite, index, messages, roles, session

from hermes_store.db import Database
from hermes_store.sessions import detect_format, index_paths
from hermes_store.sessions.importers import IMPORTERS
from hermes_store.sessions.importers.head import Head

USER = ".config/Code/User"
FIXTURE = f"copilot-chat-db/{USER}/workspaceStorage/6e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b/state.vscdb"
T0 = 1717000000000  # ms, as VS Code stores them

V3 = {  # VS Code 1.9x: version 3, customTitle, agent, modelId, tool invocations
    "version": 3, "sessionId": "5d1c2b3a-0f9e-4d8c-b7a6-112233445566", "creationDate": T0,
    "lastMessageDate": T0 + 90000, "customTitle": "Parser off-by-one", "requesterUsername": "maya",
    "responderUsername": "GitHub Copilot", "initialLocation": "panel",
    "requests": [{
        "requestId": "request_1", "timestamp": T0 + 10000, "modelId": "copilot/gpt-4.1",
        "agent": {"id": "github.copilot.editsAgent", "name": "agent"},
        "message": {"text": "why does parse() drop the last token?", "parts": []},
        "variableData": {"variables": [{"id": "file:///w/src/parse.py", "name": "parse.py", "kind": "file"}]},
        "response": [
            {"value": "The loop in ", "supportThemeIcons": False, "supportHtml": False},
            {"kind": "inlineReference",
             "inlineReference": {"$mid": 1, "fsPath": "/w/src/parse.py", "path": "/w/src/parse.py", "scheme": "file"}},
            {"value": " stops one short.", "supportThemeIcons": False},
            {"kind": "prepareToolInvocation", "toolName": "run_in_terminal"},
            {"kind": "toolInvocationSerialized", "toolId": "run_in_terminal", "toolCallId": "call_9",
             "invocationMessage": {"value": "Running `pytest -q`"}, "isConfirmed": True, "isComplete": True,
             "toolSpecificData": {"kind": "terminal", "commandLine": {"original": "pytest -q"},
                                  "terminalCommandOutput": {"text": "1 failed, 7 passed"}}},
            {"kind": "codeblockUri", "uri": {"$mid": 1, "path": "/w/src/parse.py", "scheme": "file"}},
            {"value": "Use `range(len(tokens))`.", "supportThemeIcons": False},
        ],
        "result": {"timings": {"totalElapsed": 4000}},
    }],
}
V1 = {  # the oldest saved chats: message and response plain strings, responseErrorDetails, computedTitle
    "version": 2, "sessionId": "old-chat-1", "creationDate": T0 - 86400000, "lastMessageDate": T0 - 86000000,
    "computedTitle": "Regex for dates", "requesterUsername": "maya", "responderUsername": "GitHub Copilot",
    "requests": [
        {"providerRequestId": "p1", "message": "regex for ISO dates?",
         "response": ["Try `\\d{4}-\\d{2}-\\d{2}`."], "isCanceled": False, "followups": []},
        {"providerRequestId": "p2", "message": "and with times?", "response": "",
         "responseErrorDetails": {"message": "Sorry, the response was filtered."}},
    ],
}
EMPTY = {"version": 3, "sessionId": "never-asked", "creationDate": T0, "requests": []}


def vscdb(path: Path, items: dict[str, object], wal: bool = False) -> Path:
    """A VS Code storage database at ``path`` holding ``items`` (values JSON-encoded unless text)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    if wal:
        db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    db.execute("INSERT INTO ItemTable VALUES ('workbench.panel.chat.numberOfVisibleViews', '1')")
    for key, value in items.items():
        db.execute("INSERT INTO ItemTable VALUES (?, ?)", (key, value if isinstance(value, str) else json.dumps(value)))
    db.commit()
    db.close()
    return path


def workspace_db(root: Path, items: dict[str, object], **kw: bool) -> Path:
    folder = root / USER / "workspaceStorage" / "0a1b2c3d4e5f"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "workspace.json").write_text(json.dumps({"folder": "file:///home/maya/parser%20lab"}))
    return vscdb(folder / "state.vscdb", items, **kw)


def test_detected_by_content(tmp_path):
    chats = workspace_db(tmp_path / "a", {"interactive.sessions": [V3]})
    indexed = vscdb(tmp_path / "b" / USER / "globalStorage" / "state.vscdb",
                    {"chat.ChatSessionStore.index": {"version": 1, "entries": {}}})
    elsewhere = vscdb(tmp_path / "c" / "backup" / "state.vscdb", {"interactive.sessions": [V3]})
    quiet = vscdb(tmp_path / "d" / USER / "workspaceStorage" / "99" / "state.vscdb", {})
    assert detect_format(chats) == "copilot-chat-db"
    assert detect_format(indexed) == "copilot-chat-db"
    assert detect_format(elsewhere) == "copilot-chat-db"  # the key, not the path, says what it is
    # a window that never chatted is VS Code's file holding nothing to import: a note, not "unknown
    # format" (sessions index --discover met one per workspace window); the same file elsewhere is not
    assert detect_format(quiet) == "copilot-chat-db"
    assert detect_format(vscdb(tmp_path / "g" / "backup" / "state.vscdb", {})) is None
    cursor = vscdb(tmp_path / "e" / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb",
                   {"interactive.sessions": [V3]})
    assert IMPORTERS["copilot-chat-db"].sniff(Head.read(cursor)) == 0.0  # Cursor's layout is cursor's
    assert detect_format(vscdb(tmp_path / "f" / "other.db", {})) is None


def test_v3_sessions_of_a_workspace_database(store, tmp_path):
    path = workspace_db(tmp_path, {"interactive.sessions": [V3, EMPTY]}, wal=True)
    before = sorted(p.name for p in path.parent.iterdir())
    summary = index(store, path)
    assert summary["errors"] == [] and summary["sessions_added"] == 1
    assert sorted(p.name for p in path.parent.iterdir()) == before  # read-only: no -wal/-shm left
    row = session(store, V3["sessionId"])
    assert row["origin_format"] == "copilot-chat-db" and row["source"] == "copilot-chat"
    assert row["title"] == "Parser off-by-one" and row["workspace"] == "/home/maya/parser lab"
    assert row["model"] == "copilot/gpt-4.1"
    assert row["started_at"] == pytest.approx(T0 / 1000) and row["ended_at"] == pytest.approx(T0 / 1000 + 90)
    rows = messages(store, V3["sessionId"])
    assert roles(rows) == ["user", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == "why does parse() drop the last token?\n[attachment parse.py]"
    assert rows[0]["timestamp"] == pytest.approx(T0 / 1000 + 10)
    assert rows[1]["content"] == "The loop in `parse.py` stops one short."
    assert rows[1]["calls"] == [("run_in_terminal", {"command": "pytest -q"}, "call_9")]
    assert (rows[2]["tool_call_id"], rows[2]["content"]) == ("call_9", "1 failed, 7 passed")
    assert rows[3]["content"] == "Use `range(len(tokens))`."
    assert all(r["content"].strip() or r["calls"] for r in rows)
    assert not any(r["content"].lstrip().startswith(("{", "[{")) for r in rows)  # no raw JSON as text
    assert session(store, "never-asked") is None
    again = index(store, path)
    assert again["errors"] == [] and again["messages_added"] == 0 and again["sessions_added"] == 0


def test_oldest_chats_of_the_global_database(store, tmp_path):
    path = vscdb(tmp_path / USER / "globalStorage" / "state.vscdb", {"interactive.sessions": [V1]})
    assert index(store, path)["errors"] == []
    row = session(store, "old-chat-1")
    assert row["title"] == "Regex for dates" and row["workspace"] is None
    assert [(r["role"], r["content"]) for r in messages(store, "old-chat-1")] == [
        ("user", "regex for ISO dates?"), ("assistant", "Try `\\d{4}-\\d{2}-\\d{2}`."),
        ("user", "and with times?"), ("system", "[error] Sorry, the response was filtered.")]


def test_damaged_session_reported_by_key_others_kept(store, tmp_path):
    broken = {**V1, "sessionId": "broken", "requests": [
        7, {"message": "cut", "variableData": {"variables": 5}}, {"message": "still here", "response": ["kept"]}]}
    path = workspace_db(tmp_path, {"interactive.sessions": ["not a chat", {"sessionId": "s"}, broken, V3]})
    summary = index(store, path)
    errors = [(e["path"], e["error"]) for e in summary["errors"]]
    assert (str(path), "interactive.sessions[0]: expected a chat session with a 'requests' list (skipped)") in errors
    assert (str(path), "interactive.sessions[1]: expected a chat session with a 'requests' list (skipped)") in errors
    assert (str(path), "interactive.sessions[2] requests[0]: expected an object") in errors
    assert len(errors) == 4 and errors[3][1].startswith("interactive.sessions[2] requests[1]: unexpected record shape")
    assert roles(messages(store, V3["sessionId"])) == ["user", "assistant", "tool", "assistant"]
    assert [(r["role"], r["content"]) for r in messages(store, "broken")] == [("user", "still here"), ("assistant", "kept")]


def test_value_not_json_names_the_file_and_key(store, tmp_path):
    path = workspace_db(tmp_path, {"interactive.sessions": '[{"sessionId": "cut'})
    (error,) = index(store, path)["errors"]
    assert error["path"] == str(path) and "interactive.sessions: value is not JSON" in error["error"]
    (error,) = index(store, path, "copilot-chat-db")["errors"]
    assert error["error"].startswith("interactive.sessions: value is not JSON (")


def test_session_migrated_to_a_file_is_read_once(store, tmp_path):
    """VS Code copied every saved chat to chatSessions/<id>.json and left the key: one copy is read."""
    path = workspace_db(tmp_path, {"interactive.sessions": [V3, V1],
                                   "chat.ChatSessionStore.index": {"version": 1, "entries": {}}})
    files = path.parent / "chatSessions"
    files.mkdir()
    (files / f"{V3['sessionId']}.json").write_text(json.dumps(V3))
    summary = index(store, path.parent)
    assert summary["errors"] == []
    assert session(store, V3["sessionId"])["origin_format"] == "copilot-chat"
    assert len(messages(store, V3["sessionId"])) == 4
    assert session(store, "old-chat-1")["origin_format"] == "copilot-chat-db"
    assert any("1 session(s) also saved in" in n["notice"] for n in summary["notices"])


def test_index_only_database_is_a_notice(store, tmp_path):
    indexed = workspace_db(tmp_path / "a", {"chat.ChatSessionStore.index": {"version": 1, "entries": {}}})
    summary = index_paths(store, [indexed.parent])
    assert summary["errors"] == [] and summary["sessions_added"] == 0
    (notice,) = summary["notices"]
    assert notice["path"] == str(indexed)
    assert notice["notice"].startswith("chat.ChatSessionStore.index: this database only indexes")
    quiet = vscdb(tmp_path / "b" / USER / "globalStorage" / "state.vscdb", {})
    summary = index(store, quiet, "copilot-chat-db")
    assert summary["errors"] == [] and summary["sessions_added"] == 0
    (notice,) = summary["notices"]
    assert notice["notice"].endswith("a VS Code window that never chatted; nothing to import here")
    elsewhere = vscdb(tmp_path / "c" / "backup" / "state.vscdb", {})
    (error,) = index(store, elsewhere, "copilot-chat-db")["errors"]
    assert error["error"].startswith("neither interactive.sessions nor chat.ChatSessionStore.index")


def test_default_locations_cover_the_editions():
    linux = IMPORTERS["copilot-chat-db"].default_locations["linux"]
    for edition in ("Code", "Code - Insiders", "VSCodium"):
        assert f"~/.config/{edition}/User/globalStorage/state.vscdb" in linux
        assert f"~/.config/{edition}/User/workspaceStorage/*/state.vscdb" in linux


def test_oldest_chat_migrated_to_a_file_keeps_its_prompts(store, tmp_path):
    """VS Code's migration wrote the oldest chats to chatSessions/ as they were: string messages."""
    path = tmp_path / USER / "workspaceStorage" / "0a1b2c3d4e5f" / "chatSessions" / "old-chat-1.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(V1))
    assert detect_format(path) == "copilot-chat" and index(store, path)["errors"] == []
    assert roles(messages(store, "old-chat-1")) == ["user", "assistant", "user", "system"]
    assert IMPORTERS["copilot-chat"].reader >= 2  # files read before are read again once


def test_fixture_matches_its_sql_and_is_read(store, tmp_path, format_fixtures):
    built = build_sqlite(SQL_DIR / "copilot_chat_db.sql", tmp_path / "rebuilt.vscdb")
    dump = "SELECT key, CAST(value AS TEXT) FROM ItemTable ORDER BY 1"
    with Database(built, readonly=True, migrate=False) as a, \
            Database(format_fixtures / FIXTURE, readonly=True, migrate=False) as b:
        assert a.query(dump) == b.query(dump)
    path = format_fixtures / FIXTURE
    assert detect_format(path) == "copilot-chat-db"
    assert detect_format(path.parent / "workspace.json") == "copilot-chat-db"  # read through the database
    summary = index(store, path.parent)
    assert summary["errors"] == [] and summary["sessions_added"] == 2 and summary["messages_added"] == 8
    assert session(store, V3["sessionId"])["workspace"] == "/home/maya/parser lab"
