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
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from typing import Any

from hermes_store.builtin.entries import join_entries
from hermes_store.builtin.storage import BuiltinStorage, open_builtin_storage

logger = logging.getLogger(__name__)

HAND_EDIT = "hand_edit"
IMPORT = "import"


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

    def __init__(self, home: Any, busy_patience: float = 5.0) -> None:
        self.home = home
        self.busy_patience = busy_patience
        self._db: Any = None
        self._storage: BuiltinStorage | None = None
        self.last_error: str | None = None

    # -- connection ---------------------------------------------------------

    def _database(self) -> BuiltinStorage:
        if self._storage is None:
            self._db = self.home.open_db(busy_patience=self.busy_patience)
            self._storage = open_builtin_storage(self._db)
        return self._storage

    def _fail(self, what: str, exc: BaseException) -> None:
        message = f"{what}: {type(exc).__name__}: {exc}"
        if message != self.last_error:
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

    def sync(self, target: str, entries: list[str], now: float | None = None) -> bool:
        """Reconcile rows with the file's ``entries``; return False when the DB was unusable."""
        try:
            db = self._database()
            with db.transaction():
                self._reconcile(db, target, entries, time.time() if now is None else now)
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
        try:
            db = self._database()
            with db.transaction():
                self._reconcile(db, target, before, stamp)
                ids = [self._apply(db, target, ev, stamp, origin, session_id, restored_from)
                       for ev in events]
                self._set_hash(db, target, after, stamp)
        except Exception as exc:
            self._fail("record", exc)
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
        """``{entry text: provenance row}`` for a target (empty when the DB is unusable)."""
        try:
            rows = self._database().entry_rows(target)
        except Exception as exc:
            self._fail("read", exc)
            return {}
        return {row.pop("text"): row for row in rows}

    def history(self, target: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """History events, newest first (optionally one target, at most ``limit``)."""
        try:
            return self._database().history(target, limit)
        except Exception as exc:
            self._fail("history", exc)
            return []

    def event(self, event_id: int) -> dict[str, Any] | None:
        """One history event by id, or None."""
        try:
            return self._database().history_event(int(event_id))
        except Exception as exc:
            self._fail("history", exc)
            return None
