"""StateDbSync: the provider's session index follows Hermes' own state.db (read-only, incremental)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from hermes_store.db import Database
from hermes_store.hermes_plugin import HermesStoreProvider
from hermes_store.sessions.state_sync import StateDbSync

pytestmark = pytest.mark.usefixtures("engine")  # every test on both storage engines


def add_message(state_db, session_id, role, content):
    db = Database(state_db, migrate=False)
    db.execute("INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
               (session_id, role, content, time.time()))
    db.close()


def indexed(home):
    db = home.open_db()
    try:
        return db.scalar("SELECT count(*) FROM messages")
    finally:
        db.close()


def test_first_sync_imports_then_nothing_new_is_cheap_and_new_messages_arrive(home, state_db):
    sync = StateDbSync(home, state_db)
    before = state_db.read_bytes()
    first = sync.sync()
    assert first.status == "imported" and first.messages_added > 0
    count = indexed(home)
    assert sync.sync().status == "unchanged"  # stat fingerprint unchanged
    add_message(state_db, "20260110_090000_bbbbbb", "user", "what about the ingress controller")
    again = sync.sync()
    assert again.status == "imported" and again.messages_added == 1  # incremental, by id
    assert indexed(home) == count + 1
    assert sync.sync().status == "unchanged"
    assert state_db.read_bytes() != before  # (the test itself wrote one row)


def test_a_touched_file_with_nothing_new_is_unchanged_by_signature(home, state_db):
    sync = StateDbSync(home, state_db)
    sync.sync()
    stamp = time.time() + 5
    import os
    os.utime(state_db, (stamp, stamp))  # e.g. a WAL checkpoint rewrote the main file
    result = sync.sync()
    assert result.status == "unchanged" and result.messages_added == 0


def test_state_db_is_never_written(home, state_db):
    wal = state_db.parent / "state.db-wal"

    def contents():
        return state_db.read_bytes(), wal.read_bytes() if wal.exists() else None

    before = contents()
    StateDbSync(home, state_db).sync()
    after = contents()
    # The database bytes are untouched; SQLite may create an empty -wal for a WAL-mode reader.
    assert after[0] == before[0] and after[1] in (before[1], b"")


def test_missing_and_corrupt_state_db_fail_softly(home, tmp_path):
    missing = StateDbSync(home, tmp_path / "nope.db").sync()
    assert missing.status == "missing"
    corrupt = tmp_path / "state.db"
    corrupt.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    sync = StateDbSync(home, corrupt)
    result = sync.sync()
    assert result.status == "failed" and result.error and sync.last_error == result.error


def test_a_locked_state_db_never_blocks_the_caller(home, state_db):
    # Another process holds an EXCLUSIVE lock on a rollback-journal state.db for 3 s.
    db = Database(state_db, migrate=False)
    db.execute("PRAGMA journal_mode=DELETE")
    db.close()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('BEGIN EXCLUSIVE')\n"
        "print('locked', flush=True)\n"
        "time.sleep(3)\n"
        "c.execute('ROLLBACK')\n"), str(state_db)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        sync = StateDbSync(home, state_db)
        started = time.perf_counter()
        sync.kick()
        sync.kick()  # a second kick while one runs is a no-op
        finished = sync.wait(0.2)
        assert time.perf_counter() - started < 1.0 and finished is False
    finally:
        holder.wait(10)
    assert sync.wait(30)
    assert sync.last_result is not None and sync.last_result.status in ("imported", "failed")


def test_provider_syncs_on_initialize_and_recall_sees_the_running_session(home, state_db, monkeypatch):
    import shutil
    shutil.copy(state_db, home.root / "state.db")
    live = home.root / "state.db"
    provider = HermesStoreProvider()
    provider.initialize("20260110_090000_bbbbbb", hermes_home=str(home.root))
    try:
        assert provider.state_sync is not None and provider.state_sync.wait(30)
        assert provider.state_sync.last_result.status == "imported"
        add_message(live, "20260110_090000_bbbbbb", "user", "remember the zebra migration window")
        provider.on_turn_start(2, "next")
        reply = json.loads(provider.handle_tool_call("recall", {"query": "zebra migration window"}))
        assert "zebra migration window" in json.dumps(reply)
    finally:
        provider.shutdown()
