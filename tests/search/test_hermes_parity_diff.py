"""Regressions found by running Hermes' session_search tool (tools/session_search_tool.py) on a
state.db written by Hermes' own SessionDB, side by side with ours on its `sessions index` import.

The expected shapes quote the upstream behaviour; no upstream code is imported.
"""

from __future__ import annotations

import json

import pytest

from hermes_store.home import Home
from hermes_store.tools import handle_tool_call
from tests.search.conftest import T0, add_session


@pytest.fixture
def store(db):
    add_session(db, "alpha", [("user", "we fixed the postgres vacuum issue"), ("assistant", "ok")], start=T0)
    return db


def call(home: Home, args: dict) -> dict:
    return json.loads(handle_tool_call("session_search", args, home=home))


def test_discover_without_any_hit_has_hermes_keys_only(home, store):
    # Hermes _discover, no FTS hit and no title match:
    # {"success": True, "mode": "discover", "query": q, "results": [], "count": 0,
    #  "message": "No matching sessions found."}  -- no sessions_searched key.
    out = call(home, {"query": "zzzqqqnothing"})
    out.pop("detail", None)  # our documented extra key
    assert out == {"success": True, "mode": "discover", "query": "zzzqqqnothing", "results": [],
                   "count": 0, "message": "No matching sessions found."}


def test_discover_on_home_without_database_has_the_same_shape(home):
    out = call(home, {"query": "anything"})
    assert "sessions_searched" not in out and out["message"] == "No matching sessions found."


def test_discover_with_hits_keeps_sessions_searched(home, store):
    out = call(home, {"query": "postgres"})
    assert out["count"] >= 1 and out["sessions_searched"] == out["count"]
    assert "message" not in out
