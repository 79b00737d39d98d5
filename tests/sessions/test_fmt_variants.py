"""Variants of known agents' files, each read whole (docs/formats-variants.md lists them)."""

from __future__ import annotations

import json

import pytest
from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format

CURSOR = "cursor-agent/.cursor/projects/home-ana-shop/agent-transcripts"
CURSOR_MAIN = "3e1f6a2b-9c4d-4e5f-8a7b-0c1d2e3f4a5b"
CURSOR_SUB = "9b8a7c6d-1111-4222-8333-444455556666"
OPENCODE = "opencode-jsonl/exports/ses_6a7b8c9d0ffeQz1Yx2Wv3Ut4.jsonl"
CLINE_UI = "cline/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1759000000000/ui_messages.json"
CODEX_OLD = "codex_early/sessions/2025/08/04/rollout-2025-08-04T09-12-00-0198761a-2b3c-7d4e-8f50-617283940a1b.jsonl"
PI_CUSTOM = "pi/.pi/agent/sessions/--home-zoe-notes--/2026-02-10T09-00-00-000Z_c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f.jsonl"
AIDER = "aider/.projects/blog/.aider.chat.history.md"
CHATGPT_ONE = "chatgpt-export/.downloads/single/Pgbouncer_pool_sizing.json"
CLAUDE_OTHER = "claude-code/projects/-home-ana-tools/c7d8e9f0-1a2b-4c3d-9e4f-5a6b7c8d9e0f.jsonl"
CLAUDE_WEB = "claude-code-web/.downloads/session_01HkQ7wXyZ.json"
GENERIC = "openai_jsonl/run_log.jsonl"


@pytest.mark.parametrize(("rel", "fmt"), [
    (f"{CURSOR}/{CURSOR_MAIN}/{CURSOR_MAIN}.jsonl", "cursor-agent"), (OPENCODE, "opencode-jsonl"),
    (CLINE_UI, "cline"), (CODEX_OLD, "codex"), (PI_CUSTOM, "pi"), (AIDER, "aider"),
    (CHATGPT_ONE, "chatgpt-export"), (CLAUDE_OTHER, "claude-code"), (CLAUDE_WEB, "claude-code-web"),
    (GENERIC, "openai-jsonl")])
def test_each_variant_is_detected_as_its_agent(format_fixtures, rel, fmt):
    assert detect_format(format_fixtures / rel) == fmt


def test_cursor_agent_transcript_unwraps_the_query_and_keeps_calls(store, format_fixtures):
    assert index(store, format_fixtures / CURSOR)["errors"] == []
    rows = messages(store, CURSOR_MAIN)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "tool", "assistant"]
    assert rows[0]["content"].startswith("why does checkout fail with a 502 behind pgbouncer?\n\n<user_info>")
    assert rows[1]["content"] == "Look at the pool settings first."
    assert rows[2]["calls"] == [("Read", {"path": "/etc/pgbouncer/pgbouncer.ini"}, "tool_01")]
    assert (rows[3]["tool_name"], rows[3]["content"]) == ("Read", "[databases]\nshop = host=127.0.0.1 pool_size=5")
    assert rows[4]["calls"] == [("Shell", {"command": "tail -n 20 /var/log/pgbouncer.log"}, "tool_02")]
    assert (rows[5]["tool_call_id"], rows[5]["content"]) == ("tool_02", "")  # an empty result is kept
    assert session(store, CURSOR_SUB)["parent_session_id"] == CURSOR_MAIN
    assert messages(store, CURSOR_SUB)[0]["content"] == "List every file that opens a database connection."


def test_opencode_jsonl_export_keeps_session_id_and_times(store, format_fixtures):
    assert index(store, format_fixtures / OPENCODE)["errors"] == []
    sid = "ses_6a7b8c9d0ffeQz1Yx2Wv3Ut4"
    row = session(store, sid)
    assert row["title"] == "Add rate limiting to /login" and row["workspace"] == "/home/li/api"
    assert row["started_at"] == pytest.approx(1760100000.0) and row["model"] == "anthropic/claude-sonnet-4-5"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "tool", "assistant"]
    assert rows[2]["calls"][1] == ("edit", {"filePath": "src/routes/auth.ts", "oldString": "router.post('/login', login)",
                                            "newString": "router.post('/login', limiter, login)"}, "call_edit1")
    assert rows[4]["content"] == "" and rows[0]["timestamp"] == pytest.approx(1760100000.5)


