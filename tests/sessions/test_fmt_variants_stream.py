"""More variants read whole (docs/formats-variants.md): Factory Droid's, Amp's and Goose's stream
JSON output, and Gemini CLI recordings of the newest chatRecordingService schema."""

from __future__ import annotations

import json

import pytest
from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format

DROID = "factory-droid-stream/ci-logs/droid-nightly-totals.jsonl"
DROID_ID = "5e0a7c3d-91b4-4f2e-a6d8-3b1c9e7f0a25"
AMP = "amp-stream/runs/amp-kelvin.jsonl"
AMP_ID = "T-019c6f2a-8b1d-74e3-a9c5-2d7e0f3b6a18"
GEMINI = "gemini-cli/.gemini/tmp/ledger-api/chats/session-2026-08-18T07-40-b41c9e27.jsonl"
GEMINI_ID = "b41c9e27-5d3a-4f6e-8a1b-2c7d9e0f3a64"
GOOSE = "goose-stream/runs/goose-run-parser.jsonl"
GOOSE_ID = "goose-run-parser"
T0 = 1772442000.0  # 2026-03-02T09:00:00Z, the Droid run's clock


@pytest.fixture
def store(engine_store):
    """Every test here runs on SQLite and on PostgreSQL."""
    return engine_store


@pytest.mark.parametrize(
    ("rel", "fmt"),
    [(DROID, "factory-droid-stream"), (AMP, "amp-stream"), (GEMINI, "gemini-cli"), (GOOSE, "goose-stream")],
)
def test_each_stream_variant_is_detected_as_its_agent(format_fixtures, rel, fmt):
    assert detect_format(format_fixtures / rel) == fmt


def test_droid_stream_json_keeps_calls_results_errors_and_times(store, format_fixtures):
    assert index(store, format_fixtures / DROID)["errors"] == []
    row = session(store, DROID_ID)
    assert row["origin_format"] == "factory-droid-stream" and row["source"] == "factory-droid"
    assert (
        row["model"] == "claude-sonnet-4-5-20250929"
        and row["workspace"] == "/srv/build/invoice-svc"
    )
    assert row["started_at"] == pytest.approx(T0 + 0.12) and row["ended_at"] == pytest.approx(
        T0 + 15.2
    )
    assert row["meta"]["numTurns"] == 3 and row["meta"]["reasoning_effort"] == "medium"
    rows = messages(store, DROID_ID)
    assert roles(rows) == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
        "system",
        "assistant",
    ]
    assert rows[0]["content"] == "Why does the nightly job fail on invoice totals? Fix it."
    assert rows[0]["timestamp"] == pytest.approx(T0 + 0.12)
    assert rows[1]["calls"] == [
        ("Read", {"file_path": "/srv/build/invoice-svc/src/totals.py"}, "toolu_01Rd"),
        (
            "Execute",
            {
                "command": "pytest -q tests/test_totals.py",
                "riskLevel": {"value": "low", "reason": "runs tests"},
            },
            "toolu_02Ex",
        ),
    ]
    assert (rows[2]["tool_name"], rows[2]["tool_call_id"]) == ("Read", "toolu_01Rd")
    assert rows[2]["content"].startswith("def total(lines):")
    assert rows[3]["content"].startswith(
        "FAILED tests/test_totals.py::test_vat_exempt"
    )  # an error result
    assert (
        rows[4]["calls"][0][0] == "Edit"
        and rows[4]["calls"][0][1]["old_str"] == "sum(l.net for l in lines) * 1.2"
    )
    # a result without an id answers the oldest open call; its empty output is kept
    assert (rows[5]["tool_call_id"], rows[5]["tool_name"], rows[5]["content"]) == (
        "toolu_03Ed",
        "Edit",
        "",
    )
    assert rows[6]["content"] == "[mcp] server 'linear' did not start (skipped)"
    # the completion's finalText repeats the last reply: not stored twice
    assert rows[7]["content"] == "Exempt lines no longer get VAT; `test_vat_exempt` passes."


def test_droid_completion_text_that_no_message_said_is_kept(store, tmp_path):
    path = tmp_path / "run.jsonl"
    lines = [
        {
            "type": "system",
            "subtype": "init",
            "session_id": "s1",
            "cwd": "/w",
            "model": "gpt-5-codex",
        },
        {
            "type": "message",
            "role": "user",
            "id": "u",
            "text": "hi",
            "timestamp": 1772442000000,
            "session_id": "s1",
        },
        {
            "type": "completion",
            "finalText": "Hello!",
            "numTurns": 1,
            "durationMs": 9,
            "session_id": "s1",
            "timestamp": 1772442001000,
        },
    ]
    path.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    assert detect_format(path) == "factory-droid-stream"
    index(store, path)
    assert [(r["role"], r["content"]) for r in messages(store, "s1")] == [
        ("user", "hi"),
        ("assistant", "Hello!"),
    ]


