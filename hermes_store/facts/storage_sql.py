"""The fact store's statements that are the same SQL on every engine (:class:`SqlFactStorage`).

Both implementations share the tables and row shapes (``schema/0004_facts.sql`` and
``schema/pg/0001``), so most reads and plain writes are one SQL text. They run through
``db.portable`` (``?`` placeholders and ``IN ({marks})`` lists; on PostgreSQL translated by
:class:`hermes_store.pgdb.PortableSql`, every value bound). What really differs stays in
:mod:`~hermes_store.facts.storage_sqlite` and :mod:`~hermes_store.facts.storage_pg`: full-text
search (FTS5 vs ``tsvector``), id assignment (``last_insert_rowid`` vs ``RETURNING`` and the
sequence), concurrent trust updates, the change token and the current-time expression
(:attr:`SqlFactStorage.now_sql`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from hermes_store.facts import trust
from hermes_store.facts.storage import FactStorage
from hermes_store.tokens import fact_projection

FACT_COLUMNS = ("fact_id, content, category, tags, trust_score, retrieval_count, helpful_count, "
                "created_at, updated_at, author_id, author_name, author_is_bot")
FILTER_COLUMNS = "fact_id, category, trust_score, updated_at, content, tags"
ENTITY_COLUMNS = "e.entity_id, e.name, e.entity_type, e.aliases"


index_text = fact_projection  # the CJK projection indexed beside content and tags


def _aliases(value: str | None) -> list[str]:
    return [a for a in (value or "").split(",") if a]


def entity_row(row: dict[str, Any] | None) -> dict[str, Any] | None:
    """``row`` with its stored comma-separated ``aliases`` as a list (None stays None)."""
    if row is not None:
        row["aliases"] = _aliases(row["aliases"])
    return row


def _distinct(values: Iterable[Any]) -> list[int]:
    """``values`` as ints, first occurrence order, without repeats."""
    return list(dict.fromkeys(int(v) for v in values))


class SqlFactStorage(FactStorage):
    """:class:`FactStorage` methods written once in SQL both engines run (see the module docstring).

    A subclass names :attr:`now_sql`, the engine's expression for the current UTC time as
    ``YYYY-MM-DD HH:MM:SS`` text, and implements the remaining abstract methods.
    """

    now_sql = "CURRENT_TIMESTAMP"

    @property
    def sql(self) -> Any:
        """The database behind the engine-neutral calls (``?`` placeholders, ``query_in``)."""
        return self.db.portable

    # ---- store metadata

    def get_meta(self, keys: Sequence[str]) -> dict[str, str]:
        rows = self.sql.query_in("SELECT key, value FROM store_meta WHERE key IN ({marks})", list(keys))
        return {r["key"]: r["value"] for r in rows}

    def set_meta(self, values: dict[str, str]) -> None:
        if values:
            self.sql.executemany("INSERT INTO store_meta (key, value) VALUES (?, ?) "
                                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value", list(values.items()))

    # ---- facts

    def count_facts(self) -> int:
        return int(self.sql.scalar("SELECT count(*) FROM facts") or 0)

    def fact_rows(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        rows = self.sql.query_in(f"SELECT {FACT_COLUMNS} FROM facts WHERE fact_id IN ({{marks}})", _distinct(ids))
        return {r["fact_id"]: r for r in rows}

    def fact_id_by_content(self, content: str) -> int | None:
        return self.sql.scalar("SELECT fact_id FROM facts WHERE content = ?", (content,))

    def update_fact(self, fact_id: int, *, content: str | None = None, tags: str | None = None,
                    category: str | None = None) -> None:
        sets = [f"updated_at = {self.now_sql}"]
        params: list[Any] = []
        if content is not None:
            tags = tags or ""
            sets += ["content = ?", "tags = ?", "cjk = ?"]
            params += [content, tags, index_text(content, tags)]
        if category is not None:
            sets.append("category = ?")
            params.append(category)
        self.sql.execute(f"UPDATE facts SET {', '.join(sets)} WHERE fact_id = ?", (*params, int(fact_id)))

    def top_fact_ids(self, *, min_trust: float, category: str | None, limit: int) -> list[int]:
        sql = "SELECT fact_id FROM facts WHERE trust_score >= ?"
        params: list[Any] = [trust.sql_threshold(min_trust)]
        if category:
            sql += " AND category = ?"
            params.append(category)
        sql += " ORDER BY trust_score DESC, updated_at DESC, fact_id DESC LIMIT ?"
        params.append(max(0, int(limit)))
        return [int(r["fact_id"]) for r in self.sql.query(sql, params)]

    def filter_facts(self, ids: Iterable[int], *, category: str | None,
                     min_trust: float) -> dict[int, dict[str, Any]]:
        sql = f"SELECT {FILTER_COLUMNS} FROM facts WHERE fact_id IN ({{marks}}) AND trust_score >= ?"
        after: list[Any] = [trust.sql_threshold(min_trust)]
        if category:
            sql += " AND category = ?"
            after.append(category)
        rows = self.sql.query_in(sql, _distinct(ids), after=after)
        return {r["fact_id"]: r for r in rows}

    # ---- entities and links

    def entity_by_key(self, key: str) -> dict[str, Any] | None:
        row = self.sql.query_one(f"SELECT {ENTITY_COLUMNS} FROM entities e WHERE e.name_key = ?", (key,))
        if row is None:
            row = self.sql.query_one(
                f"SELECT {ENTITY_COLUMNS} FROM entity_aliases a "
                "JOIN entities e ON e.entity_id = a.entity_id WHERE a.alias_key = ?", (key,))
        return entity_row(row)

    def unlink_entities(self, fact_id: int) -> None:
        self.sql.execute("DELETE FROM fact_entities WHERE fact_id = ?", (int(fact_id),))

    def entity_names_for(self, fact_ids: Sequence[int]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        rows = self.sql.query_in(
            "SELECT fe.fact_id, e.name FROM fact_entities fe JOIN entities e "
            "ON e.entity_id = fe.entity_id WHERE fe.fact_id IN ({marks}) "
            "ORDER BY fe.fact_id, fe.position", _distinct(fact_ids))
        for row in rows:
            out.setdefault(row["fact_id"], []).append(row["name"])
        return out

    def entity_facts(self, entity_id: int) -> list[dict[str, Any]]:
        return self.sql.query("SELECT fact_id, position FROM fact_entities WHERE entity_id = ? ORDER BY fact_id",
                              (int(entity_id),))

    def export_rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, list[int]]]:
        facts = self.sql.query(f"SELECT {FACT_COLUMNS} FROM facts ORDER BY fact_id")
        entities = self.sql.query("SELECT entity_id, name, entity_type, aliases, created_at FROM entities "
                                  "ORDER BY entity_id")
        links: dict[int, list[int]] = {}
        for link in self.sql.query("SELECT fact_id, entity_id FROM fact_entities ORDER BY fact_id, position"):
            links.setdefault(int(link["fact_id"]), []).append(int(link["entity_id"]))
        return facts, entities, links

    def list_entities(self, limit: int) -> list[dict[str, Any]]:
        rows = self.sql.query(
            "SELECT e.entity_id, e.name, e.entity_type, e.aliases, count(fe.fact_id) AS fact_count "
            "FROM entities e LEFT JOIN fact_entities fe ON fe.entity_id = e.entity_id "
            "GROUP BY e.entity_id ORDER BY fact_count DESC, e.name LIMIT ?", (int(limit),))
        return [entity_row(r) for r in rows]  # type: ignore[misc]

    def entities_by_ids(self, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        rows = self.sql.query_in(f"SELECT {ENTITY_COLUMNS} FROM entities e WHERE e.entity_id IN ({{marks}})",
                                 sorted({int(i) for i in ids}))
        return {r["entity_id"]: entity_row(r) for r in rows}  # type: ignore[misc]

    def co_entities(self, fact_ids: Iterable[int], exclude: int) -> list[tuple[int, int]]:
        rows = self.sql.query_in("SELECT fact_id, entity_id FROM fact_entities WHERE fact_id IN ({marks})"
                                 " AND entity_id <> ? ORDER BY fact_id, entity_id",
                                 sorted({int(i) for i in fact_ids}), after=(int(exclude),))
        return [(int(r["fact_id"]), int(r["entity_id"])) for r in rows]

    def subject_entity_ids(self) -> set[int]:
        return {int(r["entity_id"]) for r in self.sql.query(
            "SELECT DISTINCT entity_id FROM fact_entities WHERE position = 0")}

    def subject_entities(self, entity_ids: Iterable[int]) -> set[int]:
        rows = self.sql.query_in("SELECT DISTINCT entity_id FROM fact_entities WHERE entity_id IN ({marks}) "
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
        return [int(r["entity_id"]) for r in self.sql.query(sql, params)]

    def entity_recent_facts(self, entity_ids: Sequence[int], per_entity: int,
                            category: str | None = None) -> list[tuple[int, int, str]]:
        where = " AND f.category = ?" if category else ""
        rows = self.sql.query_in(
            "SELECT entity_id, fact_id, content FROM (SELECT fe.entity_id, f.fact_id, f.content, "
            "row_number() OVER (PARTITION BY fe.entity_id ORDER BY f.updated_at DESC, f.fact_id DESC) AS rn "
            "FROM fact_entities fe JOIN facts f ON f.fact_id = fe.fact_id "
            f"WHERE fe.entity_id IN ({{marks}}){where}) ranked WHERE rn <= ? ORDER BY entity_id, rn",
            sorted({int(i) for i in entity_ids}), after=(*([category] if category else []), int(per_entity)))
        return [(int(r["entity_id"]), int(r["fact_id"]), r["content"]) for r in rows]

    def entity_fact_links(self, category: str | None = None) -> list[tuple[int, int]]:
        sql = "SELECT fe.entity_id, fe.fact_id FROM fact_entities fe JOIN facts f ON f.fact_id = fe.fact_id"
        params: list[Any] = []
        if category:
            sql += " WHERE f.category = ?"
            params.append(category)
        sql += " ORDER BY fe.entity_id, f.updated_at DESC, f.fact_id DESC"
        return [(int(r["entity_id"]), int(r["fact_id"])) for r in self.sql.query(sql, params)]

    # ---- vectors

    def count_missing_vectors(self) -> int:
        return int(self.sql.scalar("SELECT count(*) FROM facts WHERE hrr_vector IS NULL") or 0)

    def vector_fact_ids(self, *, missing_only: bool) -> list[int]:
        where = " WHERE hrr_vector IS NULL" if missing_only else ""
        return [int(r["fact_id"]) for r in self.sql.query(f"SELECT fact_id FROM facts{where} ORDER BY fact_id")]

    def fact_contents(self, ids: Sequence[int]) -> dict[int, str]:
        rows = self.sql.query_in("SELECT fact_id, content FROM facts WHERE fact_id IN ({marks})", _distinct(ids))
        return {r["fact_id"]: r["content"] for r in rows}

    def put_vectors(self, items: Sequence[tuple[int, bytes]]) -> None:
        if items:
            self.sql.executemany("UPDATE facts SET hrr_vector = ? WHERE fact_id = ?",
                                 [(bytes(blob), int(fid)) for fid, blob in items])