def test_cline_task_without_its_history_is_read_from_the_panel(store, format_fixtures):
    assert index(store, format_fixtures / CLINE_UI)["errors"] == []
    row = session(store, "1759000000000")
    assert row["title"] == "Fix the flaky test in test_orders.py" and row["started_at"] == pytest.approx(1759000000.0)
    rows = messages(store, "1759000000000")
    assert roles(rows) == ["user", "reasoning", "assistant", "assistant", "tool", "assistant", "tool", "system",
                           "user", "assistant"]
    assert rows[3]["calls"] == [("readFile", {"path": "tests/test_orders.py"}, "ui-4")]
    assert rows[4]["content"].startswith("def test_total():")
    assert rows[5]["calls"] == [("execute_command", {"command": "pytest tests/test_orders.py -q"}, "ui-5")]
    assert (rows[6]["tool_call_id"], rows[6]["content"]) == ("ui-5", "")
    assert rows[-1]["content"] == "Compared sorted(totals()) instead; the test is stable."  # partial one skipped


def test_codex_early_rollout_keeps_calls_and_messages(store, format_fixtures):
    assert index(store, format_fixtures / CODEX_OLD)["errors"] == []
    rows = messages(store, "0198761a-2b3c-7d4e-8f50-617283940a1b")
    assert roles(rows) == ["user", "user", "assistant", "assistant", "tool", "assistant", "tool", "assistant",
                           "assistant"]
    assert rows[0]["content"].startswith("<environment_context>")  # boilerplate kept in the text
    assert rows[3]["calls"] == [("shell", {"command": ["bash", "-lc", "wc -l src/main.rs"]}, "call_wc1")]
    assert rows[4]["content"] == "212 src/main.rs\n" and rows[6]["content"] == ""
    assert rows[7]["calls"] == [("web_search", {"status": "completed"}, None)]
    assert all(r["content"] or r["calls"] or r["role"] == "tool" for r in rows)


def test_pi_custom_entry_and_branch_summary_are_kept(store, format_fixtures):
    """A custom entry is a system row; a ``branchSummary`` message (pi's own role for the
    summary of an abandoned branch) is a system row too, and no longer an error."""
    summary = index(store, format_fixtures / PI_CUSTOM)
    assert summary["errors"] == []
    rows = messages(store, "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f")
    assert roles(rows) == ["user", "system", "reasoning", "assistant", "tool", "system", "assistant"]
    assert rows[1]["content"].startswith("[todo-state] {") and json.loads(rows[1]["content"][13:])["todos"]
    assert rows[5]["content"] == "Tried tagging by filename first; abandoned."


def test_aider_text_before_the_first_header_is_its_own_session(store, format_fixtures):
    summary = index(store, format_fixtures / AIDER)
    assert len(summary["errors"]) == 1 and summary["errors"][0]["line"] == 1
    assert "read into session" in summary["errors"][0]["error"]
    before = summary["errors"][0]["error"].split("'")[-2]
    assert before.startswith("aider:") and before.endswith(":before-first-header")
    assert session(store, before)["started_at"] is None
    rows = messages(store, before)
    assert roles(rows) == ["assistant", "user", "assistant"]
    assert rows[1]["content"] == "why does the RSS feed repeat old posts?"


def test_single_chatgpt_conversation_without_current_node(store, format_fixtures):
    assert index(store, format_fixtures / CHATGPT_ONE)["errors"] == []
    sid = "68f1a2b3-c4d5-8e6f-a7b8-c9d0e1f2a3b4"
    assert session(store, sid)["title"] == "Pgbouncer pool sizing"
    assert roles(messages(store, sid)) == ["user", "assistant", "user", "assistant"]


