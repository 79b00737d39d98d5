"""OpenCode's ``opencode run --format json`` and Kimi CLI's ``kimi --print --output-format
stream-json`` output saved to a file: read as ``opencode-run`` and ``kimi-print``. Before, both
were refused as ``unknown format``."""

from __future__ import annotations

import pytest
from format_helpers import index, messages, roles, session
from sess_helpers import write_jsonl

from hermes_store.sessions import detect_format

OPENCODE = "opencode-run/runs/cron-step-fix.jsonl"
OC_SID = "ses_4d2e9a1b7ffeK3mQpL8vR2xT6w"
KIMI = "kimi-print/runs/upload-flake.jsonl"


@pytest.fixture
def store(engine_store):
    """Every test here runs on SQLite and on PostgreSQL."""
    return engine_store


def test_both_streams_are_detected_as_their_own(format_fixtures):
    assert detect_format(format_fixtures / OPENCODE) == "opencode-run"
    assert detect_format(format_fixtures / KIMI) == "kimi-print"


def test_opencode_run_keeps_the_session_its_parts_once_and_no_bookkeeping(store, format_fixtures):
    assert index(store, format_fixtures / OPENCODE)["errors"] == []  # step_* and done are bookkeeping
    row = session(store, OC_SID)
    assert row["origin_format"] == "opencode-run" and row["source"] == "opencode"
    rows = messages(store, OC_SID)
    assert [(r["role"], r["content"]) for r in rows] == [
        ("reasoning", "The cron parser rejects */15 in the minute field; check the tokenizer first."),
        ("assistant", "I'll run the failing parser test to see the error."),
        ("tool", "F\nE   ValueError: step '*/15' out of range\n1 failed in 0.21s\n"),
        ("tool", "File not found: /srv/cronkit/cronkit/tokens.py"),
        ("assistant", "The step check compares against 59 before subtracting the range start; `*/15` fails "
                      "because the range is 0-59 but the step is validated as a value. Fix: validate the step "
                      "against the range width."),
    ]
    assert rows[1]["calls"] == [
        ("bash", {"command": "pytest -x tests/test_cron.py -q", "description": "Run the cron parser tests"},
         "toolu_01HcRn8WqZt4"),
        ("read", {"filePath": "/srv/cronkit/cronkit/tokens.py"}, "toolu_01Jm2Vb6PqS9")]
    assert [(r["tool_name"], r["tool_call_id"]) for r in rows[2:4]] == [
        ("bash", "toolu_01HcRn8WqZt4"), ("read", "toolu_01Jm2Vb6PqS9")]


def test_opencode_run_part_printed_twice_error_and_unknown_type(store, tmp_path):
    sid = "ses_3a0b1c2d3ffeQ9wE8rT7yU6iO5"
    part = {"id": "prt_1", "sessionID": sid, "messageID": "msg_1", "type": "text", "text": "draft",
            "time": {"start": 1765094400000, "end": 1765094400500}}
    path = write_jsonl(tmp_path / "run.jsonl", [
        {"type": "step_start", "timestamp": 1765094400000, "sessionID": sid,
         "part": {"id": "prt_0", "sessionID": sid, "messageID": "msg_1", "type": "step-start"}},
        {"type": "text", "timestamp": 1765094400600, "sessionID": sid, "part": part},
        {"type": "brand_new_event", "timestamp": 1765094400700, "sessionID": sid},
        {"type": "text", "timestamp": 1765094400800, "sessionID": sid, "part": {**part, "text": "final answer"}},
        {"type": "error", "timestamp": 1765094400900, "sessionID": sid,
         "error": {"name": "APIError", "data": {"message": "429 rate limited", "isRetryable": True}}},
        {"type": "done", "timestamp": 1765094401000, "sessionID": sid, "reason": "idle", "rejected": []},
    ])
    errors = index(store, path)["errors"]
    assert [e["line"] for e in errors] == [3] and "brand_new_event" in errors[0]["error"]
    assert [(r["role"], r["content"]) for r in messages(store, sid)] == [
        ("assistant", "final answer"), ("system", "[APIError] 429 rate limited")]


