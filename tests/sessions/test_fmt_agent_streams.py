"""Other agents' headless stream-json saved to a file, read as their own agent's: Cursor's
``cursor-agent -p --output-format stream-json`` (``cursor-stream``) and Qwen Code's
``qwen -p --output-format stream-json`` (``qwen-stream``). Before, Cursor's stream was read as a
Claude Code transcript (named after the file; its ``thinking``, ``tool_call`` and ``result`` lines
reported and dropped) and Qwen Code's as Claude Code's stream (stored as ``claude-code``)."""

from __future__ import annotations

import json

import pytest
from format_helpers import index, messages, roles, session
from sess_helpers import write_jsonl

from hermes_store.sessions import detect_format

CURSOR = "cursor-stream/runs/atlas-tile-cache.jsonl"
CURSOR_ID = "3f9c2b1e-7a44-4d2e-9b8a-51c0de7e2a19"
QWEN = "qwen-stream/runs/ledger-rates.jsonl"
QWEN_ID = "8b1f4e2a-6c3d-4f5e-9a7b-2c1d0e9f8a76"
CALL = "call-5d1e0c7a-2b9f-4c11-8e0d-6a2f3b4c5d6e-{n}\nfc_7c1d2e3f-aa10-4b2c-9d8e-0f1e2d3c4b5a_{n}"
LATER = "call-91b2c3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d-{m}\nfc_0a1b2c3d-4e5f-4061-8273-94a5b6c7d8e9_{n}"


@pytest.fixture
def store(engine_store):
    """Every test here runs on SQLite and on PostgreSQL."""
    return engine_store


def _write(path, lines: list[dict]) -> None:
    write_jsonl(path, lines)


def test_each_stream_is_detected_as_its_own_agent(format_fixtures):
    assert detect_format(format_fixtures / CURSOR) == "cursor-stream"
    assert detect_format(format_fixtures / QWEN) == "qwen-stream"
    assert detect_format(format_fixtures / "claude-stream/runs/nightly-triage.jsonl") == "claude-stream"


def test_cursor_stream_keeps_thinking_calls_and_results_once(store, format_fixtures):
    assert index(store, format_fixtures / CURSOR)["errors"] == []
    row = session(store, CURSOR_ID)
    assert row["origin_format"] == "cursor-stream" and row["source"] == "cursor"
    assert row["model"] == "Claude 4.5 Sonnet" and row["workspace"] == "/home/mira/atlas"
    rows = messages(store, CURSOR_ID)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "tool", "reasoning", "assistant", "tool",
                           "tool", "assistant"]
    assert [r["content"] for r in rows] == [
        "Why do zoom 14 tiles miss the cache? Fix it and run the cache tests.",
        "The cache key may drop the zoom level.",
        "Reading the key builder and issue 212 first.",
        'def tile_key(x, y, z):\n    return f"{x}:{y}"\n',
        "#212 Zoom 14 tiles render from zoom 13 cache",
        "The key has no z: tiles of every zoom collide.",
        "",
        '{"path": "/home/mira/atlas/tiles/cache.py", "linesCreated": 2, "fileSize": 50}',
        "6 passed in 0.41s",
        "The key ignored the zoom level, so zoom 14 reused zoom 13 tiles. It is now `z/x/y`; the 6 cache "
        "tests pass.",
    ]  # the result's text (every reply run together) is not a message of its own
    assert rows[2]["calls"] == [
        ("read", {"path": "/home/mira/atlas/tiles/cache.py"}, CALL.format(n=0)),
        ("atlas-issues-get_issue", {"name": "atlas-issues-get_issue", "args": {"number": 212},
                                    "providerIdentifier": "atlas-issues", "toolName": "get_issue"}, CALL.format(n=1)),
    ]
    assert [c[0] for c in rows[6]["calls"]] == ["write", "shell"]
    assert rows[6]["calls"][1][1] == {"command": "pytest -q tests/test_cache.py",
                                      "workingDirectory": "/home/mira/atlas", "timeout": 120000}
    assert [(r["tool_name"], r["tool_call_id"]) for r in rows if r["role"] == "tool"] == [
        ("read", CALL.format(n=0)), ("atlas-issues-get_issue", CALL.format(n=1)),
        ("write", LATER.format(m=2, n=0)), ("shell", LATER.format(m=3, n=1))]
    assert sum(len(r["calls"]) for r in rows) == 4  # started and completed: each call once


