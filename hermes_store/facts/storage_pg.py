"""The fact store on PostgreSQL (:class:`PgFactStorage`, engine ``"postgresql"``).

Same tables and row shapes as the SQLite implementation (schema/pg/0001); the statements
both engines share live in :mod:`hermes_store.facts.storage_sql`. Full-text hits use
the ``tsv`` column (content, tags and the CJK projection; GIN index) with a ``tsquery``
compiled from the query plan's :class:`~hermes_store.query.Match` trees
(:mod:`hermes_store.pgquery`, every term a bound parameter), scored with bm25 over the
plan's terms. Trust feedback is one ``UPDATE ... RETURNING`` on the server (clamped and
rounded there), so hosts giving feedback at once never lose a vote.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from hermes_store.facts import trust
from hermes_store.facts.storage import FactAuthor, FactExists
from hermes_store.facts.storage_sql import SqlFactStorage, index_text
from hermes_store.pgquery import TsQueryError, positive_terms, tsquery_sql
from hermes_store.query import (
    Match,
    QueryPlan,
    QueryRejected,
    compile_query,
    run_plan,
)

if TYPE_CHECKING:
    from hermes_store.pgdb import PgDatabase

NOW_TEXT = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
K1, B = 1.2, 0.75
MATCH_CAP = 5000  # matching facts scored per expression


def _ids(values: Iterable[Any]) -> list[int]:
    return list(dict.fromkeys(int(v) for v in values))


class PgFactStorage(SqlFactStorage):
    """:class:`FactStorage` over a :class:`~hermes_store.pgdb.PgDatabase`."""

    engine = "postgresql"
    now_sql = NOW_TEXT
    db: PgDatabase

    def transaction(self) -> AbstractContextManager[Any]:
        return self.db.transaction()

    def change_token(self) -> Hashable:
        # advances with every statement that changed facts, on any host (schema/pg/0004)
        return int(self.db.scalar("SELECT last_value FROM facts_change_seq") or 0)

    # ---- facts

    def fact_writers(self, ids: Sequence[int]) -> dict[int, str]:
        rows = self.db.query("SELECT fact_id, written_by FROM facts WHERE fact_id = ANY(%s)"
                             " AND written_by <> ''", (_ids(ids),))
        return {int(r["fact_id"]): r["written_by"] for r in rows}

    def facts_containing(self, category: str, fragment: str, limit: int) -> list[int]:
        rows = self.db.query("SELECT fact_id FROM facts WHERE category = %s AND strpos(content, %s) > 0"
                             " ORDER BY fact_id LIMIT %s", (category, fragment, int(limit)))
        return [int(r["fact_id"]) for r in rows]

    def insert_fact(self, content: str, category: str, tags: str, trust_score: float, *,
                    retrieval_count: int = 0, helpful_count: int = 0,
                    created_at: str | None = None, updated_at: str | None = None,
                    fact_id: int | None = None, author: FactAuthor | None = None) -> int:
        who = author or FactAuthor()
        values = (content, category, tags, trust_score, int(retrieval_count), int(helpful_count),
                  created_at, updated_at, index_text(content, tags), who.id, who.name, who.is_bot)
        if fact_id is None:
            new = self.db.scalar(
                "INSERT INTO facts (content, category, tags, trust_score, retrieval_count, helpful_count,"
                " created_at, updated_at, cjk, author_id, author_name, author_is_bot) VALUES (%s, %s, %s, %s,"
                f" %s, %s, coalesce(%s, {NOW_TEXT}), coalesce(%s, {NOW_TEXT}), %s, %s, %s, %s)"
                " ON CONFLICT (content) DO NOTHING RETURNING fact_id", values)
            if new is None:  # another host added the same content after the caller looked
                existing = self.fact_id_by_content(content)
                raise FactExists(int(existing) if existing is not None else 0)
            return int(new)
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO facts (fact_id, content, category, tags, trust_score, retrieval_count,"
                " helpful_count, created_at, updated_at, cjk, author_id, author_name, author_is_bot)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s,"
                f" coalesce(%s, {NOW_TEXT}), coalesce(%s, {NOW_TEXT}), %s, %s, %s, %s)", (int(fact_id), *values))
            self.db.execute("SELECT setval(pg_get_serial_sequence('facts', 'fact_id'),"
                            " greatest((SELECT max(fact_id) FROM facts), 1))")
        return int(fact_id)

    def update_fact(self, fact_id: int, *, content: str | None = None, tags: str | None = None,
                    category: str | None = None) -> None:
        from psycopg.errors import UniqueViolation

        with self.db.transaction() as conn:  # joins the caller's transaction
            try:
                with conn.transaction():  # a savepoint: the content's owner can be read after a clash
                    super().update_fact(fact_id, content=content, tags=tags, category=category)
            except UniqueViolation as exc:  # another host gave a fact this content after the caller looked
                existing = self.fact_id_by_content(content or "")
                raise FactExists(int(existing) if existing is not None else 0) from exc

    def adjust_trust(self, fact_id: int, delta: float, *,
                     helpful: bool = False) -> tuple[float, float, int] | None:
        # one statement: the row lock of the UPDATE serialises hosts; the old value is the one
        # this update replaced (read under the same lock)
        row = self.db.query_one(
            "UPDATE facts f SET trust_score = round(greatest(0.0, least(1.0, f.trust_score + %s))"
            "::numeric, %s)::float8, helpful_count = f.helpful_count + %s,"
            f" updated_at = {NOW_TEXT} FROM (SELECT fact_id, trust_score FROM facts WHERE fact_id = %s"
            " FOR UPDATE) AS old WHERE f.fact_id = old.fact_id"
            " RETURNING old.trust_score AS old_trust, f.trust_score AS new_trust, f.helpful_count",
            (float(delta), trust.TRUST_DECIMALS, 1 if helpful else 0, int(fact_id)))
        if row is None:
            return None
        return trust.clamp(row["old_trust"]), trust.clamp(row["new_trust"]), int(row["helpful_count"])

    def delete_fact(self, fact_id: int) -> bool:
        with self.db.transaction():
            self.db.execute("DELETE FROM fact_entities WHERE fact_id = %s", (int(fact_id),))
            return self.db.execute("DELETE FROM facts WHERE fact_id = %s", (int(fact_id),)) > 0

    def increment_retrievals(self, ids: Sequence[int]) -> None:
        counts: dict[int, int] = {}
        for i in ids:
            counts[int(i)] = counts.get(int(i), 0) + 1
        if counts:
            self.db.execute(
                "UPDATE facts f SET retrieval_count = f.retrieval_count + c.n"
                " FROM unnest(%s::bigint[], %s::int[]) AS c(id, n) WHERE f.fact_id = c.id",
                (list(counts), list(counts.values())))

    def _scored(self, match: Match, count: int, floor: float, category: str | None) -> list[dict[str, Any]]:
        try:
            query_sql, query_params = tsquery_sql(match)
            compiled = [tsquery_sql(term) for term in positive_terms(match)]
        except TsQueryError as exc:
            raise QueryRejected(str(exc)) from exc
        presence = "".join(f", (tsv @@ {sql}) AS t{i}" for i, (sql, _) in enumerate(compiled))
        where, params = " AND trust_score >= %s", [floor]
        if category:
            where += " AND category = %s"
            params.append(category)
        rows = self.db.query(
            f"SELECT fact_id, length(tsv) AS dl{presence} FROM facts WHERE tsv @@ {query_sql}{where}"
            " ORDER BY fact_id DESC LIMIT %s",
            (*[p for _, ps in compiled for p in ps], *query_params, *params, MATCH_CAP))
        if not rows:
            return []
        stats = self.db.query_one("SELECT count(*) AS n, coalesce(avg(length(tsv)), 1) AS avgdl FROM facts")
        total, avgdl = max(int(stats["n"]), 1), max(float(stats["avgdl"]), 1e-9)
        idf = []
        for sql, ps in compiled:
            docs = float(self.db.scalar(f"SELECT count(*) FROM facts WHERE tsv @@ {sql}", ps) or 0)
            idf.append(max(1e-6, math.log((total - docs + 0.5) / (docs + 0.5))))
        scored = []
        for row in rows:
            norm = K1 * (1 - B + B * float(row["dl"] or 0) / avgdl)
            score = sum(w * (K1 + 1) / (1 + norm) for i, w in enumerate(idf) if row[f"t{i}"])
            scored.append({"fact_id": int(row["fact_id"]), "rank": max(score, 1e-9)})
        scored.sort(key=lambda r: (-r["rank"], -r["fact_id"]))
        return scored[:count]

    def text_hits(self, query: str | QueryPlan, limit: int, *, category: str | None = None,
                  min_trust: float = 0.0) -> tuple[dict[int, float], str | None]:
        floor = trust.sql_threshold(min_trust)
        outcome = run_plan(lambda match, count: self._scored(match, count, floor, category),
                           compile_query(query), limit, key=lambda row: row["fact_id"])
        return {int(r["fact_id"]): float(r["rank"]) for r in outcome.rows}, outcome.note

    # ---- entities and links

    def key_in_use(self, key: str) -> bool:
        return self.db.scalar(
            "SELECT EXISTS (SELECT 1 FROM entities WHERE name_key = %s)"
            " OR EXISTS (SELECT 1 FROM entity_aliases WHERE alias_key = %s)", (key, key)) is True

    def insert_entity(self, name: str, key: str, *, entity_id: int | None = None,
                      entity_type: str = "unknown", created_at: str | None = None) -> int:
        if entity_id is None:
            # another host may create the same entity between our look-up and this insert (two
            # gateways' facts naming a new person at once): its row is the entity, not an error
            # (the insert waits for that transaction, so the SELECT sees its committed row)
            created = self.db.scalar(
                "INSERT INTO entities (name, name_key, entity_type, created_at)"
                f" VALUES (%s, %s, %s, coalesce(%s, {NOW_TEXT}))"
                " ON CONFLICT (name_key) DO NOTHING RETURNING entity_id",
                (name, key, entity_type, created_at))
            if created is None:
                created = self.db.scalar("SELECT entity_id FROM entities WHERE name_key = %s", (key,))
            return int(created)
        with self.db.transaction():
            self.db.execute("INSERT INTO entities (entity_id, name, name_key, entity_type, created_at)"
                            f" VALUES (%s, %s, %s, %s, coalesce(%s, {NOW_TEXT}))",
                            (int(entity_id), name, key, entity_type, created_at))
            self.db.execute("SELECT setval(pg_get_serial_sequence('entities', 'entity_id'),"
                            " greatest((SELECT max(entity_id) FROM entities), 1))")
        return int(entity_id)

    def add_alias(self, entity_id: int, alias: str, key: str) -> bool:
        with self.db.transaction():
            added = self.db.execute("INSERT INTO entity_aliases (alias_key, alias, entity_id) VALUES (%s, %s, %s)"
                                    " ON CONFLICT (alias_key) DO NOTHING", (key, alias, entity_id))
            if not added:  # another host took the alias meanwhile
                return False
            self.db.execute(  # the display copy, in the order the aliases were recorded
                "UPDATE entities SET aliases = (SELECT string_agg(replace(alias, ',', ' '), ','"
                " ORDER BY added) FROM entity_aliases WHERE entity_id = %s) WHERE entity_id = %s",
                (entity_id, entity_id))
        return True

    def link_entities(self, fact_id: int, entity_ids: Sequence[int]) -> None:
        if entity_ids:
            self.db.execute(
                "INSERT INTO fact_entities (fact_id, entity_id, position)"
                " SELECT %s, e.id, e.pos - 1 FROM unnest(%s::bigint[]) WITH ORDINALITY AS e(id, pos)"
                " ON CONFLICT DO NOTHING", (int(fact_id), [int(e) for e in entity_ids]))

    # ---- vectors

    def vectors(self, after_id: int = -1, limit: int | None = None) -> list[dict[str, Any]]:
        rows = self.db.query("SELECT fact_id, content, hrr_vector FROM facts WHERE fact_id > %s "
                             "ORDER BY fact_id LIMIT %s", (int(after_id), None if limit is None else int(limit)))
        for row in rows:
            if isinstance(row["hrr_vector"], memoryview):
                row["hrr_vector"] = bytes(row["hrr_vector"])
        return rows
