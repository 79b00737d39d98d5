"""GitHub Copilot CLI ``session-state`` event logs (directory layout and the earlier flat files)."""

from __future__ import annotations

import pytest
from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format

STATE = "copilot-cli/.copilot/session-state"
S = "7e6d5c4b-3a29-4817-b6f5-e4d3c2b1a098"
OLD = "0a1b2c3d-4e5f-4607-8819-2a3b4c5d6e7f"


def test_detected(format_fixtures):
    assert detect_format(format_fixtures / STATE / S / "events.jsonl") == "copilot-cli"
    assert detect_format(format_fixtures / STATE / f"{OLD}.jsonl") == "copilot-cli"


def test_events(store, format_fixtures):
    summary = index(store, format_fixtures / STATE / S / "events.jsonl")
    assert [(e["line"], e["error"]) for e in summary["errors"]] == [
        (16, "unknown event type 'session.fancy_new_event' (skipped; reported once per file)")]
    row = session(store, S)
    assert row["origin_format"] == "copilot-cli" and row["source"] == "copilot-cli"
    assert row["title"] == "Terraform plan fails on S3 backend" and row["workspace"] == "/home/raj/infra"
    assert row["model"] == "gpt-5" and row["meta"]["copilotVersion"] == "0.0.372"
    assert row["started_at"] == pytest.approx(ts("2026-01-12T08:00:00.000Z"))
    rows = messages(store, S)
    assert roles(rows) == ["system", "user", "reasoning", "assistant", "tool", "tool", "assistant", "user", "system"]
    assert rows[0]["content"] == "[mcp] Connected to 1 MCP server"
    assert rows[1]["content"] == "terraform plan fails with AccessDenied on the S3 backend\n[attachment backend.tf]"
    assert rows[2]["content"] == "Likely the role lacks s3:ListBucket on the state bucket."
    assert rows[3]["calls"] == [
        ("bash", {"command": "aws sts get-caller-identity", "description": "Who am I"}, "toolu_cli_1"),
        ("view", {"path": "/home/raj/infra/backend.tf"}, "toolu_cli_2")]
    assert (rows[4]["tool_name"], rows[4]["tool_call_id"]) == ("bash", "toolu_cli_1")
    assert "assumed-role/dev/raj" in rows[4]["content"]
    assert (rows[5]["tool_name"], rows[5]["content"]) == ("view", "Path does not exist")
    assert rows[5]["timestamp"] == pytest.approx(ts("2026-01-12T08:00:15.500Z"))
    assert rows[8]["content"] == "[aborted] user initiated"


def test_flat_file_with_a_line_still_being_written(store, format_fixtures):
    path = format_fixtures / STATE / f"{OLD}.jsonl"
    summary = index(store, path)
    assert len(summary["errors"]) == 1 and "incomplete last line" in summary["errors"][0]["error"]
    rows = messages(store, OLD)
    assert roles(rows) == ["user", "assistant", "tool"]
    assert rows[1]["calls"] == [("bash", {"command": "du -ah . | sort -h | tail -3"}, "c1")]
    assert rows[2]["content"] == "12M\t./assets/video.mp4"
    with open(path, "a", encoding="utf-8") as handle:  # the writer finishes the line
        handle.write(' file is assets/video.mp4 (12M)."}, "id": "e", "timestamp": "2025-10-01T12:00:10.000Z"}\n')
    again = index(store, path)
    assert again["messages_added"] == 1 and again["errors"] == []
    assert messages(store, OLD)[-1]["content"] == "The largest file is assets/video.mp4 (12M)."


def _rows(store, session_id: str) -> list[tuple]:
    return [(r["role"], r["content"], r["calls"], r["tool_name"], r["tool_call_id"], r["timestamp"])
            for r in messages(store, session_id)]


@pytest.mark.parametrize("cut", [6, 7, 8])  # after the tool request, after one start, after one result
def test_resume_between_a_tool_request_and_its_execution(store, format_fixtures, tmp_path, cut):
    """A run resuming after ``assistant.message``'s ``toolRequests`` still knows the calls it made:
    the ``tool.execution_start`` is no new call and every result keeps its tool's name."""
    lines = (format_fixtures / STATE / S / "events.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    whole = tmp_path / "whole" / "events.jsonl"
    grown = tmp_path / "grown" / "events.jsonl"
    for path in (whole, grown):
        path.parent.mkdir()
    whole.write_text("".join(lines), encoding="utf-8")
    grown.write_text("".join(lines[:cut]), encoding="utf-8")
    index(store, whole)
    index(store, grown)
    grown.write_text("".join(lines), encoding="utf-8")  # the rest arrives: start, results, next messages
    index(store, grown)
    assert _rows(store, "grown") == _rows(store, "whole")
    rows = messages(store, "grown")
    assert roles(rows) == ["system", "user", "reasoning", "assistant", "tool", "tool", "assistant", "user", "system"]
    assert [(r["tool_name"], r["tool_call_id"]) for r in rows if r["role"] == "tool"] == [
        ("bash", "toolu_cli_1"), ("view", "toolu_cli_2")]
