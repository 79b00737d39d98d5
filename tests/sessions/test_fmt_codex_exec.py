"""Codex CLI's headless output (``codex exec --json``) saved to a file: read as its own format,
``codex-exec``. Before, no importer claimed such a file (``unknown format``), so a CI run's
commands, patches and answer were not indexed at all."""

from __future__ import annotations

import pytest
from format_helpers import index, messages, roles, session
from sess_helpers import write_jsonl

from hermes_store.sessions import detect_format
from hermes_store.sessions.importers import IMPORTERS, Head

RUN = "codex-exec/runs/nightly-due-dates.jsonl"
THREAD = "0199a8c2-5e41-7d30-b6f2-3c9e14d7a815"
TEST_CMD = "/bin/bash -lc 'pytest -q tests/test_due_dates.py'"


@pytest.fixture
def store(engine_store):
    """Every test here runs on SQLite and on PostgreSQL."""
    return engine_store


def test_a_saved_run_is_detected_as_codex_exec_and_rollouts_stay_codex(format_fixtures):
    assert detect_format(format_fixtures / RUN) == "codex-exec"
    assert IMPORTERS["codex"].sniff(Head.read(format_fixtures / RUN)) == 0.0
    rollout = next((format_fixtures / "codex_threads").rglob("rollout-*.jsonl"))
    assert detect_format(rollout) == "codex"


def test_the_run_is_stored_under_its_thread_with_every_item_once(store, format_fixtures):
    summary = index(store, format_fixtures / RUN)
    assert summary["errors"] == []  # turn/usage events and item.updated are bookkeeping, not problems
    row = session(store, THREAD)
    assert row["origin_format"] == "codex-exec" and row["source"] == "codex"
    rows = messages(store, THREAD)
    assert roles(rows) == ["reasoning", "assistant", "tool", "assistant", "tool", "assistant",
                           "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    assert rows[0]["content"].startswith("**Reproducing the CI failure**")
    assert rows[1]["calls"] == [("shell", {"command": TEST_CMD}, "item_1")]
    assert rows[2]["content"].endswith("1 failed, 1 passed in 0.21s\n[exit code 1]")
    assert rows[2]["tool_call_id"] == "item_1" and rows[2]["tool_name"] == "shell"
    assert rows[3]["calls"] == [("mcp__tracker__get_issue", {"key": "BILL-412"}, "item_2")]
    assert rows[4]["content"] == "BILL-412: invoices issued on the 29th-31st crash the monthly due-date job"
    # the to-do list once, where it was started, in its completed state
    assert rows[5]["content"] == ("- [x] Reproduce the failing due-date test\n"
                                  "- [x] Clamp the day to the target month's last day\n"
                                  "- [x] Re-run the billing tests")
    assert rows[7]["content"].startswith("from datetime import date")  # exit code 0: no note
    assert rows[8]["calls"][0][0] == "apply_patch"
    assert [c["path"] for c in rows[8]["calls"][0][1]["changes"]] == [
        "/srv/ci/billing/billing/due.py", "/srv/ci/billing/tests/test_due_dates.py"]
    assert rows[9]["content"] == ("update /srv/ci/billing/billing/due.py\n"
                                  "update /srv/ci/billing/tests/test_due_dates.py")
    assert rows[11]["content"] == "...\n3 passed in 0.18s"  # the completed output, not the update's ".."
    assert rows[12]["content"].startswith("Fixed BILL-412:")
    texts = [r["content"] for r in rows]
    assert ".." not in texts and "" not in [r["content"] for r in rows if r["role"] == "tool"]
    calls = [c[2] for r in rows for c in r["calls"]]
    assert calls == ["item_1", "item_2", "item_4", "item_5", "item_6"]  # each call once


def test_reindexing_the_unchanged_run_stores_nothing_twice(store, format_fixtures):
    index(store, format_fixtures / RUN)
    first = len(messages(store, THREAD))
    index(store, format_fixtures / RUN)
    assert len(messages(store, THREAD)) == first == 13


def test_unknown_types_are_reported_with_their_line_and_the_rest_is_read(store, tmp_path):
    path = write_jsonl(tmp_path / "exec.jsonl", [
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "first"}},
        {"type": "thread.renamed", "name": "x"},
        {"type": "item.completed", "item": {"id": "item_1", "type": "hologram", "text": "?"}},
        {"type": "item.completed", "item": {"id": "item_2", "type": "hologram", "text": "?"}},
        {"type": "item.completed", "item": {"id": "item_3", "type": "agent_message", "text": "second"}},
        {"type": "warning", "message": "a type added since"},
        {"type": "turn.completed", "usage": {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1}},
    ])
    assert detect_format(path) == "codex-exec"
    errors = index(store, path)["errors"]
    assert [e["line"] for e in errors] == [4, 5, 8]  # each unknown type once, at its first line
    assert "thread.renamed" in errors[0]["error"] and "hologram" in errors[1]["error"]
    assert "warning" in errors[2]["error"]
    assert [r["content"] for r in messages(store, "t-1")] == ["first", "second"]


