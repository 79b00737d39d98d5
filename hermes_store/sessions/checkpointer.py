"""WAL checkpoints for the bulk writer, on a thread and connection of their own.

Copying committed batches from the WAL into the database file is the bulk load's third
job beside parsing and writing. Done on the parser's thread it lengthens the busiest thread
late in a load; done on the writer's it holds up the next batch. On a thread of its own it
runs on whichever core is idle at the moment (APSW releases the GIL while SQLite copies),
so neither of the other two waits for it.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from hermes_store.db import Database

logger = logging.getLogger(__name__)


class BackgroundCheckpointer:
    """PASSIVE checkpoints of one database, one at a time, on a background thread.

    :meth:`request` asks for a checkpoint of everything committed so far; requests made
    while one runs are merged into the next. :meth:`close` finishes the one running and
    stops the thread; a request not started by then is dropped (the caller checkpoints what is left).
    """

    def __init__(self, path: str | Path) -> None:
        self._db = Database(path, bounded=False, migrate=False)
        self._wanted = threading.Event()
        self._stopping = False
        self.cpu_seconds = 0.0
        self.runs = 0
        self._thread = threading.Thread(target=self._loop, name="hermes-store-checkpoint", daemon=True)
        self._thread.start()

    def request(self) -> None:
        """Ask for a checkpoint of the batches committed so far (returns at once)."""
        self._wanted.set()

    def close(self) -> None:
        """Stop the thread (after the checkpoint in progress, if any) and close its connection."""
        self._stopping = True
        self._wanted.set()
        self._thread.join()
        self._db.close()

    def _loop(self) -> None:
        while True:
            self._wanted.wait()
            self._wanted.clear()
            if self._stopping:
                return
            started = time.thread_time()
            try:
                self._db.checkpoint()  # PASSIVE: never blocks the writer or a reader
            except Exception as exc:  # a checkpoint is best effort: the data is safe in the WAL
                logger.warning("%s: background checkpoint failed: %s", self._db.path, exc)
            self.runs += 1
            self.cpu_seconds += time.thread_time() - started
