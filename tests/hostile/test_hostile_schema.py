"""``restore`` and ``migrate`` accept only a store whose schema is exactly ours; ``doctor``
reports (and ``--fix`` drops) objects the migrations never create (issue 25)."""

from __future__ import annotations

import json

import apsw
import pytest
from click.testing import CliRunner

from hermes_store.backup import BackupError, backup, restore
from hermes_store.cli import cli
from hermes_store.db import Database
from hermes_store.dbhealth import schema_mismatches
from hermes_store.facts.store import FactStore
from hermes_store.sessions import SessionIndex

EVIL_TRIGGER = "CREATE TRIGGER evil_trg AFTER INSERT ON facts BEGIN DELETE FROM messages; END"


def run(home, *args):
    return CliRunner().invoke(cli, ["--home", str(home.root), *args])


def _backup_with(home, tmp_path, *statements: str, name: str = "planted.db"):
    """A genuine backup of ``home``'s store, then altered by ``statements``."""
    with SessionIndex(home) as index:
        sid = index.create_session(title="kept")
        index.append_message(sid, "user", "a message that must survive")
    taken = backup(home.db_path, tmp_path / name)["backup"]
    conn = apsw.Connection(str(taken))
    try:
        for sql in statements:
            conn.execute(sql)
    finally:
        conn.close()
    return taken


def _messages(home) -> int:
    with SessionIndex(home) as index:
        return index.stats()["messages"]


def test_a_fresh_store_has_exactly_our_schema(home):
    with Database(home.db_path) as db:
        assert schema_mismatches(db) == []
    assert run(home, "doctor").exit_code == 0


def test_restore_refuses_a_backup_with_an_extra_trigger(home, tmp_path):
    taken = _backup_with(home, tmp_path, EVIL_TRIGGER)
    with pytest.raises(BackupError, match="trigger evil_trg is not part of the hermes_store schema"):
        restore(home.db_path, taken, force=True)
    refused = run(home, "restore", str(taken), "--force")
    assert refused.exit_code == 1 and "trigger evil_trg is not part of the hermes_store schema" in refused.output
    with FactStore(home) as store:  # the live store was not touched: no trigger, messages kept
        store.add_fact("a fact after the refused restore")
    assert _messages(home) == 1


@pytest.mark.parametrize(("statements", "expected"), [
    (["DROP TABLE messages",
      "CREATE VIEW messages AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
      "SELECT x AS id FROM n"], "messages is a view, not the table of the hermes_store schema"),
    (["CREATE VIEW evil_view AS SELECT 1"], "view evil_view is not part of the hermes_store schema"),
    (["CREATE TABLE evil_table (x)"], "table evil_table is not part of the hermes_store schema"),
    (["CREATE INDEX evil_idx ON facts(content)"], "index evil_idx is not part of the hermes_store schema"),
    (["CREATE TRIGGER evil_upd AFTER UPDATE ON sessions BEGIN SELECT 1; END"],
     "trigger evil_upd is not part of the hermes_store schema"),
    (["DROP TRIGGER facts_ai"], "trigger facts_ai is missing"),
    (["DROP TRIGGER facts_ai", "CREATE TRIGGER facts_ai AFTER INSERT ON facts BEGIN DELETE FROM messages; END"],
     "trigger facts_ai differs from the hermes_store schema"),
])
def test_restore_refuses_every_other_shape(home, tmp_path, statements, expected):
    taken = _backup_with(home, tmp_path, *statements)
    with pytest.raises(BackupError, match=expected):
        restore(home.db_path, taken, force=True)
    assert _messages(home) == 1  # the live store is untouched


def test_a_changed_table_definition_is_refused(home, tmp_path):
    taken = _backup_with(home, tmp_path, "ALTER TABLE facts ADD COLUMN evil TEXT")
    with pytest.raises(BackupError, match="table facts differs from the hermes_store schema"):
        restore(home.db_path, taken, force=True)


def test_doctor_reports_an_extra_trigger_and_fix_drops_it(home):
    with SessionIndex(home) as index:
        sid = index.create_session(title="kept")
        index.append_message(sid, "user", "a message that must survive")
    conn = apsw.Connection(str(home.db_path))
    conn.execute(EVIL_TRIGGER)
    conn.execute("CREATE VIEW evil_view AS SELECT 1")
    conn.close()
    report = run(home, "doctor", "--json")
    assert report.exit_code == 1
    checks = {c["check"]: c for c in json.loads(report.stdout)["checks"]}
    assert not checks["foreign_objects"]["ok"]
    assert "trigger evil_trg is not part of the hermes_store schema" in checks["foreign_objects"]["problem"]
    assert "view evil_view" in checks["foreign_objects"]["problem"]
    fixed = run(home, "doctor", "--fix", "--json")
    assert fixed.exit_code == 0, fixed.output
    assert run(home, "doctor").exit_code == 0
    with FactStore(home) as store:
        store.add_fact("a fact after the fix")
    assert _messages(home) == 1


def test_migrate_refuses_a_sqlite_store_with_an_extra_trigger(home, pg_store_url, monkeypatch):
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
    with SessionIndex(home) as index:
        index.create_session(title="kept")
    conn = apsw.Connection(str(home.db_path))
    conn.execute(EVIL_TRIGGER)
    conn.close()
    result = run(home, "migrate", "--to", pg_store_url)
    assert result.exit_code == 1
    assert "trigger evil_trg is not part of the hermes_store schema" in result.output
