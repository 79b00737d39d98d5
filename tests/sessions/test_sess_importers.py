"""Each of the six formats imports into the documented sessions/messages shape."""

from __future__ import annotations

import json

import pytest
from sess_helpers import FIXTURES, core, matching_ids

from hermes_store.sessions import SessionIndex, detect_format, index_paths

HERMES_JSONL = "hermes_home/sessions/20260105_101500_a1b2c3.jsonl"
HERMES_JSON = "hermes_home/sessions/session_20260106_090000_d4e5f6.json"
CLAUDE = "claude/projects/-home-ana-webapp/7f3c2a10-5b6d-4e8f-9a0b-1c2d3e4f5a6b.jsonl"
CODEX = "codex/sessions/2025/10/29/rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl"


@pytest.mark.parametrize("relpath, expected", [
    (HERMES_JSONL, "hermes-jsonl"),
    (HERMES_JSON, "hermes-json"),
    (CLAUDE, "claude-code"),
    (CODEX, "codex"),
    ("openai/chat_log.jsonl", "openai-jsonl"),
    ("openai/conversations.jsonl", "openai-jsonl"),
])
def test_detect_format(relpath, expected):
    assert detect_format(FIXTURES / relpath) == expected



@pytest.fixture
def store(engine_store):
    """Every test of this module runs on each storage engine."""
    return engine_store

def test_detect_state_db_and_unknown(state_db, tmp_path):
    assert detect_format(state_db) == "hermes-db"
    other = tmp_path / "notes.txt"
    other.write_text("just some notes\n")
    assert detect_format(other) is None


def _messages(store, sid):
    return SessionIndex(store).get_messages(sid)


def test_hermes_jsonl(store, fixtures):
    summary = index_paths(store, [fixtures / HERMES_JSONL])
    assert summary["sessions_added"] == 1 and summary["messages_added"] == 7
    assert summary["errors"] == []
    session = SessionIndex(store).get_session("20260105_101500_a1b2c3")
    assert session["origin_format"] == "hermes-jsonl"
    assert session["source"] == "telegram"
    assert session["model"] == "anthropic/claude-sonnet-4"
    assert session["started_at"] == pytest.approx(1767608100.0)
    assert session["message_count"] == 7
    assert session["meta"]["tools"] == [{"name": "terminal"}]
    msgs = _messages(store, "20260105_101500_a1b2c3")
    assert [m["seq"] for m in msgs] == list(range(7))
    # the assistant's thinking (its ``reasoning`` key) is a reasoning row before it
    assert [m["role"] for m in msgs] == ["user", "reasoning", "assistant", "tool", "assistant", "user", "assistant"]
    assert msgs[1]["content"] == "check the mode bits"
    assert json.loads(msgs[2]["tool_calls"])[0]["function"]["name"] == "terminal"
    assert msgs[2]["timestamp"] == pytest.approx(1767608110.5)
    assert msgs[3]["tool_name"] == "terminal" and msgs[3]["tool_call_id"] == "call_1"
    assert msgs[6]["content"].startswith("桂林今天多云")  # multimodal parts flattened
    assert "data:" not in msgs[6]["content"]


def test_hermes_json_snapshot(store, fixtures):
    summary = index_paths(store, [fixtures / HERMES_JSON])
    assert summary["messages_added"] == 4
    session = SessionIndex(store).get_session("20260106_090000_d4e5f6")
    assert session["origin_format"] == "hermes-json"
    assert session["model"] == "openai/gpt-4o"
    assert session["source"] == "cli"
    assert session["ended_at"] > session["started_at"]
    assert _messages(store, "20260106_090000_d4e5f6")[3]["content"].startswith("Start around 70%")


def test_claude_code(store, fixtures):
    summary = index_paths(store, [fixtures / CLAUDE])
    assert summary["errors"] == []
    sid = "7f3c2a10-5b6d-4e8f-9a0b-1c2d3e4f5a6b"
    session = SessionIndex(store).get_session(sid)
    assert session["title"] == "Fix flaky login test"
    assert session["workspace"] == "/home/ana/webapp"
    assert session["model"] == "claude-sonnet-4-5-20250929"
    assert session["meta"]["gitBranch"] == "main"
    msgs = _messages(store, sid)
    assert [m["role"] for m in msgs] == ["user", "reasoning", "assistant", "tool", "assistant"]
    assert msgs[1]["content"] == "secret chain of thought"  # thinking kept under its own role
    call = json.loads(msgs[2]["tool_calls"])[0]
    assert call["id"] == "toolu_01" and call["function"]["name"] == "Bash"
    assert json.loads(call["function"]["arguments"]) == {"command": "npm test -- login.spec.ts"}
    assert msgs[3]["tool_call_id"] == "toolu_01" and msgs[3]["tool_name"] == "Bash"
    assert "timeout waiting for selector" in msgs[3]["content"]


def test_codex(store, fixtures):
    index_paths(store, [fixtures / CODEX])
    sid = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
    session = SessionIndex(store).get_session(sid)
    assert session["origin_format"] == "codex"
    assert session["workspace"] == "/home/ana/tools"
    assert session["model"] == "gpt-5-codex"
    msgs = _messages(store, sid)
    assert [m["role"] for m in msgs] == ["user", "reasoning", "assistant", "tool", "assistant"]
    assert msgs[1]["content"] == "**Counting lines**"  # the reasoning summary; event_msg skipped
    assert json.loads(msgs[2]["tool_calls"])[0]["function"]["name"] == "shell"
    assert msgs[3]["tool_name"] == "shell"
    assert "165 total" in msgs[3]["content"] and "metadata" not in msgs[3]["content"]


