"""The rows of message embeddings, written once for both engines (the seam of
:class:`~hermes_store.sessions.storage_vectors.VectorStore`).

Three tables hold them: ``vectors`` (one float32 BLOB / bytea per embedded message and model,
keyed by the message's row id and the model that made it), ``vector_log`` (the message ids each
``put`` wrote, in order: what a search's cache file has not seen yet) and ``vector_meta`` (the
``epoch`` that ``drop``/``forget`` bump, so every cache file is rebuilt without the removed
vectors). Every statement is written here once, over ``db.portable`` (``?`` placeholders,
``IN ({marks})`` lists) and ``db.write()``; each engine adds only what differs:

- **SQLite** (:class:`SqliteVectorRows`): the tables live in ``session_vectors.db``, an APSW file
  of their own beside the store's file (created on first write, WAL); ``forget`` deletes with
  ``secure_delete`` and vacuums the file. A file that cannot be written is read as it is.
- **PostgreSQL** (:class:`~hermes_store.sessions.storage_vectors_pg.PgVectorRows`): the tables
  live in the shared store (``schema/pg/0011_vectors.sql``), so every gateway and home on one
  server searches the vectors any of them embedded.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw

from hermes_store.db import DB_FILENAME, Database, DatabaseError

log = logging.getLogger(__name__)
VECTORS_FILENAME = "session_vectors.db"
#: Rows read per statement when a whole model's vectors are read (bounded memory per read).
PAGE_ROWS = 5000
_SQLITE_VECTORS = (
    "CREATE TABLE IF NOT EXISTS {name} (message_id INTEGER NOT NULL, session_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL, model TEXT NOT NULL, vec BLOB NOT NULL, text_hash TEXT,"
    " PRIMARY KEY (message_id, model))")
_SQLITE_SCHEMA = (
    _SQLITE_VECTORS.format(name="vectors") + ";"
    "CREATE TABLE IF NOT EXISTS vector_log (n INTEGER PRIMARY KEY, model TEXT NOT NULL,"
    " message_id INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS vector_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS vectors_by_session ON vectors (session_id, model)"
)
#: A vector file written before vectors recorded what they embedded gets the column.
_SQLITE_TEXT_HASH = "ALTER TABLE vectors ADD COLUMN text_hash TEXT"
#: A vector file keyed by the message alone (one model's vector per message: a second model's
#: replaced the first's) is rebuilt keyed by message and model, its vectors kept (pg 0017).
_SQLITE_PER_MODEL = (
    "BEGIN IMMEDIATE;" + _SQLITE_VECTORS.format(name="vectors_per_model") + ";"
    "INSERT INTO vectors_per_model (message_id, session_id, seq, model, vec, text_hash)"
    " SELECT message_id, session_id, seq, model, vec, text_hash FROM vectors;"
    "DROP TABLE vectors; ALTER TABLE vectors_per_model RENAME TO vectors;"
    "CREATE INDEX IF NOT EXISTS vectors_by_session ON vectors (session_id, model); COMMIT")


class SqlVectorRows(ABC):
    """The vector tables over an open store-like database (``portable`` and ``write``); each
    engine's subclass says how the database is opened and how much disk the tables take."""

    engine = ""
    read_only = False

    @abstractmethod
    def _db(self) -> Any:
        """The open database (opened on first use by the engine's class)."""

    def exists(self) -> bool:
        """Whether the tables can hold vectors here (False: no vector was ever written)."""
        return True

    def identity(self) -> str:
        """What tells this store's vectors from another's in a cache file's name ("" for a file
        of its own)."""
        return ""

    def close(self) -> None:
        """Close what this object opened."""
        return None  # an engine hook: nothing unless the engine says otherwise

    def damage(self) -> str | None:
        """Why the vector file of its own is damaged (None: sound, or the tables are the
        store's own, whose checks are ``hermes-store doctor``'s)."""
        return None  # an engine hook: nothing unless the engine says otherwise

    def _lock_log(self) -> None:
        """Inside a write: make ``vector_log`` numbers follow commit order (the engine's way)."""
        return None  # an engine hook: nothing unless the engine says otherwise

    # -- writes ------------------------------------------------------------------------------

    def put(self, model: str, rows: list[tuple[int, str, int, bytes, str | None]]) -> None:
        """Store ``(message_id, session_id, seq, vector bytes, text hash)`` rows of ``model``
        (the hash: :meth:`~hermes_store.sessions.embeddings.Embedder.digest` of the text
        embedded, or None) and log their ids, in one transaction; a message's earlier vector of
        ``model`` is replaced (another model's is kept: a store holds each model's vectors)."""
        db = self._db()
        with db.write():
            self._lock_log()
            db.portable.executemany(
                "INSERT INTO vectors (message_id, session_id, seq, model, vec, text_hash) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (message_id, model) DO UPDATE SET session_id = excluded.session_id,"
                " seq = excluded.seq, vec = excluded.vec, text_hash = excluded.text_hash",
                [(int(mid), sid, int(seq), model, blob, digest) for mid, sid, seq, blob, digest in rows])
            db.portable.executemany("INSERT INTO vector_log (model, message_id) VALUES (?, ?)",
                                    [(model, int(mid)) for mid, *_rest in rows])

    def rename_model(self, old: str, new: str) -> int:
        """Tag the vectors of model ``old`` as ``new`` (and their log rows), in one transaction;
        returns how many."""
        db = self._db()
        with db.write():
            self._lock_log()
            moved = int(db.portable.scalar("SELECT count(*) FROM vectors WHERE model = ?", (old,)) or 0)
            db.portable.execute("UPDATE vectors SET model = ? WHERE model = ?", (new, old))
            db.portable.execute("UPDATE vector_log SET model = ? WHERE model = ?", (new, old))
        return moved

    def _bump_epoch(self) -> None:
        self._db().portable.execute(
            "INSERT INTO vector_meta (name, value) VALUES ('epoch', 1)"
            " ON CONFLICT (name) DO UPDATE SET value = vector_meta.value + 1")

    def drop(self, message_ids: list[int], model: str) -> None:
        """Delete the vectors of ``model`` of ``message_ids`` and bump the epoch, in one transaction."""
        db = self._db()
        with db.write():
            for start in range(0, len(message_ids), PAGE_ROWS):
                chunk = message_ids[start:start + PAGE_ROWS]
                db.portable.execute(
                    f"DELETE FROM vectors WHERE model = ? AND message_id IN ({','.join('?' * len(chunk))})",
                    [model, *chunk])
            self._bump_epoch()

    def forget(self, message_ids: list[int], session_ids: list[str]) -> int:
        """Delete the vectors of these messages and of every message of these sessions (epoch
        bumped); returns how many went."""
        db = self._db()
        before = self.count()
        self._before_forget()
        with db.write():
            db.portable.executemany("DELETE FROM vectors WHERE message_id = ?", [(int(m),) for m in message_ids])
            db.portable.executemany("DELETE FROM vectors WHERE session_id = ?", [(s,) for s in session_ids])
            self._bump_epoch()
        gone = before - self.count()
        if gone:
            self._after_forget()
        return gone

    def _before_forget(self) -> None:
        """Engine hook: before a ``forget``'s deletes."""
        return None  # an engine hook: nothing unless the engine says otherwise

    def _after_forget(self) -> None:
        """Engine hook: after a ``forget`` removed vectors."""
        return None  # an engine hook: nothing unless the engine says otherwise

    # -- reads -------------------------------------------------------------------------------

    def message_ids(self, model: str | None = None) -> list[int]:
        """Ids of the messages with a vector (of ``model``, or of any)."""
        sql, args = (("SELECT message_id FROM vectors WHERE model = ?", (model,)) if model
                     else ("SELECT message_id FROM vectors", ()))
        return [int(r["message_id"]) for r in self._db().portable.query(sql, args)]

    def states(self, model: str) -> dict[int, tuple[str, int, str | None]]:
        """``message_id -> (session_id, seq, text hash)`` of every vector of ``model``: what each
        vector was made from (the hash None for a vector written before hashes were kept)."""
        out: dict[int, tuple[str, int, str | None]] = {}
        for page in self.pages(model, f"message_id, session_id, seq, {self._text_hash_column()}"):
            out.update((int(r["message_id"]), (r["session_id"], int(r["seq"]), r["text_hash"])) for r in page)
        return out

    def full_pages(self, model: str) -> Iterator[list[tuple[int, str, int, bytes, str | None]]]:
        """Every vector row of ``model`` as ``(message_id, session_id, seq, vector bytes, text
        hash)``, :data:`PAGE_ROWS` per page (what :meth:`put` takes: a copy of the store)."""
        for page in self.pages(model, f"message_id, session_id, seq, vec, {self._text_hash_column()}"):
            yield [(int(r["message_id"]), r["session_id"], int(r["seq"]), bytes(r["vec"]), r["text_hash"])
                   for r in page]

    def _text_hash_column(self) -> str:
        """The select expression of the text hash (an engine whose table may lack it says so)."""
        return "text_hash"

    def models(self) -> list[str]:
        """The models that have vectors here."""
        return [r["model"] for r in self._db().portable.query("SELECT DISTINCT model FROM vectors ORDER BY model")]

    def has(self, model: str) -> bool:
        """Whether any vector of ``model`` is stored (one row read, not a count of them all)."""
        return self._db().portable.scalar("SELECT 1 FROM vectors WHERE model = ? LIMIT 1", (model,)) is not None

    def count(self, model: str | None = None) -> int:
        """How many vectors (of ``model``, or of any)."""
        sql, args = (("SELECT count(*) FROM vectors WHERE model = ?", (model,)) if model
                     else ("SELECT count(*) FROM vectors", ()))
        return int(self._db().portable.scalar(sql, args) or 0)

    def stored_bytes(self) -> int:
        """The bytes of every vector held (their payload, without the table's own overhead)."""
        return int(self._db().portable.scalar("SELECT coalesce(sum(length(vec)), 0) FROM vectors") or 0)

    @abstractmethod
    def disk_bytes(self) -> int:
        """The bytes the vector tables take where they are kept, indexes included (the engine's
        own measure)."""

    def epoch(self) -> int:
        """The epoch (0 before any drop or forget)."""
        return int(self._db().portable.scalar("SELECT value FROM vector_meta WHERE name = 'epoch'") or 0)

    def head(self) -> int:
        """The last log row's number (0 for none)."""
        return int(self._db().portable.scalar("SELECT max(n) FROM vector_log") or 0)

    def logged(self, model: str, after: int, upto: int) -> list[tuple[int, bytes]]:
        """``(message_id, vector bytes)`` of ``model`` logged after row ``after`` up to ``upto``."""
        return [(int(r["message_id"]), bytes(r["vec"])) for r in self._db().portable.query(
            "SELECT l.message_id, v.vec FROM vector_log l JOIN vectors v"
            " ON v.message_id = l.message_id AND v.model = l.model"
            " WHERE l.n > ? AND l.n <= ? AND l.model = ? ORDER BY l.n", (after, upto, model))]

    def pages(self, model: str, columns: str = "message_id, vec") -> Iterator[list[dict[str, Any]]]:
        """Every vector row of ``model`` by message id, :data:`PAGE_ROWS` per page (``columns``:
        of ``message_id, session_id, seq, vec``)."""
        last = -(2**63)
        while True:
            page = self._db().portable.query(
                f"SELECT {columns} FROM vectors WHERE model = ? AND message_id > ?"
                f" ORDER BY message_id LIMIT {PAGE_ROWS}", (model, last))
            if not page:
                return
            yield page
            last = int(page[-1]["message_id"])

    def positions(self, model: str, message_ids: list[int]) -> dict[int, tuple[str, int]]:
        """``message_id -> (session_id, seq)`` of those of ``message_ids`` with a vector of ``model``."""
        rows = self._db().portable.query_in(
            "SELECT message_id, session_id, seq FROM vectors WHERE model = ? AND message_id IN ({marks})",
            message_ids, before=(model,))
        return {int(r["message_id"]): (r["session_id"], int(r["seq"])) for r in rows}

    def in_sessions(self, model: str, session_ids: list[str], limit: int) -> list[tuple[int, str, int, Any]]:
        """``(message_id, session_id, seq, vector bytes)`` of ``model`` in ``session_ids``, at most
        ``limit`` rows."""
        rows = self._db().portable.query(
            "SELECT message_id, session_id, seq, vec FROM vectors WHERE model = ? AND session_id IN"
            f" ({','.join('?' * len(session_ids))}) LIMIT ?", (model, *session_ids, int(limit)))
        return [(int(r["message_id"]), r["session_id"], int(r["seq"]), r["vec"]) for r in rows]


