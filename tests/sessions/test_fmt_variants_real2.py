"""More variants seen in real files (docs/formats-variants.md): Roo Code / Cline, Aider, Cursor, Kimi CLI."""

from __future__ import annotations

from format_helpers import index, messages, roles, session

from hermes_store.sessions import detect_format

ROO_TASKS = "cline/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks"
ROO_REASONING = f"{ROO_TASKS}/7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d"
ROO_UI_ONLY = f"{ROO_TASKS}/1760100000000"


def test_roo_reasoning_kept_outside_the_blocks(store, format_fixtures):
    """Roo Code writes a non-Anthropic model's thinking as ``reasoning_details``, ``reasoning_content``
    or a reasoning item of its own, and Gemini's ``thoughtSignature`` as a block."""
    path = format_fixtures / ROO_REASONING / "api_conversation_history.json"
    assert detect_format(path) == "cline"
    assert index(store, path.parent)["errors"] == []
    sid = "7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "reasoning", "assistant", "user",
                           "reasoning", "assistant"]
    assert rows[1]["content"] == "The loop probably uses range(1, 3) somewhere."  # encrypted detail left out
    assert rows[2]["calls"] == [("read_file", {"path": "export.py"}, "call_m1")]
    assert rows[3]["tool_call_id"] == "call_m1" and rows[3]["tool_name"] == "read_file"
    assert rows[4]["content"] == "Range end is exclusive, so month 3 never runs."
    assert rows[7]["content"] == "A year has twelve months, so the end must be 13."
    assert rows[8]["content"] == "Changed it to range(1, 13)."
    row = session(store, sid)
    assert row["title"] == "Why does the nightly export skip March?"  # the task's say: text entry
    assert row["source"] == "roo-code"


def test_roo_task_opened_by_say_text_is_the_users(store, format_fixtures):
    """Cline and Roo Code open the panel with ``say: "text"`` holding the task: the user's words."""
    path = format_fixtures / ROO_UI_ONLY / "ui_messages.json"
    assert detect_format(path) == "cline"
    assert index(store, path)["errors"] == []
    rows = messages(store, "1760100000000")
    assert roles(rows) == ["user", "assistant", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == "Rename the cache flag to --no-cache"
    assert rows[2]["calls"][0][0] == "execute_command"
    assert session(store, "1760100000000")["title"] == "Rename the cache flag to --no-cache"


AIDER = "aider/.projects"


def _local(*parts: int) -> float:
    from datetime import datetime
    return datetime(*parts).timestamp()  # aider writes local times


def test_aider_prompt_history_times_the_chat_inputs(store, format_fixtures):
    """``.aider.input.history`` beside the chat history gives each typed input its time."""
    project = format_fixtures / AIDER / "ledger"
    assert detect_format(project / ".aider.input.history") == "aider"
    summary = index(store, project)
    assert summary["errors"] == [] and summary["files"] == 2
    from hermes_store.sessions import SessionIndex
    ids = sorted(s["id"] for s in SessionIndex(store).list_sessions(limit=10))
    assert len(ids) == 2 and not any(i.endswith("input-history") for i in ids)  # not stored twice
    first = messages(store, ids[0])
    users = [r for r in first if r["role"] == "user"]
    assert [r["content"] for r in users] == ["/add ledger/report.py", "why are totals off by one cent",
                                              "do it\nand add a test"]
    assert [r["timestamp"] for r in users] == [_local(2025, 11, 4, 10, 0, 9, 412008),
                                               _local(2025, 11, 4, 10, 0, 31, 100250),
                                               _local(2025, 11, 4, 10, 1, 15, 1)]
    second = [r for r in messages(store, ids[1]) if r["role"] == "user"]
    assert second[0]["content"] == "do it" and second[0]["timestamp"] == _local(2025, 11, 5, 16, 20, 55, 730000)


def test_aider_prompt_history_alone(store, format_fixtures):
    """A prompt history with no chat history beside it is read as its prompts (it was 'unknown format')."""
    path = format_fixtures / AIDER / "scratch" / ".aider.input.history"
    assert detect_format(path) == "aider"
    assert index(store, path)["errors"] == []
    from hermes_store.sessions import SessionIndex
    (sid,) = [s["id"] for s in SessionIndex(store).list_sessions(limit=10)]
    rows = messages(store, sid)
    assert roles(rows) == ["user", "user"]
    assert rows[1]["content"] == "make it back off exponentially\nwith a cap of 30 seconds"
    assert rows[1]["timestamp"] == _local(2025, 12, 1, 8, 16, 42, 250000)
    assert session(store, sid)["started_at"] == _local(2025, 12, 1, 8, 15, 0, 100)


CURSOR_TXT = ("cursor-agent-txt/.cursor/projects/home-ana-billing/agent-transcripts/"
              "8d7c6b5a-4e3f-4a2b-9c1d-0e9f8a7b6c5d.txt")


def test_cursor_text_transcript(store, format_fixtures):
    """Cursor's plain-text agent transcripts (``user:``/``assistant:`` turns, ``[Thinking]``,
    ``[Tool call]`` with indented arguments, ``[Tool result]``) were 'unknown format'."""
    path = format_fixtures / CURSOR_TXT
    assert detect_format(path) == "cursor-agent-txt"
    assert index(store, path.parent)["errors"] == []  # the directory walk finds it too
    sid = "8d7c6b5a-4e3f-4a2b-9c1d-0e9f8a7b6c5d"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "tool", "assistant", "tool",
                           "user", "assistant", "tool", "assistant"]
    assert rows[0]["content"].startswith("the invoice totals test fails on leap years, find out why\n\n<user_info>")
    assert rows[1]["content"] == ("The failure is date related; I should look at how the period length is computed.\n"
                                  "Probably a hard-coded 365.")
    assert rows[2]["calls"] == [("Grep", {"pattern": "365", "path": "/home/ana/billing/src"}, f"{sid}:call-1")]
    assert rows[3]["tool_call_id"] == f"{sid}:call-1" and rows[3]["content"] == "src/period.py:14:    days = 365"
    assert rows[4]["content"] == "The period length is hard-coded to 365 days in `src/period.py`."
    assert rows[4]["calls"][0][:2] == ("Read", {"path": "/home/ana/billing/src/period.py", "limit": "30"})
    assert rows[6]["calls"][0][1]["new_string"] == "    days = 366 if calendar.isleap(year) else 365"
    assert rows[7]["content"] == "" and rows[7]["tool_name"] == "StrReplace"  # an empty result is kept
    assert rows[8]["content"] == "run the tests again"
    assert rows[10]["content"] == "exit_code: 0\n5 passed in 0.41s"
    assert session(store, sid)["source"] == "cursor"


