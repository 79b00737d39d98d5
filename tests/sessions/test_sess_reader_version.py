"""A fix to an importer reaches files already indexed: each importer declares the version of
what it makes of a file (``reader``); ``sessions index`` reads a file indexed by an older one
again, once, even when the file is unchanged (it was skipped by size and time before, so a
store kept what the older reader had dropped)."""

from __future__ import annotations

import json

import pytest
from sess_helpers import index_json, write_jsonl

from hermes_store.sessions import SessionIndex
from hermes_store.sessions.importers.hermes_jsonl import HermesJsonlImporter

LINES = [{"role": "session_meta", "model": "m", "platform": "cli"},
         {"role": "user", "content": "which port does the staging proxy use"},
         {"role": "assistant", "content": "the staging proxy listens on 8443"},
         {"role": "user", "content": "and production"},
         {"role": "assistant", "content": "production uses 443"}]


@pytest.fixture
def store(engine_store):
    """Every test of this module runs on each storage engine."""
    return engine_store


def _old_reader(monkeypatch) -> None:
    """The Hermes JSONL importer as an older release had it (see :func:`_older`)."""
    _older(monkeypatch, HermesJsonlImporter)


def test_a_file_read_by_an_older_reader_is_read_again_once(run, store, tmp_path, monkeypatch):
    path = tmp_path / "sessions" / "20260301_090000_aaaaaa.jsonl"
    write_jsonl(path, LINES)
    with monkeypatch.context() as old:
        _old_reader(old)
        assert index_json(run, path)[1]["messages_added"] == 2
    monkeypatch.setattr(HermesJsonlImporter, "reader", 2)  # the fixed release
    code, summary = index_json(run, path)  # the file itself is unchanged
    assert code == 0 and summary["reread"] == 1 and summary["errors"] == []
    contents = [m["content"] for m in SessionIndex(store).get_messages("20260301_090000_aaaaaa")]
    assert contents == [line["content"] for line in LINES[1:]]  # all four, none twice
    code, again = index_json(run, path)
    assert "reread" not in again and again["messages_added"] == 0 and again["skipped"] == 4
    result = run("sessions", "index", str(path))
    assert result.exit_code == 0 and "read again" not in result.output


def test_a_file_indexed_before_readers_were_versioned_counts_as_version_one(run, store, tmp_path, monkeypatch):
    path = tmp_path / "sessions" / "20260301_100000_bbbbbb.jsonl"
    write_jsonl(path, LINES)
    with monkeypatch.context() as old:
        _old_reader(old)
        index_json(run, path)
    sql = store.portable  # a sources row as versions before 2026-12-07 wrote it: no "reader"
    for row in sql.query("SELECT id, meta FROM sources"):
        meta = json.loads(row["meta"])
        assert meta.pop("reader") == 1
        sql.execute("UPDATE sources SET meta = ? WHERE id = ?", (json.dumps(meta), row["id"]))
    monkeypatch.setattr(HermesJsonlImporter, "reader", 2)
    result = run("sessions", "index", str(path))
    assert result.exit_code == 0 and "1 file read again by a newer reader" in result.output, result.output
    assert SessionIndex(store).get_session("20260301_100000_bbbbbb")["message_count"] == 4


def test_the_current_reader_skips_an_unchanged_file(run, store, tmp_path):
    path = tmp_path / "sessions" / "20260301_110000_cccccc.jsonl"
    write_jsonl(path, LINES)
    assert index_json(run, path)[1]["messages_added"] == 4
    code, summary = index_json(run, path)
    assert "reread" not in summary and summary["skipped"] == 4 and summary["messages_added"] == 0


def test_a_file_an_older_reader_mistook_for_its_format_goes_to_the_right_one(run, store, format_fixtures):
    """Cursor's headless stream was read as a Claude Code transcript before claude-code's reader 2
    (its thinking, tool calls and result dropped as unknown lines): indexed by that older version,
    the unchanged file is detected again and read whole by cursor-stream."""
    path = format_fixtures / "cursor-stream/runs/atlas-tile-cache.jsonl"
    first = index_json(run, "--format", "claude-code", str(path))[1]
    assert first["messages_added"] == 3 and len(first["errors"]) == 3
    sql = store.portable
    for row in sql.query("SELECT id, meta FROM sources"):
        meta = json.loads(row["meta"])
        meta.pop("reader")  # as versions before readers were versioned wrote it
        sql.execute("UPDATE sources SET meta = ? WHERE id = ?", (json.dumps(meta), row["id"]))
    again = index_json(run, str(path))[1]
    assert again["reread"] == 1 and again["errors"] == [] and again["messages_added"] == 10
    assert SessionIndex(store).stats()["messages"] == 10


def _older(monkeypatch, cls) -> None:
    """``cls`` as an older release had it: version 1, dropping the assistant's rows."""
    real = cls.read

    def dropping(self, state):
        for event in real(self, state):
            if getattr(event, "role", None) != "assistant":
                yield event

    monkeypatch.setattr(cls, "read", dropping)
    monkeypatch.setattr(cls, "reader", 1)


def test_a_document_replaced_whole_on_change_is_read_again_too(run, store, format_fixtures, monkeypatch):
    """A snapshot format that replaces all it imported whenever its file changes (Gemini CLI's
    session files) is read again for a newer reader as well: nothing is lost that its next
    change would not replace anyway."""
    from hermes_store.sessions.importers.gemini_cli import GeminiCliImporter

    path = format_fixtures / "gemini-cli/.gemini/tmp/cart-svc/chats/session-2026-07-01T09-00-aa11bb22.jsonl"
    fresh = index_json(run, str(path))[1]["messages_added"]
    with monkeypatch.context() as old:
        _older(old, GeminiCliImporter)
        sql = store.portable
        sql.execute("DELETE FROM sources")
        sql.execute("DELETE FROM messages")
        sql.execute("DELETE FROM sessions")
        dropped = index_json(run, str(path))[1]["messages_added"]
    assert dropped < fresh
    again = index_json(run, str(path))[1]
    assert again["reread"] == 1 and again["errors"] == []
    assert SessionIndex(store).stats()["messages"] == fresh


def test_a_snapshot_matched_by_place_is_not_read_again_for_a_version(run, store, format_fixtures, monkeypatch):
    """Aider's chat history is a snapshot whose stored messages are matched by place: a newer
    reader alone does not read it again (the agent may have cut what only the store keeps)."""
    from hermes_store.sessions.importers.aider import AiderImporter

    assert AiderImporter.snapshot and not AiderImporter.replaced_whole
    path = next((format_fixtures / "aider").rglob(".aider.chat.history.md"))
    index_json(run, str(path))
    monkeypatch.setattr(AiderImporter, "reader", AiderImporter.reader + 1)
    again = index_json(run, str(path))[1]
    assert "reread" not in again and again["messages_added"] == 0
