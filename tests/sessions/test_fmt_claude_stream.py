"""Claude Code's headless output (``claude -p --output-format stream-json``, the Agent SDK's
messages) saved to a file: read as its own format, ``claude-stream``. Before, it was read as a
transcript: the session was named after the file, not its ``session_id``, and each bookkeeping
type (``tool_progress``, ``rate_limit_event``, ``result``, ``prompt_suggestion``) was reported as
a problem."""

from __future__ import annotations

import pytest
from format_helpers import index, messages, roles, session
from sess_helpers import write_jsonl

from hermes_store.sessions import detect_format

RUN = "claude-stream/runs/nightly-triage.jsonl"
SID = "5f1e2d3c-4b5a-4697-8877-665544332211"


@pytest.fixture
def store(engine_store):
    """Every test here runs on SQLite and on PostgreSQL."""
    return engine_store


def test_a_saved_stream_is_detected_as_claude_stream(format_fixtures):
    assert detect_format(format_fixtures / RUN) == "claude-stream"
    assert detect_format(format_fixtures / "amp-stream/runs/amp-kelvin.jsonl") == "amp-stream"


def test_the_stream_keeps_the_session_its_subagent_and_no_bookkeeping(store, format_fixtures):
    assert index(store, format_fixtures / RUN)["errors"] == []  # no bookkeeping type is a problem
    row = session(store, SID)
    assert row["origin_format"] == "claude-stream" and row["source"] == "claude-code"
    assert row["model"] == "claude-opus-4-1-20250805" and row["workspace"] == "/srv/ledger"
    rows = messages(store, SID)
    assert roles(rows) == ["user", "assistant", "tool", "reasoning", "assistant", "user"]
    assert rows[1]["calls"][0][0] == "Task"
    assert rows[2]["content"] == "Account 4411 is off by 12.50 EUR since the 02:14 run."
    texts = [r["content"] for r in rows]
    assert texts.count("Triage the nightly failure in the ledger reconciliation job") == 1  # replay skipped
    assert "I will" not in texts  # the partial delta: the whole message follows
    child = messages(store, f"{SID}/toolu_task1")
    assert roles(child) == ["assistant", "tool"]
    assert child[1]["content"] == "02:14 balance mismatch: account 4411 off by 12.50 EUR"
    assert session(store, f"{SID}/toolu_task1")["parent_session_id"] == SID


def test_an_unknown_event_type_is_still_reported(store, tmp_path):
    path = tmp_path / "run.jsonl"
    lines = [{"type": "system", "subtype": "init", "session_id": "s-1", "cwd": "/x", "tools": []},
             {"type": "user", "message": {"role": "user", "content": "hello"}, "parent_tool_use_id": None,
              "session_id": "s-1"},
             {"type": "brand_new_event", "session_id": "s-1"},
             {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
              "parent_tool_use_id": None, "session_id": "s-1"},
             {"type": "result", "subtype": "success", "result": "hi", "session_id": "s-1"}]
    write_jsonl(path, lines)
    errors = index(store, path)["errors"]
    assert [e["line"] for e in errors] == [3] and "brand_new_event" in errors[0]["error"]
    assert [r["content"] for r in messages(store, "s-1")] == ["hello", "hi"]


def test_an_error_result_keeps_its_errors(store, tmp_path):
    """Claude Code's error results list their text under ``errors``."""
    path = tmp_path / "failed.jsonl"
    lines = [{"type": "system", "subtype": "init", "session_id": "s-2", "cwd": "/x", "tools": []},
             {"type": "user", "message": {"role": "user", "content": "run it"}, "parent_tool_use_id": None,
              "session_id": "s-2"},
             {"type": "result", "subtype": "error_during_execution", "is_error": True, "session_id": "s-2",
              "errors": ["API Error: 529 overloaded", "retry budget spent"]}]
    write_jsonl(path, lines)
    assert index(store, path)["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, "s-2")] == [
        ("user", "run it"),
        ("system", "[error_during_execution] API Error: 529 overloaded; retry budget spent")]