def test_amp_stream_json_keeps_thinking_calls_results_and_subagents(store, format_fixtures):
    assert index(store, format_fixtures / AMP)["errors"] == []
    row = session(store, AMP_ID)
    assert row["origin_format"] == "amp-stream" and row["source"] == "amp"
    assert row["workspace"] == "/home/mei/weather-app"
    rows = messages(store, AMP_ID)
    assert roles(rows) == [
        "user",
        "reasoning",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "system",
    ]
    assert rows[0]["content"] == "Where do we convert Kelvin to Celsius? The widget shows 300°."
    assert rows[1]["content"] == "The widget probably reads the raw API value; find the conversion."
    assert rows[2]["calls"] == [
        (
            "Task",
            {
                "description": "find Kelvin conversion",
                "prompt": "Find every place that converts Kelvin to Celsius.",
            },
            "toolu_vrtx_01Task",
        )
    ]
    assert (rows[3]["tool_name"], rows[3]["content"]) == ("Task", "No conversion exists in src/.")
    assert rows[4]["calls"] == [
        ("Read", {"path": "/home/mei/weather-app/src/widget.ts"}, "toolu_vrtx_03Read")
    ]
    assert (
        rows[6]["content"] == "`show` prints the raw Kelvin value; it needs `t - 273.15`."
    )  # result not repeated
    assert (rows[9]["tool_name"], rows[9]["content"]) == (
        "edit_file",
        "permission denied: edit_file needs approval",
    )
    assert (
        rows[10]["content"]
        == "[error_during_execution] edit_file was rejected by the permission rules"
    )
    child = f"{AMP_ID}/toolu_vrtx_01Task"
    assert session(store, child)["parent_session_id"] == AMP_ID
    sub = messages(store, child)
    assert roles(sub) == ["assistant", "tool", "assistant"]
    assert sub[0]["calls"] == [
        ("Grep", {"pattern": "273\\.15", "path": "src"}, "toolu_vrtx_02Grep")
    ]
    assert (sub[1]["tool_name"], sub[1]["content"]) == ("Grep", "")  # an empty result is kept


def test_claude_code_stream_json_is_not_taken_for_amp(tmp_path):
    path = tmp_path / "claude-run.jsonl"
    lines = [
        {
            "type": "system",
            "subtype": "init",
            "session_id": "9d9f07e1-2696-40b4-87af-eab2d03b4e01",
            "cwd": "/w",
            "tools": [],
            "mcp_servers": [],
        },
        {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            "parent_tool_use_id": None,
            "session_id": "9d9f07e1-2696-40b4-87af-eab2d03b4e01",
        },
    ]
    path.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    assert detect_format(path) != "amp-stream"


def test_gemini_newest_recording_schema(store, format_fixtures):
    assert index(store, format_fixtures / GEMINI)["errors"] == []
    row = session(store, GEMINI_ID)
    assert row["title"] == "Fix double rounding of the fee"
    assert row["model"] == "gemini-3.1-flash"  # the last model a reply named
    assert row["started_at"] == pytest.approx(ts("2026-08-18T07:40:00.120Z"))
    assert row["ended_at"] == pytest.approx(ts("2026-08-18T07:40:18.500Z"))
    assert row["meta"]["workflowSummary"] == "Removed a double rounding in the fee helper"
    rows = messages(store, GEMINI_ID)
    assert roles(rows) == [
        "system",
        "user",
        "reasoning",
        "assistant",
        "tool",
        "tool",
        "system",
        "assistant",
    ]
    assert rows[0]["content"].startswith("<session_context>")  # injected context, hidden in the UI
    assert (
        rows[1]["content"] == "why does @src/ledger.ts round the fee twice?"
    )  # displayContent, as typed
    assert rows[1]["timestamp"] == pytest.approx(ts("2026-08-18T07:40:05.000Z"))
    assert (
        rows[2]["content"]
        == "Reading the fee helper: round() is applied to an already rounded value."
    )
    assert rows[3]["calls"] == [
        (
            "replace",
            {
                "file_path": "/home/rui/ledger-api/src/ledger.ts",
                "old_string": "round(round(x * 0.029))",
                "new_string": "round(x * 0.029)",
            },
            "replace-1787038809250-c3",
        ),
        (
            "run_shell_command",
            {"command": "npm test --silent"},
            "run_shell_command-1787038810500-d4",
        ),
    ]
    # an empty output: the file diff shown for it, or the status when nothing was shown
    assert rows[4]["tool_call_id"] == "replace-1787038809250-c3" and rows[4]["content"].startswith(
        "@@ -1 +1 @@"
    )
    assert (rows[5]["tool_name"], rows[5]["content"]) == ("run_shell_command", "[success]")
    assert rows[6]["content"] == "Checkpoint saved."
    assert rows[7]["content"] == "Fixed: the fee is rounded once now and the tests pass."


