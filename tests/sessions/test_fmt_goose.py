"""Goose: the sessions.db database and the earlier per-session JSONL files."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from format_helpers import SQL_DIR, build_sqlite, index, messages, roles, session

from hermes_store.db import Database
from hermes_store.sessions import detect_format

DB = "goose-db/.local/share/goose/sessions/sessions.db"
JSONL = "goose-jsonl/.local/share/goose/sessions/20250301_142233.jsonl"



def _utc(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc).timestamp()


def test_database_fixture_matches_its_sql(tmp_path, format_fixtures):
    built = build_sqlite(SQL_DIR / "goose_sessions.sql", tmp_path / "sessions.db")
    dump = "SELECT session_id, role, content_json, created_timestamp FROM messages ORDER BY id"
    with Database(built, readonly=True, migrate=False) as a, \
            Database(format_fixtures / DB, readonly=True, migrate=False) as b:
        assert a.query(dump) == b.query(dump)


def test_detected(format_fixtures):
    assert detect_format(format_fixtures / DB) == "goose-db"
    assert detect_format(format_fixtures / JSONL) == "goose-jsonl"


def test_database(store, format_fixtures):
    assert index(store, format_fixtures / DB)["errors"] == []
    row = session(store, "20260105_1")
    assert row["origin_format"] == "goose-db" and row["source"] == "goose"
    assert row["title"] == "Fix flaky upload test" and row["workspace"] == "/home/lee/api"
    assert row["started_at"] == pytest.approx(_utc("2026-01-05 09:10:00"))
    rows = messages(store, "20260105_1")
    assert roles(rows) == ["user", "reasoning", "assistant", "tool", "assistant"]
    assert rows[2]["calls"] == [("developer__shell", {"command": "rg -n tmpdir tests/test_upload.py"}, "toolu_g1")]
    assert (rows[3]["tool_name"], rows[3]["content"]) == ("developer__shell", "12: tmp = '/tmp/upload'")
    assert rows[4]["timestamp"] == pytest.approx(1767604210.0)
    nightly = session(store, "20260105_2")
    assert nightly["title"] == "nightly dependency audit" and nightly["meta"]["session_type"] == "scheduled"
    audit = messages(store, "20260105_2")
    assert roles(audit) == ["user", "assistant", "tool", "system", "assistant"]
    assert audit[2]["content"] == "No known vulnerabilities found"  # the newer {content, isError} result
    assert audit[3]["content"] == "Context limit reached; summarizing."
    assert index(store, format_fixtures / DB)["messages_added"] == 0


def test_jsonl(store, format_fixtures):
    assert index(store, format_fixtures / JSONL)["errors"] == []
    row = session(store, "20250301_142233")
    assert row["title"] == "Add RSS feed" and row["workspace"] == "/home/lee/site"
    rows = messages(store, "20250301_142233")
    assert roles(rows) == ["user", "assistant", "tool", "assistant"]
    assert rows[1]["calls"][0][0] == "developer__text_editor"
    assert rows[2]["content"] == "Permission denied: /home/lee/site/feed.xml"
    assert rows[3]["content"] == "[image/png]\nWrite access is denied; here is the error screenshot."
    assert rows[0]["timestamp"] == pytest.approx(1740838953.0)


@pytest.mark.parametrize("lines", [
    '{"working_dir": "/tmp", "description": "x", "message_count": 1}\n'
    '{"role": "user", "created": 1, "content": [{"type": "text", "text": "hi"}]}\n',
    '{"role": "assistant", "content": [{"type": "toolRequest", "id": "t"}]}\n',
])
def test_goose_look_alikes_are_goose(tmp_path, lines):
    path = tmp_path / "g.jsonl"
    path.write_text(lines, encoding="utf-8")
    assert detect_format(path) == "goose-jsonl"
