"""OpenHands SDK / CLI conversations: base_state.json plus one JSON file per event."""

from __future__ import annotations

from format_helpers import index, messages, roles, session

from hermes_store.sessions import detect_format

CONV = "openhands/.openhands/conversations/c0a8012e7f3b4d5e9a1b2c3d4e5f6a7b"
SID = "c0a8012e-7f3b-4d5e-9a1b-2c3d4e5f6a7b"



def test_detected(format_fixtures):
    assert detect_format(format_fixtures / CONV / "base_state.json") == "openhands"


def test_conversation(store, format_fixtures):
    assert index(store, format_fixtures / CONV / "base_state.json")["errors"] == []
    row = session(store, SID)
    assert row["origin_format"] == "openhands" and row["source"] == "openhands"
    assert row["model"] == "litellm_proxy/claude-sonnet-4-5-20250929" and row["workspace"] == "/home/kai/etl"
    rows = messages(store, SID)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == "why does load_orders() drop rows with null dates?"
    assert rows[1]["content"] == "Probably a dropna() call."
    assert rows[2]["content"] == "Let me look at the loader."
    assert rows[2]["calls"] == [("terminal", {"command": "grep -n dropna etl/load.py"}, "toolu_oh_1")]
    assert (rows[3]["tool_name"], rows[3]["content"]) == ("terminal", "42:    df = df.dropna()")
    assert rows[4]["calls"][0][0] == "file_editor" and rows[4]["content"] == ""
    assert rows[5]["content"] == "Action rejected: explain first, don't edit"
    assert rows[6]["content"].startswith("`df.dropna()` on line 42")
    assert rows[6]["timestamp"] is not None


def test_new_event_files_are_picked_up(store, format_fixtures):
    import json

    index(store, format_fixtures / CONV / "base_state.json")
    (format_fixtures / CONV / "events" / "event-00008-e-u3.json").write_text(json.dumps({
        "kind": "MessageEvent", "id": "e-u3", "timestamp": "2026-01-15T09:01:00.000000", "source": "user",
        "llm_message": {"role": "user", "content": [{"type": "text", "text": "ok, fix it"}]}}))
    again = index(store, format_fixtures / CONV / "base_state.json")
    assert again["messages_added"] == 1
    assert messages(store, SID)[-1]["content"] == "ok, fix it"


def test_walking_the_conversation_reports_no_unknown_files(store, format_fixtures):
    """Event files are members of the conversation: read through base_state.json, never alone."""
    summary = index(store, format_fixtures / CONV)
    assert summary["errors"] == [] and summary["messages_added"] == 7
    assert detect_format(format_fixtures / CONV / "events" / "event-00001-e-u1.json") == "openhands"
