"""Cline / Roo Code tasks: the API conversation, titled and timed from the UI messages."""

from __future__ import annotations

import pytest
from format_helpers import index, messages, roles, session

from hermes_store.sessions import detect_format

STORAGE = "cline/.config/Code/User/globalStorage"
CLINE = f"{STORAGE}/saoudrizwan.claude-dev/tasks/1736441234567/api_conversation_history.json"
ROO = f"{STORAGE}/rooveterinaryinc.roo-cline/tasks/0f3e2d1c-4b5a-4968-8776-655443322110/api_conversation_history.json"


def test_detected(format_fixtures):
    assert detect_format(format_fixtures / CLINE) == "cline" and detect_format(format_fixtures / ROO) == "cline"
    # the task's other files are members, read beside the history (walking the task reports nothing)
    assert detect_format((format_fixtures / CLINE).parent / "ui_messages.json") == "cline"


def test_cline_xml_era_task(store, format_fixtures):
    assert index(store, format_fixtures / CLINE)["errors"] == []
    row = session(store, "1736441234567")
    assert row["origin_format"] == "cline" and row["source"] == "cline"
    assert row["title"] == "Add a --verbose flag to cli.py"
    assert row["started_at"] == pytest.approx(1736441234.6) and row["ended_at"] == pytest.approx(1736441291.0)
    rows = messages(store, "1736441234567")
    assert roles(rows) == ["user", "assistant", "user", "assistant", "user"]
    assert rows[0]["content"].startswith("<task>\nAdd a --verbose flag to cli.py\n</task>\n<environment_details>")
    assert "<read_file>\n<path>cli.py</path>\n</read_file>" in rows[1]["content"]
    assert rows[2]["content"].startswith("[read_file for 'cli.py'] Result:\nimport argparse")
    assert rows[4]["content"].endswith("</feedback>\n[image]")
    assert all(r["timestamp"] is None for r in rows)  # Cline keeps no per-message time


def test_roo_native_tool_calls(store, format_fixtures):
    assert index(store, format_fixtures / ROO)["errors"] == []
    sid = "0f3e2d1c-4b5a-4968-8776-655443322110"
    row = session(store, sid)
    assert row["source"] == "roo-code" and row["title"] == "Why is `make lint` slow?"
    assert row["started_at"] == pytest.approx(1759999999.99)
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "user", "assistant"]
    assert rows[1]["content"] == "Check the Makefile target first."
    assert rows[2]["content"] == "Let me look at the Makefile."
    assert rows[2]["calls"] == [("read_file", {"args": {"file": [{"path": "Makefile"}]}}, "toolu_roo_1")]
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"], rows[3]["content"]) == (
        "read_file", "toolu_roo_1", "lint:\n\tflake8 --jobs=1 .")
    assert rows[4]["content"].startswith("<environment_details>")
    assert rows[5]["timestamp"] == pytest.approx(1760000009.0)


def test_walking_a_task_directory_reports_no_unknown_files(store, format_fixtures):
    summary = index(store, (format_fixtures / CLINE).parent)
    assert summary["errors"] == [] and summary["messages_added"] == 5