KIMI_DIR = "kimi-cli/.kimi/sessions/2c4e6a8b0d1f3a5c7e9b1d3f5a7c9e0b"
KIMI_WITH_CONTEXT = "7b3d9f1e-2a4c-4e6a-8b0d-1f3a5c7e9b2d"
KIMI_WIRE_ONLY = "0e2d4c6b-8a9f-4b1c-9d2e-3f4a5b6c7d8e"


def test_kimi_cli_wire_log_beside_its_context(store, format_fixtures):
    """Kimi CLI writes ``wire.jsonl`` beside ``context.jsonl``: it was 'unknown format'; now it is read
    through the context (stored once) and gives the session the times the context lacks."""
    folder = format_fixtures / KIMI_DIR / KIMI_WITH_CONTEXT
    assert detect_format(folder / "wire.jsonl") == "kimi-cli"
    summary = index(store, folder)
    assert summary["errors"] == [] and summary["files"] == 2
    rows = messages(store, KIMI_WITH_CONTEXT)
    assert roles(rows) == ["user", "assistant", "tool", "assistant"]  # from the context, not twice
    row = session(store, KIMI_WITH_CONTEXT)
    assert row["started_at"] == 1763035200.125 and row["ended_at"] == 1763035203.7


def test_kimi_cli_wire_log_alone(store, format_fixtures):
    """A session folder whose context file is gone: the wire log is the conversation, with times,
    thinking, calls, results and a subagent's events as its child session."""
    path = format_fixtures / KIMI_DIR / KIMI_WIRE_ONLY / "wire.jsonl"
    assert detect_format(path) == "kimi-cli"
    assert index(store, path)["errors"] == []
    rows = messages(store, KIMI_WIRE_ONLY)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == "why is the lockfile out of date" and rows[0]["timestamp"] == 1763121600.5
    assert rows[2]["calls"] == [("Shell", {"command": "git diff --stat package.json"}, "Shell:1")]
    assert rows[3]["tool_call_id"] == "Shell:1" and rows[3]["tool_name"] == "Shell"
    assert rows[3]["content"] == " package.json | 2 +-"
    assert rows[6]["content"].startswith("package.json bumped vitest")
    child = f"{KIMI_WIRE_ONLY}:a7f3"
    assert session(store, child)["parent_session_id"] == KIMI_WIRE_ONLY
    assert [r["content"] for r in messages(store, child)] == ["Only vitest differs: 3.2.1 in package.json, 3.1.4 locked."]


CURSOR_V3 = "cursor/Library/Application Support/Cursor/User/globalStorage/state.vscdb"


def test_cursor3_composer_named_by_the_composer_index(store, format_fixtures, tmp_path):
    """Cursor 3 keeps a composer's name and times only in ``composer.composerHeaders``, and the model
    only on its bubbles: the session had no title and no model."""
    from format_helpers import SQL_DIR, build_sqlite

    from hermes_store.db import Database
    built = build_sqlite(SQL_DIR / "cursor_v3.sql", tmp_path / "rebuilt.vscdb")
    dump = "SELECT key, CAST(value AS TEXT) FROM ItemTable UNION ALL SELECT key, CAST(value AS TEXT) FROM cursorDiskKV ORDER BY 1"
    with Database(built, readonly=True, migrate=False) as a, \
            Database(format_fixtures / CURSOR_V3, readonly=True, migrate=False) as b:
        assert a.query(dump) == b.query(dump)
    path = format_fixtures / CURSOR_V3
    assert detect_format(path) == "cursor"
    assert index(store, path)["errors"] == []
    sid = "4c3b2a19-0f8e-4d7c-b6a5-948372615a0b"
    row = session(store, sid)
    assert row["title"] == "Flaky upload retry" and row["model"] == "gpt-5.4"
    assert row["started_at"] == 1776141470.16 and row["ended_at"] == 1776141590.0
    assert roles(messages(store, sid)) == ["user", "assistant"]
