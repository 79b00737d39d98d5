"""Per-entry provenance and the append-only history, kept in the home's SQLite database.

Rows are keyed by ``(target, entry text)``; the .md files are never touched.
Every public method swallows database failures (logged once per cause) and
returns an empty/neutral value: provenance must never block a memory write,
e.g. when the database file or directory is read-only.

Hand edits: :meth:`Provenance.sync` compares the entries found in the file
with the rows last recorded. New text is recorded as ``hand_edit`` adds,
vanished text as ``hand_edit`` removes (one of each is paired into a replace
that keeps the original creation time). The very first sync of a target
records existing entries with origin ``import`` and no history.

A write whose provenance cannot be recorded (the database busy or unwritable) is
queued in ``memories/provenance.pending.jsonl`` and replayed, in order, before the
next reconcile, so the write keeps its own origin instead of becoming a hand edit.
Replay and appends hold the queue's lock; the queue is removed after the replay
commits (a crash between the two can replay it once more).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hermes_store.builtin.entries import join_entries
from hermes_store.builtin.fileio import locked
from hermes_store.builtin.storage import BuiltinStorage, open_builtin_storage
from hermes_store.home import described
from hermes_store.redaction import redactor_for
from hermes_store.tooling import storable_text

logger = logging.getLogger(__name__)

HAND_EDIT = "hand_edit"
IMPORT = "import"
PENDING_NAME = "provenance.pending.jsonl"


@dataclass(frozen=True)
class Event:
    """One change to record: ``add`` (new), ``replace`` (old -> new) or ``remove`` (old)."""

    action: str
    old_text: str | None = None
    new_text: str | None = None


def entries_hash(entries: list[str]) -> str:
    """Stable fingerprint of a list of entries."""
    return hashlib.sha256(join_entries(entries).encode("utf-8")).hexdigest()


class Provenance:
    """Provenance rows and history for one home (lazy database connection)."""

    def __init__(self, home: Any, busy_patience: float | None = None) -> None:
        from hermes_store.db import default_busy_patience

        self.home = home
        # never longer than 5 s: a memory write must not wait on the database (it queues instead)
        self.busy_patience = min(5.0, default_busy_patience()) if busy_patience is None else busy_patience
        self._db: Any = None
        self._storage: BuiltinStorage | None = None
        self.last_error: str | None = None

    # -- connection ---------------------------------------------------------

    def store_ready(self) -> bool:
        """True when there is a store to record in (open, or there to open); without one a
        load's sync has nothing to do (see :meth:`sync`)."""
        return self._storage is not None or not self._no_store()

    def _no_store(self) -> bool:
        """True when the home has no store yet: a read answers empty and a load's sync waits
        for the first write (which reconciles the file first), so reading memory never
        creates a database. A home whose store cannot be located (bad URL) goes on to fail
        and be logged on open, as before."""
        try:
            return not self.home.store_exists()
        except Exception:  # noqa: BLE001 - the open below names the problem
            return False

    def _database(self) -> BuiltinStorage:
        if self._storage is None:
            self._db = self.home.open_db(busy_patience=self.busy_patience)
            self._storage = open_builtin_storage(self._db)
        return self._storage

    def _redacted(self, texts: list[str]) -> list[str]:
        """Entry texts as the rows hold them: secrets replaced by the store's markers."""
        redact = redactor_for(self._database().db).redact
        return [redact(storable_text(t)) or "" for t in texts]

    def _redacted_item(self, item: dict[str, Any]) -> dict[str, Any]:
        """A provenance record with every text redacted (before it is stored or queued)."""
        one = self._redacted
        events = [{**ev, "old_text": None if ev.get("old_text") is None else one([ev["old_text"]])[0],
                   "new_text": None if ev.get("new_text") is None else one([ev["new_text"]])[0]}
                  for ev in item["events"]]
        return {**item, "before": one(item["before"]), "after": one(item["after"]), "events": events}

    def _fail(self, what: str, exc: BaseException) -> None:
        message = f"{what}: {described(exc)}"  # "ConfigError: ..." read as an internal name
        cause = message.split(": ", 1)[1]
        # one warning per problem: the sync, the read and the record of one command failing on
        # the same unreachable store said the same thing up to three times
        if self.last_error is None or self.last_error.split(": ", 1)[1] != cause:
            logger.warning("memory provenance unavailable (%s); the .md files are unaffected", message)
        self.last_error = message
        self.close()

    def close(self) -> None:
        """Close the database connection (reopened on next use)."""
        db, self._db, self._storage = self._db, None, None
        if db is not None:
            try:
                db.close()
            except Exception:  # closing a broken connection must not raise
                logger.debug("closing provenance database failed", exc_info=True)

    # -- writes -------------------------------------------------------------

    @property
    def pending_path(self) -> Path:
        """The queue of writes whose provenance is still to be recorded."""
        return Path(self.home.memories_dir) / PENDING_NAME

    def _write(self, body: Callable[[BuiltinStorage], Any]) -> Any:
        """Run ``body(db)`` in one write transaction, after replaying any queued records."""
        db = self._database()
        queue = self.pending_path
        if not queue.exists():
            with db.transaction():
                return body(db)
        with locked(queue):
            with db.transaction():
                # another process of this home may have replayed the queue while this one
                # waited for its lock: then there is nothing left to replay
                for item in _read_queue(queue) if queue.exists() else []:
                    self._apply_record(db, item)
                result = body(db)
            queue.unlink(missing_ok=True)
        return result

    def _apply_record(self, db: BuiltinStorage, item: dict[str, Any]) -> list[int]:
        target, stamp = item["target"], float(item["stamp"])
        self._reconcile(db, target, list(item["before"]), stamp)
        ids = [self._apply(db, target, Event(**ev), stamp, item["origin"], item.get("session_id", ""),
                           item.get("restored_from")) for ev in item["events"]]
        self._set_hash(db, target, list(item["after"]), stamp)
        return ids

    def _enqueue(self, item: dict[str, Any]) -> bool:
        """Append one record to the queue (0600, fsynced); False when even that failed."""
        queue = self.pending_path
        try:
            with locked(queue):
                fd = os.open(queue, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
                try:
                    os.write(fd, (json.dumps(item, ensure_ascii=False) + "\n").encode("utf-8"))
                    os.fsync(fd)
                finally:
                    os.close(fd)
        except OSError as exc:
            logger.warning("memory provenance could not be queued in %s: %s", queue, exc)
            return False
        return True

    def replay_pending(self) -> bool:
        """Record queued provenance now (e.g. before showing history); False when it stays queued."""
        if not self.pending_path.exists():
            return True
        try:
            self._write(lambda db: None)
        except Exception as exc:
            self._fail("replay", exc)
            return False
        return True

    def sync(self, target: str, entries: list[str], now: float | None = None) -> bool:
        """Reconcile rows with the file's ``entries``; return False when the DB was unusable.

        Without a store there is nothing to reconcile: the first write records the file's
        entries (as ``import``) before its own event, in the store it creates."""
        if not self.store_ready():
            return True
        try:
            clean = self._redacted(entries)
            self._write(lambda db: self._reconcile(db, target, clean, time.time() if now is None else now))
        except Exception as exc:
            self._fail("sync", exc)
            return False
        self.last_error = None
        return True

    def record(self, target: str, before: list[str], after: list[str], events: list[Event], *,
               origin: str, session_id: str = "", restored_from: int | None = None,
               now: float | None = None) -> list[int]:
        """Record committed ``events`` that turned ``before`` into ``after``; return history ids.

        ``before`` is the file content the write started from: differences from
        the rows are reconciled as hand edits first, so they are not blamed on
        this writer. Only the rows named by ``events`` are touched.
        """
        stamp = time.time() if now is None else now
        item = {"target": target, "before": list(before), "after": list(after),
                "events": [asdict(ev) for ev in events], "origin": origin, "session_id": session_id,
                "restored_from": restored_from, "stamp": stamp}
        try:
            item = self._redacted_item(item)
            ids = self._write(lambda db: self._apply_record(db, item))
        except Exception as exc:
            self._fail("record", exc)
            if self._enqueue(item):  # recorded later, in order, with its own origin
                logger.warning("memory provenance of a %s write queued in %s", target, self.pending_path)
            return []
        self.last_error = None
        return ids

    def _reconcile(self, db: BuiltinStorage, target: str, entries: list[str], now: float) -> None:
        synced = db.synced_hash(target)
        digest = entries_hash(entries)
        if synced is not None and synced == digest:
            return
        known = db.entry_texts(target)
        first_sync = synced is None and not known
        present = set(entries)
        known_set = set(known)
        added = [e for e in entries if e not in known_set]
        removed = [t for t in known if t not in present]
        if first_sync:
            for text in added:
                db.insert_entry(target, text, now, IMPORT, "")
        elif len(added) == 1 and len(removed) == 1:
            self._apply(db, target, Event("replace", removed[0], added[0]), now, HAND_EDIT, "", None)
        else:
            for text in removed:
                self._apply(db, target, Event("remove", text, None), now, HAND_EDIT, "", None)
            for text in added:
                self._apply(db, target, Event("add", None, text), now, HAND_EDIT, "", None)
        self._set_hash(db, target, entries, now)

    def _apply(self, db: BuiltinStorage, target: str, ev: Event, now: float, origin: str, session_id: str,
               restored_from: int | None) -> int:
        if ev.action == "add" and ev.new_text is not None:
            db.insert_entry(target, ev.new_text, now, origin, session_id)
        elif ev.action == "remove" and ev.old_text is not None:
            db.delete_entry(target, ev.old_text)
        elif ev.action == "replace" and ev.old_text is not None and ev.new_text is not None:
            self._rename(db, target, ev.old_text, ev.new_text, now, origin, session_id)
        else:
            raise ValueError(f"malformed provenance event {ev!r}")
        return db.append_history(target, ev.action, ev.old_text, ev.new_text, now, origin, session_id,
                                 restored_from)

    @staticmethod
    def _rename(db: BuiltinStorage, target: str, old: str, new: str, now: float, origin: str,
                session_id: str) -> None:
        """The entry ``old`` became ``new``: keep its creation time, stamp only it."""
        exists_old = db.entry_exists(target, old)
        exists_new = db.entry_exists(target, new)
        if old != new and exists_old and not exists_new:
            db.rename_entry(target, old, new)
        elif old != new and exists_old:
            db.delete_entry(target, old)
        elif not exists_old and not exists_new:
            db.insert_entry(target, new, now, origin, session_id)
            return
        db.touch_entry(target, new, now, origin, session_id)

    @staticmethod
    def _set_hash(db: BuiltinStorage, target: str, entries: list[str], now: float) -> None:
        db.set_synced_hash(target, entries_hash(entries), now)

    # -- reads --------------------------------------------------------------

    def entry_info(self, target: str) -> dict[str, dict[str, Any]]:
        """``{entry text: provenance row}`` for a target (empty when the DB is unusable or absent)."""
        if self._storage is None and self._no_store():
            return {}
        try:
            rows = self._database().entry_rows(target)
        except Exception as exc:
            self._fail("read", exc)
            return {}
        return {row.pop("text"): row for row in rows}

    def entry_info_for(self, target: str, entries: list[str]) -> dict[str, dict[str, Any]]:
        """``{entry text as in the file: provenance row}`` (rows hold the redacted text)."""
        info = self.entry_info(target)
        if not info:
            return {}
        try:
            stored = self._redacted(entries)
        except Exception as exc:
            self._fail("read", exc)
            return {}
        return {entry: info[clean] for entry, clean in zip(entries, stored, strict=True) if clean in info}

    def history(self, target: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """History events, newest first (optionally one target, at most ``limit``); none before
        the store exists (queued provenance still makes it, as the write it records would have)."""
        if self._storage is None and self._no_store() and not self.pending_path.exists():
            return []
        self.replay_pending()
        try:
            return self._database().history(target, limit)
        except Exception as exc:
            self._fail("history", exc)
            return []

    def event(self, event_id: int) -> dict[str, Any] | None:
        """One history event by id, or None."""
        if self._storage is None and self._no_store():
            return None
        try:
            return self._database().history_event(int(event_id))
        except Exception as exc:
            self._fail("history", exc)
            return None


def _read_queue(path: Path) -> list[dict[str, Any]]:
    """The queued records (a torn last line from a crash is skipped)."""
    items = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            logger.warning("%s: unreadable queued provenance line skipped", path)
            continue
        if isinstance(item, dict) and {"target", "before", "after", "events", "origin", "stamp"} <= item.keys():
            items.append(item)
    return items