def test_claude_code_lines_from_another_writer(store, format_fixtures):
    summary = index(store, format_fixtures / CLAUDE_OTHER)
    assert [e["line"] for e in summary["errors"]] == [4]  # its own line type, reported
    rows = messages(store, "c7d8e9f0-1a2b-4c3d-9e4f-5a6b7c8d9e0f")
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant"]
    assert rows[2]["calls"] == [("Grep", {"pattern": "MAX_RETRIES", "path": "src"}, "toolu_w1")]
    assert rows[0]["timestamp"] == pytest.approx(ts("2026-01-09T08:00:00.000Z"))


def test_claude_code_web_session_document(store, format_fixtures):
    assert index(store, format_fixtures / CLAUDE_WEB)["errors"] == []
    sid = "2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091"
    assert session(store, sid)["title"] == "Fix flaky login test"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant"]
    assert rows[2]["calls"][0][0] == "Bash"


def test_generic_jsonl_system_and_error_lines_are_kept(store, format_fixtures):
    assert index(store, format_fixtures / GENERIC)["errors"] == []
    rows = messages(store, "run-2026-03-01")
    assert roles(rows) == ["system", "user", "system", "assistant", "tool", "system", "assistant"]
    assert rows[2]["content"] == "context window 80% full; older turns summarised"
    assert rows[5]["content"] == "push rejected: protected tag" and rows[4]["content"] == ""


HERMES_THINKING = "hermes_json/reasoning/session_20260210_090000_c0ffee.json"


def test_hermes_snapshot_thinking_is_indexed_as_reasoning(store, format_fixtures):
    assert detect_format(format_fixtures / HERMES_THINKING) == "hermes-json"
    assert index(store, format_fixtures / HERMES_THINKING)["errors"] == []
    sid = "20260210_090000_c0ffee"
    assert session(store, sid)["model"] == "deepseek/deepseek-r1"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "tool", "reasoning", "assistant", "assistant"]
    assert rows[1]["content"] == "Net 15 from Jan 28 is Feb 12. I should check today's date first."
    assert rows[2]["calls"] == [("terminal", {"command": "date +%F"}, "call_date")]
    assert (rows[3]["tool_name"], rows[3]["content"]) == ("terminal", "2026-02-10")
    assert (rows[4]["tool_call_id"], rows[4]["content"]) == ("call_none", "")  # an empty result is kept
    assert rows[5]["content"] == "Feb 12 minus Feb 10 is 2."  # reasoning_content too
    assert rows[7]["content"] == "Anything else?"  # blank reasoning adds no row
    index(store, format_fixtures / HERMES_THINKING)
    assert len(messages(store, sid)) == 8  # re-reading the snapshot adds nothing


def test_generic_chat_jsonl_keeps_refusals_and_spoken_replies(store, tmp_path):
    """Chat Completions messages whose words are not text parts: a ``refusal`` part, a top-level
    ``refusal`` with empty content, and an audio reply's ``transcript`` (content null). Before,
    stored as ``[refusal]`` and as empty messages."""
    path = tmp_path / "voice-log.jsonl"
    lines = [
        {"role": "user", "content": [{"type": "input_text", "text": "write a keylogger"}]},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "I cannot help with a keylogger."}]},
        {"role": "user", "content": "then read me the tide table"},
        {"role": "assistant", "content": "", "refusal": "I cannot read that table aloud."},
        {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}]},
        {"role": "assistant", "content": None, "audio": {"id": "audio_1", "expires_at": 1781337600,
                                                        "data": "UklGRg==", "transcript": "High tide is at six."}},
    ]
    path.write_text("".join(json.dumps(obj) + "\n" for obj in lines), encoding="utf-8")
    assert index(store, path)["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, "voice-log")] == [
        ("user", "write a keylogger"), ("assistant", "I cannot help with a keylogger."),
        ("user", "then read me the tide table"), ("assistant", "I cannot read that table aloud."),
        ("user", "[input_audio]"), ("assistant", "High tide is at six.")]
