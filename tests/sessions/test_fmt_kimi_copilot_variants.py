"""Kimi Code's wire.jsonl record log and Copilot CLI's newer event names and legacy history JSON
(docs/formats-variants.md)."""

from __future__ import annotations

import pytest
from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format

KIMI_SESSION = "6f1e2d3c-4b5a-4697-8877-a1b2c3d4e5f6"
KIMI_DIR = f"kimi-cli/.kimi-code/sessions/3c9d2f7e81a4/{KIMI_SESSION}"


def test_kimi_code_wire_logs_are_detected_as_kimi(format_fixtures):
    assert detect_format(format_fixtures / KIMI_DIR / "agents/main/wire.jsonl") == "kimi-cli"
    assert detect_format(format_fixtures / KIMI_DIR / "agents/agent-1/wire.jsonl") == "kimi-cli"


def test_kimi_code_wire_log_is_read_whole(store, format_fixtures):
    assert index(store, format_fixtures / KIMI_DIR / "agents/main/wire.jsonl")["errors"] == []
    row = session(store, KIMI_SESSION)
    assert row["origin_format"] == "kimi-cli" and row["title"] == "Why does the retry test hang?"
    assert row["workspace"] == "/home/mei/fetcher" and row["model"] == "kimi-k2-thinking"
    assert row["started_at"] == pytest.approx(ts("2026-07-01T10:00:00.000Z"))
    rows = messages(store, KIMI_SESSION)
    assert roles(rows) == [
        "user",
        "reasoning",
        "assistant",
        "assistant",
        "assistant",
        "tool",
        "tool",
        "system",
        "assistant",
        "user",
    ]
    assert (
        rows[0]["content"] == "why does test_retry hang forever?"
    )  # turn.prompt is not counted twice
    assert rows[0]["timestamp"] == pytest.approx(1782900001.001)
    assert rows[1]["content"] == "The backoff may never reach the deadline; read the test first."
    assert rows[3]["calls"] == [("ReadFile", {"path": "tests/test_retry.py"}, "ReadFile:0")]
    assert rows[4]["calls"] == [
        ("Shell", {"command": "grep -n sleep src/fetcher/retry.py"}, "Shell:1")
    ]
    assert (rows[5]["tool_name"], rows[5]["tool_call_id"]) == ("ReadFile", "ReadFile:0")
    assert rows[5]["content"].startswith("def test_retry():")
    assert (rows[6]["tool_name"], rows[6]["content"]) == ("Shell", "")  # an empty result is kept
    assert rows[7]["content"] == "[injection] <system-reminder>Plan mode is off.</system-reminder>"
    assert rows[-1]["content"] == "thanks" and rows[-1]["timestamp"] == pytest.approx(1782900120.0)


def test_kimi_code_subagent_log_is_a_child_session(store, format_fixtures):
    assert index(store, format_fixtures / KIMI_DIR / "agents")["errors"] == []
    child = session(store, f"{KIMI_SESSION}:agent-1")
    assert child["parent_session_id"] == KIMI_SESSION and child["title"] is None
    assert child["started_at"] == pytest.approx(ts("2026-07-01T10:00:00.000Z"))
    assert roles(messages(store, f"{KIMI_SESSION}:agent-1")) == ["user", "assistant"]


def test_kimi_code_log_appended_later_resumes(store, format_fixtures):
    path = format_fixtures / KIMI_DIR / "agents/main/wire.jsonl"
    index(store, path)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(
            '{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p-9","turnId":"2",'
            '"step":1,"stepUuid":"st-9","part":{"type":"text","text":"You are welcome."}},'
            '"time":1782900121000}\n'
            '{"type":"brand.new_record","x":1,"time":1782900122000}\n'
        )
    again = index(store, path)
    assert again["messages_added"] == 1
    assert [e["error"] for e in again["errors"]] == [
        "unknown record type 'brand.new_record' (skipped; reported once per file)"
    ]
    assert messages(store, KIMI_SESSION)[-1]["content"] == "You are welcome."


COPILOT_STATE = "copilot-cli/.copilot/session-state"
COPILOT_NEW = "c4d5e6f7-0819-4a2b-9c3d-4e5f60718293"


