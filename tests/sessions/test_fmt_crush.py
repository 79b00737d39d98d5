"""Crush ``.crush/crush.db``: parts JSON, tool messages, sub-agent sessions."""

from __future__ import annotations

import pytest
from format_helpers import SQL_DIR, build_sqlite, index, messages, roles, session

from hermes_store.db import Database
from hermes_store.sessions import detect_format

DB = "crush/.projects/api/.crush/crush.db"
S, C = "a1f3c9e2-0b1d-4c55-9a7e-3d2f1e0c9b8a", "b2e4d0f3-1c2e-4d66-8b8f-4e3a2f1d0c9b"



def test_database_fixture_matches_its_sql(tmp_path, format_fixtures):
    built = build_sqlite(SQL_DIR / "crush.sql", tmp_path / "crush.db")
    dump = "SELECT id, session_id, role, parts, created_at FROM messages ORDER BY rowid"
    with Database(built, readonly=True, migrate=False) as a, \
            Database(format_fixtures / DB, readonly=True, migrate=False) as b:
        assert a.query(dump) == b.query(dump)


def test_detected(format_fixtures):
    assert detect_format(format_fixtures / DB) == "crush"


def test_database(store, format_fixtures):
    assert index(store, format_fixtures / DB)["errors"] == []
    row = session(store, S)
    assert row["origin_format"] == "crush" and row["source"] == "crush"
    assert row["title"] == "Add retry to the HTTP client" and row["model"] == "claude-sonnet-4-5"
    assert row["workspace"].endswith("/crush/.projects/api")
    assert row["started_at"] == pytest.approx(1764000000.0) and row["ended_at"] == pytest.approx(1764000300.0)
    rows = messages(store, S)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "system"]
    assert rows[0]["content"] == "add retries with backoff to client.go\n[text/plain /home/ty/api/client.go]\npackage api"
    assert rows[1]["content"] == "Wrap Do() in a loop with exponential backoff."
    assert rows[2]["calls"] == [("view", {"file_path": "/home/ty/api/client.go"}, "call_c1")]
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"]) == ("view", "call_c1")
    assert rows[5]["content"] == "[error] stream error: overloaded"
    child = session(store, C)
    assert child["parent_session_id"] == S and child["title"] == "Find HTTP call sites"
    assert [r["content"] for r in messages(store, C)] == ["Find every http.Client call site"]
    assert index(store, format_fixtures / DB)["messages_added"] == 0
