"""A command's coloured output is found by its words: the index reads messages without terminal
escape sequences (``search_text``), on both engines, for messages stored before too."""

from __future__ import annotations

from hermes_store.sessions.loader import BulkLoader
from hermes_store.sessions.rows import CALLS_BACKFILL_KEY
from hermes_store.sessions.search import search_messages
from tests.search.conftest import T0, add_session

COLOURED = "\x1b[31mERROR\x1b[0m: disk full on /dev/sda1\n\x1b[1;32mPASSED\x1b[0m test_backup"


def _found(db, query: str) -> list[str]:
    ids = [row["message_id"] for row in search_messages(db, query, limit=5).results]
    return [db.query_one(f"SELECT content FROM messages WHERE id = {int(i)}")["content"] for i in ids]


def test_coloured_output_is_found_by_its_words(db):
    add_session(db, "s", [("user", "run the tests"), ("tool", COLOURED)], start=T0)
    for word in ("error", "passed", "disk"):
        assert _found(db, word) == [COLOURED], word  # the stored content keeps every byte
    hit = search_messages(db, "error", limit=1).results[0]
    assert "\x1b" not in hit["snippet"] and "ERROR" in hit["snippet"]


def test_messages_stored_before_are_refreshed_once(db, engine, tmp_path):
    add_session(db, "s", [("user", "run the tests"), ("tool", COLOURED)], start=T0)
    # as a store written before: no search text, and the marker SQLite 0013 / pg 0015 leave
    db.execute("UPDATE messages SET search_text = NULL")
    assert _found(db, "error") == []
    p = "%s" if engine == "postgresql" else "?"
    db.execute(f"INSERT INTO store_meta(key, value) VALUES ({p}, 'escapes')", (CALLS_BACKFILL_KEY,))
    BulkLoader(db).run([tmp_path], "auto")  # every index run backfills first
    assert _found(db, "error") == [COLOURED]
    assert db.scalar(f"SELECT value FROM store_meta WHERE key = {p}", (CALLS_BACKFILL_KEY,)) is None