def test_amp_thread_with_uri_object_and_thread_summary(store, tmp_path):
    """Amp thread files whose tree ``uri`` is a Uri object and whose compaction summary lives in
    another thread (``summary.type == "thread"``)."""
    path = tmp_path / "threads" / "T-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.json"
    path.parent.mkdir()
    thread = {
        "v": 3,
        "id": path.stem,
        "created": 1772442000000,
        "title": "Trim the Docker image",
        "env": {"initial": {"trees": [{"uri": {"scheme": "file", "fsPath": "/home/ola/svc"}}]}},
        "messages": [
            {
                "role": "info",
                "messageId": 0,
                "content": [
                    {
                        "type": "summary",
                        "summary": {
                            "type": "thread",
                            "thread": "T-99887766-5544-4332-8110-ffeeddccbbaa",
                        },
                    }
                ],
            },
            {
                "role": "user",
                "messageId": 1,
                "content": [{"type": "text", "text": "go on"}],
                "meta": {"sentAt": 1772442001000},
            },
        ],
    }
    path.write_text(json.dumps(thread), encoding="utf-8")
    assert detect_format(path) == "amp"
    assert index(store, path)["errors"] == []
    assert session(store, path.stem)["workspace"] == "/home/ola/svc"
    rows = messages(store, path.stem)
    assert [(r["role"], r["content"]) for r in rows] == [
        ("system", "[summary in thread T-99887766-5544-4332-8110-ffeeddccbbaa]"),
        ("user", "go on"),
    ]


def test_goose_stream_json_merges_the_chunks_of_each_message(store, format_fixtures):
    """``goose run --output-format stream-json``: every chunk of a reply repeats the message id."""
    assert index(store, format_fixtures / GOOSE)["errors"] == []
    row = session(store, GOOSE_ID)
    assert row["origin_format"] == "goose-stream" and row["source"] == "goose"
    assert row["model"] == "claude-sonnet-4-5"
    assert (row["meta"]["total_tokens"], row["meta"]["input_tokens"], row["meta"]["output_tokens"]) == (
        18342, 17210, 1132)
    rows = messages(store, GOOSE_ID)
    assert roles(rows) == ["assistant", "system", "tool", "reasoning", "assistant", "tool", "assistant", "system"]
    assert rows[0]["content"] == "I'll run the failing parser test first."
    assert rows[0]["calls"] == [("developer__shell", {"command": "pytest -x tests/test_parser.py"}, "toolu_01Pa")]
    assert rows[0]["timestamp"] == pytest.approx(1767003600.0)  # the first chunk's
    assert rows[1]["content"] == "[developer] starting shell: pytest -x tests/test_parser.py"
    assert (rows[2]["tool_name"], rows[2]["tool_call_id"]) == ("developer__shell", "toolu_01Pa")
    assert rows[2]["content"].startswith("FAILED tests/test_parser.py::test_blank_line")
    assert rows[2]["timestamp"] == pytest.approx(1767003604.0)
    assert rows[3]["content"] == "split() on a blank line gives [], so tokens[0] raises."
    assert rows[4]["content"] == "`parse_line` reads `tokens[0]` before checking the line is blank."
    assert rows[4]["calls"][0][0] == "developer__text_editor"
    assert rows[4]["calls"][0][1]["new_str"] == "    if not tokens:\n        return None\n    head = tokens[0]"
    assert (rows[5]["tool_name"], rows[5]["content"]) == (
        "developer__text_editor", "-32603: Permission denied: src/parser.py")
    assert rows[6]["content"] == "I can't write src/parser.py here; the fix is the length check above."
    assert rows[7]["content"] == "[error] Stream ended early: provider closed the connection"


def test_goose_stream_json_growing_file_is_read_again_whole(store, format_fixtures, tmp_path):
    """A run still writing: the reply cut mid-message is replaced, not stored twice."""
    lines = (format_fixtures / GOOSE).read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "goose-run-parser.jsonl"
    path.write_text("".join(lines[:10]), encoding="utf-8")  # up to the middle of the second reply
    assert index(store, path)["errors"] == []
    assert messages(store, GOOSE_ID)[-1]["content"] == "`parse_line` reads `tokens[0]`"
    path.write_text("".join(lines), encoding="utf-8")
    assert index(store, path)["errors"] == []
    assert roles(messages(store, GOOSE_ID)) == [
        "assistant", "system", "tool", "reasoning", "assistant", "tool", "assistant", "system"]


@pytest.mark.parametrize("lines", [
    # Gemini CLI's stream-json: message events with a string content, no Goose message inside
    [{"type": "init", "session_id": "s", "model": "m"}, {"type": "message", "role": "assistant", "content": "hi"}],
    # only the end of a run: nothing to read
    [{"type": "complete", "total_tokens": 5}],
    # a message event whose content parts are not Goose's
    [{"type": "message", "message": {"role": "assistant", "content": [{"type": "output_text", "text": "x"}]}}],
])
def test_goose_stream_look_alikes_are_not_claimed(tmp_path, lines):
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    assert detect_format(path) != "goose-stream"
