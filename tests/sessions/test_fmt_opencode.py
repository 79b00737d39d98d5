"""OpenCode: the JSON storage tree (both layouts) and the SQLite database."""

from __future__ import annotations

import pytest
from format_helpers import SQL_DIR, build_sqlite, index, messages, roles, session

from hermes_store.sessions import detect_format

STORAGE = "opencode-json/.local/share/opencode/storage"
PID = "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750"
SESSION = f"{STORAGE}/session/{PID}/ses_5f1a2b3c4ffe8Hq1ZbX0aYcD2e.json"
CHILD = f"{STORAGE}/session/{PID}/ses_5f1a2b3c5ffe9Kc2YaW1bZdE3f.json"
OLD = f"{STORAGE}/session/info/ses_0aa1bb2cc3ddOLDlayout.json"


@pytest.fixture
def opencode_db(format_fixtures):
    return format_fixtures / "opencode-db/.local/share/opencode/opencode.db"


def test_database_fixture_matches_its_sql(tmp_path, opencode_db):
    """The committed opencode.db is the one fixture_sql/opencode_db.sql builds."""
    built = build_sqlite(SQL_DIR / "opencode_db.sql", tmp_path / "rebuilt.db")
    dump = "SELECT id, data FROM part UNION ALL SELECT id, data FROM message ORDER BY 1"
    from hermes_store.db import Database

    with Database(built, readonly=True, migrate=False) as a, Database(opencode_db, readonly=True, migrate=False) as b:
        assert a.query(dump) == b.query(dump)


def test_detected(format_fixtures, opencode_db):
    assert detect_format(format_fixtures / SESSION) == "opencode-json"
    assert detect_format(format_fixtures / OLD) == "opencode-json"
    assert detect_format(opencode_db) == "opencode-db"


def test_json_tree_session(store, format_fixtures):
    summary = index(store, format_fixtures / SESSION)
    assert summary["errors"] == []
    sid = "ses_5f1a2b3c4ffe8Hq1ZbX0aYcD2e"
    row = session(store, sid)
    assert row["origin_format"] == "opencode-json" and row["source"] == "opencode"
    assert row["title"] == "Add dark mode toggle" and row["workspace"] == "/home/kim/notes-app"
    assert row["model"] == "openai/gpt-5"
    assert row["started_at"] == pytest.approx(1761904800.0)
    assert row["meta"]["projectID"] == PID
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "tool", "assistant",
                           "user", "assistant", "tool", "system"]
    assert rows[0]["content"] == (
        "add a dark mode toggle to @src/Settings.tsx\n"
        "Called the Read tool with the following input: {\"filePath\":\"/home/kim/notes-app/src/Settings.tsx\"}\n"
        "[text/plain src/Settings.tsx]")
    assert rows[0]["timestamp"] == pytest.approx(1761904800.5)
    assert rows[1]["content"] == "The toggle needs state in Settings and a CSS class on <body>."
    assert rows[2]["content"] == "I'll add the toggle and wire it to a `dark` class."
    assert [c[:1] + c[2:] for c in rows[2]["calls"]] == [("edit", "toolu_01EditA"), ("bash", "toolu_01BashB")]
    assert rows[2]["calls"][1][1] == {"command": "npm test", "description": "Run tests"}
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"], rows[3]["content"]) == (
        "edit", "toolu_01EditA", "Edit applied successfully.")
    assert rows[3]["timestamp"] == pytest.approx(1761904804.5)
    assert rows[4]["content"] == "Error: 1 test failed: Settings renders toggle"
    assert rows[5]["content"].startswith("The failing test expects a label")
    assert rows[6]["content"] == "screenshot of the result\n[image/png clipboard]"
    assert rows[7]["calls"][0][0] == "task" and rows[8]["content"] == "[running]"
    assert rows[9]["content"] == "[MessageAbortedError] The operation was aborted."


