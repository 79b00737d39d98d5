"""PostgreSQL stores must have exactly our schema (issue 25): doctor, doctor --fix, migrate, restore.

The reference is what the migrations build in a scratch schema (rolled back); a hostile
trigger ``AFTER INSERT ON facts ... DELETE FROM messages``, a view, a rule, an extra table and
a changed trigger function are each found and named.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store import dbhealth
from hermes_store.backup import backup_store, restore_store
from hermes_store.cli import cli
from hermes_store.db import Database, DatabaseError
from hermes_store.facts import FactStore
from hermes_store.home import Home
from hermes_store.pgdb import PgDatabase
from hermes_store.sessions import SessionIndex

HOSTILE_TRIGGER = """
CREATE FUNCTION evil_wipe() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN DELETE FROM messages; RETURN NEW; END $$;
CREATE TRIGGER evil_trg AFTER INSERT ON facts FOR EACH ROW EXECUTE FUNCTION evil_wipe();
"""


@pytest.fixture
def pg_home(pg_url, home, monkeypatch):
    """A home whose store is a fresh, migrated PostgreSQL database with one session and one fact."""
    monkeypatch.setenv("HERMES_STORE_DATABASE_URL", pg_url)
    with SessionIndex(home) as index:
        sid = index.create_session(title="okapi notes")
        index.append_message(sid, "user", "the okapi lives in the forest")
    with FactStore(home) as store:
        store.add_fact("The okapi is related to the giraffe")
    return home


def _plant(url: str, sql: str) -> None:
    db = PgDatabase(url)
    try:
        with db.transaction() as conn:
            conn.execute(sql)
    finally:
        db.close()


def _doctor(home: Home, *extra: str) -> dict:
    result = CliRunner().invoke(cli, ["--home", str(home.root), "doctor", "--json", *extra])
    return {c["check"]: c for c in json.loads(result.stdout)["checks"]}


def test_a_migrated_store_has_exactly_our_schema(pg_home, pg_url):
    db = PgDatabase(pg_url)
    try:
        assert dbhealth.pg_schema_mismatches(db) == []
        reference = dbhealth.pg_reference(db, int(db.schema_version))
        assert ("trigger", "facts_changed") in reference and ("table", "messages") in reference
        # the scratch schema was rolled back: nothing is left on the server
        assert (
            db.scalar(
                "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'hermes_store_reference%%'"
            )
            == 0
        )
    finally:
        db.close()
    assert _doctor(pg_home)["foreign_objects"]["problem"] is None


def test_doctor_names_and_fix_drops_a_hostile_trigger_view_and_rule(pg_home, pg_url):
    _plant(
        pg_url,
        HOSTILE_TRIGGER + "CREATE VIEW evil_view AS SELECT * FROM messages;"
        "CREATE RULE evil_rule AS ON INSERT TO sessions DO ALSO DELETE FROM facts;"
        "CREATE TABLE evil_table (x int);",
    )
    check = _doctor(pg_home)["foreign_objects"]
    for named in (
        "trigger evil_trg is not part",
        "view evil_view is not part",
        "rule evil_rule is not part",
        "table evil_table is not part",
        "function evil_wipe() is not part",
    ):
        assert named in check["problem"], check
    assert not check["ok"]
    fixed = _doctor(pg_home, "--fix")["foreign_objects"]
    assert fixed["fixed"] is False  # the table and function are left for the user to judge
    assert "dropped trigger evil_trg (not part of the hermes_store schema)" in fixed["done"]
    assert "dropped view evil_view (not part of the hermes_store schema)" in fixed["done"]
    assert "dropped rule evil_rule (not part of the hermes_store schema)" in fixed["done"]
    assert "table evil_table" in fixed["note"] and "trigger" not in fixed["note"]
    # the trigger no longer wipes messages
    with FactStore(pg_home) as store:
        store.add_fact("The okapi eats leaves")
    db = PgDatabase(pg_url)
    try:
        assert db.scalar("SELECT count(*) FROM messages") == 1
    finally:
        db.close()


def test_doctor_finds_a_changed_trigger_function_and_fix_restores_it(pg_home, pg_url):
    _plant(
        pg_url,
        "CREATE OR REPLACE FUNCTION facts_changed() RETURNS trigger LANGUAGE plpgsql AS $$"
        " BEGIN DELETE FROM messages; RETURN NULL; END $$;",
    )
    check = _doctor(pg_home)["foreign_objects"]
    assert "function facts_changed() differs from the hermes_store schema" in check["problem"]
    fixed = _doctor(pg_home, "--fix")["foreign_objects"]
    assert fixed["fixed"] is True, fixed
    assert _doctor(pg_home)["foreign_objects"]["problem"] is None
    # the fix re-applies migrations that rewrite facts (0003): the replaced function must not run
    # then (it deleted every message before the migration that restores it)
    db = PgDatabase(pg_url)
    try:
        assert db.scalar("SELECT count(*) FROM messages") == 1
    finally:
        db.close()


def test_migrate_refuses_a_pg_store_with_a_hostile_trigger(pg_home, pg_url, tmp_path):
    _plant(pg_url, HOSTILE_TRIGGER)
    out = tmp_path / "copy.db"
    result = CliRunner().invoke(
        cli, ["--home", str(pg_home.root), "migrate", "--to", f"sqlite:///{out}"]
    )
    assert result.exit_code != 0
    assert "trigger evil_trg is not part of the hermes_store schema" in result.output
    # into a hostile PostgreSQL store: refused before a row is copied (the trigger never fires)
    source = Database(tmp_path / "source.db")
    index = SessionIndex(source)
    index.append_message(index.create_session(title="t"), "user", "hello")
    db = PgDatabase(pg_url, migrate=False)  # hermes_store refuses to write with the trigger there
    try:
        with db.transaction() as conn:
            for table in ("fact_entities", "facts", "messages", "sessions"):
                conn.execute(f"DELETE FROM {table}")
    finally:
        db.close()
    from hermes_store.dbcopy import sqlite_to_postgres

    target = PgDatabase(pg_url)
    try:
        with pytest.raises(
            DatabaseError, match="refusing to migrate into it: .*trigger evil_trg is not part"
        ):
            sqlite_to_postgres(source, target)
        assert target.scalar("SELECT count(*) FROM messages") == 0
    finally:
        source.close()
        target.close()


def test_restore_into_a_hostile_pg_store_is_refused(pg_home, pg_url, tmp_path):
    saved = backup_store(pg_home, tmp_path / "b.db")
    _plant(pg_url, HOSTILE_TRIGGER)
    # a backup of the hostile store is still taken (rows only, before doctor --fix)
    assert backup_store(pg_home, tmp_path / "c.db")["rows"] >= 2
    with pytest.raises(
        DatabaseError, match="trigger evil_trg is not part of the hermes_store schema"
    ):
        restore_store(pg_home, saved["backup"], force=True)
    db = PgDatabase(pg_url)
    try:
        assert db.scalar("SELECT count(*) FROM messages") == 1  # nothing was emptied or copied
    finally:
        db.close()


@pytest.mark.parametrize("plant", [
    HOSTILE_TRIGGER,
    "CREATE RULE evil_rule AS ON INSERT TO sessions DO ALSO DELETE FROM messages;",
    "CREATE OR REPLACE FUNCTION facts_changed() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN DELETE FROM messages; RETURN NULL; END $$;",
])
def test_writes_are_refused_while_a_foreign_trigger_or_rule_would_run(pg_home, pg_url, plant):
    """Every write used to fire them: a fact added wiped every message (found planting a trigger
    into a scratch PostgreSQL store). Writes are refused naming them and rolled back; reads go
    on; after ``doctor --fix`` writes work and nothing was lost."""
    _plant(pg_url, plant)
    added = CliRunner().invoke(cli, ["--home", str(pg_home.root), "facts", "add", "The okapi eats leaves"])
    indexed = CliRunner().invoke(cli, ["--home", str(pg_home.root), "sessions", "index",
                                       "examples/sample_home/sessions/20260312_091500_3fa2c1.jsonl"])
    for result in (added, indexed):
        assert result.exit_code == 1, result.output
        assert "refusing to write:" in result.output and "hermes-store doctor --fix" in result.output
    listed = CliRunner().invoke(cli, ["--home", str(pg_home.root), "sessions", "list"])
    assert listed.exit_code == 0 and "okapi notes" in listed.output
    db = PgDatabase(pg_url, migrate=False)
    try:
        assert db.scalar("SELECT count(*) FROM messages") == 1 and db.scalar("SELECT count(*) FROM facts") == 1
    finally:
        db.close()
    _doctor(pg_home, "--fix")
    with FactStore(pg_home) as store:
        store.add_fact("The okapi eats leaves")
    db = PgDatabase(pg_url)
    try:
        assert db.scalar("SELECT count(*) FROM messages") == 1 and db.scalar("SELECT count(*) FROM facts") == 2
    finally:
        db.close()
