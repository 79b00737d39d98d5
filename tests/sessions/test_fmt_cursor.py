"""Cursor ``state.vscdb``: composers with split bubbles, inline bubbles, old chat tabs, prompts."""

from __future__ import annotations

import pytest
from format_helpers import SQL_DIR, build_sqlite, index, messages, roles, session, ts

from hermes_store.db import Database
from hermes_store.sessions import detect_format

USER = "cursor/.config/Cursor/User"
GLOBAL = f"{USER}/globalStorage/state.vscdb"
WORKSPACE = f"{USER}/workspaceStorage/8c1f2e3d4a5b6c7d8e9f0a1b2c3d4e5f/state.vscdb"
C1 = "0b7d4e21-9c3a-4f58-a1e2-6d8f0c4b9a71"
C2 = "5e9a0c13-2b4d-4e6f-8a1b-3c5d7e9f0a2b"


@pytest.mark.parametrize("relpath, sql", [(GLOBAL, "cursor_global.sql"), (WORKSPACE, "cursor_workspace.sql")])
def test_database_fixtures_match_their_sql(tmp_path, format_fixtures, relpath, sql):
    built = build_sqlite(SQL_DIR / sql, tmp_path / "rebuilt.vscdb")
    dump = "SELECT key, CAST(value AS TEXT) AS v FROM ItemTable UNION ALL SELECT key, CAST(value AS TEXT) FROM cursorDiskKV ORDER BY 1"
    with Database(built, readonly=True, migrate=False) as a, \
            Database(format_fixtures / relpath, readonly=True, migrate=False) as b:
        assert a.query(dump) == b.query(dump)


def test_detected(format_fixtures):
    assert detect_format(format_fixtures / GLOBAL) == "cursor"
    assert detect_format(format_fixtures / WORKSPACE) == "cursor"


def test_global_database(store, format_fixtures):
    path = format_fixtures / GLOBAL
    before = path.read_bytes()
    summary = index(store, path)
    assert path.read_bytes() == before  # opened read-only: not a byte changed
    assert [e["error"] for e in summary["errors"]] == [f"composer {C1}: 1 bubble(s) missing or unreadable"]
    row = session(store, C1)
    assert row["origin_format"] == "cursor" and row["source"] == "cursor"
    assert row["title"] == "Fix CI cache misses" and row["model"] == "claude-4.5-sonnet-thinking"
    assert row["started_at"] == pytest.approx(1764583200.0) and row["ended_at"] == pytest.approx(1764583500.0)
    assert row["meta"]["unifiedMode"] == "agent"
    rows = messages(store, C1)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == "Why does the CI cache miss on every run? See @ci.yml\n[image]"
    assert rows[0]["timestamp"] == pytest.approx(ts("2025-12-01T10:00:05.000Z"))
    assert rows[1]["content"] == "The cache key includes the run number, so it never matches."
    assert rows[2]["calls"] == [("run_terminal_cmd", {"command": "grep -n key: .github/workflows/ci.yml",
                                                      "requireUserApproval": False}, "toolu_01CiGrep")]
    assert rows[3]["tool_name"] == "run_terminal_cmd" and rows[3]["tool_call_id"] == "toolu_01CiGrep"
    assert "deps-${{ github.run_number }}" in rows[3]["content"]
    assert rows[4]["content"].startswith("The key uses `github.run_number`")
    assert rows[4]["timestamp"] == pytest.approx(1764583215.0)
    inline = messages(store, C2)
    assert [(r["role"], r["content"][:24]) for r in inline] == [
        ("user", "write a debounce helper"), ("assistant", "export const debounce = "),
        ("user", "now add a cancel()"), ("assistant", "Return an object with `c")]
    assert session(store, C2)["started_at"] == pytest.approx(1731000000.0)
    assert session(store, "9f9f9f9f-0000-4000-8000-000000000000") is None  # opened, never used
    every = [r["content"] for sid in (C1, C2) for r in messages(store, sid)]
    assert not any("FAKE-TOKEN" in text for text in every)


def test_workspace_database_old_chat_and_prompts(store, format_fixtures):
    assert index(store, format_fixtures / WORKSPACE)["errors"] == []
    sid = "cursor-chat:2d1c0b9a-8f7e-4d6c-9b5a-4e3d2c1b0a9f"
    row = session(store, sid)
    assert row["title"] == "Regex for ISO dates" and row["workspace"] == "/home/dev/date utils"
    assert row["model"] == "claude-3.5-sonnet"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "assistant", "user", "assistant"]
    assert rows[2]["content"] == "and with offsets like +02:00"  # only rawText
    assert session(store, "cursor-chat:empty-tab") is None
    prompts = messages(store, "cursor-prompts:8c1f2e3d4a5b6c7d8e9f0a1b2c3d4e5f")
    assert [(r["content"], r["timestamp"]) for r in prompts] == [
        ("regex for ISO-8601 dates?", pytest.approx(1718000000.0)),
        ("rename getUser to fetchUser everywhere", pytest.approx(1718000400.0))]


def test_reindex_adds_nothing(store, format_fixtures):
    index(store, format_fixtures / GLOBAL)
    assert index(store, format_fixtures / GLOBAL)["messages_added"] == 0
    assert len(messages(store, C1)) == 5
