"""``FactRows``: the read side of the fact store, shared by retrieval, conflicts and the store.

Holds the settings (dimension, trust threshold, decay, HRR weight), the row readers
(facts by id, entities, links) and the in-memory vector index. Opening never writes:
vectors whose dimension or encoding is stale are re-encoded in memory when read, and
written back by :meth:`hermes_store.facts.store.FactStore.ensure_vectors` (on the first
write or when called). :mod:`~hermes_store.facts.retrieval` and
:mod:`~hermes_store.facts.conflicts` take a ``FactRows``; ``FactStore`` extends it with
the writes and the query methods, so the modules form a chain
``store -> retrieval/conflicts -> rows -> storage``.
"""

from __future__ import annotations

import logging
import os
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from hermes_store.db import Database, DatabaseError
from hermes_store.facts import hrr, trust
from hermes_store.facts.config import FactConfig
from hermes_store.facts.storage import AUTHOR_FIELDS, FactAuthor, FactStorage, open_fact_storage
from hermes_store.home import Home
from hermes_store.pgdb import PgDatabase
from hermes_store.redaction import redactor_for
from hermes_store.tokens import index_folded
from hermes_store.tooling import storable_text

logger = logging.getLogger(__name__)
RETRIEVAL_PATIENCE = 0.5  # seconds a search waits to record retrieval counts behind a writer

META_DIM = "fact_hrr_dim"
META_ENCODING = "fact_hrr_encoding"
CACHE_BUDGET = 16_000_000  # facts × dim kept in memory as complex64 (~128 MB); larger stores stream
SCAN_CHUNK = 2000


class FactStoreError(ValueError):
    """A fact-store request that cannot be carried out (message meant for the caller)."""


