"""Variants seen in real files, third round: Gemini CLI, Qwen Code, OpenCode, Crush, OpenHands,
pi, Amp and Factory droid (fixtures reproduce the writers' structure, never real content)."""

from __future__ import annotations

from format_helpers import SQL_DIR, build_sqlite, index, messages, roles, session

from hermes_store.sessions import detect_format

GEMINI_TMP = "gemini-cli/.gemini/tmp"
GEMINI_COMPRESSED = f"{GEMINI_TMP}/cart-svc/chats/session-2026-07-01T09-00-aa11bb22.jsonl"
GEMINI_MIGRATED = f"{GEMINI_TMP}/flags-cli/chats"


def test_gemini_compression_keeps_the_turns_it_summarised(store, format_fixtures):
    """A ``$set: {messages}`` checkpoint (a compression since mid-2026) replaces the writer's list with
    the compressed history; the turns before it were said and stay, the snapshot is a system note,
    and a tool result recorded both in the call and as a ``functionResponse`` record is kept once."""
    path = format_fixtures / GEMINI_COMPRESSED
    assert detect_format(path) == "gemini-cli"
    assert index(store, path)["errors"] == []
    rows = messages(store, "aa11bb22-0000-4000-8000-000000000001")
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "system", "assistant",
                           "user", "assistant"]
    assert rows[0]["content"] == "what does cart.py compute"
    assert rows[2]["calls"] == [("read_file", {"path": "cart.py"}, "c1")]
    assert rows[3]["content"] == "def total(items): return sum(items)" and rows[3]["tool_call_id"] == "c1"
    assert rows[4]["content"] == "It sums the item prices."
    assert rows[5]["content"].startswith("<state_snapshot>")
    assert [r["content"] for r in rows[7:]] == ["add a discount parameter", "Added discount=0."]


def test_gemini_legacy_json_resumed_into_jsonl(store, format_fixtures):
    """Resuming a pre-2026 ``session-*.json`` copies it into ``session-*.jsonl`` and goes on there;
    the ``.json`` left behind is read through its continuation, so the later turns are not refused
    as a collision with the stale copy."""
    folder = format_fixtures / GEMINI_MIGRATED
    legacy = folder / "session-2025-10-02T08-00-cc33dd44.json"
    assert detect_format(legacy) == "gemini-cli"
    summary = index(store, folder)
    assert summary["errors"] == []
    rows = messages(store, "cc33dd44-0000-4000-8000-000000000002")
    assert [r["content"] for r in rows] == ["rename the flag", "Renamed to --dry.", "also update the README",
                                            "README updated."]
    assert session(store, "cc33dd44-0000-4000-8000-000000000002")["model"] == "gemini-3-pro"


def test_gemini_legacy_json_alone_still_imports(store, tmp_path, format_fixtures):
    """Without its ``.jsonl`` continuation the legacy ``.json`` is the session."""
    legacy = format_fixtures / GEMINI_MIGRATED / "session-2025-10-02T08-00-cc33dd44.json"
    alone = tmp_path / "chats" / legacy.name
    alone.parent.mkdir()
    alone.write_bytes(legacy.read_bytes())
    assert index(store, alone)["errors"] == []
    rows = messages(store, "cc33dd44-0000-4000-8000-000000000002")
    assert [r["content"] for r in rows] == ["rename the flag", "Renamed to --dry."]


QWEN_PROMPTS = ".qwen/projects/-home-li-inventory/chats/7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e.jsonl"


def test_qwen_prompt_as_typed_and_notices(store, format_fixtures):
    """Qwen Code 0.9 keeps the prompt as typed in ``systemPayload.displayText`` (its ``message`` adds
    expanded @file text and hook context), records a message typed while tools ran as
    ``mid_turn_user_message`` and background-task and cron prompts as ``user`` records the UI shows
    as notices."""
    path = format_fixtures / "qwen-code" / QWEN_PROMPTS
    assert detect_format(path) == "qwen-code"
    assert index(store, path)["errors"] == []
    rows = messages(store, "7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e")
    assert roles(rows) == ["user", "assistant", "user", "tool", "system", "assistant", "system"]
    assert rows[0]["content"] == "why is @stock.py slow"
    assert rows[2]["content"] == "only the stock tests"
    assert rows[3]["content"] == "3 passed in 41.2s"
    assert rows[4]["content"] == ("Background shell shell-2 completed\n"
                                  "<task-notification>shell-2 finished: exit 0</task-notification>")
    assert rows[6]["content"] == "Scheduled: nightly stock report\nRun the nightly stock report"


