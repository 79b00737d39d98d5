"""Live indexing: watch transcript files and index what agents write, as they write it.

:class:`Watcher` indexes its paths once (catching up), then waits for file-system events
(``watchfiles``: inotify, FSEvents, ReadDirectoryChangesW; no CPU while nothing happens) and
hands every changed transcript to the bulk loader. The loader's incremental indexing does the
rest: an appended JSONL file is read from its last committed byte offset, a database
(Hermes ``state.db`` and the other SQLite-backed agents) from its last imported id, and a file
that was truncated, rewritten or replaced by a new one (log rotation) fails its prefix-hash
check and is re-read from the start. Writes to a database's ``-wal``/``-journal`` file count as
writes to the database.

Without ``watchfiles`` (or with ``poll=True``) the watcher polls instead: every
``interval`` seconds it compares each watched file's size, mtime and inode with the last look.

Every batch the loader writes is one transaction, so stopping the watcher at any moment
(Ctrl-C, SIGTERM) leaves the store with whole batches only; the next run resumes.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_store.db import Database, StoreUnavailable
from hermes_store.sessions.loader import BulkLoader, IndexSummary
from hermes_store.sessions.walk import walk_inputs, watched

logger = logging.getLogger(__name__)

DEBOUNCE_MS = 150  # events closer than this are indexed together
STEP_MS = 500  # how often the event loop looks at its stop flag (and Ctrl-C)
IDLE_WAKE_MS = 5000  # an idle event watcher's round without changes (the first comes at once)
POLL_INTERVAL = 0.5  # seconds between looks when polling
RETRY_SECONDS = 10.0  # a round the store could not take (server down) is tried again after this
_SIDE_FILES = ("-wal", "-journal", "-shm")


def events_available() -> bool:
    """True when ``watchfiles`` (file-system events) can be imported."""
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        return False
    return True


def _main_file(path: str) -> str:
    """The database a ``-wal``/``-journal``/``-shm`` file belongs to; other paths as given."""
    for suffix in _SIDE_FILES:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


@dataclass
class WatchStats:
    """What a watcher has done so far."""

    rounds: int = 0
    files: int = 0
    messages_added: int = 0
    sessions_added: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)


class Watcher:
    """Indexes ``paths`` (files and directories) now and whenever they change.

    ``on_round`` is called after each indexing round with the changed paths and the loader's
    summary. A round the store cannot take (:class:`~hermes_store.db.StoreUnavailable`: a
    PostgreSQL server down or restarting) is not the end of the watch: ``on_unavailable`` is
    called with the error and the paths are tried again ``retry_seconds`` later, with whatever
    changed meanwhile (what the loader committed stays; it resumes where it stopped). ``stop``
    ends :meth:`run` from another thread (or a signal handler).
    """

    def __init__(self, db: Database, paths: Iterable[str | os.PathLike[str]], *,
                 poll: bool = False, interval: float = POLL_INTERVAL,
                 on_round: Callable[[list[Path], IndexSummary], None] | None = None,
                 on_unavailable: Callable[[StoreUnavailable], None] | None = None,
                 retry_seconds: float = RETRY_SECONDS) -> None:
        self.db = db
        self.on_unavailable = on_unavailable
        self.retry_seconds = max(0.0, float(retry_seconds))
        self.paths = [Path(p).expanduser().absolute() for p in paths]
        self.poll = poll or not events_available()
        self.interval = max(0.05, float(interval))
        self.on_round = on_round
        self.stats = WatchStats()
        self._stop = threading.Event()

    @property
    def mode(self) -> str:
        """``events`` or ``polling``."""
        return "polling" if self.poll else "events"

    def stop(self) -> None:
        """Ask :meth:`run` to return after the round in progress."""
        self._stop.set()

    def run(self) -> WatchStats:
        """Catch up, then index changes until :meth:`stop` (or KeyboardInterrupt).

        The catch-up runs once the watch is in place (its first round), so a write made while
        it runs is seen by the next round instead of falling between the two."""
        rounds = self._polled() if self.poll else self._events()
        caught_up = False
        waiting: list[Path] = []  # what the store could not take yet (it was unreachable)
        retry_at = 0.0
        for changed in rounds:
            if self._stop.is_set():
                break
            if not caught_up:
                caught_up = True
                changed = list(self.paths)
            else:
                changed = [p for p in changed if p.exists()]  # a deleted file keeps its sessions
            waiting += [p for p in changed if p not in waiting]
            if not waiting or time.monotonic() < retry_at:
                continue
            try:
                self.index(waiting)
            except StoreUnavailable as exc:
                retry_at = time.monotonic() + self.retry_seconds
                if self.on_unavailable is not None:
                    self.on_unavailable(exc)
                continue
            waiting = []
        return self.stats

    def index(self, paths: list[Path]) -> IndexSummary:
        """One indexing round over ``paths`` (the loader skips what it already has)."""
        summary = BulkLoader(self.db, pipeline=False).run(paths)
        stats = self.stats
        stats.rounds += 1
        stats.files += summary.files
        stats.messages_added += summary.messages_added
        stats.sessions_added += summary.sessions_added
        stats.errors.extend(summary.errors[-50:])
        del stats.errors[:-200]
        if self.on_round is not None:
            self.on_round(paths, summary)
        return summary

    # -- what changed --------------------------------------------------------------

    def _wanted(self, raw: str) -> Path | None:
        """The transcript a changed path stands for, or None when it is not one we index."""
        path = Path(_main_file(raw))
        if path in self.paths:
            return path
        if not any(root in path.parents for root in self.paths):
            return None
        if not watched(path) or not path.is_file():
            return None
        return path

    def _roots(self) -> list[str]:
        """What to watch: each path, or its parent directory while it does not exist yet (a
        file named on the command line may be created, rotated or replaced)."""
        roots: list[str] = []
        for path in self.paths:
            target = path if path.is_dir() else path.parent
            while not target.exists() and target != target.parent:
                target = target.parent
            if str(target) not in roots:
                roots.append(str(target))
        return roots

    def _events(self) -> Iterator[list[Path]]:
        from watchfiles import watch

        # yield_on_timeout: the first (empty) round comes as soon as the watch is in place;
        # after that an idle watcher wakes once per IDLE_WAKE_MS and finds nothing to do
        for changes in watch(*self._roots(), stop_event=self._stop, debounce=DEBOUNCE_MS,
                             step=STEP_MS, rust_timeout=IDLE_WAKE_MS, yield_on_timeout=True,
                             recursive=True, raise_interrupt=True, ignore_permission_denied=True):
            found: list[Path] = []
            for _change, raw in changes:
                path = self._wanted(raw)
                if path is not None and path not in found:
                    found.append(path)
            yield found

    def _snapshot(self) -> dict[Path, tuple[int, int, int]]:
        seen: dict[Path, tuple[int, int, int]] = {}
        for path, _explicit in walk_inputs(self.paths):
            for candidate in (path, *(Path(str(path) + s) for s in _SIDE_FILES[:2])):
                try:
                    info = candidate.stat()
                except OSError:
                    continue
                seen[candidate] = (info.st_size, info.st_mtime_ns, info.st_ino)
        return seen

    def _polled(self) -> Iterator[list[Path]]:
        before = self._snapshot()
        yield []  # the catch-up round
        while not self._stop.wait(self.interval):
            now = self._snapshot()
            changed: list[Path] = []
            for path, stamp in now.items():
                if before.get(path) != stamp:
                    main = Path(_main_file(str(path)))
                    if main not in changed and main.exists():
                        changed.append(main)
            before = now
            yield changed

