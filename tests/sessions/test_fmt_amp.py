"""Amp thread files: text, thinking, tool_use / tool_result (run status), info summaries."""

from __future__ import annotations

import pytest
from format_helpers import index, messages, roles, session

from hermes_store.sessions import detect_format

T = "T-019b9d03-62e3-772f-9780-3e637f90eaec"
THREAD = f"amp/.local/share/amp/threads/{T}.json"



def test_detected(format_fixtures):
    assert detect_format(format_fixtures / THREAD) == "amp"


def test_thread(store, format_fixtures):
    assert index(store, format_fixtures / THREAD)["errors"] == []
    row = session(store, T)
    assert row["origin_format"] == "amp" and row["source"] == "amp"
    assert row["title"] == "Speed up the docker build" and row["workspace"] == "/home/ola/svc api"
    assert row["model"] == "gpt-5" and row["meta"]["agentMode"] == "smart"
    assert row["started_at"] == pytest.approx(1767865803.494)
    rows = messages(store, T)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "tool", "system", "assistant"]
    assert rows[0]["timestamp"] == pytest.approx(1767865803.6)
    assert rows[1]["content"].startswith("Layer caching is probably broken")
    assert rows[2]["calls"] == [("Read", {"path": "/home/ola/svc api/Dockerfile"}, "toolu_amp_1")]
    assert (rows[3]["tool_name"], rows[3]["content"]) == ("Read", "FROM node:22\nCOPY . .\nRUN npm ci")
    assert rows[5]["content"] == "[rejected-by-user]" and rows[5]["tool_name"] == "Bash"
    assert rows[6]["content"] == "Earlier: the Dockerfile copies the whole tree before npm ci."
    assert rows[7]["content"].startswith("Copy package*.json")