def test_errors_failed_turns_unfinished_items_and_a_resumed_run(store, tmp_path):
    path = write_jsonl(tmp_path / "exec.jsonl", [
        {"type": "thread.started", "thread_id": "t-2"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "error", "message": "model rerouted"}},
        {"type": "item.started", "item": {"id": "item_1", "type": "command_execution", "command": "make",
                                          "aggregated_output": "", "exit_code": None, "status": "in_progress"}},
        {"type": "item.updated", "item": {"id": "item_1", "type": "command_execution", "command": "make",
                                          "aggregated_output": "cc -c a.c", "exit_code": None,
                                          "status": "in_progress"}},
        {"type": "error", "message": "stream disconnected before completion"},
        {"type": "turn.failed", "error": {"message": "usage limit reached"}},
        {"type": "thread.started", "thread_id": "t-2"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "command_execution", "command": "rm -rf /",
                                            "aggregated_output": "", "exit_code": None, "status": "declined"}},
        {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "resumed"}},
        {"type": "turn.completed", "usage": {"input_tokens": 5, "cached_input_tokens": 0, "output_tokens": 2}},
    ])
    assert index(store, path)["errors"] == []
    rows = messages(store, "t-2")
    assert [(r["role"], r["content"]) for r in rows] == [
        ("system", "[error] model rerouted"),
        ("assistant", ""), ("tool", "cc -c a.c"),  # never completed: its last state
        ("system", "[error] stream disconnected before completion"),
        ("system", "[turn failed] usage limit reached"),
        ("assistant", ""), ("tool", "[declined]"),
        ("assistant", "resumed"),
    ]
    assert rows[1]["calls"] == [("shell", {"command": "make"}, "item_1")]
    assert rows[5]["calls"][0][2] == "item_0@2"  # the second run's ids start over: kept apart
    assert session(store, "t-2")["meta"]["usage"]["input_tokens"] == 5


