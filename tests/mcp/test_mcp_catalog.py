"""The MCP catalog's rules, without a server: which calls write, what read-only withholds."""

from __future__ import annotations

import pytest

from hermes_store import tools
from hermes_store.mcp_server import catalog


def test_every_registry_tool_has_a_spec():
    assert set(catalog.SPECS) == set(tools.TOOL_NAMES)


def test_an_unlisted_tool_is_treated_as_writing():
    spec = catalog.spec_for("some_future_tool")
    assert spec.read_only is False and catalog.ALL_ACTIONS in spec.writing_actions
    assert catalog.visible_in_read_only("some_future_tool") is False
    assert "read-only" in catalog.refusal("some_future_tool", {}, read_only=True)


@pytest.mark.parametrize(("name", "args", "refused"), [
    ("fact_store", {"action": "add", "content": "x"}, True),
    ("fact_store", {"action": "update", "fact_id": 1}, True),
    ("fact_store", {"action": "remove", "fact_id": 1}, True),
    ("fact_store", {"action": "search", "query": "x"}, False),
    ("fact_store", {"action": "contradict"}, False),
    ("fact_feedback", {"action": "helpful", "fact_id": 1}, True),
    ("memory", {"action": "add"}, True),
    ("memory", {"operations": []}, True),
    ("recall", {"query": "x"}, False),
    ("session_search", {}, False),
])
def test_read_only_refusals(name, args, refused):
    assert (catalog.refusal(name, args, read_only=True) is not None) is refused
    assert catalog.refusal(name, args, read_only=False) is None


def test_read_only_schema_drops_writing_actions_only():
    full = catalog.input_schema("fact_store", read_only=False)["properties"]["action"]["enum"]
    narrowed = catalog.input_schema("fact_store", read_only=True)["properties"]["action"]["enum"]
    assert set(full) - set(narrowed) == {"add", "update", "remove"}
    assert tools.get_tool("fact_store").schema["parameters"]["properties"]["action"]["enum"] == full


def test_select_tools():
    assert catalog.select_tools(None) == tools.TOOL_NAMES
    assert catalog.select_tools(["recall", " memory "]) == ("memory", "recall")
    with pytest.raises(catalog.ToolSelectionError, match="nope"):
        catalog.select_tools(["recall", "nope"])
    with pytest.raises(catalog.ToolSelectionError):
        catalog.select_tools(["", " "])