def copy_matching(source: SqlVectorRows, target: SqlVectorRows, store: Any) -> list[int]:
    """Copy into ``target`` the vectors of ``source`` (every model's, digests kept) whose message
    id names the same session and place in ``store`` (an open store database: the one ``target``
    holds the vectors of), so vectors of another store attach to nothing; returns their ids."""
    taken: list[int] = []
    for model in source.models():
        for page in source.full_pages(model):
            here = {int(r["id"]): (r["session_id"], int(r["seq"])) for r in store.portable.query_in(
                "SELECT id, session_id, seq FROM messages WHERE id IN ({marks})", [row[0] for row in page])}
            kept = [row for row in page if here.get(row[0]) == (row[1], row[2])]
            if kept:
                target.put(model, kept)
            taken += [row[0] for row in kept]
    return taken


class SqliteVectorRows(SqlVectorRows):
    """The vector tables in ``session_vectors.db``, a SQLite file of their own beside the store's."""

    engine = "sqlite"

    def __init__(self, path: str | Path, *, read_only: bool = False, home: Any = None) -> None:
        self.path = Path(path)
        self.read_only = read_only  # nothing written: no schema, no WAL switch
        self._open: Database | None = None
        # an older version's file shared by every store of the directory (see _adopt_shared)
        self._shared: Path | None = home.shared_beside_store(VECTORS_FILENAME) if home is not None else None
        self._home = home

    @classmethod
    def for_home(cls, home: Any) -> SqliteVectorRows:
        """The vector file beside ``home``'s store file (``Home.beside_store``: named after a
        store file other than ``hermes_store.db``), read-only for a read-only home."""
        return cls(home.beside_store(VECTORS_FILENAME), read_only=bool(getattr(home, "read_only", False)),
                   home=home)

    def exists(self) -> bool:
        self._adopt_shared()
        return self.path.is_file()

    def _adopt_shared(self) -> None:
        """Before this store's own file is first made: take this store's vectors from the
        ``session_vectors.db`` an older version kept beside a store file of another name (one
        file for every store of that directory): those whose message id names the same session
        and place in this store. Unless that file is a home's store's own (a ``hermes_store.db``
        beside it), they are then deleted from it as ``forget`` deletes (no copy stays that
        ``forget`` would not reach), and the file with its cache files when nothing is left."""
        shared, self._shared = self._shared, None
        if (shared is None or self.read_only or self.path.exists() or not shared.is_file()
                or not self._home.store_exists()):
            return
        keep = (shared.parent / DB_FILENAME).exists()
        source = SqliteVectorRows(shared, read_only=keep)
        try:
            with self._home.open_db() as store:
                taken = copy_matching(source, self, store)
            if not keep and taken:
                source.forget(taken, [])
            left = None if keep else source.count()
        except Exception as exc:  # noqa: BLE001 - a damaged shared file never fails a search
            log.warning("the vectors of %s cannot be taken from %s (left as they are): %s",
                        self._home.store_location(), shared, exc)
            return
        finally:
            source.close()
        caches = [*shared.parent.glob(f"{shared.name}.*.cache*")] if taken and not keep else []  # copies too
        files = [shared, *shared.parent.glob(f"{shared.name}-*")] if left == 0 else []
        for leftover in files + caches:
            leftover.unlink(missing_ok=True)
        log.warning("took %d vectors of %s from %s, the file an older version shared between the stores"
                    " of that directory", len(taken), self._home.store_location(), shared)

    def disk_bytes(self) -> int:
        # the database's pages, whether or not the WAL has been checkpointed into the file yet
        return int(self._db().portable.scalar(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()") or 0)

    def _db(self) -> Database:
        if self._open is None:
            self._adopt_shared()
        if self._open is None and self.read_only:
            self._open = Database(self.path, readonly=True, migrate=False, traceless=True)
        if self._open is None:
            try:
                db = Database(self.path, migrate=False)
            except DatabaseError:  # a file, folder or mount that cannot be written: read it
                db, self.read_only = Database(self.path, readonly=True, migrate=False, traceless=True), True
            if not self.read_only:
                try:
                    db.conn.execute(_SQLITE_SCHEMA)
                    if not self._has_text_hash(db):
                        db.conn.execute(_SQLITE_TEXT_HASH)
                    if [r["name"] for r in db.query("PRAGMA table_info(vectors)") if r["pk"]] == ["message_id"]:
                        db.conn.execute(_SQLITE_PER_MODEL)
                except (apsw.ReadOnlyError, apsw.CantOpenError):  # the file refuses the write
                    db.close()
                    db, self.read_only = Database(self.path, readonly=True, migrate=False, traceless=True), True
            self._open = db
        return self._open

    def close(self) -> None:
        if self._open is not None:
            self._open.close()
            self._open = None

    def damage(self) -> str | None:
        try:
            found = [str(r["quick_check"]) for r in self._db().portable.query("PRAGMA quick_check")]
        except apsw.Error as exc:
            return str(exc) or type(exc).__name__
        return None if found == ["ok"] else "; ".join(found)[:300]

    @staticmethod
    def _has_text_hash(db: Database) -> bool:
        return any(r["name"] == "text_hash" for r in db.query("PRAGMA table_info(vectors)"))

    def _text_hash_column(self) -> str:
        # a file of an older version opened read-only keeps its columns
        return "text_hash" if self._has_text_hash(self._db()) else "NULL AS text_hash"

    def _before_forget(self) -> None:
        self._db().execute("PRAGMA secure_delete=ON")

    def _after_forget(self) -> None:
        db = self._db()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("VACUUM")
