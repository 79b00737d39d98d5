"""Counts, health checks and index maintenance of the PostgreSQL session index.

:class:`PgIndexHealth` is a part of :class:`~hermes_store.sessions.storage_pg.PgSessionStorage`
(its first base): ``stats``, the integrity and GIN-index checks ``doctor`` runs, index rebuilds,
the CJK projection backfill and the search probe.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hermes_store.pgquery import SEARCH_CONFIG
from hermes_store.sessions.storage_pg_bulk import MESSAGE_TEXT_INDEXES
from hermes_store.tokens import message_projection

if TYPE_CHECKING:
    from hermes_store.pgdb import PgDatabase

PROJECTION_BACKFILL_KEY = "sessions_projection_backfill"  # as storage_sqlite (SQLite migration 0007)
SNIPPET_CHARS = 65536  # prefix of a message a snippet (or the doctor's probe) reads


class PgIndexHealth:
    """The maintenance methods of the PostgreSQL session storage (``self.db``: a PgDatabase)."""

    db: PgDatabase  # the storage's; ``self.ready()`` and ``self.text_indexes()`` as the storage has them

    def stats(self) -> dict[str, Any]:
        per_source = {
            r["source"]: {"sessions": int(r["sessions"]), "messages": int(r["messages"])}
            for r in self.db.query(
                "SELECT source, count(*) AS sessions, coalesce(sum(message_count), 0) AS messages"
                " FROM sessions GROUP BY source ORDER BY source")
        }
        return {
            "sessions": int(self.db.scalar("SELECT count(*) FROM sessions") or 0),
            "messages": int(self.db.scalar("SELECT count(*) FROM messages") or 0),
            "per_source": per_source,
            "sources_indexed": int(self.db.scalar("SELECT count(*) FROM sources") or 0),
            "db_bytes": self.db.size_bytes(),
            "index_bytes": int(self.db.scalar(
                "SELECT sum(pg_relation_size(to_regclass(i))) FROM unnest(%s::text[]) AS i",
                (list(MESSAGE_TEXT_INDEXES),)) or 0),
        }

    # -- health -----------------------------------------------------------------------

    def integrity_problems(self) -> list[str]:
        problems = []
        orphans = int(self.db.scalar(
            "SELECT count(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = m.session_id)") or 0)
        if orphans:
            problems.append(f"{orphans} message{'' if orphans == 1 else 's'} belong{'s' if orphans == 1 else ''} to no session")
        invalid = self.db.query(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = current_schema() AND NOT i.indisvalid")
        problems += [f"index {r['relname']} is invalid (rebuild it with REINDEX)" for r in invalid]
        return problems

    def text_indexes(self) -> list[str]:
        rows = self.db.query(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_am a ON a.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE a.amname = 'gin' AND n.nspname = current_schema() ORDER BY c.relname")
        return [r["relname"] for r in rows]

    def check_text_index(self, name: str) -> str | None:
        if name not in self.text_indexes():
            return f"no full-text index named {name}"
        valid = self.db.scalar(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE c.relname = %s", (name,))
        return None if valid else f"index {name} is invalid"

    def rebuild_text_index(self, name: str) -> None:
        if name not in self.text_indexes():
            raise ValueError(f"no full-text index named {name}")
        from psycopg import sql

        with self.db.connection() as conn:
            conn.execute(sql.SQL("REINDEX INDEX {}").format(sql.Identifier(name)))

    def session_counts(self, source_ids: Sequence[int]) -> dict[int, int]:
        rows = self.db.query("SELECT source_id, count(*) AS n FROM sessions WHERE source_id = ANY(%s)"
                             " GROUP BY source_id", ([int(i) for i in source_ids],))
        return {int(r["source_id"]): int(r["n"]) for r in rows}

    def backfill_projection(self, chunk: int) -> int:
        """Recompute the ``cjk`` projection of messages with non-ASCII text while the marker a
        SQLite migration left (copied over by ``migrate``) is present, then drop it."""
        if not self.ready() or self.db.scalar(
                "SELECT value FROM store_meta WHERE key = %s", (PROJECTION_BACKFILL_KEY,)) is None:
            return 0
        updated, last_id = 0, 0
        while True:
            rows = self.db.query(
                "SELECT id, role, content, cjk FROM messages WHERE id > %s AND content ~ '[^\\x01-\\x7f]'"
                " ORDER BY id LIMIT %s", (last_id, int(chunk)))
            if not rows:
                break
            last_id = int(rows[-1]["id"])
            changes = [(new, row["id"]) for row in rows
                       if (new := message_projection(str(row["role"]), str(row["content"]))) != row["cjk"]]
            if changes:
                self.db.executemany("UPDATE messages SET cjk = %s WHERE id = %s", changes)
                updated += len(changes)
        self.db.execute("DELETE FROM store_meta WHERE key = %s", (PROJECTION_BACKFILL_KEY,))
        return updated

    def rebuild_message_index(self) -> None:
        """Rebuild the GIN indexes over the messages' stored tsvectors (words, phrase pairs)."""
        for name in MESSAGE_TEXT_INDEXES:
            if name in self.text_indexes():
                self.rebuild_text_index(name)

    def probe_word(self, message_id: int, word: str) -> str | None:
        """ts_headline of ``word`` on that message, matched through its stored tsvector."""
        found = self.db.scalar(
            f"SELECT ts_headline('{SEARCH_CONFIG}', left(content, {SNIPPET_CHARS}),"
            f" phraseto_tsquery('{SEARCH_CONFIG}', %s), 'StartSel=[, StopSel=]')"
            f" FROM messages WHERE id = %s AND tsv @@ phraseto_tsquery('{SEARCH_CONFIG}', %s)",
            (word, message_id, word))
        if not found or "[" not in found:
            return f"message {message_id} is not found by searching for {word!r}"
        return None
