"""The message embeddings of a store and this machine's cache files of them (both engines).

The rows live where the store's engine keeps them (:mod:`.storage_vectors_sql`: on SQLite
``session_vectors.db``, an APSW file beside the store's file; on PostgreSQL tables of the
shared store, so every home on the server searches them): one float32 vector per embedded
message and model, keyed by the message's row id and the model that made it.

A search reads a cache file per model beside the store's file (in the home for a server:
``session_vectors.db.<hash>.cache``, a memory-mapped
:class:`~hermes_store.sessions.vector_index.VectorMatrix`, searched by
:func:`~hermes_store.sessions.vector_index.search`), so the first query of a process maps the
file instead of reading every vector. Freshness: ``put`` appends its message ids to
``vector_log`` in the same transaction; a search reads the log rows after the last one the file
covers and scores those vectors exactly (the *delta*); past ``COMPACT_ROWS`` of them it rewrites
the file. ``drop_missing`` and ``forget`` bump ``vector_meta.epoch`` and delete the cache files
(a forgotten vector must not stay in one); a file of another epoch, truncated or failing its
checks is rebuilt from the rows (another machine's removal on a shared server: by the epoch).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_store.engines import load, storage_registry
from hermes_store.sessions.embeddings import numpy_module
from hermes_store.sessions.storage_vectors_sql import (
    VECTORS_FILENAME,
    SqliteVectorRows,
    SqlVectorRows,
)
from hermes_store.sessions.vector_index import VectorMatrix, search

log = logging.getLogger(__name__)
#: Delta rows (vectors written after the cache file) past which a search rewrites the file.
COMPACT_ROWS = 50_000
#: Vectors one :meth:`VectorStore.nearest_in` call reads at most (a bound on its time and memory).
NEAREST_IN_ROWS = 20_000


@dataclass
class _Loaded:
    """One model's searchable state in this process: the cache file's matrix and the delta."""

    matrix: VectorMatrix | None
    epoch: int
    seen_n: int  # last log row read
    delta: dict[int, Any]  # message id -> vector, written after the matrix
    arrays: tuple[Any, Any] | None = None  # the delta as (ids, matrix), made when first searched

    def delta_arrays(self) -> tuple[Any, Any]:
        """The delta as an id array and a float32 matrix (kept until the delta changes)."""
        if self.arrays is None:
            np = numpy_module()
            ids = np.fromiter(self.delta, dtype=np.int64, count=len(self.delta))
            self.arrays = (ids, np.vstack(list(self.delta.values())) if self.delta else None)
        return self.arrays


class VectorStore:
    """The message embeddings of one store: their rows (:mod:`.storage_vectors_sql`, each engine's
    own place) and this machine's cache files of them, beside ``path``."""

    def __init__(self, path: Path, *, read_only: bool = False, rows: SqlVectorRows | None = None) -> None:
        self.path = Path(path)
        self.rows_store = rows if rows is not None else SqliteVectorRows(self.path, read_only=read_only)
        self._loaded: dict[str, _Loaded] = {}

    @classmethod
    def for_home(cls, home: Any) -> VectorStore:
        """The vector store of ``home``'s store (a :class:`~hermes_store.home.Home`), on its
        engine (``storages["vectors"]`` of :data:`hermes_store.engines.ENGINES`): a SQLite file
        beside the store's file, wherever the store is named, or the tables of the PostgreSQL
        store; the cache files beside the store's file (``Home.beside_store``: in this home for a
        server). Read-only for a read-only home (``mcp --read-only``)."""
        rows_class = load(storage_registry("vectors")[home.engine])
        return cls(home.beside_store(VECTORS_FILENAME), rows=rows_class.for_home(home))

    @property
    def read_only(self) -> bool:
        """Whether nothing is written (no schema, no cache file: matrices stay in memory)."""
        return bool(self.rows_store.read_only)

    def exists(self) -> bool:
        """Whether vectors can be here (False: the SQLite file was never written)."""
        return self.rows_store.exists()

    def cache_path(self, model: str) -> Path:
        """The cache file of ``model``'s vectors (of this store's: a server's name is in it)."""
        key = model if not self.rows_store.identity() else f"{self.rows_store.identity()}\n{model}"
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
        return self.path.with_name(f"{self.path.name}.{digest}.cache")

    def _drop_caches(self) -> None:
        """Forget the loaded matrices and delete every cache file of this vector file."""
        for loaded in self._loaded.values():
            if loaded.matrix is not None:
                loaded.matrix.close()
        self._loaded.clear()
        for cache in self.path.parent.glob(f"{self.path.name}.*.cache*"):  # and temporary files
            cache.unlink(missing_ok=True)

    def close(self) -> None:
        """Close the rows' connection (and the mapped cache files)."""
        for loaded in self._loaded.values():
            if loaded.matrix is not None:
                loaded.matrix.close()
        self._loaded.clear()
        self.rows_store.close()

    def damage(self) -> str | None:
        """None when the vector file of its own (SQLite's ``session_vectors.db``) is sound or
        there is none; else what is wrong, naming the file and what to do (it holds only
        embeddings: the store is not damaged)."""
        problem = self.rows_store.damage() if self.exists() else None
        if problem is None:
            return None
        return (f"{self.path}: the vector file is damaged ({problem}); it holds only the semantic "
                "extra's embeddings, not the store: move it away and run `hermes-store sessions embed` again")

    def states(self, model: str) -> dict[int, tuple[str, int, str | None]]:
        """``message_id -> (session_id, seq, text hash)`` of ``model``'s vectors: what each was
        made from, so an embed run can tell a vector gone stale (hash None: not recorded)."""
        return self.rows_store.states(model) if self.exists() else {}

    def model_name(self, name: str, legacy_names: tuple[str, ...] = ()) -> str:
        """The name this store's vectors of the model ``name`` are under. Vectors an older
        version stored under one of ``legacy_names`` (the model's path on the machine that
        embedded them) are renamed ``name`` when the store can be written (their cache files
        deleted), else read under the old name; ``name`` when there are none."""
        if not legacy_names or not self.exists() or self.has(name):
            return name
        for old in legacy_names:
            if old == name or not self.has(old):
                continue
            if self.read_only:
                return old
            moved = self.rows_store.rename_model(old, name)
            self._drop_caches()
            log.warning("%d vectors of %s are now stored under the model's name %s", moved, old, name)
            return name
        return name

    def copy_into(self, target: VectorStore, progress: Callable[[int], None] | None = None) -> int:
        """Copy the vectors here (each model's, digests kept) that ``target`` lacks into it: the
        store of a copy of this one with the same message ids (``hermes-store migrate``), a page
        per transaction, so a copy cut short resumes and one the target already took (a server
        adopting this file on open) is not written twice. Returns how many of these vectors
        ``target`` holds."""
        if not self.exists():
            return 0
        held = 0
        rows = self.rows_store
        for model in rows.models():
            for page in rows.full_pages(model):
                present = target.rows_store.positions(model, [row[0] for row in page])
                missing = [row for row in page if row[0] not in present]
                if missing:
                    target.rows_store.put(model, missing)
                held += len(page)
                if progress is not None:
                    progress(held)
        return held

    def put(self, model: str, rows: list[tuple[Any, ...]]) -> None:
        """Store ``(message_id, session_id, seq, vector[, text hash])`` rows of ``model`` in one
        transaction (a message's earlier vector replaced)."""
        self.rows_store.put(model, [(row[0], row[1], row[2], row[3].astype("float32").tobytes(),
                                     row[4] if len(row) > 4 else None) for row in rows])

    def drop_missing(self, existing: set[int], model: str) -> int:
        """Delete ``model``'s vectors of messages not in ``existing`` (gone from the store, or of
        a role no longer embedded); returns how many. Another model's are its own embed's to
        prune (a home on the same store may embed other roles with it)."""
        if not self.exists():
            return 0
        gone = [mid for mid in self.rows_store.message_ids(model) if mid not in existing]
        if gone:
            self.rows_store.drop(gone, model)
            self._drop_caches()
        return len(gone)

    def forget(self, message_ids: list[int], session_ids: list[str]) -> int:
        """Delete the vectors of these messages and of every message of these sessions, so
        nothing of them stays (on SQLite with ``secure_delete`` on and the file vacuumed:
        ``hermes-store forget``); the cache files go too; returns how many went."""
        if not self.exists() or not (message_ids or session_ids):
            return 0
        gone = self.rows_store.forget(message_ids, session_ids)
        self._drop_caches()
        return gone

    def count(self, model: str | None = None) -> int:
        """How many vectors (of ``model``, or of any)."""
        return self.rows_store.count(model) if self.exists() else 0

    def stored_bytes(self) -> int:
        """The bytes of every vector held, whichever engine holds them (0: none)."""
        return self.rows_store.stored_bytes() if self.exists() else 0

    def disk_bytes(self) -> int:
        """The bytes the vectors take where the engine keeps them, indexes included (0: none
        written); this machine's cache files are not counted."""
        return self.rows_store.disk_bytes() if self.exists() else 0

    def has(self, model: str) -> bool:
        """Whether the store holds any vector of ``model`` (one row read)."""
        return self.rows_store.has(model) if self.exists() else False

    def usable(self, model: str) -> bool:
        """Whether the store holds vectors of ``model`` that can be read (a damaged or
        unreadable file or table: False, logged, and closed: a search stays lexical)."""
        try:
            return self.has(model)
        except Exception as exc:  # noqa: BLE001 - either engine's error: the search stays lexical
            log.warning("the vectors of %s cannot be read, the search stays lexical: %s", self.path, exc)
            self.close()
            return False

    def rows(self, model: str) -> Any:
        """Every ``(message_id, session_id, seq, vector)`` of ``model`` by message id (the whole
        table read page by page: what a search did before the cache file;
        ``scripts/bench_vectors.py`` times it)."""
        np = numpy_module()
        for page in self.rows_store.pages(model, "message_id, session_id, seq, vec"):
            for r in page:
                yield int(r["message_id"]), r["session_id"], int(r["seq"]), np.frombuffer(r["vec"], dtype=np.float32)

    def _read_delta(self, model: str, loaded: _Loaded) -> None:
        """Add the vectors of ``model`` logged after ``loaded.seen_n`` to its delta (the log's
        head read first: every row up to it is committed)."""
        np = numpy_module()
        head = self.rows_store.head()
        for mid, blob in self.rows_store.logged(model, loaded.seen_n, head):
            loaded.delta[mid] = np.frombuffer(blob, dtype=np.float32)
            loaded.arrays = None
        loaded.seen_n = max(loaded.seen_n, head)

    def _build(self, model: str) -> VectorMatrix | None:
        """Read every vector of ``model`` into a matrix and write its cache file; the file,
        mapped, is returned (the in-memory matrix when it cannot be written). The epoch and the
        log's head are read first: a vector written meanwhile is read again as the delta."""
        np = numpy_module()
        epoch, last_n = self.rows_store.epoch(), self.rows_store.head()
        rows = self.rows_store.count(model)
        if not rows:
            return None
        ids = np.empty(rows, dtype=np.int64)
        vecs = None
        filled = 0
        for page in self.rows_store.pages(model):
            for r in page:
                if filled == rows:  # written after the count: the delta has it
                    break
                row = np.frombuffer(r["vec"], dtype=np.float32)
                if vecs is None:
                    vecs = np.empty((rows, len(row)), dtype=np.float32)
                if len(row) != vecs.shape[1]:
                    raise ValueError(f"vector of message {r['message_id']} has {len(row)} dims, not {vecs.shape[1]}")
                ids[filled], vecs[filled] = int(r["message_id"]), row
                filled += 1
        if vecs is None or not filled:
            return None
        matrix = VectorMatrix.from_rows(ids[:filled], vecs[:filled], epoch, last_n)
        if self.read_only:
            return matrix
        path = self.cache_path(model)
        try:
            matrix.write(path)
        except OSError:
            return matrix
        return VectorMatrix.open(path) or matrix

    def _state(self, model: str) -> _Loaded:
        """This process's state of ``model``, brought up to date with the vector file."""
        epoch, head = self.rows_store.epoch(), self.rows_store.head()
        loaded = self._loaded.get(model)
        if loaded is not None and loaded.epoch != epoch:
            if loaded.matrix is not None:
                loaded.matrix.close()
            loaded = None
        if loaded is None:
            matrix = VectorMatrix.open(self.cache_path(model))
            if matrix is not None and matrix.epoch != epoch:
                matrix.close()
                matrix = None
            if matrix is None:
                matrix = self._build(model)
            start = matrix.last_n if matrix is not None else 0
            loaded = _Loaded(matrix, epoch, start, {})
            self._loaded[model] = loaded
        if head > loaded.seen_n:
            self._read_delta(model, loaded)
        if len(loaded.delta) > COMPACT_ROWS:
            if loaded.matrix is not None:
                loaded.matrix.close()
            matrix = self._build(model)
            loaded = _Loaded(matrix, epoch, matrix.last_n if matrix is not None else 0, {})
            self._loaded[model] = loaded
            self._read_delta(model, loaded)
        return loaded

    def nearest(self, model: str, query: Any, k: int, **tuning: int) -> list[tuple[int, str, int, float]]:
        """The ``k`` messages most similar to the unit vector ``query``:
        ``(message_id, session_id, seq, cosine)``, best first. ``tuning``: ``exact_limit`` and
        ``candidates`` of :func:`~hermes_store.sessions.vector_index.search`."""
        if not self.exists():
            return []
        loaded = self._state(model)
        delta_ids, delta_vecs = loaded.delta_arrays()
        found = search(loaded.matrix, delta_ids, delta_vecs, query, k, **tuning)
        if not found:
            return []
        where = self.rows_store.positions(model, [mid for mid, _score in found])
        return [(mid, *where[mid], score) for mid, score in found if mid in where]

    def nearest_in(self, model: str, session_ids: list[str], query: Any, k: int
                   ) -> dict[str, list[tuple[int, str, int, float]]]:
        """Per session of ``session_ids``, its ``k`` messages most similar to the unit vector
        ``query`` (``(message_id, session_id, seq, cosine)``, best first), scored exactly over
        that session's vectors (at most :data:`NEAREST_IN_ROWS` read in all)."""
        if not self.exists() or not session_ids or k <= 0:
            return {}
        np = numpy_module()
        ids = list(dict.fromkeys(session_ids))
        size = 4 * int(query.shape[0])  # a damaged row of another size is left out, not fatal
        rows = [row for row in self.rows_store.in_sessions(model, ids, NEAREST_IN_ROWS)
                if isinstance(row[3], bytes | memoryview) and len(row[3]) == size]
        if not rows:
            return {}
        scores = np.vstack([np.frombuffer(blob, dtype=np.float32) for *_rest, blob in rows]) @ query
        out: dict[str, list[tuple[int, str, int, float]]] = {}
        for at in np.argsort(-scores, kind="stable"):
            mid, sid, seq, _blob = rows[int(at)]
            best = out.setdefault(sid, [])
            if len(best) < k:
                best.append((int(mid), sid, int(seq), float(scores[int(at)])))
        return out
