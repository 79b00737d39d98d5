"""The built-in entry index: derived from the .md files, refreshed on change, never the truth."""

from __future__ import annotations

import os

import pytest
from engine_helpers import sqlite_only

from hermes_store.builtin.search import refresh_index, search_entries
from hermes_store.db import Database

pytestmark = pytest.mark.usefixtures("engine")  # every test on both storage engines


def write(home, target, entries):
    name = "USER.md" if target == "user" else "MEMORY.md"
    (home.memories_dir / name).write_text("\n§\n".join(entries), encoding="utf-8")


def test_hand_edit_is_searchable_at_once(home):
    write(home, "memory", ["Deploys go through scripts/deploy.sh", "Staging runs Postgres 15"])
    with home.open_db() as db:
        hits = search_entries(db, home.memories_dir, "postgres").hits
        assert [(h.target, h.index) for h in hits] == [("memory", 2)]
        write(home, "memory", ["Staging runs MySQL 8 now"])
        assert search_entries(db, home.memories_dir, "postgres").hits == []
        assert search_entries(db, home.memories_dir, "mysql").hits[0].index == 1
        assert db.scalar("SELECT count(*) FROM builtin_index_entries") == 1


def test_unchanged_files_are_not_reindexed(home):
    write(home, "user", ["Prefers dark mode"])
    with home.open_db() as db:
        assert refresh_index(db, home.memories_dir) == ["memory", "user"]
        assert refresh_index(db, home.memories_dir) == []


def test_targets_are_separate(home):
    write(home, "memory", ["likes tea"])
    write(home, "user", ["likes coffee"])
    with home.open_db() as db:
        hits = search_entries(db, home.memories_dir, "likes", targets=("user",)).hits
        assert [h.target for h in hits] == ["user"]


def test_no_database_uses_memory_index(home):
    write(home, "memory", ["東京の天気は晴れ", "ask-codex helps with reviews"])
    hits = search_entries(None, home.memories_dir, "天気").hits
    assert hits and hits[0].index == 1
    assert search_entries(None, home.memories_dir, "ask-codex").hits[0].index == 2
    assert not home.db_path.exists()


@sqlite_only("a read-only open is an APSW file mode")
def test_readonly_database_falls_back(home):
    write(home, "memory", ["alpha beta"])
    home.open_db().close()
    with Database(home.db_path, readonly=True) as db:
        assert search_entries(db, home.memories_dir, "beta").hits[0].content == "alpha beta"


@sqlite_only("file modes and PRAGMA query_only are SQLite's")
def test_unwritable_database_file_falls_back(home, tmp_path):
    write(home, "memory", ["gamma delta"])
    with home.open_db() as db:
        os.chmod(home.db_path, 0o400)
        try:
            if os.geteuid() == 0:
                db.execute("PRAGMA query_only=1")  # root ignores file modes
            assert search_entries(db, home.memories_dir, "gamma").hits[0].content == "gamma delta"
        finally:
            os.chmod(home.db_path, 0o600)


def test_cjk_hits_are_highlighted(home):
    write(home, "memory", ["周五在桂林部署数据库迁移"])
    hit = search_entries(None, home.memories_dir, "数据库").hits[0]
    assert ">>>数据库<<<" in hit.snippet


PG_ENTRY = ("Production database is PostgreSQL 16 on db.internal:5432; migrations live in "
            "migrations/ and run with alembic.")


def test_a_short_entry_comes_back_whole_on_both_engines(home):
    """``recall PostgreSQL`` on a PostgreSQL store showed ``PostgreSQL 16 on ... alembic``: the
    entry's subject ("Production database is") and its full stop cut off (ts_headline's
    MinWords was half the excerpt), where SQLite shows the whole entry."""
    write(home, "memory", ["Backups run from cron", PG_ENTRY])
    with home.open_db() as db:
        hit = search_entries(db, home.memories_dir, "postgresql").hits[0]
    assert hit.snippet == PG_ENTRY.replace("PostgreSQL", ">>>PostgreSQL<<<")


def test_words_inside_a_host_name_are_marked_on_both_engines(home):
    """ts_headline's parser keeps ``db.internal:5432`` whole and never marks ``internal`` in it;
    the index (and FTS5's snippet) see the word: every matched word is marked."""
    write(home, "memory", [PG_ENTRY])
    with home.open_db() as db:
        hit = search_entries(db, home.memories_dir, "postgresql internal").hits[0]
    assert ">>>PostgreSQL<<<" in hit.snippet and ">>>internal<<<" in hit.snippet
    assert hit.snippet.replace(">>>", "").replace("<<<", "") == PG_ENTRY
