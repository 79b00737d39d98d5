"""One ordered background worker for after-turn provider work (sync, queued prefetch).

Tasks run first-in first-out on a single daemon thread, so turn N is synced before turn
N+1 and a slow provider never blocks the agent's turn. A hung task can delay later tasks
but never the caller: ``flush`` and ``stop`` wait with a bound and report what is left.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import Counter
from collections.abc import Callable

from hermes_store.threads import ctx_bound, spawn_context_thread

logger = logging.getLogger(__name__)

_STOP = object()


class BackgroundWorker:
    """A lazily started single-thread FIFO executor whose failures are logged, never raised."""

    def __init__(self, name: str = "hermes-store-memory") -> None:
        self.name = name
        self._queue: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pending: Counter[str] = Counter()
        self._stopped = False
        self.completed: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()
        self.running: str | None = None  # the kind of the task on the thread now

    @property
    def stopped(self) -> bool:
        """True once ``stop`` was called; later submissions are dropped."""
        return self._stopped

    def pending(self) -> dict[str, int]:
        """Tasks submitted but not finished, by kind."""
        with self._lock:
            return {k: v for k, v in self._pending.items() if v > 0}

    def submit(self, kind: str, task: Callable[[], object]) -> bool:
        """Queue ``task``; False (and nothing queued) after ``stop``."""
        with self._lock:
            if self._stopped:
                logger.debug("background worker stopped; dropping %s task", kind)
                return False
            self._pending[kind] += 1
            if self._thread is None:
                self._thread = spawn_context_thread(self._run, name=self.name)
                self._thread.start()
        # each task runs under its submitter's context variables (Hermes' profile ContextVar),
        # not those of whoever happened to start the long-lived worker thread
        self._queue.put((kind, ctx_bound(task)))
        return True

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            kind, task = item
            self.running = kind
            try:
                task()
                ok = True
            except Exception as exc:  # isolation: one failing task never stops the worker
                logger.warning("background %s task failed: %s", kind, exc)
                ok = False
            with self._lock:
                self.running = None
                self._pending[kind] -= 1
                (self.completed if ok else self.failed)[kind] += 1

    def flush(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every task queued so far; True when all ran."""
        with self._lock:
            if self._thread is None:
                return True
        done = threading.Event()
        if not self.submit("flush", done.set):
            return not self.pending()
        return done.wait(max(0.0, timeout))

    def stop(self, timeout: float) -> dict[str, int]:
        """Drain for at most ``timeout`` seconds, then stop; returns abandoned tasks by kind."""
        drained = self.flush(timeout)
        with self._lock:
            self._stopped = True
            abandoned = {} if drained else {k: v for k, v in self._pending.items() if v > 0 and k != "flush"}
            thread = self._thread
        if thread is not None:
            self._queue.put(_STOP)
        return abandoned
