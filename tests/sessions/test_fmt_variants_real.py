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


CODEX_DAY = "codex_threads/sessions/2026/07/16"
CODEX_ROOT = "019f8a10-4c2e-7b31-9d0a-5e6f7a8b9c0d"
CODEX_SUB = "019f8a12-0b1c-7d2e-8f3a-4b5c6d7e8f90"


def test_codex_subagent_names_its_parent_at_the_top_of_session_meta(store, format_fixtures):
    """Newer rollouts carry ``session_id`` (the tree's) beside ``id`` and a top-level ``parent_thread_id``."""
    assert index(store, format_fixtures / CODEX_DAY)["errors"] == []
    sub = session(store, CODEX_SUB)
    assert sub["parent_session_id"] == CODEX_ROOT and sub["model"] == "gpt-5.5-codex-mini"
    assert session(store, CODEX_ROOT)["parent_session_id"] is None  # an empty parent_thread_id is no parent
    rows = messages(store, CODEX_SUB)
    assert roles(rows) == ["user", "assistant", "tool", "assistant"]
    assert rows[1]["calls"][0][0] == "exec_command" and rows[2]["tool_call_id"] == "call_rg1"
    root = messages(store, CODEX_ROOT)
    assert roles(root) == ["user", "reasoning", "assistant", "tool", "assistant"]
    assert root[3]["content"] == "yaml: 4 tests, toml: 3 tests, env: 2 tests"


def test_codex_session_meta_with_session_id_only(store, tmp_path):
    """0.144 wrote a root thread's id as ``session_id``; a renamed copy still gets that id."""
    path = tmp_path / "saved-review.jsonl"
    path.write_text(
        '{"timestamp":"2026-07-20T13:40:17.039Z","type":"session_meta","payload":{"session_id":'
        '"019f7fc1-8557-7141-b06d-a5cd08901260","cwd":"/tmp","originator":"codex_exec","cli_version":"0.144.6",'
        '"source":"exec","thread_source":"user"}}\n'
        '{"timestamp":"2026-07-20T13:40:18.000Z","type":"response_item","payload":{"type":"message","role":"user",'
        '"content":[{"type":"input_text","text":"review the diff"}]}}\n', encoding="utf-8")
    assert index(store, path)["errors"] == []
    assert [r["content"] for r in messages(store, "019f7fc1-8557-7141-b06d-a5cd08901260")] == ["review the diff"]


COPILOT = "copilot-cli/.copilot/session-state/7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"
COPILOT_ID = "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"


def test_copilot_cli_subagent_events_go_to_a_child_session(store, format_fixtures):
    """A sub-agent's events share the parent's events.jsonl, marked by the envelope's ``agentId``."""
    path = format_fixtures / COPILOT / "events.jsonl"
    assert detect_format(path) == "copilot-cli"
    assert index(store, path)["errors"] == []
    rows = messages(store, COPILOT_ID)
    assert roles(rows) == ["user", "assistant", "tool", "reasoning", "assistant"]
    assert rows[1]["calls"][0][0] == "task" and rows[2]["tool_call_id"] == "toolu_task1"
    child_id = f"{COPILOT_ID}:toolu_task1"
    child = session(store, child_id)
    assert child["parent_session_id"] == COPILOT_ID
    assert (child["title"], child["model"]) == ("Explore Agent", "claude-haiku-4.5")
    sub = messages(store, child_id)
    assert roles(sub) == ["assistant", "tool", "assistant"]
    assert sub[0]["calls"] == [("grep", {"pattern": "applyDiscount\\(", "path": "src"}, "toolu_grep1")]
    assert (sub[1]["tool_name"], sub[1]["content"]) == ("grep", "src/cart.ts:41\nsrc/checkout.ts:88")
    assert sub[2]["timestamp"] == pytest.approx(ts("2026-08-30T09:00:10.000Z"))


def test_copilot_cli_subagent_found_again_when_the_log_grows(store, format_fixtures):
    """A later run resuming mid-log still files an ``agentId``-only event under the spawning call."""
    path = format_fixtures / COPILOT / "events.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:9]), encoding="utf-8")  # up to the start of the sub-agent's first call
    index(store, path)
    path.write_text("".join(lines), encoding="utf-8")
    assert index(store, path)["errors"] == []
    assert roles(messages(store, f"{COPILOT_ID}:toolu_task1")) == ["assistant", "tool", "assistant"]
    assert session(store, f"{COPILOT_ID}:explore-1") is None


def test_copilot_cli_ephemeral_events_are_not_stored(store, tmp_path):
    """A saved ``--output-format json`` stream repeats messages as ephemeral events Copilot never logs."""
    path = tmp_path / "run.jsonl"
    path.write_text(
        '{"type":"user.message","data":{"content":"summarise"},"id":"1","timestamp":"2026-08-01T00:00:00Z"}\n'
        '{"type":"assistant.message","data":{"messageId":"m","content":"echo"},"ephemeral":true,'
        '"id":"2","timestamp":"2026-08-01T00:00:01Z"}\n'
        '{"type":"assistant.message","data":{"messageId":"m","content":"the summary"},'
        '"id":"3","timestamp":"2026-08-01T00:00:01Z"}\n', encoding="utf-8")
    assert index(store, path)["errors"] == []
    assert [r["content"] for r in messages(store, "run")] == ["summarise", "the summary"]


GOOSE_EXPORT = "goose-export/exports/20250929_3.json"


def test_goose_session_export_json_is_read(store, format_fixtures):
    """``goose session export --format json``: the session object with its ``conversation``."""
    path = format_fixtures / GOOSE_EXPORT
    assert detect_format(path) == "goose-export"
    assert index(store, path)["errors"] == []
    row = session(store, "20250929_3")
    assert (row["title"], row["workspace"], row["model"]) == ("Flaky retry test", "/home/u/retry", "claude-sonnet-4-5")
    assert row["started_at"] == pytest.approx(ts("2025-09-29T14:03:10Z"))
    rows = messages(store, "20250929_3")
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "system", "assistant"]
    assert rows[2]["calls"] == [("developer__shell", {"command": "for i in 1 2 3; do cargo test test_retry; done"},
                                 "toolu_01")]
    assert (rows[3]["tool_name"], rows[3]["content"]) == ("developer__shell",
                                                          "test test_retry ... FAILED (timeout after 100ms)")
    assert rows[4]["content"].startswith("Summary so far")  # userVisible: false, Goose's not the user's
    assert rows[0]["timestamp"] == pytest.approx(1759154590.0)
