"""Pi coding-agent and OpenClaw session trees: the active branch, tool calls, titles."""

from __future__ import annotations

import pytest
from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format

PI = "pi/.pi/agent/sessions/--home-zoe-blog--"
S = "b7c8d9e0-1f2a-4b3c-8d4e-5f6a7b8c9d0e"
V1 = "0d9c8b7a-6e5f-4d3c-2b1a-0f9e8d7c6b5a"
OC = "4e5f6a7b-8c9d-4e0f-a1b2-c3d4e5f6a7b8"
OPENCLAW = f"openclaw/.openclaw/agents/main/sessions/{OC}.jsonl"



def test_detected(format_fixtures):
    assert detect_format(format_fixtures / PI / f"2026-01-03T10-00-00-000Z_{S}.jsonl") == "pi"
    assert detect_format(format_fixtures / PI / f"2025-09-01T08-00-00-000Z_{V1}.jsonl") == "pi"
    assert detect_format(format_fixtures / OPENCLAW) == "openclaw"


def test_pi_active_branch(store, format_fixtures):
    assert index(store, format_fixtures / PI / f"2026-01-03T10-00-00-000Z_{S}.jsonl")["errors"] == []
    row = session(store, S)
    assert row["origin_format"] == "pi" and row["source"] == "pi"
    assert row["title"] == "Dead links in posts" and row["model"] == "gpt-5.1-codex"
    assert row["workspace"] == "/home/zoe/blog" and row["meta"]["abandoned_branch_entries"] == 2
    assert row["started_at"] == pytest.approx(ts("2026-01-03T10:00:00.000Z"))
    rows = messages(store, S)
    # the extension's custom entry is kept as a system row (issue 23: no entry dropped)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "system", "user", "assistant", "system"]
    assert rows[7]["content"] == '[todo-ext] {"done": 1}'
    assert rows[2]["calls"] == [("bash", {"command": "grep -rn '](http' posts/ | head"}, "toolu_pi_1")]
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"]) == ("bash", "toolu_pi_1")
    assert rows[4]["content"] == "Tried archive.org replacements; abandoned."
    assert rows[6]["timestamp"] == pytest.approx(1767434540.0)
    assert all("archive.org links" not in r["content"] for r in rows)


def test_pi_version_1_is_linear(store, format_fixtures):
    assert index(store, format_fixtures / PI / f"2025-09-01T08-00-00-000Z_{V1}.jsonl")["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, V1)] == [
        ("user", "hello pi"), ("assistant", "Hi! What shall we build?")]


def test_openclaw(store, format_fixtures):
    assert index(store, format_fixtures / OPENCLAW)["errors"] == []
    row = session(store, OC)
    assert row["origin_format"] == "openclaw" and row["source"] == "openclaw"
    assert row["meta"]["agent"] == "main" and row["model"] == "gpt-5-mini"
    rows = messages(store, OC)
    assert roles(rows) == ["user", "assistant", "tool", "assistant"]
    assert rows[1]["calls"] == [("cron", {"action": "add", "at": "18:00", "text": "water the plants"}, "call_cron_1")]
    assert rows[2]["content"] == "scheduled job 17"


def test_switching_branch_after_indexing_replaces_the_old_branch(store, format_fixtures):
    import json

    path = format_fixtures / PI / f"2026-01-03T10-00-00-000Z_{S}.jsonl"
    index(store, path)
    with open(path, "a", encoding="utf-8") as handle:  # back to a1, a new branch
        handle.write(json.dumps({"type": "message", "id": "d1", "parentId": "a1", "timestamp": "2026-01-03T11:00:00Z",
                                 "message": {"role": "assistant", "content": [{"type": "text", "text": "Fresh start."}],
                                             "timestamp": 1767438000000}}) + "\n")
    assert index(store, path)["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, S)] == [
        ("user", "fix the broken links in posts/"), ("assistant", "Fresh start.")]
