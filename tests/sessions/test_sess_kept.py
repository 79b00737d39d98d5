"""A session whose source file is gone stays, marked "source deleted"; export gives it back."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hermes_store.cli import cli

LINES = [
    {"type": "user", "sessionId": "kept-1", "uuid": "u1", "timestamp": "2026-11-01T10:00:00Z",
     "message": {"role": "user", "content": "restart the pooler"}},
    {"type": "assistant", "sessionId": "kept-1", "uuid": "u2", "timestamp": "2026-11-01T10:00:05Z",
     "message": {"role": "assistant", "content": [
         {"type": "text", "text": "Restarting."},
         {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "systemctl restart pgbouncer"}}]}},
    {"type": "user", "sessionId": "kept-1", "uuid": "u3", "timestamp": "2026-11-01T10:00:06Z",
     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": ""}]}},
]


def _run(*args):
    return CliRunner().invoke(cli, list(args))


def _indexed_then_deleted(tmp_path):
    path = tmp_path / "kept.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    assert _run("sessions", "index", str(path)).exit_code == 0
    assert "source deleted" not in _run("sessions", "list").output
    path.unlink()
    return path


def test_deleted_source_is_marked_in_list_show_and_sources(engine, home, tmp_path):
    path = _indexed_then_deleted(tmp_path)
    listed = _run("sessions", "list")
    assert "kept-1" in listed.output and "[source deleted]" in listed.output
    rows = json.loads(_run("sessions", "list", "--json").output)
    assert rows[0]["source_deleted"] is True and rows[0]["source_path"] == str(path.resolve())
    shown = _run("sessions", "show", "kept-1")
    assert "source deleted" in shown.output and str(path.resolve()) in shown.output
    sources = _run("sessions", "sources")
    assert "no longer on disk" in sources.output and str(path.resolve()) in sources.output
    # re-indexing the home does not drop it
    assert "kept-1" in _run("sessions", "list").output


def test_export_gives_the_whole_conversation_back(engine, home, tmp_path):
    _indexed_then_deleted(tmp_path)
    lines = [json.loads(line) for line in _run("sessions", "export", "kept-1", "--format", "jsonl").output.splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["id"] == "kept-1" and lines[0]["source_deleted"]
    messages = lines[1:]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    call = messages[1]["tool_calls"][0]["function"]
    assert call["name"] == "Bash" and "systemctl restart pgbouncer" in call["arguments"]
    assert messages[2]["content"] == "" and messages[2]["tool_call_id"] == "t1"  # the empty result too
    md = _run("sessions", "export", "kept-1").output
    assert "restart the pooler" in md and 'Bash({"command": "systemctl restart pgbouncer"})' in md
    out = tmp_path / "out.md"
    assert _run("sessions", "export", "kept", "-o", str(out)).exit_code == 0  # a unique prefix
    assert out.read_text() == md
    assert _run("sessions", "export", "nope").exit_code == 1
