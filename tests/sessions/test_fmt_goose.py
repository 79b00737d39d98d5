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


def _goose_v13(path):
    """A sessions.db of Goose's newest schema (v13, block/goose crates/goose/src/session/migrations.rs)."""
    import sqlite3

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript("""
    CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
    INSERT INTO schema_version (version) VALUES (13);
    CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
      user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
      created_at TIMESTAMP, updated_at TIMESTAMP, extension_data TEXT DEFAULT '{}', schedule_id TEXT,
      provider_name TEXT, model_config_json TEXT, goose_mode TEXT NOT NULL DEFAULT 'auto', thread_id TEXT,
      archived_at TIMESTAMP, project_id TEXT, accumulated_cost REAL);
    CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
      content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP, tokens INTEGER,
      metadata_json TEXT, message_id TEXT);
    INSERT INTO sessions (id, name, working_dir, created_at, updated_at, provider_name, model_config_json)
      VALUES ('20261201_1', 'Rename billing', '/home/lee/api', '2026-12-01 09:00:00', '2026-12-01 09:30:00',
      'anthropic', '{"model_name": "claude-sonnet-4-5", "context_limit": 200000, "toolshim": false}');
    INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json, message_id) VALUES
      ('20261201_1', 'user', '[{"type": "text", "text": "rename billing to invoicing"}]', 1796115600,
       '{"userVisible": true, "agentVisible": false}', 'm1'),
      ('20261201_1', 'user', '[{"type": "text", "text": "Summary so far: billing is to be renamed."}]', 1796115700,
       '{"userVisible": false, "agentVisible": true}', 'm2'),
      ('20261201_1', 'assistant', '{cut', 1796115750, '{"userVisible": true, "agentVisible": true}', 'm3'),
      ('20261201_1', 'assistant', '[{"type": "text", "text": "Renamed."}]', 1796115800,
       '{"userVisible": true, "agentVisible": true}', 'm4');
    """)
    conn.commit()
    conn.close()
    return path


def test_newest_schema_model_and_hidden_summary(store, tmp_path):
    """Schema v6+ keeps the model in model_config_json, v3+ keeps userVisible in metadata_json: a
    compaction summary the user never saw is Goose's (system), not the user's words."""
    db = _goose_v13(tmp_path / "goose" / "sessions.db")
    before = (db.stat().st_mtime_ns, db.read_bytes())
    result = index(store, db)
    assert [e for e in result["errors"] if "message 3: bad content_json" not in str(e)] == []
    assert any("message 3: bad content_json" in str(e) and "sessions.db" in str(e) for e in result["errors"])
    row = session(store, "20261201_1")
    assert row["model"] == "claude-sonnet-4-5" and row["meta"]["provider_name"] == "anthropic"
    rows = messages(store, "20261201_1")
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "rename billing to invoicing"), ("system", "Summary so far: billing is to be renamed."),
        ("assistant", "Renamed.")]
    assert (db.stat().st_mtime_ns, db.read_bytes()) == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["sessions.db"]
