"""The vector tables in a PostgreSQL store (``schema/pg/0011_vectors.sql``): what differs from
SQLite (:mod:`.storage_vectors_sql` holds every shared statement).

Writers lock ``vector_log`` against each other for their transaction, so its numbers follow
commit order: a search that has read the log up to row ``n`` never meets a row numbered lower
committed later (which it would skip for good). Readers never wait for the lock.

A home that used this server before its vectors moved into it kept them in its own
``session_vectors.db`` (keyed by the server's message ids): the first write-capable open moves
them into the empty tables (each where the server's message of that id is the same session and
place, so a file of another store attaches nothing) and deletes that file and its cache files, so hours of embedding are
not redone and no second copy stays behind (one that ``forget`` would not reach). A file beside a
SQLite store (the home's ``hermes_store.db``: that store's own vectors) is copied and kept.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hermes_store.db import DB_FILENAME
from hermes_store.sessions.storage_vectors_sql import (
    VECTORS_FILENAME,
    SqliteVectorRows,
    SqlVectorRows,
    copy_matching,
)

log = logging.getLogger(__name__)


class PgVectorRows(SqlVectorRows):
    """The vector tables of ``home``'s PostgreSQL store (its own pooled connection, opened on
    first use through ``home.open_db``)."""

    engine = "postgresql"

    def __init__(self, home: Any) -> None:
        self.home = home
        self.read_only = bool(getattr(home, "read_only", False))
        self._open: Any = None

    @classmethod
    def for_home(cls, home: Any) -> PgVectorRows:
        """The vector tables of ``home``'s store."""
        return cls(home)

    def _db(self) -> Any:
        if self._open is None:
            self._open = self.home.open_db()
            if not self.read_only:
                self._adopt_local_file(Path(self.home.root) / VECTORS_FILENAME)
        return self._open

    def _adopt_local_file(self, path: Path) -> int:
        """Move the vectors of an older home-local ``path`` into the tables when they hold none
        (then delete the file and its cache files); returns how many moved. A file beside a
        SQLite store (this home's ``hermes_store.db``, say the source of ``migrate``) is that
        store's: its vectors are copied and the file kept."""
        if not path.is_file() or self.count():
            return 0
        keep = (path.parent / DB_FILENAME).exists()
        local = SqliteVectorRows(path, read_only=True)
        try:  # only where the server's message at that id is the one embedded (digests kept)
            moved = len(copy_matching(local, self, self._db()))
        finally:
            local.close()
        if keep:
            log.warning("copied %d vectors from %s (the SQLite store's beside it) into the PostgreSQL store",
                        moved, path)
            return moved
        for leftover in [path, *path.parent.glob(f"{path.name}-*"), *path.parent.glob(f"{path.name}.*.cache*")]:
            leftover.unlink(missing_ok=True)
        log.warning("moved %d vectors from %s into the PostgreSQL store", moved, path)
        return moved

    def identity(self) -> str:
        return self.home.store_location()

    def _lock_log(self) -> None:
        self._db().execute("LOCK TABLE vector_log IN SHARE ROW EXCLUSIVE MODE")

    def disk_bytes(self) -> int:
        # the three tables of schema/pg/0011 with their indexes and TOAST, in the store's schema
        return int(self._db().scalar(
            "SELECT pg_total_relation_size('vectors') + pg_total_relation_size('vector_log')"
            " + pg_total_relation_size('vector_meta')") or 0)

    def close(self) -> None:
        if self._open is not None:
            self._open.close()
            self._open = None