class FactNotFound(FactStoreError, KeyError):
    """No fact has the given id."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "fact not found"


class FactRows:
    """Settings, row readers and the vector index over one database.

    ``db`` may be an open Database (not closed by :meth:`close`), a
    :class:`~hermes_store.home.Home` or a path to a database file (opened and
    owned here); ``owns_db=True`` hands an open Database over to be closed here.
    Settings come from ``config`` or the keyword overrides; with neither ``config``
    nor ``hrr_dim`` the dimension recorded in ``store_meta`` is kept, so a reader
    never re-encodes what the configured provider wrote.
    """

    def __init__(self, db: Database | Home | str | os.PathLike[str], *,
                 config: FactConfig | None = None, default_trust: float | None = None,
                 min_trust: float | None = None, hrr_dim: int | None = None,
                 half_life_days: float | None = None, hrr_weight: float | None = None,
                 owns_db: bool = False) -> None:
        if isinstance(db, (Database, PgDatabase)):
            self.db, self._owns_db = db, owns_db
        elif isinstance(db, Home):
            self.db, self._owns_db = db.open_db(), True
        else:
            self.db, self._owns_db = Database(Path(db)), True
        self.storage: FactStorage = open_fact_storage(self.db)
        cfg = config or FactConfig()
        self.default_trust = trust.clamp(cfg.default_trust if default_trust is None else default_trust)
        self.min_trust = float(cfg.min_trust_threshold if min_trust is None else min_trust)
        if hrr_dim is None and config is None:
            # a bare FactStore(db) (e.g. the recall layer) keeps the dimension already in use
            recorded = self.storage.get_meta([META_DIM]).get(META_DIM)
            hrr_dim = int(recorded) if recorded and str(recorded).isdigit() else cfg.hrr_dim
        self.dim = int(cfg.hrr_dim if hrr_dim is None else hrr_dim)
        if self.dim < 16:
            raise FactStoreError(f"hrr_dim must be at least 16, got {self.dim}")
        self.half_life_days = float(cfg.half_life_days if half_life_days is None else half_life_days)
        self.hrr_weight = float(cfg.hrr_weight if hrr_weight is None else hrr_weight)
        self._lock = threading.RLock()
        self._vector_version = 0
        self._cache: tuple[Any, np.ndarray, np.ndarray] | None = None

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the database if this store opened it."""
        self._cache = None
        if self._owns_db:
            self.db.close()

    def __enter__(self) -> FactRows:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ rows

    def count(self) -> int:
        """Number of stored facts."""
        return self.storage.count_facts()

    def get_fact(self, fact_id: int) -> dict[str, Any] | None:
        """One fact as a dict (with its entity names), or None."""
        rows = self.facts_by_ids([int(fact_id)])
        return rows[0] if rows else None

    def facts_by_ids(self, ids: Sequence[int]) -> list[dict[str, Any]]:
        """Facts for ``ids`` in the given order (missing ids skipped), entities attached."""
        if not ids:
            return []
        rows = self.storage.fact_rows(ids)
        names = self.entity_names_for(list(rows))
        writers = self.storage.fact_writers(list(rows))
        return [public_fact(rows[int(fid)], names.get(int(fid), []), writers.get(int(fid)))
                for fid in ids if int(fid) in rows]

    def _redact(self, text: str | None) -> str | None:
        """``text`` with its secrets replaced (the store's redactor): every stored text passes
        here, and so does every text compared with a stored one."""
        return redactor_for(self.storage.db).redact(None if text is None else storable_text(text))

    def find_by_content(self, content: str) -> int | None:
        """The id of the fact whose content is exactly ``content`` (after stripping), compared as
        stored: a text holding a secret finds the fact that holds its marker."""
        return self.storage.fact_id_by_content(self._redact((content or "").strip()) or "")

    def facts_containing(self, category: str, fragment: str, limit: int) -> list[int]:
        """Ids of up to ``limit`` facts of ``category`` whose content holds ``fragment`` (as stored)."""
        return self.storage.facts_containing(category, self._redact(fragment) or "", limit)

    def list_facts(self, category: str | None = None, min_trust: float = 0.0,
                   limit: int = 10) -> list[dict[str, Any]]:
        """Facts with trust >= ``min_trust`` (optionally one category), highest trust first."""
        return self.facts_by_ids(self.storage.top_fact_ids(min_trust=min_trust, category=category,
                                                           limit=limit))

    def mark_retrieved(self, fact_ids: Sequence[int]) -> None:
        """Increment ``retrieval_count`` of facts that were returned to a caller.

        Bookkeeping of a read: when another process holds the write lock it waits at most
        ``RETRIEVAL_PATIENCE`` seconds and is then skipped (logged), so a search never fails
        or stalls behind a writer (a writer that never commits made ``recall`` report its
        facts as "could not be searched").
        """
        ids = [int(i) for i in fact_ids]
        if not ids or self.storage.readonly:
            return
        with self._lock:
            try:
                with self.storage.lock_patience(RETRIEVAL_PATIENCE), self.storage.transaction():
                    self.storage.increment_retrievals(ids)
            except (DatabaseError, apsw.BusyError) as exc:
                logger.info("retrieval counts not recorded (database busy): %s", exc)

    # ------------------------------------------------------------------ entities

    def resolve_entity(self, name: str) -> dict[str, Any] | None:
        """The entity called ``name`` or having it as an alias (case-insensitive), or None."""
        for key in entity_keys(name):
            found = self.storage.entity_by_key(key)
            if found is not None:
                return found
        return None

    def entity_names_for(self, fact_ids: Sequence[int]) -> dict[int, list[str]]:
        """``fact_id -> [entity names in order of mention]``."""
        return self.storage.entity_names_for(fact_ids)

    def entity_facts(self, entity_id: int) -> list[dict[str, Any]]:
        """``[{fact_id, position}]`` linked to an entity."""
        return self.storage.entity_facts(entity_id)

    def list_entities(self, limit: int = 100) -> list[dict[str, Any]]:
        """Entities with their aliases and fact counts, most linked first."""
        return self.storage.list_entities(limit)

    # ------------------------------------------------------------------ vectors

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
        connection commits (the storage's change token). Above
        :data:`CACHE_BUDGET` values (facts × dim) nothing is cached and
        similarities are computed by streaming the table in chunks.
        """
        token = (self.storage.change_token(), self._vector_version)
        cache = self._cache
        if cache is not None and cache[0] == token:
            return cache[1], cache[2]
        if self.storage.count_facts() * self.dim > CACHE_BUDGET:
            self._cache = None
            return None
        rows = self.storage.vectors()
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
        for rows in self.storage.iter_vectors(SCAN_CHUNK):
            sims = hrr.similarities(hrr.to_complex(self._decode_rows(rows)), probe)
            out.update({int(r["fact_id"]): float(v) for r, v in zip(rows, sims, strict=True)})
        return out

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


def entity_key(name: str) -> str:
    """The lookup key of an entity name or alias: NFKC, case-folded, each word folded as the
    full-text index folds it (:func:`~hermes_store.tokens.index_folded`: ``İstanbul`` ->
    ``istanbul``), single-spaced, so a name typed plainly finds what ``facts search`` finds.
    Keys written before (:func:`legacy_entity_key`) are still looked up (:func:`entity_keys`)."""
    legacy = legacy_entity_key(name)
    return " ".join(index_folded(legacy).split()) or legacy


def legacy_entity_key(name: str) -> str:
    """The key entities and aliases were stored under before :func:`entity_key` folded
    diacritics (case-folded, NFKC, single-spaced: ``İstanbul`` -> ``i̇stanbul``)."""
    return " ".join(unicodedata.normalize("NFKC", name or "").casefold().split())


def entity_keys(name: str) -> list[str]:
    """The keys to look ``name`` up by: its key as written before (the exact spelling, in a
    store that holds it), then :func:`entity_key`; empty for a blank name."""
    return [key for key in dict.fromkeys((legacy_entity_key(name), entity_key(name))) if key]


def normalize_tags(tags: Any) -> str:
    """Tags as one comma-separated string (a list, or a comma string; blanks dropped)."""
    if tags is None:
        return ""
    if isinstance(tags, (list, tuple)):
        parts = [str(t).strip() for t in tags]
    else:
        parts = [t.strip() for t in str(tags).split(",")]
    return ",".join(p for p in parts if p)


def public_fact(row: dict[str, Any], entity_names: list[str], written_by: str | None = None) -> dict[str, Any]:
    """A fact row as returned to callers: trust clamped, entity names attached, the author
    (``author_id``/``author_name``/``author_is_bot``, only when the turn that stored it named
    one) and on a shared store ``written_by``: the ``host:home`` that wrote it."""
    out = dict(row)
    author = FactAuthor.from_fields({key: out.pop(key, None) for key in AUTHOR_FIELDS})
    if author is not None:
        out.update(author.fields())
    out["trust_score"] = trust.clamp(out["trust_score"])
    out["entities"] = list(entity_names)
    if written_by:
        out["written_by"] = written_by
    return out
