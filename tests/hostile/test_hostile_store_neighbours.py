"""A store whose neighbours or schema another program changed loses nothing it holds.

- A ``-wal`` of another database beside the store (a store file copied over an older one whose
  log stayed, or a planted file): SQLite replays it, so the store reads as the other database;
  the refusal used to close the connection with SQLite's checkpoint, which wrote the other
  database into the store file for good ('nothing was changed', said the message). Now every
  command refuses naming the ``-wal`` file, and the store file keeps its bytes.
- A trigger that is not ours (``AFTER INSERT ON messages BEGIN DELETE FROM facts``): every write
  of hermes_store fired it (``sessions index`` deleted every fact). Writes are refused, naming
  the trigger, until ``doctor --fix`` drops it.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3

import apsw
import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.facts.store import FactStore

EXAMPLE = "examples/sample_home/sessions/20260312_091500_3fa2c1.jsonl"


def _cli(home, *args):
    return CliRunner().invoke(cli, ["--home", str(home.root), "--color", "never", *args])


def _store_with_facts(home, n=3):
    with FactStore(home) as store:
        for i in range(n):
            store.add_fact(f"fact number {i} about the nightly backups")


def _plant_foreign_wal(tmp_path, store_path):
    """Leave a well-formed WAL of another database beside ``store_path``."""
    other = tmp_path / "other.db"
    conn = apsw.Connection(str(other))
    conn.execute("PRAGMA journal_mode=WAL").fetchall()
    conn.execute("PRAGMA wal_autocheckpoint=0").fetchall()
    conn.execute("CREATE TABLE t(x)")
    conn.execute("INSERT INTO t VALUES (randomblob(50000))")
    shutil.copy(f"{other}-wal", f"{store_path}-wal")  # copied while `conn` still holds it open
    conn.close()


@pytest.mark.parametrize("args", [["sessions", "list"], ["facts", "add", "one more fact"],
                                  ["sessions", "index", EXAMPLE], ["doctor", "--fix"]])
def test_a_foreign_wal_beside_the_store_is_named_and_the_store_kept(home, tmp_path, args):
    _store_with_facts(home)
    before = hashlib.sha256(home.db_path.read_bytes()).hexdigest()
    _plant_foreign_wal(tmp_path, home.db_path)
    result = _cli(home, *args)
    assert result.exit_code == 1, result.output
    assert f"{home.db_path}-wal belongs to another database" in result.output
    assert hashlib.sha256(home.db_path.read_bytes()).hexdigest() == before
    for suffix in ("-wal", "-shm"):  # the user moves the stray log away: the store is whole
        (home.db_path.parent / f"{home.db_path.name}{suffix}").unlink(missing_ok=True)
    with sqlite3.connect(home.db_path) as conn:
        assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 3
    conn.close()


def test_a_foreign_trigger_refuses_writes_and_loses_nothing(home, tmp_path):
    _store_with_facts(home)
    with sqlite3.connect(home.db_path) as conn:
        conn.execute("CREATE TRIGGER evil AFTER INSERT ON messages BEGIN DELETE FROM facts; END")
    conn.close()
    indexed = _cli(home, "sessions", "index", EXAMPLE)
    added = _cli(home, "facts", "add", "a fourth fact")
    assert indexed.exit_code == 1 and added.exit_code == 1
    for result in (indexed, added):
        assert f"{home.db_path}: refusing to write: trigger evil is not part of the hermes_store schema" \
            in result.output
    with sqlite3.connect(home.db_path) as conn:
        assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 3
    conn.close()
    assert _cli(home, "sessions", "list").exit_code == 0  # reads go on
    assert _cli(home, "doctor", "--fix").exit_code == 0
    assert _cli(home, "sessions", "index", EXAMPLE).exit_code == 0
    with sqlite3.connect(home.db_path) as conn:
        assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 3
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] > 0
    conn.close()


def test_a_redefined_trigger_of_ours_refuses_writes(home):
    _store_with_facts(home)
    with sqlite3.connect(home.db_path) as conn:
        name, sql = conn.execute("SELECT name, sql FROM sqlite_master WHERE type='trigger' AND tbl_name='facts'"
                                 " AND sql LIKE '%AFTER INSERT%'").fetchone()
        conn.execute(f"DROP TRIGGER {name}")
        conn.execute(sql.replace("BEGIN", "BEGIN DELETE FROM entities;", 1))
    conn.close()
    result = _cli(home, "facts", "add", "a fourth fact")
    assert result.exit_code == 1 and f"trigger {name} is not part of the hermes_store schema" in result.output


def test_doctor_fix_puts_back_a_redefined_full_text_index_and_trigger(home):
    """A messages_fts recreated with another tokenizer (and empty) made every search answer 'No
    matching messages' and doctor --fix left it ('differs ... definition was changed'); a
    redefined trigger of ours stayed too. --fix now recreates both as the migrations define
    them, the index rebuilt from the messages."""
    assert _cli(home, "sessions", "index", EXAMPLE).exit_code == 0
    _store_with_facts(home)
    with sqlite3.connect(home.db_path) as conn:
        conn.execute("DROP TABLE messages_fts")
        conn.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content, tokenize='trigram')")
        name, sql = conn.execute("SELECT name, sql FROM sqlite_master WHERE type='trigger' AND tbl_name='facts'"
                                 " AND sql LIKE '%AFTER INSERT%'").fetchone()
        conn.execute(f"DROP TRIGGER {name}")
        conn.execute(sql.replace("BEGIN", "BEGIN DELETE FROM entities;", 1))
    conn.close()
    assert "No matching messages" in _cli(home, "sessions", "search", "backup").output
    fixed = _cli(home, "doctor", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert "backup" in _cli(home, "sessions", "search", "backup").output.lower().replace("no matching", "")
    assert _cli(home, "facts", "add", "a fourth fact").exit_code == 0
    assert _cli(home, "doctor").exit_code == 0


def test_indexing_into_a_redefined_full_text_index_names_the_store(home):
    """'Error: indexing stopped: table messages_fts has no column named search_content' named no
    file; now the store and doctor are named."""
    _store_with_facts(home)
    with sqlite3.connect(home.db_path) as conn:
        conn.execute("DROP TABLE messages_fts")
        conn.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content, tokenize='trigram')")
    conn.close()
    result = _cli(home, "sessions", "index", EXAMPLE)
    assert result.exit_code == 1
    assert f"indexing stopped: {home.db_path}: table messages_fts has no column named search_content" in result.output
    assert "hermes-store doctor" in result.output


@pytest.fixture
def read_only_home(home, tmp_path):
    """``home`` (a WAL store with facts and sessions) bind-mounted read-only at another path."""
    import subprocess

    _store_with_facts(home)
    assert _cli(home, "sessions", "index", EXAMPLE).exit_code == 0
    mount = tmp_path / "ro"
    mount.mkdir()
    if subprocess.run(["mount", "--bind", str(home.root), str(mount)], capture_output=True).returncode:
        pytest.skip("bind mounts need root")
    try:
        if subprocess.run(["mount", "-o", "remount,bind,ro", str(mount)], capture_output=True).returncode:
            pytest.skip("cannot remount read-only here")
        yield type(home)(mount)
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def test_a_store_on_a_read_only_mount_is_read(read_only_home):
    """Every read of a store on a read-only mount failed: 'cannot open for writing: unable to
    open database file' (sessions list/search, session_search), and a read-only connection
    could not open the WAL-mode file either (no -shm can be made there). Reads work now;
    a write says why it cannot be done, naming the file."""
    home = read_only_home
    listed = _cli(home, "sessions", "list")
    assert listed.exit_code == 0 and "20260312_091500_3fa2c1" in listed.output, listed.output
    assert "backup" in _cli(home, "sessions", "search", "backup").output
    assert "nightly backups" in _cli(home, "facts", "search", "backups").output
    assert _cli(home, "doctor").exit_code == 0
    added = _cli(home, "facts", "add", "a fourth fact")
    assert added.exit_code == 1
    assert f"{home.db_path}: opened read-only ({home.root} is on a read-only filesystem)" in added.output
