"""Gemini CLI's headless output saved to a file (``gemini -p --output-format stream-json``, and
the ``--output-format json`` document): read as its own format, ``gemini-stream``. Before, both
were refused as ``unknown format``."""

from __future__ import annotations

import json

import pytest
from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format
from hermes_store.sessions.importers import IMPORTERS, Head

RUN = "gemini-stream/runs/quarry-docs-lint.jsonl"
SID = "c3e8a1f0-7b2d-4e95-9a61-0d4f2b8c7e13"
DOC = "gemini-stream/runs/flaky-retry-test.json"
DOC_ID = "9d41b6e2-3a7c-4f08-b5e1-6c2a8d0f4b97"
SHELL_ID = "run_shell_command__run_shell_command_1787148133702_0"
READ_ID = "read_file__read_file_1787148136410_1"
# streams that also open with init/message-like lines, and Gemini CLI's own recordings
LOOK_ALIKES = ("gemini-cli", "gemini-cli-logs", "gemini-cli-checkpoint", "factory-droid-stream", "amp-stream",
               "claude-stream", "goose-stream", "openai_jsonl")


@pytest.fixture
def store(engine_store):
    """Every test here runs on SQLite and on PostgreSQL."""
    return engine_store


def _write(path, events):
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def _t(second: float) -> str:
    return f"2026-08-20T09:00:{second:06.3f}Z"


def test_both_outputs_are_detected_as_gemini_stream(format_fixtures):
    assert detect_format(format_fixtures / RUN) == "gemini-stream"
    assert detect_format(format_fixtures / DOC) == "gemini-stream"


def test_gemini_stream_claims_no_other_format_s_file(format_fixtures):
    sniff = IMPORTERS["gemini-stream"].sniff
    files = [p for name in LOOK_ALIKES for p in sorted((format_fixtures / name).rglob("*")) if p.is_file()]
    assert len(files) > 10
    assert [str(p) for p in files if sniff(Head.read(p)) >= 0.5] == []


def test_the_stream_keeps_prompt_joined_replies_calls_and_results(store, format_fixtures):
    summary = index(store, format_fixtures / RUN)
    assert summary["errors"] == []
    row = session(store, SID)
    assert row["origin_format"] == "gemini-stream" and row["source"] == "gemini-cli"
    assert row["model"] == "gemini-2.5-pro"
    assert row["started_at"] == pytest.approx(ts("2026-08-19T14:02:11.204Z"))
    assert row["ended_at"] == pytest.approx(ts("2026-08-19T14:02:21.045Z"))
    assert row["meta"]["status"] == "success" and row["meta"]["stats"]["tool_calls"] == 2
    assert row["meta"]["stats"]["models"]["gemini-2.5-pro"]["output_tokens"] == 377
    rows = messages(store, SID)
    assert roles(rows) == ["user", "assistant", "tool", "assistant", "tool", "system", "assistant"]
    assert [r["content"] for r in rows] == [
        "Why does `make docs-lint` fail on the docs folder? Fix the config if that is the cause.",
        "I'll run the docs lint target first to see which rule fails.",
        "markdownlint-cli2 \"docs/**/*.md\"\n"
        "docs/setup.md:14 MD013/line-length Line length [Expected: 100; Actual: 131]\n"
        "docs/setup.md:15 MD013/line-length Line length [Expected: 100; Actual: 118]\n"
        "make: *** [Makefile:31: docs-lint] Error 1",
        "Two lines in `docs/setup.md` exceed the 100-column limit. Let me check the lint config.",
        "File not found: /home/ines/src/quarry/.markdownlint.yaml",  # the failed call keeps its error
        "[warning] Agent execution blocked: edits outside docs/ need approval in this repository",
        "There is no `.markdownlint.yaml`; the limit comes from `.markdownlint-cli2.jsonc`. Both long lines "
        "are URLs, so wrapping them as reference links fixes the lint without raising the limit.",
    ]
    assert rows[1]["calls"] == [
        ("run_shell_command", {"command": "make docs-lint", "description": "Run the docs lint target"}, SHELL_ID)]
    assert rows[3]["calls"] == [
        ("read_file", {"absolute_path": "/home/ines/src/quarry/.markdownlint.yaml"}, READ_ID)]
    assert [(r["tool_name"], r["tool_call_id"]) for r in rows if r["role"] == "tool"] == [
        ("run_shell_command", SHELL_ID), ("read_file", READ_ID)]
    assert rows[1]["timestamp"] == pytest.approx(ts("2026-08-19T14:02:13.870Z"))  # the first chunk's time