def test_cursor_partial_output_is_joined_and_its_repeats_skipped(store, tmp_path):
    sid = "c6b62c6f-7ead-4fd6-9922-e952131177ff"
    piece = {"type": "assistant", "session_id": sid, "timestamp_ms": 1791300000000}
    lines = [{"type": "system", "subtype": "init", "apiKeySource": "env", "cwd": "/srv/dune", "session_id": sid,
              "model": "Auto", "permissionMode": "default"},
             {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "List the crons"}]},
              "session_id": sid},
             {**piece, "message": {"role": "assistant", "content": [{"type": "text", "text": "Checking "}]}},
             {**piece, "message": {"role": "assistant", "content": [{"type": "text", "text": "crontab."}]}},
             {**piece, "model_call_id": "m-0", "message": {"role": "assistant", "content": [
                 {"type": "text", "text": "Checking crontab."}]}},
             {"type": "tool_call", "subtype": "started", "call_id": "t1", "model_call_id": "m-0", "session_id": sid,
              "tool_call": {"shellToolCall": {"args": {"command": "crontab -l"}}}},
             {"type": "tool_call", "subtype": "completed", "call_id": "t1", "model_call_id": "m-0", "session_id": sid,
              "tool_call": {"shellToolCall": {"args": {"command": "crontab -l"}, "result": {"rejected": {
                  "command": "crontab -l", "reason": "shell needs --force"}}}}},
             {**piece, "message": {"role": "assistant", "content": [{"type": "text", "text": "No shell here."}]}},
             {"type": "assistant", "session_id": sid, "message": {"role": "assistant", "content": [
                 {"type": "text", "text": "No shell here."}]}},
             {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 800, "duration_api_ms": 800,
              "result": "Checking crontab.No shell here.", "session_id": sid, "request_id": "r-1"}]
    path = tmp_path / "partial.jsonl"
    _write(path, lines)
    assert detect_format(path) == "cursor-stream"
    assert index(store, path)["errors"] == []
    rows = messages(store, sid)
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "List the crons"), ("assistant", "Checking crontab."),
        ("tool", "[rejected] shell needs --force"), ("assistant", "No shell here.")]
    assert rows[1]["calls"] == [("shell", {"command": "crontab -l"}, "t1")]


def test_cursor_json_output_keeps_the_answer(store, tmp_path):
    path = tmp_path / "answer.json"
    _write(path, [{"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1234,
                   "duration_api_ms": 1234, "result": "Use `git rebase --onto main HEAD~3`.",
                   "session_id": "0d9e8f7a-1b2c-4d3e-8f9a-0b1c2d3e4f5a", "request_id": "r-9"}])
    assert detect_format(path) == "cursor-stream"
    assert index(store, path)["errors"] == []
    rows = messages(store, "0d9e8f7a-1b2c-4d3e-8f9a-0b1c2d3e4f5a")
    assert [(r["role"], r["content"]) for r in rows] == [("assistant", "Use `git rebase --onto main HEAD~3`.")]
    assert session(store, "0d9e8f7a-1b2c-4d3e-8f9a-0b1c2d3e4f5a")["source"] == "cursor"


def test_cursor_unknown_event_type_is_reported_with_its_line(store, tmp_path):
    sid = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d"
    path = tmp_path / "run.jsonl"
    _write(path, [{"type": "system", "subtype": "init", "apiKeySource": "login", "cwd": "/x", "session_id": sid,
                   "model": "Auto", "permissionMode": "default"},
                  {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "hello"}]},
                   "session_id": sid},
                  {"type": "interaction_query", "subtype": "request", "session_id": sid},
                  {"type": "brand_new_event", "session_id": sid},
                  {"type": "thinking", "subtype": "delta", "text": "greet back", "session_id": sid,
                   "timestamp_ms": 1791300000000},
                  {"type": "thinking", "subtype": "completed", "session_id": sid, "timestamp_ms": 1791300000001},
                  {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
                   "session_id": sid},
                  {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 5, "duration_api_ms": 5,
                   "result": "hi", "session_id": sid, "request_id": "r"}])
    errors = index(store, path)["errors"]
    assert [e["line"] for e in errors] == [4] and "brand_new_event" in errors[0]["error"]
    assert [(r["role"], r["content"]) for r in messages(store, sid)] == [
        ("user", "hello"), ("reasoning", "greet back"), ("assistant", "hi")]


