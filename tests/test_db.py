"""db.py: the one SQLite opener — pragmas, WAL fallback, file mode, migrations, write retry."""

from __future__ import annotations

import multiprocessing
import os
import stat
import subprocess
import sys
import threading
import time

import apsw
import pytest

from hermes_store import db as dbmod
from hermes_store.budget import bounded_query, query_budget
from hermes_store.db import Database, DatabaseError, latest_schema_version, migrations


def test_new_database_is_private_wal_and_migrated(tmp_path):
    path = tmp_path / "store.db"
    with Database(path) as db:
        assert db.journal_mode == "wal"
        assert db.scalar("PRAGMA foreign_keys") == 1
        assert db.user_version == latest_schema_version() > 0
        assert db.table_exists("store_meta")
        with db.write():
            db.execute("INSERT INTO store_meta(key, value) VALUES ('k', 'v')")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    for suffix in ("-wal", "-shm"):
        extra = tmp_path / ("store.db" + suffix)
        if extra.exists():
            assert stat.S_IMODE(os.stat(extra).st_mode) == 0o600


def test_existing_file_mode_is_not_widened(tmp_path):
    path = tmp_path / "store.db"
    Database(path).close()
    os.chmod(path, 0o400 | 0o200)
    Database(path).close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_wal_refused_falls_back_to_delete(tmp_path):
    # unix-dotfile locking (network filesystems) cannot do WAL; SQLite says so.
    with Database(tmp_path / "nfs.db", vfs="unix-dotfile") as db:
        assert db.journal_mode == "delete"
        with db.write():
            db.execute("INSERT INTO store_meta(key, value) VALUES ('a', '1')")
        assert db.scalar("SELECT value FROM store_meta WHERE key='a'") == "1"


def test_migrations_are_numbered_and_ordered():
    found = migrations()
    versions = [v for v, _ in found]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert all(p.suffix == ".sql" for _, p in found)


def test_migration_is_idempotent_and_skips_applied(tmp_path):
    path = tmp_path / "m.db"
    Database(path).close()
    with Database(path) as db:
        assert db.migrate() == latest_schema_version()


def test_failed_migration_names_file_and_rolls_back(tmp_path, monkeypatch):
    schema = tmp_path / "schema"
    schema.mkdir()
    (schema / "0001_ok.sql").write_text("CREATE TABLE a(x);")
    (schema / "0002_bad.sql").write_text("CREATE TABLE b(x); THIS IS NOT SQL;")
    monkeypatch.setattr(dbmod, "schema_dir", lambda: schema)
    with pytest.raises(DatabaseError, match="0002_bad.sql"):
        Database(tmp_path / "x.db")
    with Database(tmp_path / "x.db", migrate=False) as db:
        assert db.user_version == 0 and not db.table_exists("a")


def test_write_rolls_back_on_error(tmp_path):
    with Database(tmp_path / "r.db") as db:
        with pytest.raises(RuntimeError):
            with db.write():
                db.execute("INSERT INTO store_meta(key, value) VALUES ('x', '1')")
                raise RuntimeError("boom")
        assert db.scalar("SELECT count(*) FROM store_meta") == 0
        with db.write():
            with db.write():  # nested joins the outer transaction
                db.execute("INSERT INTO store_meta(key, value) VALUES ('y', '1')")
        assert db.scalar("SELECT count(*) FROM store_meta") == 1


def _hold_write_lock(path: str, seconds: float, ready) -> None:
    conn = apsw.Connection(path)
    conn.execute("BEGIN IMMEDIATE")
    ready.set()
    time.sleep(seconds)
    conn.execute("COMMIT")
    conn.close()


def test_writer_waits_for_another_process(tmp_path):
    path = tmp_path / "busy.db"
    Database(path).close()
    ready = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_write_lock, args=(str(path), 1.0, ready))
    holder.start()
    assert ready.wait(10)
    with Database(path, busy_patience=20) as db:
        with db.write():
            db.execute("INSERT INTO store_meta(key, value) VALUES ('late', '1')")
    holder.join(10)
    with Database(path) as db:
        assert db.scalar("SELECT value FROM store_meta WHERE key='late'") == "1"


def test_patience_runs_out_with_clear_error(tmp_path):
    path = tmp_path / "busy2.db"
    Database(path).close()
    ready = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_write_lock, args=(str(path), 3.0, ready))
    holder.start()
    assert ready.wait(10)
    try:
        with Database(path, busy_patience=0.5) as db:
            with pytest.raises(DatabaseError, match="busy"):
                with db.write():
                    pass
    finally:
        holder.join(10)


def test_threads_share_one_connection_safely(tmp_path):
    with Database(tmp_path / "t.db") as db:
        def worker(n):
            for i in range(50):
                with db.write():
                    db.execute("INSERT INTO store_meta(key, value) VALUES (?, '1')", (f"{n}-{i}",))
        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert db.scalar("SELECT count(*) FROM store_meta") == 200


def test_readonly_open_never_writes(tmp_path):
    path = tmp_path / "ro.db"
    Database(path).close()
    before = path.read_bytes()
    with Database(path, readonly=True) as db:
        assert db.scalar("SELECT count(*) FROM store_meta") == 0
        with pytest.raises(DatabaseError):
            with db.write():
                pass
    assert path.read_bytes() == before
    with pytest.raises(DatabaseError, match="no such database"):
        Database(tmp_path / "missing.db", readonly=True)


def test_stdlib_sqlite3_can_read_the_file(tmp_path):
    path = tmp_path / "compat.db"
    with Database(path) as db:
        with db.write():
            db.execute("INSERT INTO store_meta(key, value) VALUES ('k', 'v')")
    code = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
        "print(c.execute(\"select value from store_meta where key='k'\").fetchone()[0])"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "v"


def test_unbounded_connection_ignores_query_budgets(tmp_path):
    slow = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000)"
            " SELECT count(*) FROM n")
    bounded = Database(tmp_path / "a.db")
    writer = Database(tmp_path / "a.db", bounded=False)  # as the bulk loader's writer connection
    try:
        with query_budget(0.001), bounded_query():
            with pytest.raises(apsw.InterruptError):
                bounded.scalar(slow)
            assert writer.scalar(slow) == 3000000
    finally:
        writer.close()
        bounded.close()
