"""Keep a home's session index current with Hermes' own ``state.db`` while Hermes runs.

A running Hermes writes every message to ``<hermes_home>/state.db``. :class:`StateDbSync`
imports what is new from it into the home's ``hermes_store.db`` — the file is opened
read-only and never written, and messages are read incrementally by id (the
``hermes-db`` importer) — so ``recall`` and ``session_search`` see the session that is
running now.

Deciding that nothing is new is cheap, because a provider asks at every turn boundary:

1. ``stat`` of ``state.db`` and its ``-wal`` file; unchanged since the last sync means
   nothing is new (microseconds);
2. otherwise the importer's :meth:`~HermesDbImporter.signature` (the largest message
   id and an aggregate over the sessions table, one read-only query each); unchanged
   means nothing is new (a WAL checkpoint, say);
3. only then the incremental import runs.

:meth:`StateDbSync.kick` runs a sync on a background thread and returns at once; a
sync already in flight is not started twice. :meth:`StateDbSync.wait` waits a bounded
time. A locked, missing or corrupt ``state.db`` therefore never blocks the caller: the
sync fails in the background, logs why, keeps the reason in :attr:`last_error`, and the
next kick tries again.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_store.home import Home, described
from hermes_store.sessions.importers.hermes_db import HermesDbImporter
from hermes_store.sessions.loader import BulkLoader
from hermes_store.threads import spawn_context_thread

logger = logging.getLogger(__name__)

Fingerprint = tuple[tuple[int, int], ...]


@dataclass
class SyncResult:
    """What one sync did: ``status`` is ``unchanged``, ``imported``, ``missing`` or ``failed``."""

    status: str
    messages_added: int = 0
    sessions_added: int = 0
    seconds: float = 0.0
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain-dict form (for status output and tests)."""
        return {"status": self.status, "messages_added": self.messages_added,
                "sessions_added": self.sessions_added, "seconds": self.seconds, "error": self.error}


def _stat_key(path: Path) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1)
    return (info.st_size, info.st_mtime_ns)


class StateDbSync:
    """Incremental, read-only import of one Hermes ``state.db`` into one home's index."""

    def __init__(self, home: Home, state_db: str | os.PathLike[str] | None = None) -> None:
        self.home = home
        self.state_db = Path(state_db) if state_db is not None else home.root / "state.db"
        self._fingerprint: Fingerprint | None = None
        self._signature: tuple[Any, ...] | None = None
        self._running = threading.Lock()  # held while a sync runs
        self._thread: threading.Thread | None = None
        self.last_result: SyncResult | None = None
        self.last_error: str | None = None

    def fingerprint(self) -> Fingerprint:
        """Size and mtime of ``state.db`` and its WAL (a commit changes one of them)."""
        return (_stat_key(self.state_db), _stat_key(Path(str(self.state_db) + "-wal")))

    def sync(self) -> SyncResult:
        """Import what is new now, in this thread (skipped when a sync is already running)."""
        if not self._running.acquire(blocking=False):
            return SyncResult("unchanged", error="a sync is already running")
        try:
            return self._sync()
        finally:
            self._running.release()

    def kick(self) -> None:
        """Start a background sync unless one is running; never waits."""
        if self._running.locked():
            return
        # the caller's context variables go along (Hermes' per-profile HERMES_HOME override)
        thread = spawn_context_thread(self._background, name="hermes-store-state-sync")
        self._thread = thread
        thread.start()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a background sync; True when none is running."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(max(0.0, timeout))
        return not thread.is_alive()

    def _background(self) -> None:
        try:
            self.sync()
        except Exception as exc:  # a sync must never take the agent down
            self.last_error = described(exc)
            logger.warning("state.db sync failed: %s", self.last_error)

    def _sync(self) -> SyncResult:
        started = time.perf_counter()
        fingerprint = self.fingerprint()
        if fingerprint[0] == (-1, -1):
            return self._done(SyncResult("missing", error=f"{self.state_db} does not exist"), started)
        if fingerprint == self._fingerprint:
            return self._done(SyncResult("unchanged"), started)
        try:
            signature = HermesDbImporter.signature(self.state_db)
        except Exception as exc:
            return self._failed(exc, started)
        if signature is not None and signature == self._signature:
            self._fingerprint = fingerprint
            return self._done(SyncResult("unchanged"), started)
        try:
            db = self.home.open_db()
        except Exception as exc:
            return self._failed(exc, started)
        try:
            summary = BulkLoader(db).run([self.state_db], "hermes-db")
        except Exception as exc:
            return self._failed(exc, started)
        finally:
            db.close()
        if summary.errors:
            first = summary.errors[0]
            return self._done(SyncResult("failed", summary.messages_added, summary.sessions_added,
                                         error=f"{first.get('path')}: {first.get('error')}"), started)
        self._fingerprint, self._signature = fingerprint, signature
        return self._done(SyncResult("imported", summary.messages_added, summary.sessions_added), started)

    def _failed(self, exc: BaseException, started: float) -> SyncResult:
        return self._done(SyncResult("failed", error=described(exc)), started)

    def _done(self, result: SyncResult, started: float) -> SyncResult:
        result.seconds = time.perf_counter() - started
        self.last_result = result
        if result.status == "failed":
            self.last_error = result.error
            logger.warning("state.db sync of %s failed: %s", self.state_db, result.error)
        elif result.status != "unchanged":
            self.last_error = None
        return result
