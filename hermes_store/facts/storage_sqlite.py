"""The fact store on SQLite (APSW, FTS5): :class:`SqliteFactStorage`, engine ``"sqlite"``.

Tables (``schema/0004_facts.sql``): ``facts`` (with the ``facts_fts`` FTS5 index kept by
triggers, and a ``cjk`` projection column so CJK text is searchable with the unicode61
tokenizer), ``entities``, ``entity_aliases``, ``fact_entities`` and ``store_meta``. The
statements both engines share live in :mod:`hermes_store.facts.storage_sql`; here is only
what SQLite does its own way (FTS5 search, rowid ids, the write transaction).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from hermes_store.db import Database
from hermes_store.facts import trust
from hermes_store.facts.storage import FactAuthor
from hermes_store.facts.storage_sql import SqlFactStorage, index_text
from hermes_store.query import QueryPlan, run_match


class SqliteFactStorage(SqlFactStorage):
    """:class:`FactStorage` over a :class:`~hermes_store.db.Database`."""

    engine = "sqlite"
    db: Database

    def transaction(self) -> AbstractContextManager[Any]:
        return self.db.write()

    def change_token(self) -> Hashable:
        return self.db.scalar("PRAGMA data_version")

    # ---- facts

    def fact_writers(self, ids: Sequence[int]) -> dict[int, str]:
        return {}  # one home's file: the writer is not recorded per row

    def facts_containing(self, category: str, fragment: str, limit: int) -> list[int]:
        rows = self.db.query("SELECT fact_id FROM facts WHERE category = ? AND instr(content, ?) > 0 "
                             "LIMIT ?", (category, fragment, int(limit)))
        return [int(r["fact_id"]) for r in rows]

    def insert_fact(self, content: str, category: str, tags: str, trust_score: float, *,
                    retrieval_count: int = 0, helpful_count: int = 0,
                    created_at: str | None = None, updated_at: str | None = None,
                    fact_id: int | None = None, author: FactAuthor | None = None) -> int:
        who = author or FactAuthor()
        self.db.execute(
            "INSERT INTO facts (fact_id, content, category, tags, trust_score, retrieval_count, helpful_count, "
            "created_at, updated_at, cjk, author_id, author_name, author_is_bot) VALUES (?, ?, ?, ?, ?, ?, ?, "
            "coalesce(?, CURRENT_TIMESTAMP), coalesce(?, CURRENT_TIMESTAMP), ?, ?, ?, ?)",
            (fact_id, content, category, tags, trust_score, int(retrieval_count), int(helpful_count),
             created_at, updated_at, index_text(content, tags), who.id, who.name,
             None if who.is_bot is None else int(who.is_bot)))
        return int(self.db.conn.last_insert_rowid())

    def adjust_trust(self, fact_id: int, delta: float, *,
                     helpful: bool = False) -> tuple[float, float, int] | None:
        with self.db.write():
            old = self.db.scalar("SELECT trust_score FROM facts WHERE fact_id = ?", (int(fact_id),))
            if old is None:
                return None
            row = self.db.query_one(
                "UPDATE facts SET trust_score = round(max(0.0, min(1.0, trust_score + ?)), ?), "
                "helpful_count = helpful_count + ?, updated_at = CURRENT_TIMESTAMP "
                "WHERE fact_id = ? RETURNING trust_score, helpful_count",
                (float(delta), trust.TRUST_DECIMALS, 1 if helpful else 0, int(fact_id)))
        if row is None:
            return None
        return trust.clamp(old), trust.clamp(row["trust_score"]), int(row["helpful_count"])

    def delete_fact(self, fact_id: int) -> bool:
        self.db.execute("DELETE FROM fact_entities WHERE fact_id = ?", (int(fact_id),))
        return self.db.execute("DELETE FROM facts WHERE fact_id = ?", (int(fact_id),)) > 0

    def increment_retrievals(self, ids: Sequence[int]) -> None:
        self.db.executemany("UPDATE facts SET retrieval_count = retrieval_count + 1 WHERE fact_id = ?",
                            [(int(i),) for i in ids])

    def text_hits(self, query: str | QueryPlan, limit: int, *, category: str | None = None,
                  min_trust: float = 0.0) -> tuple[dict[int, float], str | None]:
        floor = trust.sql_threshold(min_trust)

        def fetch(expression: str, count: int) -> list[dict[str, Any]]:
            sql = ("SELECT f.fact_id, bm25(facts_fts, 1.0, 0.6, 1.0) AS rank FROM facts_fts "
                   "JOIN facts f ON f.fact_id = facts_fts.rowid "
                   "WHERE facts_fts MATCH ? AND f.trust_score >= ?")
            params: list[Any] = [expression, floor]
            if category:
                sql += " AND f.category = ?"
                params.append(category)
            sql += " ORDER BY rank LIMIT ?"
            params.append(count)
            return self.db.query(sql, params)

        outcome = run_match(fetch, query, limit, key=lambda row: row["fact_id"])
        return {int(r["fact_id"]): abs(float(r["rank"])) for r in outcome.rows}, outcome.note

    # ---- entities and links

    def key_in_use(self, key: str) -> bool:
        return (self.db.scalar("SELECT 1 FROM entities WHERE name_key = ?", (key,)) is not None
                or self.db.scalar("SELECT 1 FROM entity_aliases WHERE alias_key = ?", (key,)) is not None)

    def insert_entity(self, name: str, key: str, *, entity_id: int | None = None,
                      entity_type: str = "unknown", created_at: str | None = None) -> int:
        self.db.execute("INSERT INTO entities (entity_id, name, name_key, entity_type, created_at)"
                        " VALUES (?, ?, ?, ?, coalesce(?, datetime('now')))",
                        (entity_id, name, key, entity_type, created_at))
        return int(self.db.conn.last_insert_rowid())

    def add_alias(self, entity_id: int, alias: str, key: str) -> bool:
        self.db.execute("INSERT INTO entity_aliases (alias_key, alias, entity_id) VALUES (?, ?, ?)",
                        (key, alias, entity_id))
        aliases = [r["alias"] for r in self.db.query(
            "SELECT alias FROM entity_aliases WHERE entity_id = ? ORDER BY rowid", (entity_id,))]
        self.db.execute("UPDATE entities SET aliases = ? WHERE entity_id = ?",
                        (",".join(a.replace(",", " ") for a in aliases), entity_id))
        return True  # the caller's write transaction holds the database since its key_in_use

    def link_entities(self, fact_id: int, entity_ids: Sequence[int]) -> None:
        self.db.executemany(
            "INSERT OR IGNORE INTO fact_entities (fact_id, entity_id, position) VALUES (?, ?, ?)",
            [(int(fact_id), int(eid), pos) for pos, eid in enumerate(entity_ids)])

    # ---- vectors

    def vectors(self, after_id: int = -1, limit: int | None = None) -> list[dict[str, Any]]:
        return self.db.query("SELECT fact_id, content, hrr_vector FROM facts WHERE fact_id > ? "
                             "ORDER BY fact_id LIMIT ?", (int(after_id), -1 if limit is None else int(limit)))