def test_the_older_json_output_is_read_too(store, tmp_path):
    sid = "5d0c7a1e-2b3f-4c5d-8e9f-0a1b2c3d4e5f"
    path = write_jsonl(tmp_path / "old-exec.jsonl", [
        {"workdir": "/srv/app", "model": "gpt-5", "provider": "openai", "approval": "never",
         "sandbox": "workspace-write"},
        {"prompt": "bump the lockfile"},
        {"id": "0", "msg": {"type": "session_configured", "session_id": sid, "model": "gpt-5",
                            "history_log_id": 0, "history_entry_count": 0}},
        {"id": "1", "msg": {"type": "task_started"}},
        {"id": "1", "msg": {"type": "user_message", "message": "bump the lockfile", "kind": "plain"}},
        {"id": "1", "msg": {"type": "agent_reasoning", "text": "Checking the lockfile"}},
        {"id": "1", "msg": {"type": "exec_command_begin", "call_id": "call_a", "command": ["bash", "-lc", "npm ci"],
                            "cwd": "/srv/app", "parsed_cmd": []}},
        {"id": "1", "msg": {"type": "exec_command_end", "call_id": "call_a", "stdout": "", "stderr": "ERR lock",
                            "aggregated_output": "ERR lock\n", "exit_code": 2, "duration": {"secs": 1, "nanos": 0},
                            "formatted_output": "ERR lock"}},
        {"id": "1", "msg": {"type": "patch_apply_begin", "call_id": "call_b", "auto_approved": True,
                            "changes": {"/srv/app/package-lock.json": {"update": {"unified_diff": "@@", "move_path": None}}}}},
        {"id": "1", "msg": {"type": "patch_apply_end", "call_id": "call_b", "stdout": "Success.", "stderr": "",
                            "success": True}},
        {"id": "1", "msg": {"type": "mcp_tool_call_begin", "call_id": "call_c",
                            "invocation": {"server": "npm", "tool": "audit", "arguments": {"level": "high"}}}},
        {"id": "1", "msg": {"type": "mcp_tool_call_end", "call_id": "call_c",
                            "invocation": {"server": "npm", "tool": "audit", "arguments": {"level": "high"}},
                            "duration": {"secs": 0, "nanos": 5}, "result": {"Ok": {"content": [
                                {"type": "text", "text": "0 vulnerabilities"}]}}}},
        {"id": "1", "msg": {"type": "token_count", "input_tokens": 10, "output_tokens": 3, "total_tokens": 13}},
        {"id": "1", "msg": {"type": "quantum_event"}},
        {"id": "1", "msg": {"type": "agent_message", "message": "Lockfile bumped."}},
        {"id": "1", "msg": {"type": "task_complete", "last_agent_message": "Lockfile bumped."}},
    ])
    assert detect_format(path) == "codex-exec"
    errors = index(store, path)["errors"]
    assert [e["line"] for e in errors] == [14] and "quantum_event" in errors[0]["error"]
    row = session(store, sid)
    assert row["model"] == "gpt-5" and row["workspace"] == "/srv/app"
    rows = messages(store, sid)
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "bump the lockfile"),  # once: the user_message repeats the prompt line
        ("reasoning", "Checking the lockfile"),
        ("assistant", ""), ("tool", "ERR lock\n[exit code 2]"),
        ("assistant", ""), ("tool", "Success."),
        ("assistant", ""), ("tool", "0 vulnerabilities"),
        ("assistant", "Lockfile bumped."),
    ]
    assert rows[2]["calls"] == [("shell", {"command": "bash -lc 'npm ci'", "workdir": "/srv/app"}, "call_a")]
    assert rows[4]["calls"][0][1] == {"changes": [{"path": "/srv/app/package-lock.json", "kind": "update"}]}
    assert rows[6]["calls"][0][:2] == ("mcp__npm__audit", {"level": "high"})
    assert rows[7]["tool_name"] == "mcp__npm__audit"


def test_the_first_stream_versions_item_type_and_session_created_are_read(store, tmp_path):
    path = write_jsonl(tmp_path / "exec.jsonl", [
        {"type": "session.created", "session_id": "s-early"},
        {"type": "item.completed", "item": {"id": "itm_0", "item_type": "reasoning", "text": "Looking at the failing job"}},
        {"type": "item.completed", "item": {"id": "itm_1", "item_type": "command_execution", "command": "ls",
                                            "aggregated_output": "a.txt\n", "exit_code": 0, "status": "completed"}},
        {"type": "item.completed", "item": {"id": "itm_2", "item_type": "assistant_message", "text": "Done."}},
    ])
    assert detect_format(path) == "codex-exec"
    assert index(store, path)["errors"] == []
    rows = messages(store, "s-early")
    assert [(r["role"], r["content"]) for r in rows] == [
        ("reasoning", "Looking at the failing job"), ("assistant", ""), ("tool", "a.txt"), ("assistant", "Done.")]
    assert rows[1]["calls"] == [("shell", {"command": "ls"}, "itm_1")]
