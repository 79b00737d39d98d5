"""Several writers on one store: a check that meets another process's write lock waits a
bounded time and says the store was busy; it never reads the lock as damage.

Found by an audit running `hermes-store doctor` on a SQLite home while another process held
the write lock (a `sessions index` run, a gateway writing memory): every full-text check
printed `FAIL fts:messages_fts: database is locked` (exit 1), as if the index were corrupt,
and `doctor --fix` went on to rebuild the index for it. FTS5's `integrity-check` is a write
statement; it ran outside the store's bounded write wait, and its BusyError was returned as
the index's problem.
"""

from __future__ import annotations

import json
import threading

import apsw
import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.db import DatabaseError
from hermes_store.facts.store import FactStore
from hermes_store.sessions import maintenance


@pytest.fixture
def locked_store(home, monkeypatch):
    """A SQLite store with a fact and a memory entry, and another connection holding its write
    lock until the test ends (as a `sessions index` run in another process would)."""
    monkeypatch.setenv("HERMES_STORE_BUSY_TIMEOUT", "0.3")
    with FactStore(home) as facts:
        facts.add_fact("the gateway fleet shares one store", "general", "")
    other = apsw.Connection(str(home.db_path))
    other.execute("BEGIN IMMEDIATE")
    yield home
    other.execute("ROLLBACK")
    other.close()


def test_doctor_reports_a_busy_store_not_a_broken_index(locked_store):
    result = CliRunner().invoke(cli, ["--home", str(locked_store.root), "doctor", "--json"])
    checks = {c["check"]: c for c in json.loads(result.stdout)["checks"]}
    fts = [c for name, c in checks.items() if name.startswith("fts:")]
    assert fts, checks
    for check in fts:
        # the bounded wait is named, with what to do; never a bare "database is locked"
        assert "stayed busy for 0.3s" in check["problem"], check
        assert not check.get("fixed")
    assert result.exit_code == 1


def test_a_busy_index_check_raises_instead_of_returning_a_problem(locked_store):
    db = locked_store.open_db()
    try:
        tables = maintenance.fts_tables(db)
        assert tables
        # a returned problem is what `doctor --fix` rebuilds the index for
        with pytest.raises(DatabaseError, match="stayed busy"):
            maintenance.fts_integrity(db, tables[0])
    finally:
        db.close()


def test_the_check_runs_once_the_other_writer_commits(home, monkeypatch):
    monkeypatch.setenv("HERMES_STORE_BUSY_TIMEOUT", "30")
    with FactStore(home) as facts:
        facts.add_fact("the gateway fleet shares one store", "general", "")
    other = apsw.Connection(str(home.db_path))
    other.execute("BEGIN IMMEDIATE")
    db = home.open_db()
    started, results = threading.Event(), []

    def check() -> None:
        started.set()
        results.append([maintenance.fts_integrity(db, t) for t in maintenance.fts_tables(db)])

    worker = threading.Thread(target=check)
    worker.start()
    started.wait(5)
    other.execute("ROLLBACK")  # the other writer finishes: the waiting check goes on
    worker.join(30)
    other.close()
    db.close()
    assert results and all(problem is None for problem in results[0])
