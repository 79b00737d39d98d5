"""The fact store on SQLite (APSW, FTS5): the one :class:`FactStorage` implementation today.

Tables (``schema/0004_facts.sql``): ``facts`` (with the ``facts_fts`` FTS5 index kept by
triggers, and a ``cjk`` projection column so CJK text is searchable with the unicode61
tokenizer), ``entities``, ``entity_aliases``, ``fact_entities`` and ``store_meta``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from hermes_store.db import Database
from hermes_store.facts import trust
from hermes_store.facts.storage import FactStorage
from hermes_store.query import QueryPlan, cjk_projection, run_match

FACT_COLUMNS = ("fact_id, content, category, tags, trust_score, retrieval_count, helpful_count, "
                "created_at, updated_at")
FILTER_COLUMNS = "fact_id, category, trust_score, updated_at, content, tags"
ENTITY_COLUMNS = "e.entity_id, e.name, e.entity_type, e.aliases"


def _index_text(content: str, tags: str) -> str | None:
    """The CJK projection indexed beside content and tags (None for text without CJK)."""
    return cjk_projection(f"{content}\n{tags}")


def _aliases(value: str | None) -> list[str]:
    return [a for a in (value or "").split(",") if a]


def _entity(row: dict[str, Any] | None) -> dict[str, Any] | None:
    if row is not None:
        row["aliases"] = _aliases(row["aliases"])
    return row


class SqliteFactStorage(FactStorage):
    """:class:`FactStorage` over a :class:`~hermes_store.db.Database`."""

    engine = "sqlite"
    db: Database

    def transaction(self) -> AbstractContextManager[Any]:
        return self.db.write()

    def change_token(self) -> Hashable:
        return self.db.scalar("PRAGMA data_version")

    # ---- store metadata

    def get_meta(self, keys: Sequence[str]) -> dict[str, str]:
        rows = self.db.query_in("SELECT key, value FROM store_meta WHERE key IN ({marks})", keys)
        return {r["key"]: r["value"] for r in rows}

    def set_meta(self, values: dict[str, str]) -> None:
        self.db.executemany("INSERT INTO store_meta (key, value) VALUES (?, ?) "
                            "ON CONFLICT(key) DO UPDATE SET value = excluded.value", list(values.items()))

    # ---- facts

    def count_facts(self) -> int:
        return int(self.db.scalar("SELECT count(*) FROM facts") or 0)

    def fact_rows(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        rows = self.db.query_in(f"SELECT {FACT_COLUMNS} FROM facts WHERE fact_id IN ({{marks}})",
                                [int(i) for i in ids])
        return {r["fact_id"]: r for r in rows}

    def fact_writers(self, ids: Sequence[int]) -> dict[int, str]:
        return {}  # one home's file: the writer is not recorded per row

    def fact_id_by_content(self, content: str) -> int | None:
        return self.db.scalar("SELECT fact_id FROM facts WHERE content = ?", (content,))

    def facts_containing(self, category: str, fragment: str, limit: int) -> list[int]:
        rows = self.db.query("SELECT fact_id FROM facts WHERE category = ? AND instr(content, ?) > 0 "
                             "LIMIT ?", (category, fragment, int(limit)))
        return [int(r["fact_id"]) for r in rows]

    def insert_fact(self, content: str, category: str, tags: str, trust_score: float, *,
                    retrieval_count: int = 0, helpful_count: int = 0,
                    created_at: str | None = None, updated_at: str | None = None,
                    fact_id: int | None = None) -> int:
        self.db.execute(
            "INSERT INTO facts (fact_id, content, category, tags, trust_score, retrieval_count, helpful_count, "
            "created_at, updated_at, cjk) VALUES (?, ?, ?, ?, ?, ?, ?, "
            "coalesce(?, CURRENT_TIMESTAMP), coalesce(?, CURRENT_TIMESTAMP), ?)",
            (fact_id, content, category, tags, trust_score, int(retrieval_count), int(helpful_count),
             created_at, updated_at, _index_text(content, tags)))
        return int(self.db.conn.last_insert_rowid())

    def update_fact(self, fact_id: int, *, content: str | None = None, tags: str | None = None,
                    category: str | None = None) -> None:
        sets = ["updated_at = CURRENT_TIMESTAMP"]
        params: list[Any] = []
        if content is not None:
            tags = tags or ""
            sets += ["content = ?", "tags = ?", "cjk = ?"]
            params += [content, tags, _index_text(content, tags)]
        if category is not None:
            sets.append("category = ?")
            params.append(category)
        self.db.execute(f"UPDATE facts SET {', '.join(sets)} WHERE fact_id = ?", (*params, int(fact_id)))

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
        self.db.execute("DELETE FROM facts WHERE fact_id = ?", (int(fact_id),))
        return self.db.conn.changes() > 0

    def top_fact_ids(self, *, min_trust: float, category: str | None, limit: int) -> list[int]:
        sql = "SELECT fact_id FROM facts WHERE trust_score >= ?"
        params: list[Any] = [trust.sql_threshold(min_trust)]
        if category:
            sql += " AND category = ?"
            params.append(category)
        sql += " ORDER BY trust_score DESC, updated_at DESC, fact_id DESC LIMIT ?"
        params.append(max(0, int(limit)))
        return [int(r["fact_id"]) for r in self.db.query(sql, params)]

    def increment_retrievals(self, ids: Sequence[int]) -> None:
        self.db.executemany("UPDATE facts SET retrieval_count = retrieval_count + 1 WHERE fact_id = ?",
                            [(int(i),) for i in ids])

    def filter_facts(self, ids: Iterable[int], *, category: str | None,
                     min_trust: float) -> dict[int, dict[str, Any]]:
        sql = f"SELECT {FILTER_COLUMNS} FROM facts WHERE fact_id IN ({{marks}}) AND trust_score >= ?"
        after: list[Any] = [trust.sql_threshold(min_trust)]
        if category:
            sql += " AND category = ?"
            after.append(category)
        rows = self.db.query_in(sql, list(dict.fromkeys(int(i) for i in ids)), after=after)
        return {r["fact_id"]: r for r in rows}

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

    def entity_by_key(self, key: str) -> dict[str, Any] | None:
        row = self.db.query_one(f"SELECT {ENTITY_COLUMNS} FROM entities e WHERE e.name_key = ?", (key,))
        if row is None:
            row = self.db.query_one(
                f"SELECT {ENTITY_COLUMNS} FROM entity_aliases a "
                "JOIN entities e ON e.entity_id = a.entity_id WHERE a.alias_key = ?", (key,))
        return _entity(row)

    def key_in_use(self, key: str) -> bool:
        return (self.db.scalar("SELECT 1 FROM entities WHERE name_key = ?", (key,)) is not None
                or self.db.scalar("SELECT 1 FROM entity_aliases WHERE alias_key = ?", (key,)) is not None)

    def insert_entity(self, name: str, key: str, *, entity_id: int | None = None,
                      entity_type: str = "unknown", created_at: str | None = None) -> int:
        self.db.execute("INSERT INTO entities (entity_id, name, name_key, entity_type, created_at)"
                        " VALUES (?, ?, ?, ?, coalesce(?, datetime('now')))",
                        (entity_id, name, key, entity_type, created_at))
        return int(self.db.conn.last_insert_rowid())

    def add_alias(self, entity_id: int, alias: str, key: str) -> None:
        self.db.execute("INSERT INTO entity_aliases (alias_key, alias, entity_id) VALUES (?, ?, ?)",
                        (key, alias, entity_id))
        aliases = [r["alias"] for r in self.db.query(
            "SELECT alias FROM entity_aliases WHERE entity_id = ? ORDER BY rowid", (entity_id,))]
        self.db.execute("UPDATE entities SET aliases = ? WHERE entity_id = ?",
                        (",".join(a.replace(",", " ") for a in aliases), entity_id))

    def link_entities(self, fact_id: int, entity_ids: Sequence[int]) -> None:
        self.db.executemany(
            "INSERT OR IGNORE INTO fact_entities (fact_id, entity_id, position) VALUES (?, ?, ?)",
            [(int(fact_id), int(eid), pos) for pos, eid in enumerate(entity_ids)])

    def unlink_entities(self, fact_id: int) -> None:
        self.db.execute("DELETE FROM fact_entities WHERE fact_id = ?", (int(fact_id),))

    def entity_names_for(self, fact_ids: Sequence[int]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        rows = self.db.query_in(
            "SELECT fe.fact_id, e.name FROM fact_entities fe JOIN entities e "
            "ON e.entity_id = fe.entity_id WHERE fe.fact_id IN ({marks}) "
            "ORDER BY fe.fact_id, fe.position", [int(i) for i in fact_ids])
        for row in rows:
            out.setdefault(row["fact_id"], []).append(row["name"])
        return out

    def entity_facts(self, entity_id: int) -> list[dict[str, Any]]:
        return self.db.query("SELECT fact_id, position FROM fact_entities WHERE entity_id = ?",
                             (int(entity_id),))

    def export_rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, list[int]]]:
        facts = self.db.query(f"SELECT {FACT_COLUMNS} FROM facts ORDER BY fact_id")
        entities = self.db.query("SELECT entity_id, name, entity_type, aliases, created_at FROM entities "
                                 "ORDER BY entity_id")
        links: dict[int, list[int]] = {}
        for link in self.db.query("SELECT fact_id, entity_id FROM fact_entities ORDER BY fact_id, position"):
            links.setdefault(int(link["fact_id"]), []).append(int(link["entity_id"]))
        return facts, entities, links

    def list_entities(self, limit: int) -> list[dict[str, Any]]:
        rows = self.db.query(
            "SELECT e.entity_id, e.name, e.entity_type, e.aliases, count(fe.fact_id) AS fact_count "
            "FROM entities e LEFT JOIN fact_entities fe ON fe.entity_id = e.entity_id "
            "GROUP BY e.entity_id ORDER BY fact_count DESC, e.name LIMIT ?", (int(limit),))
        return [_entity(r) for r in rows]  # type: ignore[misc]

    def entities_by_ids(self, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        rows = self.db.query_in(f"SELECT {ENTITY_COLUMNS} FROM entities e WHERE e.entity_id IN ({{marks}})",
                                sorted({int(i) for i in ids}))
        return {r["entity_id"]: _entity(r) for r in rows}  # type: ignore[misc]

    def co_entities(self, fact_ids: Iterable[int], exclude: int) -> list[tuple[int, int]]:
        rows = self.db.query_in("SELECT fact_id, entity_id FROM fact_entities WHERE fact_id IN "
                                "({marks}) AND entity_id != ?", sorted({int(i) for i in fact_ids}),
                                after=(int(exclude),))
        return [(int(r["fact_id"]), int(r["entity_id"])) for r in rows]

    def subject_entity_ids(self) -> set[int]:
        return {int(r["entity_id"]) for r in self.db.query(
            "SELECT DISTINCT entity_id FROM fact_entities WHERE position = 0")}

    def subject_entities(self, entity_ids: Iterable[int]) -> set[int]:
        rows = self.db.query_in("SELECT DISTINCT entity_id FROM fact_entities WHERE entity_id IN ({marks}) "
                                "AND position = 0", sorted({int(i) for i in entity_ids}))
        return {int(r["entity_id"]) for r in rows}

    def shared_entity_ids(self, category: str | None, *, after: int, limit: int) -> list[int]:
        if category:
            sql = ("SELECT fe.entity_id FROM fact_entities fe JOIN facts f ON f.fact_id = fe.fact_id "
                   "WHERE fe.entity_id > ? AND f.category = ? GROUP BY fe.entity_id HAVING count(*) >= 2 "
                   "ORDER BY fe.entity_id LIMIT ?")
            params: tuple[Any, ...] = (int(after), category, int(limit))
        else:
            sql = ("SELECT entity_id FROM fact_entities WHERE entity_id > ? GROUP BY entity_id "
                   "HAVING count(*) >= 2 ORDER BY entity_id LIMIT ?")
            params = (int(after), int(limit))
        return [int(r["entity_id"]) for r in self.db.query(sql, params)]

    def entity_recent_facts(self, entity_ids: Sequence[int], per_entity: int,
                            category: str | None = None) -> list[tuple[int, int, str]]:
        where = " AND f.category = ?" if category else ""
        rows = self.db.query_in(
            "SELECT entity_id, fact_id, content FROM (SELECT fe.entity_id, f.fact_id, f.content, "
            "row_number() OVER (PARTITION BY fe.entity_id ORDER BY f.updated_at DESC, f.fact_id DESC) AS rn "
            "FROM fact_entities fe JOIN facts f ON f.fact_id = fe.fact_id "
            f"WHERE fe.entity_id IN ({{marks}}){where}) WHERE rn <= ? ORDER BY entity_id, rn",
            sorted({int(i) for i in entity_ids}), after=(*([category] if category else []), int(per_entity)))
        return [(int(r["entity_id"]), int(r["fact_id"]), r["content"]) for r in rows]

    def entity_fact_links(self, category: str | None = None) -> list[tuple[int, int]]:
        sql = "SELECT fe.entity_id, fe.fact_id FROM fact_entities fe JOIN facts f ON f.fact_id = fe.fact_id"
        params: list[Any] = []
        if category:
            sql += " WHERE f.category = ?"
            params.append(category)
        sql += " ORDER BY fe.entity_id, f.updated_at DESC, f.fact_id DESC"
        return [(int(r["entity_id"]), int(r["fact_id"])) for r in self.db.query(sql, params)]

    # ---- vectors

    def count_missing_vectors(self) -> int:
        return int(self.db.scalar("SELECT count(*) FROM facts WHERE hrr_vector IS NULL") or 0)

    def vector_fact_ids(self, *, missing_only: bool) -> list[int]:
        where = " WHERE hrr_vector IS NULL" if missing_only else ""
        return [int(r["fact_id"]) for r in self.db.query(f"SELECT fact_id FROM facts{where} ORDER BY fact_id")]

    def fact_contents(self, ids: Sequence[int]) -> dict[int, str]:
        rows = self.db.query_in("SELECT fact_id, content FROM facts WHERE fact_id IN ({marks})",
                                [int(i) for i in ids])
        return {r["fact_id"]: r["content"] for r in rows}

    def put_vectors(self, items: Sequence[tuple[int, bytes]]) -> None:
        self.db.executemany("UPDATE facts SET hrr_vector = ? WHERE fact_id = ?",
                            [(blob, int(fid)) for fid, blob in items])

    def vectors(self, after_id: int = -1, limit: int | None = None) -> list[dict[str, Any]]:
        return self.db.query("SELECT fact_id, content, hrr_vector FROM facts WHERE fact_id > ? "
                             "ORDER BY fact_id LIMIT ?", (int(after_id), -1 if limit is None else int(limit)))
