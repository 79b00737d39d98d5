"""Another program's SQLite file named as the store (``--database-url sqlite:///...`` or
``store.database_url``) is never changed: every command that would open the store says it is
not a hermes_store database and leaves its bytes, its journal mode and its folder as they were;
``doctor --fix`` fixes nothing in it and ``backup`` copies nothing."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.db import Database, DatabaseError

EXAMPLE_SESSIONS = "examples/sample_home/sessions"


@pytest.fixture
def foreign(tmp_path):
    path = tmp_path / "other-app" / "notes.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes(body) VALUES ('keep me')")
        conn.execute("CREATE VIEW recent AS SELECT * FROM notes")
    conn.close()
    return path


def _state(path):
    return hashlib.sha256(path.read_bytes()).hexdigest(), sorted(p.name for p in path.parent.iterdir())


@pytest.mark.parametrize("args", [
    ["sessions", "search", "keep"],
    ["sessions", "index", EXAMPLE_SESSIONS],
    ["facts", "add", "a fact"],
    ["facts", "search", "fact"],
    ["doctor"],
    ["doctor", "--fix"],
    ["backup", "BACKUP"],
])
def test_a_foreign_database_named_as_the_store_is_left_alone(tmp_path, foreign, args):
    before = _state(foreign)
    args = [str(tmp_path / "backup.db") if a == "BACKUP" else a for a in args]
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "--database-url",
                                      f"sqlite:///{foreign}", *args])
    assert result.exit_code == 1, result.output
    assert "not a hermes_store database" in result.output
    assert "notes" in result.output  # names what the file holds
    assert _state(foreign) == before  # same bytes, no -wal / -shm / journal beside it
    assert not (tmp_path / "backup.db").exists()
    with sqlite3.connect(foreign) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'recent'").fetchone()
    conn.close()


def test_the_opener_refuses_it_and_still_opens_an_empty_file(tmp_path, foreign):
    with pytest.raises(DatabaseError, match="not a hermes_store database"):
        Database(foreign)
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()  # a zero-table SQLite file becomes a store
    with Database(empty) as db:
        assert db.user_version > 0


def test_a_postgresql_database_of_another_application_is_left_alone(tmp_path, pg_url):
    """The same on PostgreSQL: a database whose schema holds another application's tables and
    no hermes_store migrations gets nothing of ours."""
    from hermes_store.pgdb import PgDatabase

    admin = PgDatabase(pg_url, migrate=False)
    try:
        admin.execute("CREATE TABLE invoices (id integer PRIMARY KEY, total numeric)")
        admin.execute("INSERT INTO invoices VALUES (1, 9.5)")
    finally:
        admin.close()
    for args in (["sessions", "search", "invoice"], ["facts", "add", "a fact"], ["doctor"]):
        result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "--database-url", pg_url, *args])
        assert result.exit_code == 1, result.output
        assert "not a hermes_store database" in result.output and "invoices" in result.output
    check = PgDatabase(pg_url, migrate=False)
    try:
        tables = [r["table_name"] for r in check.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")]
    finally:
        check.close()
    assert tables == ["invoices"]