def test_copilot_cli_newer_event_names_are_read(store, format_fixtures):
    path = format_fixtures / COPILOT_STATE / COPILOT_NEW / "events.jsonl"
    assert detect_format(path) == "copilot-cli"
    assert index(store, path)["errors"] == []  # every event name of the SDK's schema is known
    row = session(store, COPILOT_NEW)
    assert row["title"] == "Sitemap misses blog posts" and row["workspace"] == "/home/ola/site"
    assert row["model"] == "claude-sonnet-4.6"  # the model the resumed session selected
    assert row["started_at"] == pytest.approx(ts("2026-06-03T14:00:00.000Z"))
    rows = messages(store, COPILOT_NEW)
    assert roles(rows) == [
        "system",
        "user",
        "reasoning",
        "assistant",
        "tool",
        "system",
        "assistant",
        "assistant",
        "tool",
        "system",
    ]
    assert rows[0]["content"] == "[warning] Premium request quota is 90% used"
    assert all(
        "terminal assistant" not in r["content"] for r in rows
    )  # the system prompt is not indexed
    assert rows[1]["content"] == "the sitemap is missing the blog posts"
    assert rows[2]["content"] == "The generator probably globs only top-level pages."
    assert rows[3]["calls"] == [
        ("grep", {"pattern": "glob\\(", "path": "scripts/sitemap.js"}, "call_g1")
    ]
    assert (rows[4]["tool_name"], rows[4]["content"]) == ("grep", "")  # an empty result is kept
    assert rows[5]["content"] == "[error] upstream timeout after 60s"
    assert rows[7]["calls"] == [
        ("bash", {"command": "npm run sitemap"}, "user_bash_1")
    ]  # the user's own command
    assert (rows[8]["tool_name"], rows[8]["content"]) == (
        "bash",
        "wrote 48 urls to public/sitemap.xml",
    )
    assert rows[9]["content"] == "[task complete] Sitemap now includes the 31 blog posts."
    assert rows[9]["timestamp"] == pytest.approx(ts("2026-06-03T14:02:04.000Z"))


HISTORY = "copilot-cli-history/.copilot/history-session-state"
HISTORY_TIMELINE = "5b6c7d8e-9f01-4234-a567-89abcdef0123"
HISTORY_CHAT = "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"


def test_copilot_cli_legacy_history_timeline_is_read(store, format_fixtures):
    path = format_fixtures / HISTORY / "session_2025-09-30T16-40-12-118Z_5b6c7d8e.json"
    assert detect_format(path) == "copilot-cli-history"
    assert index(store, path)["errors"] == []
    row = session(store, HISTORY_TIMELINE)  # the document's sessionId, not the file name
    assert row["origin_format"] == "copilot-cli-history" and row["source"] == "copilot-cli"
    assert row["started_at"] == pytest.approx(ts("2025-09-30T16:40:12.118Z"))
    rows = messages(store, HISTORY_TIMELINE)
    assert roles(rows) == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == "[info] Logged in as ivo"
    assert rows[1]["content"] == "why is /health returning 500?"
    assert rows[1]["timestamp"] == pytest.approx(ts("2025-09-30T16:40:20.500Z"))
    assert rows[2]["calls"] == [
        ("str_replace_editor", {"command": "view", "path": "/home/ivo/api/health.py"}, "toolu_h1")
    ]
    assert rows[2]["content"] == "view the file at /home/ivo/api/health.py."
    assert (rows[3]["tool_name"], rows[3]["content"]) == (
        "str_replace_editor",
        "def health():\n    return db.ping() / 0",
    )
    # a completion without its request still gives the call with its arguments, and its empty result
    assert rows[4]["calls"] == [
        (
            "bash",
            {"command": "pytest -q tests/test_health.py", "description": "Run tests"},
            "toolu_h2",
        )
    ]
    assert (rows[5]["tool_call_id"], rows[5]["content"]) == ("toolu_h2", "")
    assert rows[6]["content"] == "health() divides by zero; return db.ping() instead."


def test_copilot_cli_legacy_history_without_timeline_reads_chat_messages(store, format_fixtures):
    path = format_fixtures / HISTORY / f"{HISTORY_CHAT}.json"
    assert index(store, path)["errors"] == []
    rows = messages(store, HISTORY_CHAT)
    assert roles(rows) == ["user", "assistant", "tool", "assistant"]  # the system prompt left out
    assert rows[1]["calls"] == [
        ("bash", {"command": "du -sh /var/log/* | sort -h | tail -2"}, "call_l1")
    ]
    assert (rows[2]["tool_name"], rows[2]["content"]) == ("bash", "")
    again = index(store, path)  # unchanged: nothing added twice
    assert again["messages_added"] == 0 and len(messages(store, HISTORY_CHAT)) == 4
