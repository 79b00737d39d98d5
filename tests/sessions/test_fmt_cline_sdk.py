"""Cline's SDK sessions (the Cline 3 CLI, desktop app, Kanban): ``~/.cline/data/sessions/<id>/<id>.messages.json``
(cline/cline ``sdk/packages/core/docs/messages-contract-v1.md``) with the manifest ``<id>.json`` beside
it. Before, ``unknown format (no importer recognises anything in it)``. The fixture has the contract's
structure with invented content."""

from __future__ import annotations

from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format

ROOT = "cline-sdk/.cline/data/sessions/sess_01JD7QK4M2"
SID = "sess_01JD7QK4M2"


def test_cline_sdk_session_is_read_with_its_manifest_and_subagent(store, format_fixtures):
    folder = format_fixtures / ROOT
    assert detect_format(folder / f"{SID}.messages.json") == "cline-sdk"
    assert detect_format(folder / f"{SID}.json") == "cline-sdk"  # the manifest: a member
    summary = index(store, folder)
    assert summary["errors"] == []
    row = session(store, SID)
    assert (row["source"], row["origin_format"], row["workspace"], row["model"], row["title"]) == (
        "cline", "cline-sdk", "/srv/harbour", "claude-sonnet-4-6", "Ferry timetable missing from export")
    assert (row["started_at"], row["ended_at"]) == (ts("2026-11-04T09:00:00Z"), ts("2026-11-04T09:00:10Z"))
    rows = messages(store, SID)
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == "why does the nightly export miss the ferry timetable?"
    assert rows[1]["content"] == "Check the export job's source list first."
    assert rows[2]["content"] == "Reading the export configuration."
    assert rows[2]["calls"] == [("read_files", {"paths": ["/srv/harbour/export.yaml"]}, "toolu_ex1")]
    assert rows[2]["timestamp"] == 1793782801.0
    assert (rows[3]["tool_call_id"], rows[3]["tool_name"], rows[3]["content"]) == (
        "toolu_ex1", "read_files", "sources:\n  - tides\n  - berths\n")
    assert rows[4]["calls"] == [("run_commands", {"commands": ["grep -rn ferry /srv/harbour/jobs"]}, "toolu_ex2")]
    assert (rows[5]["tool_call_id"], rows[5]["content"]) == ("toolu_ex2", "")  # an empty (failed) result is kept
    assert rows[6]["content"].startswith("The export lists tides and berths but not ferries")
    assert all("You are Cline" not in r["content"] for r in rows)  # the system prompt is not indexed
    child = session(store, "sess_01JD7QM9X1")
    assert child["parent_session_id"] == SID and child["model"] == "claude-haiku-4-5"
    assert [(r["role"], r["content"]) for r in messages(store, "sess_01JD7QM9X1")] == [
        ("user", "List every job that reads the ferry feed."), ("assistant", "No job reads the ferry feed.")]


def test_a_message_of_an_unknown_block_is_reported_and_the_rest_read(store, tmp_path):
    import json

    path = tmp_path / "sessions" / "s9" / "s9.messages.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "agent": "lead", "sessionId": "s9", "messages": [
        {"id": "a", "role": "user", "content": [{"type": "text", "text": "ping"}]},
        {"id": "b", "role": "assistant", "content": [{"type": "hologram", "data": "x"}, {"type": "text", "text": "pong"}]},
    ]}), encoding="utf-8")
    errors = index(store, path)["errors"]
    assert len(errors) == 1 and "hologram" in errors[0]["error"]
    assert [(r["role"], r["content"]) for r in messages(store, "s9")] == [("user", "ping"), ("assistant", "pong")]