def test_deltas_are_joined_and_nothing_is_stored_twice(store, format_fixtures):
    path = format_fixtures / RUN
    first = index(store, path)
    again = index(store, path)
    rows = messages(store, SID)
    assert len(rows) == 7 and first["messages_added"] == 7
    assert again["errors"] == [] and again["messages_added"] == 0
    contents = [r["content"] for r in rows]
    assert "I'll run the docs lint target" not in contents  # no row per chunk
    assert len(contents) == len(set(contents))
    # the run resumed with --resume and appended to the file: read whole, each message once
    with path.open("a", encoding="utf-8") as handle:
        for event in [
            {"type": "init", "timestamp": _t(1), "session_id": SID, "model": "gemini-2.5-pro"},
            {"type": "message", "timestamp": _t(2), "role": "user", "content": "Wrap them then."},
            {"type": "message", "timestamp": _t(3), "role": "assistant", "content": "Done: both", "delta": True},
            {"type": "message", "timestamp": _t(4), "role": "assistant", "content": " are reference links.",
             "delta": True},
            {"type": "result", "timestamp": _t(5), "status": "success", "stats": {"tool_calls": 0}},
        ]:
            handle.write(json.dumps(event) + "\n")
    assert index(store, path)["errors"] == []
    rows = messages(store, SID)
    assert roles(rows)[7:] == ["user", "assistant"] and len(rows) == 9
    assert rows[8]["content"] == "Done: both are reference links."
    assert len({r["content"] for r in rows}) == 9


def test_an_unknown_event_type_is_reported_once_with_its_line(store, tmp_path):
    path = _write(tmp_path / "run.jsonl", [
        {"type": "init", "timestamp": _t(0), "session_id": "g-1", "model": "gemini-2.5-flash"},
        {"type": "message", "timestamp": _t(1), "role": "user", "content": "hello"},
        {"type": "thought", "timestamp": _t(2), "subject": "Greeting"},
        {"type": "message", "timestamp": _t(3), "role": "assistant", "content": "hi", "delta": True},
        {"type": "thought", "timestamp": _t(4), "subject": "Again"},
        {"type": "message", "timestamp": _t(5), "role": "assistant", "content": " there", "delta": True},
        {"type": "result", "timestamp": _t(6), "status": "success"},
    ])
    assert detect_format(path) == "gemini-stream"
    errors = index(store, path)["errors"]
    assert [e["line"] for e in errors] == [3] and "'thought'" in errors[0]["error"]
    assert [(r["role"], r["content"]) for r in messages(store, "g-1")] == [
        ("user", "hello"), ("assistant", "hi there")]


def test_fatal_result_error_and_auto_model(store, tmp_path):
    path = _write(tmp_path / "quota.jsonl", [
        {"type": "init", "timestamp": _t(0), "session_id": "g-2", "model": "auto-gemini-2.5"},
        {"type": "message", "timestamp": _t(1), "role": "user", "content": "summarise CHANGELOG.md"},
        {"type": "tool_use", "timestamp": _t(2), "tool_name": "read_file", "tool_id": "read_file__1",
         "parameters": {"absolute_path": "/w/CHANGELOG.md"}},
        {"type": "tool_result", "timestamp": _t(3), "tool_id": "read_file__1", "status": "success"},
        {"type": "error", "timestamp": _t(4), "severity": "error", "message": "Quota exceeded for gemini-2.5-pro"},
        {"type": "result", "timestamp": _t(5), "status": "error",
         "error": {"type": "FatalTurnLimitedError", "message": "Reached max session turns"},
         "stats": {"total_tokens": 90, "models": {"gemini-2.5-flash-lite": {"total_tokens": 10},
                                                  "gemini-2.5-pro": {"total_tokens": 80}}}},
    ])
    assert index(store, path)["errors"] == []
    row = session(store, "g-2")
    assert row["model"] == "gemini-2.5-pro" and row["meta"]["requested_model"] == "auto-gemini-2.5"
    assert row["meta"]["status"] == "error"
    rows = messages(store, "g-2")
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "summarise CHANGELOG.md"),
        ("assistant", ""),
        ("tool", "[success]"),
        ("system", "[error] Quota exceeded for gemini-2.5-pro"),
        ("system", "[FatalTurnLimitedError] Reached max session turns"),
    ]
    assert rows[1]["calls"] == [("read_file", {"absolute_path": "/w/CHANGELOG.md"}, "read_file__1")]


def test_the_json_document_keeps_reply_stats_and_model(store, format_fixtures):
    assert index(store, format_fixtures / DOC)["errors"] == []
    row = session(store, DOC_ID)
    assert row["origin_format"] == "gemini-stream" and row["source"] == "gemini-cli"
    assert row["model"] == "gemini-2.5-flash"  # the main role's, not the router's
    assert row["meta"]["output_format"] == "json" and row["meta"]["stats"]["tools"]["totalCalls"] == 1
    rows = messages(store, DOC_ID)
    assert roles(rows) == ["assistant"]
    assert rows[0]["content"].startswith("The flaky test is `test_retry_backoff`")


def test_a_json_document_with_warnings_and_an_error(store, tmp_path):
    path = tmp_path / "out.json"
    path.write_text(json.dumps({
        "session_id": "g-3", "response": "",
        "stats": {"models": {}, "tools": {"totalCalls": 0}, "files": {}},
        "error": {"type": "INVALID_STREAM", "message": "Model stream ended with an empty response."},
        "warnings": ["Loop detected, stopping execution"],
    }, indent=2), encoding="utf-8")
    assert detect_format(path) == "gemini-stream"
    assert index(store, path)["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, "g-3")] == [
        ("system", "[warning] Loop detected, stopping execution"),
        ("system", "[INVALID_STREAM] Model stream ended with an empty response."),
    ]