def test_subagent_session_has_its_parent(store, format_fixtures):
    assert index(store, format_fixtures / CHILD)["errors"] == []
    row = session(store, "ses_5f1a2b3c5ffe9Kc2YaW1bZdE3f")
    assert row["parent_session_id"] == "ses_5f1a2b3c4ffe8Hq1ZbX0aYcD2e"
    assert [r["content"] for r in messages(store, "ses_5f1a2b3c5ffe9Kc2YaW1bZdE3f")] == ["Check colour contrast"]


def test_early_layout_with_inline_parts(store, format_fixtures):
    assert index(store, format_fixtures / OLD)["errors"] == []
    sid = "ses_0aa1bb2cc3ddOLDlayout"
    row = session(store, sid)
    assert row["title"] == "Explain the build script"
    assert row["model"] == "anthropic/claude-sonnet-4-20250514"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "assistant", "tool", "assistant"]
    assert rows[1]["calls"] == [("read", {"filePath": "build.sh"}, "toolu_old1")]
    assert rows[2]["content"] == "#!/bin/sh\nbun build src/index.ts" and rows[2]["tool_name"] == "read"
    assert rows[3]["content"] == "It bundles src/index.ts with bun."
    assert rows[3]["timestamp"] == pytest.approx(1750000001.0)


def test_new_messages_are_added_on_the_next_run(store, format_fixtures):
    import json

    path = format_fixtures / SESSION
    index(store, path)
    msg = format_fixtures / STORAGE / "message/ses_5f1a2b3c4ffe8Hq1ZbX0aYcD2e/msg_a0e5d5b50001Zz.json"
    msg.write_text(json.dumps({"id": "msg_a0e5d5b50001Zz", "sessionID": "ses_5f1a2b3c4ffe8Hq1ZbX0aYcD2e",
                               "role": "user", "time": {"created": 1761905200000}}))
    part = format_fixtures / STORAGE / "part/msg_a0e5d5b50001Zz/prt_a0e5d5b50002Zz.json"
    part.parent.mkdir()
    part.write_text(json.dumps({"id": "prt_a0e5d5b50002Zz", "type": "text", "text": "one more thing"}))
    again = index(store, path)
    assert again["messages_added"] == 1
    rows = messages(store, "ses_5f1a2b3c4ffe8Hq1ZbX0aYcD2e")
    assert len(rows) == 11 and rows[-1]["content"] == "one more thing"


def test_database(store, opencode_db):
    summary = index(store, opencode_db)
    assert len(summary["errors"]) == 1  # the one row whose data is cut short
    assert summary["errors"][0]["error"].startswith("message msg_b1000003: bad JSON in 'data'")
    row = session(store, "ses_6a7b8c9d0ffeDbSess1")
    assert row["origin_format"] == "opencode-db" and row["source"] == "opencode"
    assert row["title"] == "Paginate /users" and row["model"] == "openrouter/qwen/qwen3-coder"
    assert row["started_at"] == pytest.approx(1767001000.0)
    rows = messages(store, "ses_6a7b8c9d0ffeDbSess1")
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "user"]
    assert rows[2]["calls"] == [("grep", {"pattern": "SELECT .* FROM users"}, "call_grep_1")] and rows[2]["content"] == ""
    assert rows[3]["content"] == "src/users.ts:14: SELECT * FROM users"
    assert rows[4]["content"] == "Added `cursor` and `limit` to the users query."
    assert rows[5]["content"] == "thanks — ship it" and rows[5]["timestamp"] == pytest.approx(1767001160.0)
    child = session(store, "ses_6a7b8c9d1ffeDbChild")
    assert child["parent_session_id"] == "ses_6a7b8c9d0ffeDbSess1"
    again = index(store, opencode_db)
    assert again["messages_added"] == 0
    assert len(messages(store, "ses_6a7b8c9d0ffeDbSess1")) == 6


def test_walking_the_storage_tree_reports_no_unknown_files(store, format_fixtures):
    """Message, part and project files are read through their session file, not reported."""
    summary = index(store, format_fixtures / STORAGE)
    assert summary["errors"] == []
    assert summary["messages_added"] == 15 and summary["sessions_added"] == 3
