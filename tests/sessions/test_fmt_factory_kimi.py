"""Factory Droid session JSONL and Kimi CLI context.jsonl."""

from __future__ import annotations

import pytest
from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format

FACTORY = "factory-droid/.factory/sessions/-home-ana-app/3c2b1a09-8f7e-4d6c-b5a4-938271605f4e.jsonl"
KIMI = ("kimi-cli/.kimi/sessions/8f14e45fceea167a5a36dedd4bea2543/"
        "5d1e8f3a-7b2c-4e9d-a6f0-1c3b5d7e9f21/context.jsonl")



def test_detected(format_fixtures):
    assert detect_format(format_fixtures / FACTORY) == "factory-droid"
    assert detect_format(format_fixtures / KIMI) == "kimi-cli"
    assert detect_format((format_fixtures / FACTORY).with_name(
        "3c2b1a09-8f7e-4d6c-b5a4-938271605f4e.settings.json")) == "factory-droid"  # a member of the session


def test_factory_droid(store, format_fixtures):
    assert index(store, format_fixtures / FACTORY)["errors"] == []
    sid = "3c2b1a09-8f7e-4d6c-b5a4-938271605f4e"
    row = session(store, sid)
    assert row["origin_format"] == "factory-droid" and row["source"] == "factory-droid"
    assert row["title"] == "Add pagination to /orders" and row["workspace"] == "/home/ana/app"
    assert row["model"] == "claude-sonnet-4-5-20250929"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant"]
    assert rows[0]["timestamp"] == pytest.approx(ts("2025-11-20T14:00:00.000Z"))
    assert rows[2]["calls"] == [("Grep", {"pattern": "orders", "path": "src/"}, "toolu_f1")]
    assert (rows[3]["tool_name"], rows[3]["content"]) == ("Grep", "src/routes/orders.ts:12")
    assert rows[4]["content"] == "Added `?cursor=` and `limit` (max 100)."


def test_kimi_context(store, format_fixtures):
    assert index(store, format_fixtures / KIMI)["errors"] == []
    sid = "5d1e8f3a-7b2c-4e9d-a6f0-1c3b5d7e9f21"
    row = session(store, sid)
    assert row["origin_format"] == "kimi-cli" and row["meta"]["work_dir_hash"] == "8f14e45fceea167a5a36dedd4bea2543"
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "user"]
    assert rows[0]["content"] == "统计一下 src 里有多少行 Python"
    assert rows[1]["content"] == "用 wc -l 数一下。"
    assert rows[2]["calls"] == [("Shell", {"command": "find src -name '*.py' | xargs wc -l | tail -1"}, "Shell:0")]
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"], rows[3]["content"]) == ("Shell", "Shell:0", "  4821 total")
    assert all("You are Kimi CLI" not in r["content"] for r in rows)


def test_kimi_revert_rewrites_and_reimports(store, format_fixtures):
    path = format_fixtures / KIMI
    index(store, path)
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:7]) + "\n" + '{"role": "user", "content": "redo it in Rust"}\n',
                    encoding="utf-8")  # back to checkpoint 1, then a new prompt
    index(store, path)
    rows = messages(store, "5d1e8f3a-7b2c-4e9d-a6f0-1c3b5d7e9f21")
    assert [r["content"] for r in rows][-1] == "redo it in Rust"
    assert "thanks" not in [r["content"] for r in rows]


def test_kimi_look_alike_is_kimi(tmp_path):
    path = tmp_path / "context.jsonl"
    path.write_text('{"role": "_checkpoint", "id": 0}\n{"role": "user", "content": "hi"}\n', encoding="utf-8")
    assert detect_format(path) == "kimi-cli"
