"""Provenance in the store database (both engines): true times, no re-stamping, hand edits, history, restore, DB failures."""

from __future__ import annotations

import time

import pytest
from engine_helpers import sqlite_only

from hermes_store.builtin import MemoryStore
from hermes_store.builtin.provenance import Provenance
from hermes_store.db import Database

pytestmark = pytest.mark.usefixtures("engine")  # every test on both storage engines


@pytest.fixture
def store(home):
    s = MemoryStore(home, origin="tool", session_id="sess-1")
    s.load_from_disk()
    yield s
    s.close()


def info(store, target="memory"):
    return {row["text"]: row for row in store.describe(target)}


def test_md_files_stay_plain(store, home):
    store.add("memory", "alpha")
    assert home.memory_file.read_text() == "alpha"


def test_writer_and_times_recorded(store):
    store.add("memory", "alpha")
    store.add("memory", "beta", origin="cli", session_id="sess-2")
    rows = info(store)
    assert rows["alpha"]["created_origin"] == "tool" and rows["alpha"]["created_session"] == "sess-1"
    assert rows["beta"]["updated_origin"] == "cli" and rows["beta"]["updated_session"] == "sess-2"
    assert rows["alpha"]["created_at"] <= rows["beta"]["created_at"]


def test_writing_one_entry_never_restamps_another(store):
    store.add("memory", "alpha")
    store.add("memory", "beta")
    before = info(store)
    time.sleep(0.01)
    store.add("memory", "gamma")
    store.replace("memory", "beta", "beta v2")
    store.remove("memory", "gamma")
    store.apply_batch("memory", [{"action": "add", "content": "delta"}])
    after = info(store)
    assert after["alpha"]["created_at"] == before["alpha"]["created_at"]
    assert after["alpha"]["updated_at"] == before["alpha"]["updated_at"]
    # replace keeps the first-write time and moves only the change time
    assert after["beta v2"]["created_at"] == before["beta"]["created_at"]
    assert after["beta v2"]["updated_at"] > before["beta"]["updated_at"]


def test_hand_edits_detected_on_next_load(store, home):
    store.add("memory", "alpha")
    store.add("memory", "beta")
    home.memory_file.write_text("alpha\n§\nbeta edited by hand\n§\nbrand new")
    store.load_from_disk()
    rows = info(store)
    assert rows["brand new"]["created_origin"] == "hand_edit"
    assert rows["alpha"]["created_origin"] == "tool"
    events = [(e["action"], e["origin"]) for e in store.history()[:3]]
    assert ("add", "hand_edit") in events and ("remove", "hand_edit") in events


def test_single_hand_edit_is_a_replace_that_keeps_creation_time(store, home):
    store.add("memory", "alpha")
    created = info(store)["alpha"]["created_at"]
    home.memory_file.write_text("alpha (fixed typo)")
    store.load_from_disk()
    row = info(store)["alpha (fixed typo)"]
    assert row["created_at"] == created and row["updated_origin"] == "hand_edit"
    latest = store.history()[0]
    assert (latest["action"], latest["old_text"], latest["new_text"]) == (
        "replace", "alpha", "alpha (fixed typo)")


def test_hand_edit_seen_by_a_write_is_not_blamed_on_the_writer(store, home):
    store.add("memory", "alpha")
    home.memory_file.write_text("alpha\n§\nsneaked in")
    store.add("memory", "gamma")
    rows = info(store)
    assert rows["sneaked in"]["created_origin"] == "hand_edit"
    assert rows["gamma"]["created_origin"] == "tool"


def test_preexisting_files_are_imported_without_history(home):
    """Entries already in the file are recorded as ``import`` with no history: at load when a
    store exists, else by the first write (reading never creates the store)."""
    home.memory_file.write_text("old one\n§\nold two")
    s = MemoryStore(home)
    s.load_from_disk()
    assert s.history() == []
    s.add("memory", "new three")
    rows = {r["text"]: r["created_origin"] for r in s.describe("memory")}
    assert rows == {"old one": "import", "old two": "import", "new three": "api"}
    assert [(e["action"], e["new_text"]) for e in s.history()] == [("add", "new three")]
    s.close()


