"""The vector file of a home: message embeddings beside the session index (both engines).

``session_vectors.db`` is an APSW SQLite file next to ``hermes_store.db`` (a PostgreSQL store
keeps its vectors there too): one float32 BLOB per embedded message, keyed by the message's
row id and tagged with the model that made it. The only module with the vector SQL.

A search reads a cache file per model beside it (``session_vectors.db.<model hash>.cache``, a
memory-mapped :class:`~hermes_store.sessions.vector_index.VectorMatrix`, searched by
:func:`~hermes_store.sessions.vector_index.search`), so the first query of a process maps the
file instead of reading every BLOB. Freshness: ``put`` appends its message ids to
``vector_log`` in the same transaction; a search reads the log rows after the last one the file
covers and scores those vectors exactly (the *delta*); past ``COMPACT_ROWS`` of them it rewrites
the file. ``drop_missing`` and ``forget`` bump ``vector_meta.epoch`` and delete the cache files
(a forgotten vector must not stay in one); a file of another epoch, truncated or failing its
checks is rebuilt from the SQLite rows.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from hermes_store.db import read_only_connection
from hermes_store.sessions.embeddings import _numpy
from hermes_store.sessions.vector_index import VectorMatrix, search

log = logging.getLogger(__name__)
VECTORS_FILENAME = "session_vectors.db"
#: Delta rows (vectors written after the cache file) past which a search rewrites the file.
COMPACT_ROWS = 50_000
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors (message_id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL, model TEXT NOT NULL, vec BLOB NOT NULL);"
    "CREATE TABLE IF NOT EXISTS vector_log (n INTEGER PRIMARY KEY, model TEXT NOT NULL,"
    " message_id INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS vector_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS vectors_by_session ON vectors (session_id, model)"
)
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
            np = _numpy()
            ids = np.fromiter(self.delta, dtype=np.int64, count=len(self.delta))
            self.arrays = (ids, np.vstack(list(self.delta.values())) if self.delta else None)
        return self.arrays


class VectorStore:
    """The embeddings file of one home (created on first write)."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only  # nothing written: no schema, no WAL switch, no cache file
        self._conn: apsw.Connection | None = None
        self._loaded: dict[str, _Loaded] = {}

    @classmethod
    def for_home(cls, home: Any) -> VectorStore:
        """The vector store of ``home``'s store (a :class:`~hermes_store.home.Home`): beside the
        store's file, wherever the store is named (``Home.beside_store``); read-only for a
        read-only home (``mcp --read-only``)."""
        return cls(home.beside_store(VECTORS_FILENAME), read_only=bool(getattr(home, "read_only", False)))

    def exists(self) -> bool:
        """Whether any vectors were ever written."""
        return self.path.is_file()

    def _connection(self) -> apsw.Connection:
        """The open vector file: read-write (WAL, the schema made), or read-only when it cannot
        be written (a read-only file, folder or mount: searches still read it, writes fail)."""
        if self._conn is None and self.read_only:
            self._conn = read_only_connection(self.path)
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = apsw.Connection(str(self.path))
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(_SCHEMA)
            except (apsw.ReadOnlyError, apsw.CantOpenError):
                conn.close()
                conn = read_only_connection(self.path)
            self._conn = conn
        return self._conn

    def cache_path(self, model: str) -> Path:
        """The cache file of ``model``'s vectors (beside the vector file)."""
        digest = hashlib.sha256(model.encode("utf-8")).hexdigest()[:16]
        return self.path.with_name(f"{self.path.name}.{digest}.cache")

    def _drop_caches(self) -> None:
        """Forget the loaded matrices and delete every cache file of this vector file."""
        for loaded in self._loaded.values():
            if loaded.matrix is not None:
                loaded.matrix.close()
        self._loaded.clear()
        for cache in self.path.parent.glob(f"{self.path.name}.*.cache*"):  # and temporary files
            cache.unlink(missing_ok=True)

    def _bump_epoch(self) -> None:
        """Mark every cache file stale (inside the caller's transaction)."""
        self._connection().execute(
            "INSERT INTO vector_meta (name, value) VALUES ('epoch', 1)"
            " ON CONFLICT (name) DO UPDATE SET value = value + 1"
        )

    def close(self) -> None:
        """Close the file (and the mapped cache files)."""
        for loaded in self._loaded.values():
            if loaded.matrix is not None:
                loaded.matrix.close()
        self._loaded.clear()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def known(self, model: str) -> set[int]:
        """Ids of the messages with a vector of ``model``."""
        if not self.exists():
            return set()
        rows = self._connection().execute(
            "SELECT message_id FROM vectors WHERE model = ?", (model,)
        )
        return {int(row[0]) for row in rows}

    def put(self, model: str, rows: list[tuple[int, str, int, Any]]) -> None:
        """Store ``(message_id, session_id, seq, vector)`` rows of ``model`` in one transaction."""
        conn = self._connection()
        with conn:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (message_id, session_id, seq, model, vec)"
                " VALUES (?, ?, ?, ?, ?)",
                [
                    (mid, sid, seq, model, vec.astype("float32").tobytes())
                    for mid, sid, seq, vec in rows
                ],
            )
            conn.executemany(
                "INSERT INTO vector_log (model, message_id) VALUES (?, ?)",
                [(model, int(mid)) for mid, _sid, _seq, _vec in rows],
            )

    def drop_missing(self, existing: set[int]) -> int:
        """Delete vectors of messages no longer in the store; returns how many."""
        if not self.exists():
            return 0
        conn = self._connection()
        gone = [
            (mid,)
            for (mid,) in conn.execute("SELECT message_id FROM vectors")
            if mid not in existing
        ]
        with conn:
            conn.executemany("DELETE FROM vectors WHERE message_id = ?", gone)
            if gone:
                self._bump_epoch()
        if gone:
            self._drop_caches()
        return len(gone)

    def forget(self, message_ids: list[int], session_ids: list[str]) -> int:
        """Delete the vectors of these messages and of every message of these sessions, with
        ``secure_delete`` on and the file vacuumed, so nothing of them stays in the file, its
        WAL or free pages (``hermes-store forget``); returns how many went."""
        if not self.exists() or not (message_ids or session_ids):
            return 0
        conn = self._connection()
        conn.execute("PRAGMA secure_delete=ON")
        before = self.count()
        with conn:
            conn.executemany("DELETE FROM vectors WHERE message_id = ?", [(int(m),) for m in message_ids])
            conn.executemany("DELETE FROM vectors WHERE session_id = ?", [(s,) for s in session_ids])
            self._bump_epoch()
        gone = before - self.count()
        self._drop_caches()
        if gone:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("VACUUM")
        return gone

    def count(self, model: str | None = None) -> int:
        """How many vectors (of ``model``, or of any)."""
        if not self.exists():
            return 0
        sql, args = (
            ("SELECT count(*) FROM vectors WHERE model = ?", (model,))
            if model
            else ("SELECT count(*) FROM vectors", ())
        )
        return int(next(iter(self._connection().execute(sql, args)))[0])

    def usable(self, model: str) -> bool:
        """Whether the file holds vectors of ``model`` and can be read (a damaged or unreadable
        file: False, logged, and the file closed: a search stays lexical)."""
        try:
            return self.count(model) > 0
        except apsw.Error as exc:
            log.warning("the vector file %s cannot be read, the search stays lexical: %s", self.path, exc)
            self.close()
            return False

    def rows(self, model: str) -> Any:
        """Every ``(message_id, session_id, seq, vector)`` of ``model`` by message id (the whole
        table read once: what a search did before the cache file; ``scripts/bench_vectors.py``
        times it)."""
        np = _numpy()
        for mid, sid, seq, blob in self._connection().execute(
            "SELECT message_id, session_id, seq, vec FROM vectors WHERE model = ? ORDER BY message_id",
            (model,),
        ):
            yield int(mid), sid, int(seq), np.frombuffer(blob, dtype=np.float32)

    def _epoch(self) -> int:
        row = next(iter(self._connection().execute("SELECT value FROM vector_meta WHERE name = 'epoch'")), None)
        return int(row[0]) if row else 0

    def _head(self) -> int:
        row = next(iter(self._connection().execute("SELECT max(n) FROM vector_log")))
        return int(row[0] or 0)

    def _read_delta(self, model: str, loaded: _Loaded) -> None:
        """Add the vectors of ``model`` logged after ``loaded.seen_n`` to its delta (one read
        transaction, so no row written meanwhile is skipped)."""
        np = _numpy()
        conn = self._connection()
        with conn:
            head = self._head()
            for mid, blob in conn.execute(
                "SELECT l.message_id, v.vec FROM vector_log l JOIN vectors v"
                " ON v.message_id = l.message_id AND v.model = l.model"
                " WHERE l.n > ? AND l.n <= ? AND l.model = ? ORDER BY l.n",
                (loaded.seen_n, head, model),
            ):
                loaded.delta[int(mid)] = np.frombuffer(blob, dtype=np.float32)
                loaded.arrays = None
        loaded.seen_n = head

    def _build(self, model: str) -> VectorMatrix | None:
        """Read every vector of ``model`` (one read transaction) into a matrix and write its
        cache file; the file, mapped, is returned (the in-memory matrix when it cannot be written)."""
        np = _numpy()
        conn = self._connection()
        with conn:
            epoch, last_n = self._epoch(), self._head()
            rows = self.count(model)
            if not rows:
                return None
            ids = np.empty(rows, dtype=np.int64)
            vecs = None
            for i, (mid, blob) in enumerate(conn.execute(
                "SELECT message_id, vec FROM vectors WHERE model = ? ORDER BY message_id", (model,)
            )):
                row = np.frombuffer(blob, dtype=np.float32)
                if vecs is None:
                    vecs = np.empty((rows, len(row)), dtype=np.float32)
                ids[i] = mid
                vecs[i] = row
        matrix = VectorMatrix.from_rows(ids, vecs, epoch, last_n)
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
        epoch, head = self._epoch(), self._head()
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
        where = {}
        wanted = [mid for mid, _score in found]
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            for mid, sid, seq in self._connection().execute(
                "SELECT message_id, session_id, seq FROM vectors WHERE model = ? AND message_id IN"
                f" ({','.join('?' * len(chunk))})",
                (model, *chunk),
            ):
                where[int(mid)] = (sid, int(seq))
        return [(mid, *where[mid], score) for mid, score in found if mid in where]

    def nearest_in(self, model: str, session_ids: list[str], query: Any, k: int
                   ) -> dict[str, list[tuple[int, str, int, float]]]:
        """Per session of ``session_ids``, its ``k`` messages most similar to the unit vector
        ``query`` (``(message_id, session_id, seq, cosine)``, best first), scored exactly over
        that session's vectors (at most :data:`NEAREST_IN_ROWS` read in all)."""
        if not self.exists() or not session_ids or k <= 0:
            return {}
        np = _numpy()
        ids = list(dict.fromkeys(session_ids))
        size = 4 * int(query.shape[0])  # a damaged row of another size is left out, not fatal
        rows = [row for row in self._connection().execute(
            "SELECT message_id, session_id, seq, vec FROM vectors WHERE model = ? AND session_id IN"
            f" ({','.join('?' * len(ids))}) LIMIT ?",
            (model, *ids, NEAREST_IN_ROWS),
        ) if isinstance(row[3], bytes) and len(row[3]) == size]
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
