"""Headless output of GitHub Copilot CLI and OpenHands saved to a file.

``copilot -p PROMPT --output-format json`` prints Copilot's session events (the ``events.jsonl``
envelope, ephemeral ones included, no ``session.start``) and a closing ``result`` line naming the
session: read as ``copilot-stream``. Before, it was read as a ``copilot-cli`` log named after the
file, and the ``result`` line was reported as an unknown event type.

``openhands --headless --json`` prints the agent SDK's events one a line (``model_dump()``), then
plain text (a summary box, ``Conversation ID: <hex>``, a ``--resume <uuid>`` hint): read as
``openhands-stream``. Before, the file was refused (``unknown format``).

OpenHands V0's headless run (``python -m openhands.core.main``) prints logs, not JSON; what it
saves (``save_trajectory_path``: ``<sid>.json``, a JSON array of V0 events) was already read by
``openhands-trajectory``: pinned here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from format_helpers import index, messages, roles, session
from sess_helpers import index_json

from hermes_store.sessions import detect_format

COPILOT_RUN = "copilot-stream/runs/todo-count.jsonl"
COPILOT_SID = "9d3f6b2e-4c1a-4e8b-b7d5-2a1c0e9f8d71"
OPENHANDS_RUN = "openhands-stream/runs/backup-verbose.jsonl"
OPENHANDS_SID = "3c8e2f41-6d0b-4a7e-9f15-b2a4c6d8e0f7"


@pytest.fixture
def store(engine_store):
    """Every test here runs on SQLite and on PostgreSQL."""
    return engine_store



def _with_line(fixture: Path, at: int, obj: dict, path: Path) -> Path:
    """``fixture`` copied to ``path`` with ``obj`` as a JSON line inserted before line ``at + 1``."""
    lines = fixture.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(at, json.dumps(obj) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path

def test_copilot_json_output_is_detected_as_copilot_stream(format_fixtures):
    assert detect_format(format_fixtures / COPILOT_RUN) == "copilot-stream"
    log = "copilot-cli/.copilot/session-state/7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d/events.jsonl"
    assert detect_format(format_fixtures / log) == "copilot-cli"  # the session log stays its own


def test_copilot_json_output_keeps_its_session_rows_once_and_no_bookkeeping(store, format_fixtures):
    assert index(store, format_fixtures / COPILOT_RUN)["errors"] == []  # result, deltas, idle: silent
    assert session(store, "todo-count") is None
    row = session(store, COPILOT_SID)
    assert row["origin_format"] == "copilot-stream" and row["source"] == "copilot-cli"
    assert row["meta"]["exitCode"] == 0 and row["meta"]["usage"]["premiumRequests"] == 1
    rows = messages(store, COPILOT_SID)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant"]
    assert [r["content"] for r in rows] == [
        "Count the TODO comments in src/ and list the files",
        "A grep with counts per file answers both parts.",
        "I'll search src/ for TODO markers.",
        "src/parser.py:3\nsrc/cli.py:1",
        "There are 4 TODO comments: 3 in src/parser.py and 1 in src/cli.py.",
    ]
    assert rows[2]["calls"] == [("grep", {"pattern": "TODO", "path": "src", "output_mode": "count"}, "toolu_01Qx")]
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"]) == ("grep", "toolu_01Qx")
    assert rows[4]["calls"] == []


def test_copilot_json_output_cut_before_its_result_is_named_after_the_file(store, format_fixtures, tmp_path):
    lines = (format_fixtures / COPILOT_RUN).read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "cut.jsonl"
    path.write_text("".join(lines[:-1]), encoding="utf-8")
    assert detect_format(path) == "copilot-stream"  # the ephemeral startup events
    assert index(store, path)["errors"] == []
    assert roles(messages(store, "cut")) == ["user", "reasoning", "assistant", "tool", "assistant"]


def test_copilot_json_output_reports_an_unknown_event_type_with_its_line(store, format_fixtures, tmp_path):
    novel = {"type": "assistant.brand_new", "data": {"x": 1}, "id": "n-1", "timestamp": "2026-11-20T09:15:04.000Z"}
    path = _with_line(format_fixtures / COPILOT_RUN, 8, novel, tmp_path / "novel.jsonl")
    errors = index(store, path)["errors"]
    assert [e["line"] for e in errors] == [9] and "assistant.brand_new" in errors[0]["error"]
    assert len(messages(store, COPILOT_SID)) == 5  # the rest is read


def test_openhands_json_output_is_detected_as_openhands_stream(format_fixtures):
    assert detect_format(format_fixtures / OPENHANDS_RUN) == "openhands-stream"


def test_openhands_json_output_keeps_the_conversation_and_skips_the_closing_text(store, format_fixtures):
    assert index(store, format_fixtures / OPENHANDS_RUN)["errors"] == []  # state update, summary box: silent
    assert session(store, "backup-verbose") is None
    row = session(store, OPENHANDS_SID)  # the UUID of the closing --resume hint
    assert row["origin_format"] == "openhands-stream" and row["source"] == "openhands"
    rows = messages(store, OPENHANDS_SID)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "tool"]
    assert rows[0]["content"] == "Add a --verbose flag to scripts/backup.sh"
    assert rows[1]["content"] == "The flag parsing is probably a getopts loop."
    assert rows[2]["content"] == "Let me look at the script first."
    assert rows[2]["calls"] == [("file_editor", {"command": "view", "path": "/workspace/scripts/backup.sh"},
                                 "call_7Hk2")]
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"]) == ("file_editor", "call_7Hk2")
    assert rows[3]["content"].endswith("4\tdone")
    reply = "Added -v (verbose) to the getopts loop; it sets VERBOSE=1 and echoes each copied path."
    assert rows[4]["calls"] == [("finish", {"message": reply}, "call_9Fz1")]
    assert rows[5]["content"] == reply
    assert all("CONVERSATION SUMMARY" not in r["content"] for r in rows)


def test_openhands_json_output_named_by_the_conversation_id_line_alone(store, format_fixtures, tmp_path):
    text = (format_fixtures / OPENHANDS_RUN).read_text(encoding="utf-8")
    path = tmp_path / "nohint.jsonl"
    path.write_text("".join(line for line in text.splitlines(keepends=True) if not line.startswith("Hint:")),
                    encoding="utf-8")
    assert index(store, path)["errors"] == []
    assert len(messages(store, OPENHANDS_SID)) == 6  # the hex of "Conversation ID:" as a UUID


def test_openhands_json_output_reports_an_unknown_kind_with_its_line(store, format_fixtures, tmp_path):
    novel = {"kind": "BrandNewEvent", "id": "n-1", "timestamp": "2026-11-21T14:02:15.000000", "source": "agent"}
    path = _with_line(format_fixtures / OPENHANDS_RUN, 3, novel, tmp_path / "novel.jsonl")
    errors = index(store, path)["errors"]
    assert [e["line"] for e in errors] == [4] and "BrandNewEvent" in errors[0]["error"]
    assert len(messages(store, OPENHANDS_SID)) == 6  # the rest is read


def test_openhands_v0_headless_trajectory_is_read(store, tmp_path):
    """``python -m openhands.core.main`` with ``save_trajectory_path`` a folder writes
    ``<sid>.json`` (``json.dump(histories, f, indent=4)``): already read as a trajectory."""
    events = [
        {"id": 0, "timestamp": "2026-11-22T08:00:00.000000", "source": "user", "message": "rename util.py to helpers.py",
         "action": "message", "args": {"content": "rename util.py to helpers.py", "image_urls": None,
                                       "file_urls": None, "wait_for_response": False}},
        {"id": 1, "timestamp": "2026-11-22T08:00:03.000000", "source": "agent", "message": "Running command: git mv",
         "action": "run", "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "toolu_v0_1",
                                                 "total_calls_in_response": 1},
         "args": {"command": "git mv util.py helpers.py", "is_input": False, "thought": "A git mv keeps history.",
                  "blocking": False, "hidden": False, "confirmation_state": "confirmed"}},
        {"id": 2, "timestamp": "2026-11-22T08:00:04.000000", "source": "agent", "message": "Command finished",
         "cause": 1, "observation": "run", "content": "",
         "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "toolu_v0_1",
                                "total_calls_in_response": 1},
         "extras": {"command": "git mv util.py helpers.py", "metadata": {"exit_code": 0}, "hidden": False}},
        {"id": 3, "timestamp": "2026-11-22T08:00:06.000000", "source": "agent", "message": "Renamed.",
         "action": "finish", "args": {"final_thought": "Renamed util.py to helpers.py.", "outputs": {},
                                      "thought": ""}},
    ]
    path = tmp_path / "trajectories" / "cli-4b1d7e.json"
    path.parent.mkdir()
    path.write_text(json.dumps(events, indent=4), encoding="utf-8")
    assert detect_format(path) == "openhands-trajectory"
    assert index(store, path)["errors"] == []
    rows = messages(store, "cli-4b1d7e")
    assert roles(rows) == ["user", "assistant", "tool", "assistant"]
    assert rows[1]["content"] == "A git mv keeps history."
    assert rows[1]["calls"][0][0] == "execute_bash"
    assert rows[1]["calls"][0][1]["command"] == "git mv util.py helpers.py"
    assert rows[2]["tool_call_id"] == "toolu_v0_1"
    assert rows[3]["content"] == "Renamed util.py to helpers.py."


def test_a_copilot_run_indexed_as_a_session_log_is_read_again_as_copilot_stream(run, store, format_fixtures):
    """Read by copilot-cli's reader 2 (named after the file, its ``result`` line reported), the
    unchanged file is detected again and read by copilot-stream under its own session id."""
    path = format_fixtures / COPILOT_RUN
    first = index_json(run, "--format", "copilot-cli", str(path))[1]
    assert first["messages_added"] == 5
    sql = store.portable
    for row in sql.query("SELECT id, meta FROM sources"):
        meta = json.loads(row["meta"])
        meta["reader"] = 2  # the version before copilot-stream existed
        sql.execute("UPDATE sources SET meta = ? WHERE id = ?", (json.dumps(meta), row["id"]))
    again = index_json(run, str(path))[1]
    assert again["reread"] == 1 and again["errors"] == [] and again["messages_added"] == 5
    assert session(store, "todo-count") is None
    assert session(store, COPILOT_SID)["origin_format"] == "copilot-stream"
    assert len(messages(store, COPILOT_SID)) == 5


def test_copilot_json_output_with_a_session_start_is_still_the_run(store, format_fixtures, tmp_path):
    """Closed by its ``result`` line, a run is copilot-stream even if it prints a ``session.start``."""
    start = {"type": "session.start", "data": {"sessionId": COPILOT_SID, "selectedModel": "claude-sonnet-4.6",
                                                "context": {"cwd": "/home/ana/proj"}},
             "id": "s-0", "timestamp": "2026-11-20T09:15:00.900Z", "parentId": None}
    path = tmp_path / "started.jsonl"
    path.write_text(json.dumps(start) + "\n" + (format_fixtures / COPILOT_RUN).read_text(encoding="utf-8"),
                    encoding="utf-8")
    assert detect_format(path) == "copilot-stream"
    assert index(store, path)["errors"] == []
    row = session(store, COPILOT_SID)
    assert (row["model"], row["workspace"]) == ("claude-sonnet-4.6", "/home/ana/proj")
    assert len(messages(store, COPILOT_SID)) == 5
