"""Google Antigravity's conversation transcripts (``~/.gemini/antigravity*/brain/<id>/.system_generated/
logs/transcript_full.jsonl``). Before, ``unknown format`` (and a directory walk never entered the hidden
``.system_generated`` folder). The fixture reproduces the step structure, never real content."""

from __future__ import annotations

from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format

CID = "9b2c4d6e-8f10-4a2b-9c3d-5e7f9a1b3c5d"
LOGS = f"antigravity/.gemini/antigravity-cli/brain/{CID}/.system_generated/logs"


def test_antigravity_transcript_is_read_step_by_step(store, format_fixtures):
    logs = format_fixtures / LOGS
    assert detect_format(logs / "transcript_full.jsonl") == "antigravity"
    assert detect_format(logs / "transcript.jsonl") == "antigravity"  # the cut log: a member of the full one
    summary = index(store, format_fixtures / "antigravity" / ".gemini")  # a walk enters .system_generated
    assert summary["errors"] == [] and summary["files"] == 2
    row = session(store, CID)
    assert (row["source"], row["origin_format"]) == ("antigravity", "antigravity")
    assert (row["started_at"], row["ended_at"]) == (ts("2026-09-14T07:30:00Z"), ts("2026-09-14T07:30:12Z"))
    rows = messages(store, CID)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "tool", "system", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == ("the lighthouse log rotation deletes today's file, find out why\n\n"
                                  "<ADDITIONAL_METADATA>\nThe current local time is 2026-09-14T09:30:00+02:00.\n"
                                  "</ADDITIONAL_METADATA>")
    assert rows[1]["content"] == "Read the rotation script and list the log directory."
    assert rows[2]["content"] == "Looking at the rotation script and the log folder."
    assert rows[2]["calls"] == [
        ("view_file", {"AbsolutePath": "/srv/lighthouse/rotate.sh"}, f"{CID}:call-1"),
        ("run_command", {"CommandLine": "ls -la /var/log/lighthouse", "Cwd": "/srv/lighthouse"}, f"{CID}:call-2")]
    assert (rows[3]["tool_name"], rows[3]["tool_call_id"]) == ("view_file", f"{CID}:call-1")
    assert rows[3]["content"].endswith("1: find /var/log/lighthouse -mtime -1 -delete")  # the full log, not the cut one
    assert (rows[4]["tool_name"], rows[4]["tool_call_id"]) == ("run_command", f"{CID}:call-2")
    assert rows[4]["content"] == "ls: cannot access '/var/log/lighthouse': Permission denied\n[exit code 2]"
    assert rows[5]["content"].startswith('Task id "agy/task-3" finished')
    assert rows[6]["content"] == "" and rows[6]["calls"] == [
        ("grep_search", {"Query": "rotate.sh", "SearchPath": "/etc/cron.d"}, f"{CID}:call-3")]
    assert (rows[7]["content"], rows[7]["tool_call_id"]) == ("", f"{CID}:call-3")  # an empty result is kept
    assert rows[8]["content"].startswith("`-mtime -1` matches files changed in the last day")


def test_appended_steps_answer_calls_made_before(store, tmp_path):
    """A transcript read again after steps were appended pairs a new tool step with the call made
    before the first read."""
    import json

    logs = tmp_path / ".gemini" / "antigravity" / "brain" / CID / ".system_generated" / "logs"
    logs.mkdir(parents=True)
    path = logs / "transcript_full.jsonl"
    first = [{"step_index": 0, "source": "USER_EXPLICIT", "type": "USER_INPUT", "content": "list the buoys"},
             {"step_index": 1, "source": "MODEL", "type": "PLANNER_RESPONSE",
              "tool_calls": [{"name": "run_command", "args": {"CommandLine": "ls buoys"}}]}]
    path.write_text("".join(json.dumps(s) + "\n" for s in first), encoding="utf-8")
    assert index(store, path)["errors"] == []
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"step_index": 2, "source": "MODEL", "type": "RUN_COMMAND", "content": "north\nsouth"}) + "\n")
    assert index(store, path)["errors"] == []
    rows = messages(store, CID)
    assert (rows[-1]["role"], rows[-1]["content"], rows[-1]["tool_call_id"]) == ("tool", "north\nsouth", f"{CID}:call-1")
