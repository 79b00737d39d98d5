"""GitHub Copilot Chat (VS Code chatSessions): the v3 JSON snapshot and the JSONL operation log."""

from __future__ import annotations

import pytest
from format_helpers import index, messages, roles, session

from hermes_store.sessions import detect_format

SESSIONS = "copilot-chat/.config/Code/User/workspaceStorage/3f7a9b1c2d4e5f60718293a4b5c6d7e8/chatSessions"
S1, S2 = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d", "1b2c3d4e-5f60-4718-a293-b4c5d6e7f809"


def test_detected(format_fixtures):
    assert detect_format(format_fixtures / SESSIONS / f"{S1}.json") == "copilot-chat"
    assert detect_format(format_fixtures / SESSIONS / f"{S2}.jsonl") == "copilot-chat"


def test_json_session(store, format_fixtures):
    assert index(store, format_fixtures / SESSIONS / f"{S1}.json")["errors"] == []
    row = session(store, S1)
    assert row["origin_format"] == "copilot-chat" and row["source"] == "copilot-chat"
    assert row["title"] == "Cart total rounding" and row["workspace"] == "/home/maya/web shop"
    assert row["model"] == "copilot/claude-sonnet-4"
    assert row["started_at"] == pytest.approx(1759300000.0) and row["ended_at"] == pytest.approx(1759300300.0)
    rows = messages(store, S1)
    assert roles(rows) == ["user", "assistant", "user", "reasoning", "assistant", "tool", "assistant", "tool",
                           "assistant", "user", "system"]
    assert rows[0]["content"] == "why is the cart total 19.999999?\n[attachment cart.ts]"
    assert rows[0]["timestamp"] == pytest.approx(1759300010.0)
    assert rows[1]["content"] == "Floating-point sums: `cart.ts` adds prices as floats.\n\nUse integer cents."
    assert rows[3]["content"] == "Convert to cents in addItem, then run npm test."
    assert rows[4]["calls"] == [("copilot_replaceString", {"filePath": "/home/maya/web shop/src/cart.ts",
                                                           "oldString": "total += price",
                                                           "newString": "totalCents += Math.round(price * 100)"},
                                 "call_edit_1")]
    assert (rows[5]["tool_name"], rows[5]["content"]) == ("copilot_replaceString", "The file was edited.")
    assert rows[6]["content"] == "[edited /home/maya/web shop/src/cart.ts]"
    assert rows[6]["calls"] == [("run_in_terminal", {"command": "npm test -- --run"}, "call_term_2")]
    assert rows[7]["content"] == "Tests: 12 passed, 12 total" and rows[7]["tool_call_id"] == "call_term_2"
    assert rows[8]["content"].startswith("Done — totals are computed in cents")
    assert rows[10]["content"] == "[error] Sorry, your request failed. Please try again."


def test_jsonl_operation_log(store, format_fixtures):
    summary = index(store, format_fixtures / SESSIONS / f"{S2}.jsonl")
    assert [(e["line"], e["error"]) for e in summary["errors"]] == [
        (8, "path ['requests', 5, 'response'] not found (skipped)")]
    row = session(store, S2)
    assert row["title"] == "useMemo explained" and row["ended_at"] == pytest.approx(1768000007.0)
    assert [(r["role"], r["content"]) for r in messages(store, S2)] == [
        ("user", "what does `useMemo` do?"),
        ("assistant", "It caches a computed value until its dependencies change.")]