def test_kimi_print_keeps_replies_thinking_calls_results_notices(store, format_fixtures):
    assert index(store, format_fixtures / KIMI)["errors"] == []
    sid = "upload-flake"  # print mode never prints the session id: the file names it
    row = session(store, sid)
    assert row["origin_format"] == "kimi-print" and row["source"] == "kimi-cli"
    rows = messages(store, sid)
    assert roles(rows) == ["reasoning", "assistant", "tool", "assistant", "tool", "system", "system", "assistant"]
    assert rows[0]["content"] == "The user wants the flaky upload test fixed. Read the test first."
    assert rows[1]["content"] == "Let me look at the upload test."
    assert rows[1]["calls"] == [("ReadFile", {"path": "tests/test_upload.py"}, "ReadFile:0")]
    assert (rows[2]["tool_name"], rows[2]["tool_call_id"]) == ("ReadFile", "ReadFile:0")
    assert rows[2]["content"].startswith("     1\timport time")
    assert rows[3]["content"] == "" and rows[3]["calls"] == [
        ("Shell", {"command": "pytest tests/test_upload.py -q"}, "Shell:1")]
    assert rows[4]["content"] == "<system>ERROR: Command failed with exit code: 1.</system>\n1 failed in 0.33s\n"
    assert rows[5]["content"] == ("[task] Background task completed: watch uploads\n"
                                  "Task ID: b3f8a0c1\nStatus: completed")
    assert rows[6]["content"].startswith("[plan /home/ana/.kimi/plans/upload-fix.md]\n# Plan\n1. Replace")
    assert rows[7]["content"].startswith("The test slept a fixed 0.1 s")


def test_kimi_print_unknown_line_is_reported_and_the_rest_read(store, tmp_path):
    path = write_jsonl(tmp_path / "kimi-run.jsonl", [
        {"role": "assistant", "content": [{"type": "think", "think": "check the log", "encrypted": None},
                                          {"type": "text", "text": "Reading the log."}]},
        {"role": "assistant", "content": [], "tool_calls": [
            {"type": "function", "id": "Shell:0", "function": {"name": "Shell", "arguments": "{\"command\": \"tail log\"}"}}]},
        {"event": "something_new", "n": 1},
        {"role": "tool", "content": "<system>Command executed successfully.</system>", "tool_call_id": "Shell:0"},
        {"role": "assistant", "content": "Done."},
    ])
    errors = index(store, path)["errors"]
    assert [e["line"] for e in errors] == [3] and "unknown line" in errors[0]["error"]
    assert [(r["role"], r["content"]) for r in messages(store, "kimi-run")] == [
        ("reasoning", "check the log"), ("assistant", "Reading the log."), ("assistant", ""),
        ("tool", "<system>Command executed successfully.</system>"), ("assistant", "Done.")]


def test_a_kimi_context_file_stays_kimi_cli(tmp_path):
    """The same message lines with Kimi's private roles (a ``context.jsonl``) are not print output."""
    path = write_jsonl(tmp_path / "context-copy.jsonl", [
        {"role": "_checkpoint", "id": 0},
        {"role": "assistant", "content": [{"type": "think", "think": "hm"}, {"type": "text", "text": "ok"}]},
    ])
    assert detect_format(path) == "kimi-cli"


def test_kimi_final_message_only_stays_generic_and_keeps_its_reply(store, tmp_path):
    """``--final-message-only`` prints one plain assistant line: nothing in it is Kimi's own, so
    the generic reader keeps it (claiming it would take every such OpenAI JSONL file)."""
    path = write_jsonl(tmp_path / "final.jsonl", [{"role": "assistant", "content": "Squash the last two commits."}])
    assert detect_format(path) == "openai-jsonl"
    assert index(store, path)["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, "final")] == [
        ("assistant", "Squash the last two commits.")]
