"""fact_store / fact_feedback through the package dispatcher (the agent's view)."""

from __future__ import annotations

import json

import pytest

from hermes_store.tools import handle_tool_call

pytestmark = pytest.mark.usefixtures("engine")  # every test on both storage engines


def call(home, name, args):
    return json.loads(handle_tool_call(name, args, home=home))


def test_every_action_round_trip(home):
    add = call(home, "fact_store", {"action": "add", "content": "Alice lives in Paris", "tags": "home"})
    assert add["fact_id"] == 1 and add["status"] == "added"
    assert call(home, "fact_store", {"action": "add", "content": "Alice lives in Paris"})["status"] == "exists"
    call(home, "fact_store", {"action": "add", "content": "Alice lives in Berlin"})
    call(home, "fact_store", {"action": "add", "content": "Alice works with Bob", "category": "project"})
    search = call(home, "fact_store", {"action": "search", "query": "Paris"})
    assert search["count"] == 1 and search["results"][0]["content"] == "Alice lives in Paris"
    for action in ("probe", "related"):
        reply = call(home, "fact_store", {"action": action, "entity": "Alice"})
        assert reply["count"] == 3, action
    reason = call(home, "fact_store", {"action": "reason", "entities": ["Alice", "Bob"]})
    assert [r["content"] for r in reason["results"]] == ["Alice works with Bob"]
    contradict = call(home, "fact_store", {"action": "contradict"})
    assert contradict["count"] == 1
    assert {contradict["results"][0]["fact_a"]["fact_id"], contradict["results"][0]["fact_b"]["fact_id"]} == {1, 2}
    assert call(home, "fact_store", {"action": "update", "fact_id": 2, "trust_delta": -0.3}) == {
        "success": True, "updated": True}
    assert call(home, "fact_store", {"action": "update", "fact_id": 99, "content": "x"})["updated"] is False
    listed = call(home, "fact_store", {"action": "list", "limit": 2})
    assert listed["count"] == 2 and "facts" in listed
    assert call(home, "fact_store", {"action": "list", "category": "project"})["count"] == 1
    assert call(home, "fact_store", {"action": "remove", "fact_id": 3})["removed"] is True
    assert call(home, "fact_store", {"action": "remove", "fact_id": 3})["removed"] is False


def test_error_shapes(home):
    assert call(home, "fact_store", {"action": "search"}) == {
        "success": False, "error": "Missing required argument: 'query'"}
    assert call(home, "fact_store", {"action": "fly"})["error"] == "Unknown action: fly"
    assert call(home, "fact_store", {"action": "add", "content": "  "})["error"] == "content must not be empty"
    assert call(home, "fact_store", {"action": "reason", "entities": []})["error"] == "reason requires 'entities' list"
    assert "fact_id" in call(home, "fact_store", {"action": "update"})["error"]
    assert "limit" in call(home, "fact_store", {"action": "list", "limit": "many"})["error"]


def test_feedback_tool(home):
    call(home, "fact_store", {"action": "add", "content": "Zed uses vim"})
    reply = call(home, "fact_feedback", {"action": "helpful", "fact_id": 1})
    assert reply == {"success": True, "fact_id": 1, "old_trust": 0.5, "new_trust": 0.55, "helpful_count": 1}
    missing = call(home, "fact_feedback", {"action": "unhelpful", "fact_id": 77})
    assert missing["success"] is False and missing["error"] == "fact_id 77 not found"
    bad = call(home, "fact_feedback", {"action": "great", "fact_id": 1})
    assert bad["success"] is False and "helpful" in bad["error"]


def test_search_min_trust_argument(home):
    call(home, "fact_store", {"action": "add", "content": "Yara likes jazz"})
    call(home, "fact_feedback", {"action": "unhelpful", "fact_id": 1})
    call(home, "fact_feedback", {"action": "unhelpful", "fact_id": 1})
    call(home, "fact_feedback", {"action": "unhelpful", "fact_id": 1})
    assert call(home, "fact_store", {"action": "search", "query": "jazz"})["count"] == 0
    assert call(home, "fact_store", {"action": "search", "query": "jazz", "min_trust": 0.1})["count"] == 1
