"""The vector file of a home: message embeddings beside the session index (both engines).

``session_vectors.db`` is an APSW SQLite file next to ``hermes_store.db`` (a PostgreSQL store
keeps its vectors there too): one float32 BLOB per embedded message, keyed by the message's
row id and tagged with the model that made it. A search is brute force over a numpy matrix
(loaded once per open). The only module with the vector SQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw

from hermes_store.sessions.embeddings import _numpy

VECTORS_FILENAME = "session_vectors.db"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors (message_id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL, model TEXT NOT NULL, vec BLOB NOT NULL)"
)


class VectorStore:
    """The embeddings file of one home (created on first write)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._conn: apsw.Connection | None = None
        self._matrix: dict[str, tuple[list[int], list[tuple[str, int]], Any]] = {}

    @classmethod
    def for_home(cls, home: Any) -> VectorStore:
        """The vector store of ``home``'s store (a :class:`~hermes_store.home.Home`): beside the
        store's file, wherever the store is named (``Home.beside_store``)."""
        return cls(home.beside_store(VECTORS_FILENAME))

    def exists(self) -> bool:
        """Whether any vectors were ever written."""
        return self.path.is_file()

    def _connection(self) -> apsw.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = apsw.Connection(str(self.path))
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_SCHEMA)
        return self._conn

    def close(self) -> None:
        """Close the file."""
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
        self._matrix.pop(model, None)

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
        self._matrix.clear()
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
        gone = before - self.count()
        if gone:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("VACUUM")
        self._matrix.clear()
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

    def _load(self, model: str) -> tuple[list[int], list[tuple[str, int]], Any]:
        if model not in self._matrix:
            np = _numpy()
            ids, positions, blobs = [], [], []
            for mid, sid, seq, blob in self._connection().execute(
                "SELECT message_id, session_id, seq, vec FROM vectors WHERE model = ? ORDER BY message_id",
                (model,),
            ):
                ids.append(int(mid))
                positions.append((sid, int(seq)))
                blobs.append(np.frombuffer(blob, dtype=np.float32))
            self._matrix[model] = (ids, positions, np.vstack(blobs) if blobs else None)
        return self._matrix[model]

    def nearest(self, model: str, query: Any, k: int) -> list[tuple[int, str, int, float]]:
        """The ``k`` messages most similar to the unit vector ``query``:
        ``(message_id, session_id, seq, cosine)``, best first."""
        if not self.exists():
            return []
        np = _numpy()
        ids, positions, matrix = self._load(model)
        if matrix is None:
            return []
        scores = matrix @ query.astype(np.float32)
        k = min(k, len(ids))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(ids[i], *positions[i], float(scores[i])) for i in top]
