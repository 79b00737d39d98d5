"""Variants seen in real transcripts committed to public repositories (docs/formats-variants.md)."""

from __future__ import annotations

import pytest
from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format

CLAUDE_QUEUED = "claude-code/projects/-home-ana-infra/4d3c2b1a-0f9e-4d8c-b7a6-958473625140.jsonl"


def test_claude_code_prompt_typed_mid_turn_is_kept(store, format_fixtures):
    """2.1.2xx writes a prompt typed while the agent works as a ``queued_command`` attachment only."""
    path = format_fixtures / CLAUDE_QUEUED
    assert detect_format(path) == "claude-code"
    assert index(store, path)["errors"] == []  # file-history-delta is bookkeeping, not an unknown type
    sid = "4d3c2b1a-0f9e-4d8c-b7a6-958473625140"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "user", "assistant", "user", "system",
                           "system", "assistant"]
    assert rows[4]["content"] == "it is the bucket in eu-west-1, not the logs one"
    assert rows[4]["timestamp"] == pytest.approx(ts("2026-09-24T08:00:09.100Z"))
    assert rows[3]["tool_call_id"] == "toolu_01" and rows[3]["tool_name"] == "Bash"
    assert rows[6]["content"] == "also check the lifecycle rule in this screenshot\n[image]"
    # a finished background task's notice is not the user's: queued or as a user line of its own
    assert rows[7]["content"].startswith("<task-notification>\n<task-id>b7</task-id>")
    assert rows[8]["content"].startswith("<task-notification>\n<task-id>b8</task-id>")
    assert session(store, sid)["title"] == "Terraform wants to replace the assets bucket"


def test_claude_code_queued_prompt_with_its_user_line_is_stored_once(store, tmp_path):
    """A queued prompt that Claude Code also wrote as a user line (same source uuid) is one row."""
    sid = "5e4d3c2b-1a0f-4e9d-8c7b-6a5948372615"
    head = f'"sessionId":"{sid}","userType":"external","isSidechain":false,"cwd":"/w"'
    path = tmp_path / "p" / f"{sid}.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join([
        '{"type":"user",' + head + ',"uuid":"a","timestamp":"2026-09-24T08:00:00Z",'
        '"message":{"role":"user","content":"first"}}',
        '{"type":"attachment",' + head + ',"uuid":"b","timestamp":"2026-09-24T08:00:01Z",'
        '"attachment":{"type":"queued_command","prompt":"second","commandMode":"prompt","source_uuid":"c"}}',
        '{"type":"user",' + head + ',"uuid":"c","timestamp":"2026-09-24T08:00:02Z",'
        '"message":{"role":"user","content":"second"}}']) + "\n", encoding="utf-8")
    assert index(store, path)["errors"] == []
    assert [r["content"] for r in messages(store, sid)] == ["first", "second"]