def test_openai_jsonl_both_shapes(store, fixtures):
    summary = index_paths(store, [fixtures / "openai"])
    assert summary["files"] == 2
    assert summary["sessions_added"] == 4 and summary["messages_added"] == 8
    index = SessionIndex(store)
    assert index.get_session("conv-a")["title"] == "Rust lifetimes"
    assert index.get_session("support-1")["message_count"] == 2
    assert _messages(store, "conv-b")[1]["content"] == "おはようございます"


def test_hermes_db(store, state_db):
    summary = index_paths(store, [state_db])
    assert summary["errors"] == []
    index = SessionIndex(store)
    first = index.get_session("20260110_080000_aaaaaa")
    child = index.get_session("20260110_090000_bbbbbb")
    assert child["parent_session_id"] == "20260110_080000_aaaaaa"  # lineage kept
    assert first["title"] == "kubernetes upgrade" and first["workspace"] == "/srv/infra"
    assert first["meta"]["end_reason"] == "compression"
    assert child["ended_at"] is None
    assert index.get_session("cron_nightly_20260111_020000")["source"] == "cron"
    contents = [m["content"] for m in _messages(store, "20260110_080000_aaaaaa")]
    # compaction archives (active=0, compacted=1) kept; rewound rows (active=0, compacted=0) skipped
    assert "upgrade the cluster to kubernetes 1.31" in contents
    assert "rewound answer that the user undid" not in contents
    assert _messages(store, "20260110_080000_aaaaaa")[2]["tool_name"] == "terminal"
    assert _messages(store, "20260110_090000_bbbbbb")[1]["content"] == "drain the nodes one at a time"
    assert summary["messages_added"] == 7


def test_directory_walk_all_formats_and_fts(store, fixtures, state_db):
    summary = index_paths(store, [*core(fixtures), state_db.parent])
    assert summary["files"] == 7 and summary["errors"] == []
    assert summary["sessions_added"] == 11 and summary["messages_added"] == 36
    index = SessionIndex(store)
    assert [index.storage.message_position(i)["session_id"] for i in matching_ids(store, "chmod")] \
        == ["20260105_101500_a1b2c3"]
    # CJK: a two-character word inside an unsegmented sentence is found through the projection
    assert len(matching_ids(store, "桂林")) == 2


def test_symlink_loop_is_safe(store, fixtures):
    loop = fixtures / "openai" / "loop"
    loop.symlink_to(fixtures / "openai", target_is_directory=True)
    summary = index_paths(store, [fixtures / "openai"])
    assert summary["files"] == 2 and summary["messages_added"] == 8


def test_codex_legacy_flat_format(store, tmp_path):
    from sess_helpers import write_jsonl

    path = tmp_path / "codex" / "rollout-2025-05-01-11111111-2222-3333-4444-555555555555.jsonl"
    write_jsonl(path, [
        {"id": "11111111-2222-3333-4444-555555555555", "timestamp": "2025-05-01T10:00:00Z",
         "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list open ports"}]},
        {"type": "function_call", "name": "shell", "arguments": "{\"command\": [\"ss\", \"-ltn\"]}",
         "call_id": "call_a"},
        {"type": "function_call_output", "call_id": "call_a", "output": "LISTEN 0 128 *:22"},
    ])
    assert detect_format(path) == "codex"
    summary = index_paths(store, [path])
    assert summary["errors"] == [] and summary["messages_added"] == 3
    msgs = _messages(store, "11111111-2222-3333-4444-555555555555")
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool"]
    assert msgs[2]["tool_name"] == "shell" and "LISTEN" in msgs[2]["content"]


def test_hermes_snapshot_session_meta_entry_is_metadata(store):
    path = FIXTURES / "hermes_json" / "session_20260203_140000_beef01.json"
    summary = index_paths(store, [path])
    assert summary["errors"] == [] and summary["messages_added"] == 4
    msgs = _messages(store, "20260203_140000_beef01")
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "assistant"]
    assert msgs[2]["tool_name"] == "web_search"
    session = SessionIndex(store).get_session("20260203_140000_beef01")
    assert session["source"] == "discord" and session["meta"]["tools"] == [{"name": "web_search"}]


def test_generic_jsonl_flat_tool_and_error_lines(store):
    summary = index_paths(store, [FIXTURES / "openai_jsonl" / "agent_events.jsonl"])
    assert summary["errors"] == [] and summary["messages_added"] == 8
    msgs = _messages(store, "run-42")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "assistant", "tool",
                                         "system", "assistant"]
    call = json.loads(msgs[2]["tool_calls"])[0]
    assert call["id"] == "call_tag" and call["function"]["name"] == "git"
    assert json.loads(call["function"]["arguments"]) == {"args": ["tag", "v2.3.0"]}
    assert msgs[3]["tool_name"] == "git" and msgs[3]["content"] == "tag v2.3.0 created"
    second = json.loads(msgs[4]["tool_calls"])[0]
    assert second["function"] == {"name": "publish_changelog", "arguments": '{"version": "2.3.0"}'}
    assert msgs[5]["tool_name"] == "publish_changelog" and json.loads(msgs[5]["content"])["status"] == 502
    assert msgs[6]["content"] == "changelog service returned 502"
    assert msgs[6]["timestamp"] == pytest.approx(msgs[5]["timestamp"] + 0.5)
