"""Emoji are searchable: the projection column carries one word per emoji."""

from __future__ import annotations

import json

from sess_helpers import index_json, write_jsonl

from hermes_store.sessions import index_paths
from hermes_store.sessions.maintenance import BACKFILL_KEY, backfill_projection


def _found(run, query, *args):
    result = json.loads(run("sessions", "search", "--json", *args, query).stdout)
    return [row["session_id"] for row in result["results"]], result.get("note")


def test_emoji_search_finds_the_message(run, tmp_path):
    write_jsonl(tmp_path / "e.jsonl", [
        {"session_id": "launch", "role": "user", "content": "Ship it 🚀 tonight"},
        {"session_id": "coder", "role": "assistant", "content": "pairing 👩‍💻 with 👍🏽"},
        {"session_id": "plain", "role": "user", "content": "rocket science without pictures"},
    ])
    index_json(run, tmp_path / "e.jsonl")
    assert _found(run, "🚀") == (["launch"], None)
    assert _found(run, "👩‍💻")[0] == ["coder"]  # a ZWJ sequence: a phrase of its parts
    assert _found(run, "👍")[0] == ["coder"]  # skin-tone modifiers are left out
    assert _found(run, "ship 🚀")[0] == ["launch"]
    assert _found(run, "🎉")[0] == []


def test_migration_backfills_rows_indexed_before(store, tmp_path):
    write_jsonl(tmp_path / "old.jsonl", [{"session_id": "old", "role": "user", "content": "done ✅ 桂林"}])
    index_paths(store, [tmp_path / "old.jsonl"])
    with store.write():  # what a pre-0007 store holds: a projection without emoji words
        store.execute("UPDATE messages SET cjk = '桂林 桂 林' WHERE session_id = 'old'")
        store.execute("INSERT INTO store_meta(key, value) VALUES (?, 'emoji')", (BACKFILL_KEY,))
    assert store.query("SELECT rowid FROM messages_fts WHERE messages_fts MATCH '\"emoji2705\"'") == []
    assert backfill_projection(store) == 1
    assert len(store.query("SELECT rowid FROM messages_fts WHERE messages_fts MATCH '\"emoji2705\"'")) == 1
    assert store.scalar("SELECT COUNT(*) FROM store_meta WHERE key = ?", (BACKFILL_KEY,)) == 0
    assert backfill_projection(store) == 0  # done once


def test_migration_0007_marks_stores_with_messages(home, tmp_path, monkeypatch):
    from hermes_store import db as db_module
    from hermes_store.db import Database

    path = tmp_path / "store.db"
    with Database(path) as db:
        assert db.scalar("SELECT COUNT(*) FROM store_meta WHERE key = ?", (BACKFILL_KEY,)) == 0  # new: none
        write_jsonl(tmp_path / "m.jsonl", [{"session_id": "s", "role": "user", "content": "hi 🚀"}])
        index_paths(db, [tmp_path / "m.jsonl"])
        db.execute("PRAGMA user_version=6")  # as a store written before 0007
    # 0007 and 0008 re-run over this store; the later migrations (0010 adds columns) are
    # already in place, so the rewound store is migrated only up to 0008
    everything = db_module.migrations()
    monkeypatch.setattr(db_module, "migrations", lambda: [m for m in everything if m[0] <= 8])
    # the rewound store keeps the triggers of the later migrations, which a schema that ends at
    # 0008 does not define: the foreign-trigger guard would (rightly) refuse its writes
    monkeypatch.setattr(Database, "_refuse_foreign_triggers", lambda self: None)
    with Database(path) as db:
        assert db.scalar("SELECT value FROM store_meta WHERE key = ?", (BACKFILL_KEY,)) == "emoji"
