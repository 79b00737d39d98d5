"""FactStore: facts, entities, trust and vectors in the shared ``hermes_store.db``.

All writes run in :meth:`Database.write` transactions. Retrieval lives in
:mod:`hermes_store.facts.retrieval` and :mod:`hermes_store.facts.conflicts`;
this module owns the rows, the entity links and the vector index.

Public API (used by the tools, the provider and the recall layer)::

    store = FactStore(db)                      # Database, Home, or a path to a .db file
    store.add_fact("Alice lives in Paris", category="general", tags="")
        -> {"fact_id": 1, "status": "added" | "exists"}
    store.search("where does alice live", limit=10, min_trust=0.3)
        -> [{fact_id, content, category, tags, trust_score, helpful_count,
             retrieval_count, entities, created_at, updated_at, score, fts_rank}, ...]
    store.probe("Alice") / store.related("Alice") / store.reason(["Alice", "Bob"])
    store.contradict() / store.update_fact(...) / store.remove_fact(...)
    store.list_facts(...) / store.record_feedback(fact_id, "helpful" | "unhelpful")
"""

from __future__ import annotations

import os
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hermes_store.db import Database
from hermes_store.facts import hrr, trust
from hermes_store.facts.config import FactConfig
from hermes_store.facts.entities import extract_entities
from hermes_store.home import Home
from hermes_store.query import cjk_projection
from hermes_store.threats import scan_content

META_DIM = "fact_hrr_dim"
META_ENCODING = "fact_hrr_encoding"
FACT_COLUMNS = ("fact_id, content, category, tags, trust_score, retrieval_count, helpful_count, "
                "created_at, updated_at")
REENCODE_BATCH = 500
CACHE_BUDGET = 16_000_000  # facts × dim kept in memory as complex64 (~128 MB); larger stores stream
SCAN_CHUNK = 2000


class FactStoreError(ValueError):
    """A fact-store request that cannot be carried out (message meant for the caller)."""


