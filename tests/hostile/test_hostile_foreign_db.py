"""Round 3: hostile foreign SQLite databases read through hermes_store.foreign_db.

Each class of the attack run: one bad row, views (infinite recursive CTE, huge rows, an error),
traces left beside the file, a lock, and errors attributed to the file; plus other importers.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import apsw
import pytest

from hermes_store.facts.hermes_import import HermesFactsError, read_holographic
from hermes_store.foreign_db import ForeignDB, ForeignDBError
from hermes_store.home import ConfigError, resolve_home
from hermes_store.sessions import index_paths

STATE_SCHEMA = (
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, title TEXT, started_at REAL, ended_at REAL);"
    "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL);"
)


def _make(path: Path, sql: str, *, wal: bool = False) -> Path:
    conn = apsw.Connection(str(path))
    if wal:
        list(conn.execute("PRAGMA journal_mode=WAL"))
    conn.execute(sql)
    conn.close()
    return path


def _state_db(path: Path, *, wal: bool = False, bad_row: bool = False) -> Path:
    sql = STATE_SCHEMA + "INSERT INTO sessions VALUES ('s1', 'cli', 'title one', 1.0, 2.0);"
    sql += "".join(f"INSERT INTO messages VALUES ({i}, 's1', 'user', 'good message {i}', {i}.0);" for i in (1, 2, 4))
    if bad_row:
        sql += "INSERT INTO messages VALUES (3, 's1', 'user', CAST(x'41ff42' AS TEXT), 3.0);"
    return _make(path, sql, wal=wal)


def _index(store: Path, *paths: Path) -> dict:
    return index_paths(str(store), [str(p) for p in paths])


def test_one_bad_utf8_row_is_a_problem_with_its_row_and_the_rest_imports(tmp_path):
    db = _state_db(tmp_path / "state.db", bad_row=True)
    summary = _index(tmp_path / "store.db", db)
    assert summary["messages_added"] == 4, summary
    errors = [e["error"] for e in summary["errors"]]
    assert any("messages row 3" in e and "invalid UTF-8" in e for e in errors), errors


@pytest.mark.parametrize("view", [
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) "
    "SELECT n AS id, 's1' AS session_id, 'user' AS role, 'x' AS content, 0.0 AS timestamp FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 1500) "
    "SELECT n AS id, 's1' AS session_id, 'user' AS role, zeroblob(1000000) AS content, 0.0 AS timestamp FROM r",
    "SELECT abs(-9223372036854775808) AS id, 's1' AS session_id, 'user' AS role, 'x' AS content, 0.0 AS timestamp",
], ids=["infinite-recursive", "huge-rows", "raises"])
def test_a_view_in_place_of_a_table_is_never_read_and_later_inputs_are_indexed(tmp_path, view):
    hostile = _make(tmp_path / "state.db",
                    "CREATE TABLE sessions (id TEXT, source TEXT, title TEXT, started_at REAL, ended_at REAL);"
                    f"CREATE VIEW messages AS {view};")
    later = tmp_path / "later"
    later.mkdir()
    good = _state_db(later / "state.db")
    started = time.monotonic()
    summary = _index(tmp_path / "store.db", hostile, good)
    assert time.monotonic() - started < 60
    assert summary["messages_added"] == 3, summary  # the later input is indexed
    assert any(str(hostile) in e["path"] for e in summary["errors"]), summary["errors"]


def test_an_error_raised_by_a_real_table_stops_that_input_only(tmp_path):
    hostile = _state_db(tmp_path / "state.db")
    conn = apsw.Connection(str(hostile))  # a generated column that raises when read
    conn.execute("PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = replace(sql, 'timestamp REAL)', "
                 "'timestamp REAL, boom INTEGER GENERATED ALWAYS AS (abs(-9223372036854775808)) VIRTUAL)') "
                 "WHERE name = 'messages'")
    conn.close()
    with ForeignDB(hostile) as reader, pytest.raises(ForeignDBError, match="integer overflow"):
        reader.query("SELECT id, boom FROM messages")
    later = tmp_path / "later"
    later.mkdir()
    good = _state_db(later / "state.db")
    summary = _index(tmp_path / "store.db", hostile, good)
    assert summary["messages_added"] >= 3, summary


def test_reading_a_wal_database_leaves_no_trace_beside_it(tmp_path):
    folder = tmp_path / "other_program"
    folder.mkdir()
    db = _state_db(folder / "state.db", wal=True)
    assert sorted(os.listdir(folder)) == ["state.db"]
    summary = _index(tmp_path / "store.db", db)
    assert summary["messages_added"] == 3
    assert sorted(os.listdir(folder)) == ["state.db"]


def test_a_live_wal_is_read_and_left_alone(tmp_path):
    folder = tmp_path / "other_program"
    folder.mkdir()
    db = _state_db(folder / "state.db", wal=True)
    writer = apsw.Connection(str(db))
    list(writer.execute("PRAGMA wal_autocheckpoint=0"))
    writer.execute("INSERT INTO messages VALUES (9, 's1', 'user', 'only in the wal', 9.0)")
    before = sorted(os.listdir(folder))
    with ForeignDB(db) as reader:
        assert not reader.immutable
        assert reader.scalar("SELECT count(*) FROM messages") == 4
    assert sorted(os.listdir(folder)) == before
    writer.close()


def test_a_locked_database_is_reported_as_locked_not_unknown_format(tmp_path):
    db = _state_db(tmp_path / "state.db")
    writer = apsw.Connection(str(db))
    writer.execute("BEGIN EXCLUSIVE; INSERT INTO messages VALUES (8, 's1', 'user', 'x', 8.0)")
    try:
        summary = _index(tmp_path / "store.db", db)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    errors = [e["error"] for e in summary["errors"]]
    assert any("locked" in e for e in errors), errors
    assert not any("unknown format" in e for e in errors), errors


def test_a_failing_holographic_store_is_that_files_error(tmp_path):
    hostile = _make(tmp_path / "memory_store.db",
                    "CREATE VIEW facts AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) "
                    "SELECT n AS fact_id, 'x' AS content FROM r;")
    with pytest.raises(HermesFactsError) as caught:
        read_holographic(hostile)
    assert "memory_store.db" in str(caught.value) and "doctor" not in str(caught.value)


def test_holographic_bad_row_is_read_with_the_rest(tmp_path):
    db = _make(tmp_path / "memory_store.db",
               "CREATE TABLE facts (fact_id INTEGER PRIMARY KEY, content TEXT);"
               "INSERT INTO facts VALUES (1, 'good'), (2, CAST(x'41ff42' AS TEXT)), (3, 'also good');")
    facts, _entities, _links = read_holographic(db)
    assert [f["fact_id"] for f in facts] == [1, 2, 3]


@pytest.mark.parametrize("schema, name", [
    ("CREATE TABLE sessions (id TEXT, title TEXT, created_at INTEGER, updated_at INTEGER, parent_session_id TEXT);"
     "CREATE TABLE files (id TEXT);"
     "CREATE VIEW messages AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) "
     "SELECT n AS id, 's' AS session_id, 'user' AS role, '[]' AS parts, 0 AS created_at, NULL AS model FROM r;",
     "crush.db"),
    ("CREATE TABLE ItemTable (key TEXT, value BLOB);"
     "CREATE VIEW cursorDiskKV AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r) "
     "SELECT 'composerData:' || n AS key, '{}' AS value FROM r;",
     "state.vscdb"),
], ids=["crush", "cursor"])
def test_other_importers_never_read_a_view(tmp_path, schema, name):
    folder = tmp_path / ".crush" if name == "crush.db" else tmp_path / "Cursor"
    folder.mkdir()
    hostile = _make(folder / name, schema)
    started = time.monotonic()
    summary = _index(tmp_path / "store.db", hostile)
    assert time.monotonic() - started < 60
    assert summary["messages_added"] == 0


def test_value_and_input_caps(tmp_path):
    db = _make(tmp_path / "big.db", "CREATE TABLE t (x TEXT);"
               "INSERT INTO t VALUES (printf('%.*c', 5000, 'a')), (printf('%.*c', 5000, 'b'));")
    with ForeignDB(db, max_value_bytes=100) as reader:
        rows = reader.query("SELECT rowid AS n, x FROM t", table="t", key="n")
        assert [len(r["x"]) for r in rows] == [100, 100]
        assert any("cut" in message for _row, message in reader.problems)
    with ForeignDB(db, max_input_bytes=6000) as reader, pytest.raises(ForeignDBError, match="too big"):
        reader.query("SELECT x FROM t")


def test_a_statement_over_its_time_is_stopped(tmp_path):
    db = _make(tmp_path / "slow.db", "CREATE TABLE t (x INTEGER);" + "INSERT INTO t VALUES (1);" * 50)
    with ForeignDB(db, statement_seconds=0.5) as reader, pytest.raises(ForeignDBError, match="timeout"):
        reader.query("SELECT count(*) FROM t a JOIN t b JOIN t c JOIN t d JOIN t e JOIN t f")


def test_special_files_are_never_opened_as_databases(tmp_path):
    fifo = tmp_path / "state.db"
    os.mkfifo(fifo)
    done = threading.Event()

    def attempt() -> None:
        with pytest.raises(ForeignDBError, match="not a regular file"):
            ForeignDB(fifo)
        done.set()

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(10)
    assert done.is_set()


@pytest.mark.parametrize("profile", ["x\n", "a/b", "..", ""])
def test_profile_names_are_matched_whole(tmp_path, profile):
    if profile == "":
        assert resolve_home(tmp_path, profile) == tmp_path.absolute()
        return
    with pytest.raises(ConfigError):
        resolve_home(tmp_path, profile)


@pytest.mark.parametrize("home", ["/tmp/..", "/tmp/../tmp/.."])
def test_a_home_resolving_to_the_root_is_refused(home):
    with pytest.raises(ConfigError, match="filesystem root"):
        resolve_home(home)


def test_titles_from_a_foreign_db_are_capped(tmp_path):
    db = _make(tmp_path / "state.db", STATE_SCHEMA
               + "INSERT INTO sessions VALUES ('s1', 'cli', printf('%.*c', 1000000, 't'), 1.0, 2.0);"
               + "INSERT INTO messages VALUES (1, 's1', 'user', 'hello', 1.0);")
    store = tmp_path / "store.db"
    _index(store, db)
    from hermes_store.db import Database
    with Database(store) as ours:
        titles = [r["title"] for r in ours.query("SELECT title FROM sessions")]
    assert titles and all(len(t) <= 300 for t in titles)
