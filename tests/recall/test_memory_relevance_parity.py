"""A memory entry's relevance (what ``recall`` shows as ``relevance 2.148``) is the same figure
on both engines: FTS5's bm25 with the index's column weights, defined once
(:mod:`hermes_store.builtin.scoring`). Before, PostgreSQL showed ``ts_rank_cd`` (``0.048`` for
the entry SQLite scored 2.148)."""

from __future__ import annotations

import pytest

from hermes_store.builtin.search import search_entries

ENTRIES = [
    "The nightly backup runs from cron at 02:00 and writes to /srv/backup; restore with restic.",
    "User prefers short answers; backup keys live in the vault, never in the repo.",
    "Production database is PostgreSQL 16 on db.internal:5432; migrations run with alembic.",
    "周五在桂林部署数据库迁移, then run the backup check.",
    "The build cache lives in ~/.cache/build; clear it when the build runs stale.",
    "Cron jobs: backup at 02:00, log rotation at 03:00, the cache purge at 04:00 on Sunday.",
]
USER = ["Ana runs the backups herself on Fridays.", "Prefers PostgreSQL over MySQL."]
QUERIES = ("backup", "backup cron", '"build cache"', "postgresql OR restic", "run*", "数据库",
           "backup -vault", "cron 02")


@pytest.mark.parametrize("query", QUERIES)
def test_a_memory_entry_shows_the_same_relevance_on_both_engines(engine, home, query):
    (home.memories_dir / "MEMORY.md").write_text("\n§\n".join(ENTRIES), encoding="utf-8")
    (home.memories_dir / "USER.md").write_text("\n§\n".join(USER), encoding="utf-8")
    # the reference: FTS5 on an in-memory SQLite index of the same files
    reference = [(h.target, h.index, round(h.score, 9)) for h in search_entries(None, home.memories_dir, query).hits]
    with home.open_db() as db:
        shown = [(h.target, h.index, round(h.score, 9)) for h in search_entries(db, home.memories_dir, query).hits]
    assert reference and shown == reference
