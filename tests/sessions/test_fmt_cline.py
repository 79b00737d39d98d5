"""Cline / Roo Code tasks: the API conversation, titled and timed from the UI messages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

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
    # the XML-tool era's thinking, calls and results (cline_xml): reasoning, calls, tool rows
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "user", "assistant", "tool"]
    assert rows[0]["content"].startswith("<task>\nAdd a --verbose flag to cli.py\n</task>\n<environment_details>")
    assert rows[1]["content"] == "I need to see how arguments are parsed."
    assert rows[2]["calls"] == [("read_file", {"path": "cli.py"}, "1736441234567:xml-1")]
    assert rows[3]["content"].startswith("import argparse") and rows[3]["tool_call_id"] == "1736441234567:xml-1"
    assert rows[3]["tool_name"] == "read_file"
    assert rows[4]["content"].startswith("<environment_details>")
    assert rows[5]["calls"][0][:2] == ("attempt_completion", {"result": "Added `--verbose` (store_true) to the parser."})
    assert rows[6]["content"].endswith("</feedback>\n[image]") and rows[6]["tool_name"] == "attempt_completion"
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
    assert summary["errors"] == [] and summary["messages_added"] == 7


ROO_V2 = f"{STORAGE}/rooveterinaryinc.roo-cline/tasks/3c9e8d7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f"
KILO_UI = f"{STORAGE}/kilocode.kilo-code/tasks/1762000000000"
META_ONLY = f"{STORAGE}/saoudrizwan.claude-dev/tasks/1763000000000"


def test_roo_versioned_history_and_history_item(store, format_fixtures):
    """Roo Code's RooMessage storage ({version: 2, messages}: AI SDK parts, tool messages) and
    its per-task history_item.json (workspace, mode, parent task)."""
    history = format_fixtures / ROO_V2 / "api_conversation_history.json"
    assert detect_format(history) == "cline"
    assert detect_format(history.parent / "history_item.json") == "cline"  # a member of the task
    assert index(store, history.parent)["errors"] == []
    sid = "3c9e8d7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f"
    row = session(store, sid)
    assert row["source"] == "roo-code" and row["title"] == "Count the TODO comments in src/"
    assert row["workspace"] == "/home/dev/proj" and row["meta"]["mode"] == "code"
    assert row["parent_session_id"] == "0f3e2d1c-4b5a-4968-8776-655443322110"
    assert row["started_at"] == pytest.approx(1761000000.0) and row["ended_at"] == pytest.approx(1761000005.0)
    rows = messages(store, sid)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == "<task>\nCount the TODO comments in src/\n</task>\n[image]"
    assert rows[1]["content"] == "A search tool call will find them."
    assert rows[2]["calls"] == [("search_files", {"path": "src", "regex": "TODO"}, "call_v2_1")]
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"], rows[3]["content"]) == (
        "search_files", "call_v2_1", "src/a.py:3: # TODO split")
    assert rows[5]["tool_name"] == "list_files" and json.loads(rows[5]["content"]) == {"files": ["a.py", "b.py"]}
    assert rows[6]["content"] == "There is one TODO, in src/a.py."


def test_task_folder_with_only_the_panel_and_metadata(store, format_fixtures):
    """No api_conversation_history.json: the panel is read, task_metadata.json is its member."""
    folder = format_fixtures / KILO_UI
    assert detect_format(folder / "task_metadata.json") == "cline"
    summary = index(store, folder)
    assert summary["errors"] == [] and "notices" not in summary
    row = session(store, "1762000000000")
    assert row["source"] == "kilo-code" and row["title"] == "Add a docstring to parse()"
    assert [(r["role"], r["content"]) for r in messages(store, "1762000000000")] == [
        ("user", "Add a docstring to parse()"), ("assistant", "Added the docstring.")]


def test_metadata_only_task_folder_is_skipped_with_one_line(store, format_fixtures, run):
    folder = format_fixtures / META_ONLY
    assert detect_format(folder / "task_metadata.json") == "cline"
    summary = index(store, folder)
    assert summary["errors"] == [] and summary["messages_added"] == 0
    assert [n["notice"] for n in summary["notices"]] == [
        "task folder 1763000000000 holds no conversation (no api_conversation_history.json or "
        "ui_messages.json, only task_metadata.json); nothing to import"]
    (folder / "settings.json").write_text('{"mode": "act"}', encoding="utf-8")
    (folder / "task_metadata.json").touch()
    summary = index(store, folder)  # still one line for the folder: settings.json is its member
    assert summary["errors"] == [] and len(summary["notices"]) == 1
    result = run("sessions", "index", str(folder))
    assert result.exit_code == 0 and "unknown format" not in result.output


def test_empty_history_falls_back_to_the_panel(store, format_fixtures, tmp_path):
    folder = tmp_path / "tasks" / "1764000000000"
    shutil.copytree(format_fixtures / KILO_UI, folder)
    (folder / "api_conversation_history.json").write_text("[]", encoding="utf-8")
    assert detect_format(folder / "api_conversation_history.json") == "cline"
    assert index(store, folder)["errors"] == []
    assert [r["role"] for r in messages(store, "1764000000000")] == ["user", "assistant"]
    (folder / "ui_messages.json").unlink()
    (folder / "api_conversation_history.json").write_text('{"version": 2, "messages": []}', encoding="utf-8")
    summary = index(store, folder)
    assert summary["errors"] == [] and len(summary["notices"]) == 1


def test_walking_the_tasks_roots_reports_nothing_unknown(store, format_fixtures):
    notices = {}
    for extension in ("rooveterinaryinc.roo-cline", "saoudrizwan.claude-dev", "kilocode.kilo-code"):
        summary = index(store, format_fixtures / STORAGE / extension / "tasks")
        assert summary["errors"] == [], extension
        notices[extension] = [Path(n["path"]).name for n in summary.get("notices", [])]
    assert notices == {"rooveterinaryinc.roo-cline": ["_index.json"], "saoudrizwan.claude-dev": ["task_metadata.json"],
                       "kilocode.kilo-code": []}


def test_the_panel_beside_a_history_is_a_member_not_a_second_read(store, format_fixtures, tmp_path):
    """ui_messages.json beside api_conversation_history.json was read as a conversation of its
    own: a fresh walk counted its entries as 'messages already indexed', and once the task went on
    (Cline rewrites both files) re-indexing reported 'session id ... is already indexed from
    another file' for the panel. It is read through the history, as the task's member."""
    folder = tmp_path / "tasks" / "0f3e2d1c-4b5a-4968-8776-655443322110"
    shutil.copytree((format_fixtures / ROO).parent, folder)
    summary = index(store, folder)
    assert summary["errors"] == [] and summary["messages_added"] == 6 and summary["skipped"] == 0, summary
    history = json.loads((folder / "api_conversation_history.json").read_text(encoding="utf-8"))
    history.append({"role": "user", "content": [{"type": "text", "text": "and the tests?"}], "ts": 1760000020000})
    (folder / "api_conversation_history.json").write_text(json.dumps(history), encoding="utf-8")
    panel = json.loads((folder / "ui_messages.json").read_text(encoding="utf-8"))
    panel.append({"ts": 1760000020000, "type": "say", "say": "user_feedback", "text": "and the tests?"})
    (folder / "ui_messages.json").write_text(json.dumps(panel), encoding="utf-8")
    summary = index(store, folder)
    assert summary["errors"] == [], summary["errors"]
    assert messages(store, folder.name)[-1]["content"] == "and the tests?"
    assert len(messages(store, folder.name)) == 7