def test_history_is_append_only(store, home):
    store.add("memory", "alpha")
    db = home.open_db()
    try:
        with pytest.raises(Exception, match="append-only"):
            with db.write():
                db.execute("DELETE FROM memory_history")
        with pytest.raises(Exception, match="append-only"):
            with db.write():
                db.execute("UPDATE memory_history SET origin='x'")
    finally:
        db.close()


def test_history_records_old_and_new_text(store):
    store.add("memory", "alpha")
    store.replace("memory", "alpha", "alpha 2")
    store.remove("user", "nothing")  # failed writes are not recorded
    store.remove("memory", "alpha 2")
    events = store.history()
    assert [(e["action"], e["old_text"], e["new_text"]) for e in events] == [
        ("remove", "alpha 2", None), ("replace", "alpha", "alpha 2"), ("add", None, "alpha")]
    assert all(e["origin"] == "tool" and e["session_id"] == "sess-1" for e in events)
    assert store.history("user") == [] and len(store.history(limit=1)) == 1


def test_restore_undoes_remove_replace_and_add(store, home):
    store.add("memory", "alpha")
    store.add("memory", "beta")
    store.replace("memory", "beta", "beta 2")
    store.remove("memory", "alpha")
    by_action = {e["action"]: e["id"] for e in store.history()}
    created_alpha = [e for e in store.history() if e["new_text"] == "alpha"][0]

    result = store.restore(by_action["remove"])
    assert result["success"] and result["restored_event"] == by_action["remove"]
    assert "alpha" in home.memory_file.read_text()

    assert store.restore(by_action["replace"])["success"]
    assert "beta 2" not in home.memory_file.read_text() and "beta" in home.memory_file.read_text()

    assert store.restore(created_alpha["id"])["success"]
    assert home.memory_file.read_text() == "beta"
    latest = store.history()[0]
    assert latest["origin"] == "restore" and latest["restored_from"] == created_alpha["id"]


def test_restore_errors(store):
    assert store.restore(999)["success"] is False
    store.add("memory", "alpha")
    added = store.history()[0]["id"]
    store.remove("memory", "alpha")
    result = store.restore(added)
    assert result["success"] is False and "no longer in MEMORY.md" in result["error"]


def test_restore_respects_threat_scan_and_budget(home):
    s = MemoryStore(home, memory_char_limit=12)
    s.add("memory", "0123456789")
    removed = s.remove("memory", "0123456789")
    assert removed["success"]
    s.add("memory", "abcdefghij")
    event = s.history()[1]["id"]  # the remove
    assert s.restore(event)["success"] is False  # would exceed the limit
    assert home.memory_file.read_text() == "abcdefghij"


@sqlite_only("a directory in place of the database file is a SQLite failure")
def test_unwritable_database_never_blocks_memory_writes(home):
    home.db_path.mkdir()  # a directory where the DB file should be: SQLite cannot open it
    s = MemoryStore(home)
    s.load_from_disk()
    assert s.add("memory", "still saved")["success"]
    assert s.replace("memory", "still", "still saved 2")["success"]
    assert home.memory_file.read_text() == "still saved 2"
    assert s.history() == [] and s.describe("memory")[0]["created_at"] is None
    assert s.provenance.last_error


@sqlite_only("a read-only open is an APSW file mode")
def test_read_only_database_never_blocks_memory_writes(home, monkeypatch):
    home.open_db().close()  # create and migrate the DB (loading memory only reads)
    monkeypatch.setattr(type(home), "open_db",
                        lambda self, **kw: Database(self.db_path, readonly=True))
    s = MemoryStore(home)
    assert s.add("memory", "saved anyway")["success"]
    assert home.memory_file.read_text() == "saved anyway"


def test_provenance_sync_is_idempotent(home):
    home.memory_file.write_text("a\n§\nb")
    home.open_db().close()  # a store to sync with (without one a sync waits for the first write)
    prov = Provenance(home)
    assert prov.sync("memory", ["a", "b"]) and prov.sync("memory", ["a", "b"])
    assert prov.history() == [] and set(prov.entry_info("memory")) == {"a", "b"}
    prov.close()
