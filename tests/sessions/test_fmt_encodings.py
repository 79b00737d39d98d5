"""Bytes around the JSON. A transcript that starts with a UTF-8 byte order mark (Windows tools write
one: PowerShell 5's ``Out-File`` / ``Set-Content -Encoding utf8``, Notepad's "UTF-8 with BOM", a copy
made through them) is read exactly as the same file without it: detection, JSONL lines and whole documents alike; NUL
bytes a crash left before a line do not lose it."""

from __future__ import annotations

import shutil

import pytest
from format_helpers import index

from hermes_store.db import Database
from hermes_store.sessions import SessionIndex, detect_format

BOM = b"\xef\xbb\xbf"
# one file of each reader the mark used to break (before: the first line or the whole file lost)
FILES = [
    "claude-code/projects/-home-li-oldtool/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl",  # JSONL, line 1
    "hermes_json/session_20260203_140000_beef01.json",  # a snapshot read by the shared text loader
    "goose-export/exports/20250929_3.json",  # a document parsed once by detection
    "opencode-export/exports/ses_4b1c2d3e4ffeA1b2C3d4E5f6G7.json",
    "openhands-trajectory/.downloads/trajectory-8d1e4f2a9b3c4d5e.json",
    "openhands-stream/runs/backup-verbose.jsonl",  # a reader of its own lines
    "kimi-print/runs/upload-flake.jsonl",
    "codex-exec/runs/nightly-due-dates.jsonl",
    "gemini-stream/runs/quarry-docs-lint.jsonl",
    "openai/chat_log.jsonl",
]


def _stored(db: Database) -> dict[str, list[tuple[str, str, str | None]]]:
    found = {}
    index_ = SessionIndex(db)
    for row in db.query("SELECT id FROM sessions ORDER BY id"):
        found[row["id"]] = [(m["role"], m["content"], m["tool_calls"]) for m in index_.get_messages(row["id"])]
    return found


@pytest.mark.parametrize("relative", FILES)
def test_a_byte_order_mark_changes_nothing(store, format_fixtures, tmp_path, relative):
    plain = format_fixtures / relative
    marked = tmp_path / "marked" / relative
    marked.parent.mkdir(parents=True)
    shutil.copyfile(plain, marked)
    marked.write_bytes(BOM + plain.read_bytes())
    assert detect_format(marked) == detect_format(plain)
    reference = Database(tmp_path / "plain.db")
    try:
        assert index(reference, plain)["errors"] == []
        expected = _stored(reference)
    finally:
        reference.close()
    summary = index(store, marked)
    assert summary["errors"] == []
    assert expected and _stored(store) == expected


def test_a_marked_single_line_transcript_is_not_an_unknown_format(store, tmp_path):
    """Before: ``unknown format (no importer recognises anything in it)`` -- the probe could not
    parse the marked first line, and a file of one line has no other."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(BOM + b'{"type": "user", "message": {"role": "user", "content": "hello from windows"}, '
                           b'"uuid": "u1", "parentUuid": null, "sessionId": "bom-1", '
                           b'"timestamp": "2026-01-01T00:00:00Z", "cwd": "C:\\\\work"}\r\n')
    assert detect_format(path) == "claude-code"
    assert index(store, path)["errors"] == []
    assert [m["content"] for m in SessionIndex(store).get_messages("bom-1")] == ["hello from windows"]


def test_nul_bytes_a_crash_left_before_a_line_lose_nothing(store, tmp_path):
    """A crash mid-append leaves a zero-filled hole; the agent's next line is written right after
    it (Claude Code's own reader strips the NULs). Before: that line was ``malformed JSON`` and
    lost. A line of NULs alone is reported, never taken for a message."""
    path = tmp_path / "n.jsonl"
    line = ('{{"type": "user", "message": {{"role": "user", "content": "{text}"}}, "uuid": "{uuid}", '
            '"parentUuid": null, "sessionId": "nul-1", "timestamp": "2026-01-01T00:00:0{n}Z", "cwd": "/w"}}\n')
    path.write_bytes(b"\x00" * 7 + line.format(text="written after the hole", uuid="u1", n=0).encode()
                     + b"\x00" * 5 + b"\n" + line.format(text="and the next one", uuid="u2", n=1).encode())
    assert detect_format(path) == "claude-code"
    summary = index(store, path)
    assert [e["line"] for e in summary["errors"]] == [2]
    assert "NUL" in summary["errors"][0]["error"]
    assert [m["content"] for m in SessionIndex(store).get_messages("nul-1")] == [
        "written after the hole", "and the next one"]