class FactNotFound(FactStoreError, KeyError):
    """No fact has the given id."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "fact not found"


class FactBlocked(FactStoreError):
    """The fact holds an injection/exfiltration payload or invisible characters (the
    ``memory`` tool's ``Blocked: …`` message)."""


def check_fact_text(content: str, tags: str = "") -> None:
    """Raise :class:`FactBlocked` when ``content`` or ``tags`` fail the threat scan.

    Facts are recalled into the prompt as memory, so every way in (tool, CLI, Hermes
    import, extraction, mirroring, JSONL import) passes the memory tool's scan.
    """
    for text in (content, tags):
        blocked = scan_content(text or "")
        if blocked:
            raise FactBlocked(blocked)


def _index_text(content: str, tags: str) -> str | None:
    return cjk_projection(f"{content}\n{tags}")


class FactStore:
    """The fact store over one :class:`~hermes_store.db.Database`.

    ``db`` may be an open Database (not closed by :meth:`close`), a
    :class:`~hermes_store.home.Home` or a path to a database file (opened and
    owned here). Settings come from ``config`` or the keyword overrides; with
    neither ``config`` nor ``hrr_dim`` the dimension recorded in ``store_meta``
    is kept, so a reader never re-encodes what the configured provider wrote.
    """

    def __init__(self, db: Database | Home | str | os.PathLike[str], *,
                 config: FactConfig | None = None, default_trust: float | None = None,
                 min_trust: float | None = None, hrr_dim: int | None = None,
                 half_life_days: float | None = None, hrr_weight: float | None = None) -> None:
        if isinstance(db, Database):
            self.db, self._owns_db = db, False
        elif isinstance(db, Home):
            self.db, self._owns_db = db.open_db(), True
        else:
            self.db, self._owns_db = Database(Path(db)), True
        cfg = config or FactConfig()
        self.default_trust = trust.clamp(cfg.default_trust if default_trust is None else default_trust)
        self.min_trust = float(cfg.min_trust_threshold if min_trust is None else min_trust)
        if hrr_dim is None and config is None:
            # a bare FactStore(db) (e.g. the recall layer) keeps the dimension already in use
            recorded = self.db.scalar("SELECT value FROM store_meta WHERE key = ?", (META_DIM,))
            hrr_dim = int(recorded) if recorded and str(recorded).isdigit() else cfg.hrr_dim
        self.dim = int(cfg.hrr_dim if hrr_dim is None else hrr_dim)
        if self.dim < 16:
            raise FactStoreError(f"hrr_dim must be at least 16, got {self.dim}")
        self.half_life_days = float(cfg.half_life_days if half_life_days is None else half_life_days)
        self.hrr_weight = float(cfg.hrr_weight if hrr_weight is None else hrr_weight)
        self._lock = threading.RLock()
        self._vector_version = 0
        self._cache: tuple[Any, np.ndarray, np.ndarray] | None = None
        self.reencoded = self.ensure_vectors()

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the database if this store opened it."""
        self._cache = None
        if self._owns_db:
            self.db.close()

    def __enter__(self) -> FactStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ rows

    def count(self) -> int:
        """Number of stored facts."""
        return int(self.db.scalar("SELECT count(*) FROM facts") or 0)

    def get_fact(self, fact_id: int) -> dict[str, Any] | None:
        """One fact as a dict (with its entity names), or None."""
        rows = self.facts_by_ids([int(fact_id)])
        return rows[0] if rows else None

    def facts_by_ids(self, ids: Sequence[int]) -> list[dict[str, Any]]:
        """Facts for ``ids`` in the given order (missing ids skipped), entities attached."""
        if not ids:
            return []
        rows: dict[int, dict[str, Any]] = {}
        for chunk_start in range(0, len(ids), 500):
            chunk = [int(i) for i in ids[chunk_start:chunk_start + 500]]
            marks = ",".join("?" * len(chunk))
            for row in self.db.query(f"SELECT {FACT_COLUMNS} FROM facts WHERE fact_id IN ({marks})", chunk):
                rows[row["fact_id"]] = row
        names = self.entity_names_for(list(rows))
        out = []
        for fid in ids:
            row = rows.get(int(fid))
            if row is not None:
                out.append(_public(row, names.get(row["fact_id"], [])))
        return out

    def find_by_content(self, content: str) -> int | None:
        """The id of the fact whose content is exactly ``content`` (after stripping)."""
        return self.db.scalar("SELECT fact_id FROM facts WHERE content = ?", ((content or "").strip(),))

    def add_fact(self, content: str, category: str | None = "general", tags: str | None = "", *,
                 entities: Iterable[str] | None = None) -> dict[str, Any]:
        """Store a fact; an identical content returns the existing id with ``status: exists``.

        Entities are extracted from the text (plus any given explicitly), linked,
        and the fact's vector is encoded in the same transaction.
        """
        content = (content or "").strip()
        if not content:
            raise FactStoreError("content must not be empty")
        category = (category or "general").strip() or "general"
        tags = _normalize_tags(tags)
        check_fact_text(content, tags)
        with self._lock, self.db.write():
            existing = self.find_by_content(content)
            if existing is not None:
                return {"fact_id": int(existing), "status": "exists"}
            self.db.execute(
                "INSERT INTO facts (content, category, tags, trust_score, cjk) VALUES (?, ?, ?, ?, ?)",
                (content, category, tags, self.default_trust, _index_text(content, tags)),
            )
            fact_id = int(self.db.conn.last_insert_rowid())
            self._link_and_encode(fact_id, content, entities)
            self._touched()
        return {"fact_id": fact_id, "status": "added"}

    def update_fact(self, fact_id: int, *, content: str | None = None, category: str | None = None,
                    tags: str | None = None, trust_delta: float | None = None) -> bool:
        """Partially update a fact; False when the id does not exist.

        A content change relinks entities and re-encodes the vector; a content
        equal to another fact's raises :class:`FactStoreError`.
        """
        fact_id = int(fact_id)
        with self._lock, self.db.write():
            row = self.db.query_one("SELECT content, tags, trust_score FROM facts WHERE fact_id = ?",
                                    (fact_id,))
            if row is None:
                return False
            new_content = row["content"] if content is None else content.strip()
            if not new_content:
                raise FactStoreError("content must not be empty")
            if new_content != row["content"]:
                other = self.find_by_content(new_content)
                if other is not None and int(other) != fact_id:
                    raise FactStoreError(f"another fact (#{other}) already has this content")
            new_tags = row["tags"] if tags is None else _normalize_tags(tags)
            if new_content != row["content"] or new_tags != row["tags"]:
                check_fact_text(new_content, new_tags)
            sets = ["updated_at = CURRENT_TIMESTAMP"]
            params: list[Any] = []
            if new_content != row["content"] or new_tags != row["tags"]:
                sets += ["content = ?", "tags = ?", "cjk = ?"]
                params += [new_content, new_tags, _index_text(new_content, new_tags)]
            if category is not None and category.strip():
                sets.append("category = ?")
                params.append(category.strip())
            if trust_delta is not None:
                sets.append("trust_score = ?")
                params.append(trust.adjust(row["trust_score"], float(trust_delta)))
            self.db.execute(f"UPDATE facts SET {', '.join(sets)} WHERE fact_id = ?", (*params, fact_id))
            if new_content != row["content"]:
                self.db.execute("DELETE FROM fact_entities WHERE fact_id = ?", (fact_id,))
                self._link_and_encode(fact_id, new_content, None)
            self._touched()
        return True

    def remove_fact(self, fact_id: int) -> bool:
        """Delete a fact and its entity links (entities are kept); False when absent."""
        with self._lock, self.db.write():
            self.db.execute("DELETE FROM fact_entities WHERE fact_id = ?", (int(fact_id),))
            self.db.execute("DELETE FROM facts WHERE fact_id = ?", (int(fact_id),))
            removed = self.db.conn.changes() > 0
            self._touched()
        return removed

    def list_facts(self, category: str | None = None, min_trust: float = 0.0,
                   limit: int = 10) -> list[dict[str, Any]]:
        """Facts with trust >= ``min_trust`` (optionally one category), highest trust first."""
        sql = "SELECT fact_id FROM facts WHERE trust_score >= ?"
        params: list[Any] = [trust.sql_threshold(min_trust)]
        if category:
            sql += " AND category = ?"
            params.append(category)
        sql += " ORDER BY trust_score DESC, updated_at DESC, fact_id DESC LIMIT ?"
        params.append(max(0, int(limit)))
        return self.facts_by_ids([r["fact_id"] for r in self.db.query(sql, params)])

    def record_feedback(self, fact_id: int, action: str) -> dict[str, Any]:
        """Apply ``helpful`` (+0.05, helpful_count+1) or ``unhelpful`` (−0.10) to a fact.

        Returns ``{fact_id, old_trust, new_trust, helpful_count}``; raises
        :class:`FactNotFound` for an unknown id.
        """
        delta = trust.feedback_delta(action)
        with self._lock, self.db.write():
            row = self.db.query_one("SELECT trust_score, helpful_count FROM facts WHERE fact_id = ?",
                                    (int(fact_id),))
            if row is None:
                raise FactNotFound(f"fact_id {fact_id} not found")
            old = trust.clamp(row["trust_score"])
            new = trust.adjust(old, delta)
            helpful = int(row["helpful_count"]) + (1 if action == "helpful" else 0)
            self.db.execute(
                "UPDATE facts SET trust_score = ?, helpful_count = ?, updated_at = CURRENT_TIMESTAMP "
                "WHERE fact_id = ?", (new, helpful, int(fact_id)))
            self._touched()
        return {"fact_id": int(fact_id), "old_trust": old, "new_trust": new, "helpful_count": helpful}

    def mark_retrieved(self, fact_ids: Sequence[int]) -> None:
        """Increment ``retrieval_count`` of facts that were returned to a caller."""
        ids = [int(i) for i in fact_ids]
        if not ids or self.db.readonly:
            return
        with self._lock, self.db.write():
            self.db.executemany("UPDATE facts SET retrieval_count = retrieval_count + 1 WHERE fact_id = ?",
                                [(i,) for i in ids])
            self._touched(vectors=False)

    def import_hermes(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Copy the facts of a Hermes holographic ``memory_store.db`` into this store.

        The file is opened read-only. Fact ids and entity ids are kept, so ids quoted
        in old sessions still name the same facts; content, category, tags, trust,
        counters and timestamps are kept too. Holographic's entity links are kept
        and our own extraction adds to them; vectors are re-encoded. A fact whose
        content is already stored is skipped; one whose id is taken by another fact
        gets a new id (counted in ``renumbered``; never the case on an empty store).
        A fact failing the threat scan is not imported (then ``blocked`` counts them and
        ``blocked_reasons`` names the file and the fact id of each).
        Returns ``{"imported", "skipped", "renumbered", "entities"[, "blocked", "blocked_reasons"]}``.
        """
        facts, entities, links = _read_holographic(Path(path))
        imported = skipped = renumbered = entities_kept = 0
        with self._lock, self.db.write():
            entity_map: dict[int, int] = {}
            for row in entities:
                entity_id, kept = self._import_entity(row)
                entity_map[int(row["entity_id"])] = entity_id
                entities_kept += kept
            blocked: list[str] = []
            for row in facts:
                content = str(row["content"] or "").strip()
                if not content or self.find_by_content(content) is not None:
                    skipped += 1
                    continue
                wanted = row["fact_id"]
                free = wanted is not None and self.db.scalar(
                    "SELECT 1 FROM facts WHERE fact_id = ?", (int(wanted),)) is None
                tags = _normalize_tags(row["tags"])
                try:
                    check_fact_text(content, tags)
                except FactBlocked as exc:
                    blocked.append(f"{path}: fact {row['fact_id']}: {exc}")
                    continue
                self.db.execute(
                    "INSERT INTO facts (fact_id, content, category, tags, trust_score, retrieval_count, "
                    "helpful_count, created_at, updated_at, cjk) VALUES (?, ?, ?, ?, ?, ?, ?, "
                    "coalesce(?, CURRENT_TIMESTAMP), coalesce(?, CURRENT_TIMESTAMP), ?)",
                    (int(wanted) if free else None, content, row["category"] or "general", tags,
                     trust.clamp(self.default_trust if row["trust_score"] is None else float(row["trust_score"])),
                     int(row["retrieval_count"] or 0), int(row["helpful_count"] or 0),
                     None if row["created_at"] is None else str(row["created_at"]),
                     None if row["updated_at"] is None else str(row["updated_at"]), _index_text(content, tags)))
                fact_id = int(self.db.conn.last_insert_rowid())
                renumbered += 0 if free or wanted is None else 1
                linked = [entity_map[e] for e in links.get(int(wanted), []) if e in entity_map] \
                    if wanted is not None else []
                self._link_and_encode(fact_id, content, None, first=linked)
                imported += 1
            self._touched()
        counts = {"imported": imported, "skipped": skipped, "renumbered": renumbered, "entities": entities_kept}
        if blocked:
            counts.update(blocked=len(blocked), blocked_reasons=blocked)
        return counts

    def _import_entity(self, row: dict[str, Any]) -> tuple[int, int]:
        """Our id for a holographic entity row, keeping its id when free: ``(entity_id, 1 if kept)``."""
        name = " ".join(str(row["name"] or "").split())
        existing = self.resolve_entity(name) if name else None
        if existing is not None:
            return int(existing["entity_id"]), 0
        wanted = int(row["entity_id"])
        free = self.db.scalar("SELECT 1 FROM entities WHERE entity_id = ?", (wanted,)) is None
        self.db.execute("INSERT INTO entities (entity_id, name, name_key, entity_type) VALUES (?, ?, ?, ?)",
                        (wanted if free else None, name or f"entity {wanted}", _key(name) or f"entity {wanted}",
                         row["entity_type"] or "unknown"))
        entity_id = int(self.db.conn.last_insert_rowid())
        for alias in str(row["aliases"] or "").split(","):
            if alias.strip():
                self._add_alias(entity_id, alias)
        return entity_id, 1 if free else 0

    # ------------------------------------------------------------------ entities

    def resolve_entity(self, name: str) -> dict[str, Any] | None:
        """The entity called ``name`` or having it as an alias (case-insensitive), or None."""
        key = _key(name)
        if not key:
            return None
        row = self.db.query_one("SELECT entity_id, name, entity_type, aliases FROM entities "
                                "WHERE name_key = ?", (key,))
        if row is None:
            row = self.db.query_one(
                "SELECT e.entity_id, e.name, e.entity_type, e.aliases FROM entity_aliases a "
                "JOIN entities e ON e.entity_id = a.entity_id WHERE a.alias_key = ?", (key,))
        if row is None:
            return None
        row["aliases"] = [a for a in row["aliases"].split(",") if a]
        return row

    def entity_names_for(self, fact_ids: Sequence[int]) -> dict[int, list[str]]:
        """``fact_id -> [entity names in order of mention]``."""
        out: dict[int, list[str]] = {}
        ids = [int(i) for i in fact_ids]
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.db.query(
                    f"SELECT fe.fact_id, e.name FROM fact_entities fe JOIN entities e "
                    f"ON e.entity_id = fe.entity_id WHERE fe.fact_id IN ({marks}) "
                    f"ORDER BY fe.fact_id, fe.position", chunk):
                out.setdefault(row["fact_id"], []).append(row["name"])
        return out

    def entity_facts(self, entity_id: int) -> list[dict[str, Any]]:
        """``[{fact_id, position}]`` linked to an entity."""
        return self.db.query("SELECT fact_id, position FROM fact_entities WHERE entity_id = ?",
                             (int(entity_id),))

    def add_alias(self, entity: str, alias: str) -> bool:
        """Record ``alias`` for the entity ``entity`` (created if needed); False if taken."""
        with self._lock, self.db.write():
            entity_id = self._entity_id(entity, create=True)
            added = self._add_alias(entity_id, alias)
            if added:
                self._touched()
        return added

    def list_entities(self, limit: int = 100) -> list[dict[str, Any]]:
        """Entities with their aliases and fact counts, most linked first."""
        rows = self.db.query(
            "SELECT e.entity_id, e.name, e.entity_type, e.aliases, count(fe.fact_id) AS fact_count "
            "FROM entities e LEFT JOIN fact_entities fe ON fe.entity_id = e.entity_id "
            "GROUP BY e.entity_id ORDER BY fact_count DESC, e.name LIMIT ?", (int(limit),))
        for row in rows:
            row["aliases"] = [a for a in row["aliases"].split(",") if a]
        return rows

    def _entity_id(self, name: str, *, create: bool) -> int | None:
        found = self.resolve_entity(name)
        if found is not None:
            return int(found["entity_id"])
        if not create:
            return None
        name = " ".join(name.split())
        self.db.execute("INSERT INTO entities (name, name_key) VALUES (?, ?)", (name, _key(name)))
        return int(self.db.conn.last_insert_rowid())

    def _add_alias(self, entity_id: int, alias: str) -> bool:
        alias = " ".join((alias or "").split())
        key = _key(alias)
        if not key:
            return False
        if self.db.scalar("SELECT 1 FROM entities WHERE name_key = ?", (key,)) is not None:
            return False
        if self.db.scalar("SELECT 1 FROM entity_aliases WHERE alias_key = ?", (key,)) is not None:
            return False
        self.db.execute("INSERT INTO entity_aliases (alias_key, alias, entity_id) VALUES (?, ?, ?)",
                        (key, alias, entity_id))
        aliases = [r["alias"] for r in self.db.query(
            "SELECT alias FROM entity_aliases WHERE entity_id = ? ORDER BY rowid", (entity_id,))]
        self.db.execute("UPDATE entities SET aliases = ? WHERE entity_id = ?",
                        (",".join(a.replace(",", " ") for a in aliases), entity_id))
        return True

    def _link_and_encode(self, fact_id: int, content: str, explicit: Iterable[str] | None, *,
                         first: Iterable[int] = ()) -> None:
        found = extract_entities(content)
        links: list[int] = list(dict.fromkeys(first))  # links an import keeps, before extracted ones
        for item in found:
            entity_id = self._entity_id(item.name, create=True)
            for alias in item.aliases:
                self._add_alias(entity_id, alias)
            if entity_id not in links:
                links.append(entity_id)
        for name in explicit or ():
            if isinstance(name, str) and name.strip():
                entity_id = self._entity_id(name.strip(), create=True)
                if entity_id not in links:
                    links.append(entity_id)
        self.db.executemany(
            "INSERT OR IGNORE INTO fact_entities (fact_id, entity_id, position) VALUES (?, ?, ?)",
            [(fact_id, eid, pos) for pos, eid in enumerate(links)])
        names = self.entity_names_for([fact_id]).get(fact_id, [])
        vector = hrr.encode_fact(content, names, self.dim)
        self.db.execute("UPDATE facts SET hrr_vector = ? WHERE fact_id = ?", (hrr.to_blob(vector), fact_id))

    # ------------------------------------------------------------------ vectors

    def ensure_vectors(self) -> int:
        """Re-encode vectors whose dimension/encoding differs from the settings; return how many.

        The dimension and encoding version in force are recorded in
        ``store_meta``; changing ``hrr_dim`` re-encodes every fact instead of failing.
        """
        meta = {r["key"]: r["value"] for r in self.db.query(
            "SELECT key, value FROM store_meta WHERE key IN (?, ?)", (META_DIM, META_ENCODING))}
        current = meta.get(META_DIM) == str(self.dim) and meta.get(META_ENCODING) == hrr.ENCODING_VERSION
        missing = self.db.scalar("SELECT count(*) FROM facts WHERE hrr_vector IS NULL") or 0
        if (current and not missing) or self.db.readonly:
            return 0  # a read-only reader re-encodes in memory (see vector_index)
        done = 0
        with self._lock, self.db.write():
            where = "" if not current else " WHERE hrr_vector IS NULL"
            ids = [r["fact_id"] for r in self.db.query(f"SELECT fact_id FROM facts{where}")]
            for start in range(0, len(ids), REENCODE_BATCH):
                chunk = ids[start:start + REENCODE_BATCH]
                names = self.entity_names_for(chunk)
                marks = ",".join("?" * len(chunk))
                rows = self.db.query(f"SELECT fact_id, content FROM facts WHERE fact_id IN ({marks})", chunk)
                self.db.executemany("UPDATE facts SET hrr_vector = ? WHERE fact_id = ?", [
                    (hrr.to_blob(hrr.encode_fact(r["content"], names.get(r["fact_id"], []), self.dim)),
                     r["fact_id"]) for r in rows])
                done += len(rows)
            self.db.executemany("INSERT INTO store_meta (key, value) VALUES (?, ?) "
                                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                                [(META_DIM, str(self.dim)), (META_ENCODING, hrr.ENCODING_VERSION)])
            self._touched()
        return done

    def _decode_rows(self, rows: list[dict[str, Any]]) -> np.ndarray:
        """Angles of ``rows`` (fact_id, content, hrr_vector); stale blobs re-encoded in memory."""
        angles = np.zeros((len(rows), self.dim), dtype=np.float32)
        stale = []
        for i, row in enumerate(rows):
            try:
                angles[i] = hrr.from_blob(row["hrr_vector"] or b"", self.dim)
            except hrr.VectorFormatError:
                stale.append(i)
        if stale:
            names = self.entity_names_for([rows[i]["fact_id"] for i in stale])
            for i in stale:
                angles[i] = hrr.encode_fact(rows[i]["content"], names.get(rows[i]["fact_id"], []), self.dim)
        return angles

    def vector_index(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(fact_ids, complex matrix)`` of every fact vector, cached; None when too large.

        The cache is dropped after this store's writes and whenever another
        connection commits (``PRAGMA data_version``). Above
        :data:`CACHE_BUDGET` values (facts × dim) nothing is cached and
        similarities are computed by streaming the table in chunks.
        """
        token = (self.db.scalar("PRAGMA data_version"), self._vector_version)
        cache = self._cache
        if cache is not None and cache[0] == token:
            return cache[1], cache[2]
        if (self.db.scalar("SELECT count(*) FROM facts") or 0) * self.dim > CACHE_BUDGET:
            self._cache = None
            return None
        rows = self.db.query("SELECT fact_id, content, hrr_vector FROM facts ORDER BY fact_id")
        ids = np.array([r["fact_id"] for r in rows], dtype=np.int64)
        matrix = hrr.to_complex(self._decode_rows(rows))
        self._cache = (token, ids, matrix)
        return ids, matrix

    def similarities(self, probe: np.ndarray) -> dict[int, float]:
        """``fact_id -> similarity(fact vector, probe)`` for every fact."""
        index = self.vector_index()
        if index is not None:
            ids, matrix = index
            sims = hrr.similarities(matrix, probe)
            return {int(f): float(v) for f, v in zip(ids, sims, strict=True)}
        out: dict[int, float] = {}
        last = -1
        while True:
            rows = self.db.query("SELECT fact_id, content, hrr_vector FROM facts WHERE fact_id > ? "
                                 "ORDER BY fact_id LIMIT ?", (last, SCAN_CHUNK))
            if not rows:
                return out
            sims = hrr.similarities(hrr.to_complex(self._decode_rows(rows)), probe)
            out.update({int(r["fact_id"]): float(v) for r, v in zip(rows, sims, strict=True)})
            last = rows[-1]["fact_id"]

    def presence(self, entity_name: str) -> dict[int, float]:
        """``fact_id -> similarity(fact, bind(entity, ROLE_ENTITY))`` for every fact."""
        return self.similarities(hrr.entity_key(entity_name, self.dim))

    def text_affinity(self, text: str) -> dict[int, float]:
        """``fact_id -> similarity(fact, bind(encode_text(text), ROLE_CONTENT))`` for every fact."""
        return self.similarities(hrr.query_key(text, self.dim))

    def _touched(self, *, vectors: bool = True) -> None:
        """Record an own write; ``vectors=False`` for counter-only updates that keep the cache."""
        if vectors:
            self._vector_version += 1
            self._cache = None

    # ------------------------------------------------------------------ retrieval

    def search(self, query: str, *, category: str | None = None, min_trust: float | None = None,
               limit: int = 10, record: bool = True, min_coverage: float = 0.0) -> list[dict[str, Any]]:
        """Ranked facts for a text query (FTS + word coverage + entity links + HRR) × trust.

        Facts below ``min_trust`` (default: the store's threshold, 0.3) are hidden;
        ``record`` counts the returned facts in ``retrieval_count``.
        """
        from hermes_store.facts.retrieval import search

        return search(self, query, category=category, min_trust=min_trust, limit=limit, record=record,
                      min_coverage=min_coverage)

    def probe(self, entity: str, *, category: str | None = None, limit: int = 10,
              min_trust: float = 0.0, record: bool = True) -> list[dict[str, Any]]:
        """Every fact about ``entity`` (name or alias), best first."""
        from hermes_store.facts.retrieval import probe

        return probe(self, entity, category=category, limit=limit, min_trust=min_trust, record=record)

    def related(self, entity: str, *, category: str | None = None, limit: int = 10,
                min_trust: float = 0.0) -> list[dict[str, Any]]:
        """Facts connecting ``entity`` to other entities, then facts about those neighbours."""
        from hermes_store.facts.retrieval import related

        return related(self, entity, category=category, limit=limit, min_trust=min_trust)

    def reason(self, entities: Sequence[str], *, category: str | None = None, limit: int = 10,
               min_trust: float = 0.0) -> list[dict[str, Any]]:
        """Facts in which all ``entities`` occur together, then chains linking them."""
        from hermes_store.facts.retrieval import reason

        return reason(self, entities, category=category, limit=limit, min_trust=min_trust)

    def contradict(self, *, category: str | None = None, limit: int = 10,
                   threshold: float = 0.5) -> list[dict[str, Any]]:
        """Pairs of facts with the same subject and relation but different values."""
        from hermes_store.facts.conflicts import contradict

        return contradict(self, category=category, limit=limit, threshold=threshold)


def _read_holographic(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, list[int]]]:
    """Facts, entities and ``fact_id -> [entity_id]`` links of a holographic ``memory_store.db``."""
    source = Database(path, readonly=True)
    try:
        if not source.table_exists("facts"):
            raise FactStoreError(f"{path}: no 'facts' table (not a Hermes holographic store)")
        columns = {r["name"] for r in source.query("PRAGMA table_info(facts)")}
        if "content" not in columns:
            raise FactStoreError(f"{path}: the facts table has no 'content' column")
        wanted = ["fact_id", "content", "category", "tags", "trust_score", "retrieval_count", "helpful_count",
                  "created_at", "updated_at"]
        select = ", ".join(c if c in columns else f"NULL AS {c}" for c in wanted)
        if "fact_id" in columns:
            facts = source.query(f"SELECT {select} FROM facts ORDER BY fact_id")
        else:
            facts = source.query(f"SELECT {select} FROM facts ORDER BY rowid")
        entities: list[dict[str, Any]] = []
        links: dict[int, list[int]] = {}
        if source.table_exists("entities") and source.table_exists("fact_entities"):
            ecols = {r["name"] for r in source.query("PRAGMA table_info(entities)")}
            if {"entity_id", "name"} <= ecols:
                select = ", ".join(c if c in ecols else f"NULL AS {c}"
                                   for c in ("entity_id", "name", "entity_type", "aliases"))
                entities = source.query(f"SELECT {select} FROM entities ORDER BY entity_id")
                for link in source.query("SELECT fact_id, entity_id FROM fact_entities ORDER BY rowid"):
                    if link["fact_id"] is not None and link["entity_id"] is not None:
                        links.setdefault(int(link["fact_id"]), []).append(int(link["entity_id"]))
    finally:
        source.close()
    return facts, entities, links


def _key(name: str) -> str:
    """The case-folded, NFKC, single-spaced lookup key of an entity name or alias."""
    return " ".join(unicodedata.normalize("NFKC", name or "").casefold().split())


def _normalize_tags(tags: Any) -> str:
    if tags is None:
        return ""
    if isinstance(tags, (list, tuple)):
        parts = [str(t).strip() for t in tags]
    else:
        parts = [t.strip() for t in str(tags).split(",")]
    return ",".join(p for p in parts if p)


def _public(row: dict[str, Any], entity_names: list[str]) -> dict[str, Any]:
    out = dict(row)
    out["trust_score"] = trust.clamp(out["trust_score"])
    out["entities"] = list(entity_names)
    return out