def test_opencode_db_v2_session_messages(store, tmp_path):
    """Newer OpenCode keeps a session's messages in ``session_message`` (content inline); such a
    session was imported with no message at all. A session still in message/part reads as before."""
    path = build_sqlite(SQL_DIR / "opencode_db_v2.sql", tmp_path / ".local/share/opencode/opencode.db")
    assert detect_format(path) == "opencode-db"
    assert index(store, path)["errors"] == []
    rows = messages(store, "ses_7b8c9d0e1ffeV2Sess")
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "tool", "system", "assistant",
                           "tool", "system", "system"]
    assert rows[0]["content"] == "retry invoices that failed with a 503\n[image/png dashboard.png]"
    assert rows[1]["content"] == "Find where invoices are charged."
    assert rows[2]["calls"] == [("grep", {"pattern": "charge("}, "call_g1")]
    assert rows[3]["content"] == "billing/run.py:42: charge(invoice)" and rows[3]["tool_call_id"] == "call_g1"
    assert rows[4]["content"] == "The loop gives up after the first 503."
    assert rows[5]["content"] == "$ pytest -q billing\n4 passed"
    assert rows[8]["content"] == "file changed on disk"
    assert rows[9]["content"] == "[MessageAbortedError] aborted by the user"
    assert rows[10]["content"] == "Invoices now retry 503s with backoff."
    assert "hidden" not in [r["content"] for r in rows]  # an ignored text item
    assert session(store, "ses_7b8c9d0e1ffeV2Sess")["model"] == "anthropic/claude-sonnet-5"
    assert [r["content"] for r in messages(store, "ses_7b8c9d0e0ffeV1Sess")] == ["list the billing jobs"]


def test_crush_bang_mode_shell_command(store, tmp_path):
    """Crush's bang mode (mid-2026) stores ``!command`` and its output as a ``shell_command`` part of a
    user message; it was skipped as an unknown part type."""
    path = build_sqlite(SQL_DIR / "crush.sql", tmp_path / "api" / ".crush" / "crush.db")
    from hermes_store.db import Database
    db = Database(path, migrate=False)
    db.execute("INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, finished_at, provider)"
               " VALUES ('m9', 'a1f3c9e2-0b1d-4c55-9a7e-3d2f1e0c9b8a', 'user', ?, NULL, 1764000400, 1764000400,"
               " 1764000400, NULL)",
               ('[{"type": "shell_command", "data": {"command": "go test ./...", "output": "FAIL client_test.go:12",'
                ' "exit_code": 1}}]',))
    db.close()
    assert detect_format(path) == "crush"
    assert index(store, path)["errors"] == []
    rows = messages(store, "a1f3c9e2-0b1d-4c55-9a7e-3d2f1e0c9b8a")
    assert rows[-1]["role"] == "tool" and rows[-1]["tool_name"] == "shell"
    assert rows[-1]["content"] == "$ go test ./...\nFAIL client_test.go:12\n[exit 1]"


def test_crush_summary_message_and_workspace_cwd(store, tmp_path):
    """Newest Crush schema (charmbracelet/crush internal/db/migrations to 2026-09): the compaction
    summary is an assistant message flagged ``is_summary_message`` (a system row, not the model's
    reply), ``sessions.workspace_cwd`` names the workspace; a writer holding a WAL transaction does
    not block the read, a damaged row is reported, the database is never written."""
    import sqlite3

    path = tmp_path / "proj" / ".crush" / "crush.db"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript("""
    CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
      message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
      completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0, updated_at INTEGER NOT NULL,
      created_at INTEGER NOT NULL, summary_message_id TEXT, todos TEXT, collaboration_mode TEXT,
      last_prompt_tokens INTEGER, workspace_cwd TEXT, models TEXT, revert_message_id TEXT, archived_at INTEGER);
    CREATE TABLE files (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL,
      version INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
    CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
      parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
      finished_at INTEGER, provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL,
      hook_outputs TEXT DEFAULT '[]' NOT NULL, metadata TEXT);
    INSERT INTO sessions (id, title, updated_at, created_at, summary_message_id, workspace_cwd)
      VALUES ('s1', 'Retry the client', 1796000300, 1796000000, 'm3', '/home/ty/api-worktree');
    INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at) VALUES
      ('m1', 's1', 'user', '[{"type": "text", "data": {"text": "add retries"}}]', NULL, 1796000000, 1796000000),
      ('m2', 's1', 'assistant', '[{"type": "text", "data": {"text": "cut', 'gpt-5', 1796000100, 1796000100);
    INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, is_summary_message) VALUES
      ('m3', 's1', 'assistant', '[{"type": "text", "data": {"text": "Summary: retries were asked for."}}]',
       'gpt-5', 1796000200, 1796000200, 1);
    INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at) VALUES
      ('m4', 's1', 'assistant', '[{"type": "text", "data": {"text": "Retries added."}}]', 'gpt-5', 1796000300, 1796000300);
    """)
    conn.execute("BEGIN IMMEDIATE")  # Crush is running: a write transaction is open
    conn.execute("UPDATE sessions SET title = 'uncommitted' WHERE id = 's1'")
    try:
        before = (path.stat().st_mtime_ns, path.read_bytes())
        sidecars = sorted(p.name for p in path.parent.iterdir())
        result = index(store, path)
        assert (path.stat().st_mtime_ns, path.read_bytes()) == before
        assert sorted(p.name for p in path.parent.iterdir()) == sidecars
    finally:
        conn.execute("ROLLBACK")
        conn.close()
    assert [str(e) for e in result["errors"] if "message m2: bad parts JSON" not in str(e)] == []
    assert any("crush.db" in str(e) and "message m2" in str(e) for e in result["errors"])
    row = session(store, "s1")
    assert row["title"] == "Retry the client" and row["workspace"] == "/home/ty/api-worktree"
    rows = messages(store, "s1")
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "add retries"), ("system", "Summary: retries were asked for."), ("assistant", "Retries added.")]