def test_qwen_stream_is_stored_as_qwen_code(store, format_fixtures):
    assert index(store, format_fixtures / QWEN)["errors"] == []
    row = session(store, QWEN_ID)
    assert row["origin_format"] == "qwen-stream" and row["source"] == "qwen-code"
    assert row["model"] == "qwen3-coder-plus" and row["workspace"] == "/home/li/ledger"
    rows = messages(store, QWEN_ID)
    final = ("Since v1.4, rates.py stores rates with four decimal places (RATE_SCALE 10,000 instead of 100) and "
             "converts through Decimal instead of round().")
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "What changed in ledger/rates.py since v1.4?"),
        ("reasoning", "A git diff against the v1.4 tag answers this."),
        ("assistant", ""),
        ("tool", "-RATE_SCALE = 100\n+RATE_SCALE = 10_000\n-def to_minor(x): return round(x * RATE_SCALE)\n"
                 "+def to_minor(x): return int(Decimal(x) * RATE_SCALE)"),
        ("assistant", final)]  # the result repeats the last reply: not stored twice
    assert rows[2]["calls"] == [("run_shell_command", {"command": "git diff v1.4 -- ledger/rates.py",
                                                       "description": "Diff rates.py against v1.4"},
                                 "call_5f0c9e1d2b3a4c5d")]
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"]) == ("run_shell_command", "call_5f0c9e1d2b3a4c5d")


def test_qwen_unknown_type_is_reported_and_an_error_result_kept(store, tmp_path):
    sid = "q-1"
    path = tmp_path / "run.jsonl"
    _write(path, [{"type": "system", "subtype": "init", "uuid": "u0", "session_id": sid, "cwd": "/y", "tools": [],
                   "model": "qwen3-coder-flash", "permission_mode": "yolo", "qwen_code_version": "0.2.3"},
                  {"type": "user", "uuid": "u1", "session_id": sid, "parent_tool_use_id": None,
                   "message": {"role": "user", "content": "count the todo items"}},
                  {"type": "brand_new_event", "uuid": "u2", "session_id": sid},
                  {"type": "stream_event", "uuid": "u3", "session_id": sid, "parent_tool_use_id": None,
                   "event": {"type": "message_stop"}},
                  {"type": "result", "subtype": "error_max_turns", "uuid": "u4", "session_id": sid, "is_error": True,
                   "duration_ms": 9, "duration_api_ms": 9, "num_turns": 50, "usage": {}, "permission_denials": [],
                   "error": {"message": "Reached max session turns"}}])
    assert detect_format(path) == "qwen-stream"
    errors = index(store, path)["errors"]
    assert [e["line"] for e in errors] == [3] and "brand_new_event" in errors[0]["error"]
    assert [(r["role"], r["content"]) for r in messages(store, sid)] == [
        ("user", "count the todo items"), ("system", "[error_max_turns] Reached max session turns")]


@pytest.mark.parametrize("indent", [None, 2])
def test_qwen_json_output_array_is_read_as_the_stream(store, format_fixtures, tmp_path, indent):
    """``qwen -p --output-format json`` prints the same messages gathered in one JSON array
    (before: ``unknown format``)."""
    events = [json.loads(line) for line in (format_fixtures / QWEN).read_text(encoding="utf-8").splitlines()]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(events, indent=indent), encoding="utf-8")
    assert detect_format(path) == "qwen-stream"
    assert index(store, path)["errors"] == []
    assert session(store, QWEN_ID)["source"] == "qwen-code"
    assert roles(messages(store, QWEN_ID)) == ["user", "reasoning", "assistant", "tool", "assistant"]
