"""Built-in memory's storage seam: provenance rows, the history and the entry search index.

MEMORY.md / USER.md stay the truth; the database only holds what is derived from them
(who wrote each entry and when, the append-only history, a full-text index of the
entries). :class:`BuiltinStorage` names those reads and writes as plain methods over
plain values; :func:`open_builtin_storage` picks the implementation registered for
``db.engine`` in :data:`STORAGE_ENGINES` (``"module:Class"`` strings, loaded on use).

Row shapes:

* entry provenance: ``text, created_at, updated_at, created_origin, created_session,
  updated_origin, updated_session`` (times as epoch seconds);
* history event: ``id, target, action, old_text, new_text, at, origin, session_id,
  restored_from``;
* index hit: ``target, entry_index, content, snippet, score`` (higher score is better;
  the snippet marks matches with the marks given, :data:`hermes_store.excerpts.HIGHLIGHT_MARKS` by default,
  or is empty when the engine has no snippet).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from hermes_store.engines import StoreDatabase, storage_registry
from hermes_store.excerpts import HIGHLIGHT_MARKS
from hermes_store.query import QueryPlan
from hermes_store.storage_base import EngineStorage, engine_class

STORAGE_ENGINES: dict[str, str] = storage_registry("builtin")  # from the one engine registry


class BuiltinStorage(EngineStorage):
    """Provenance, history and the entry index of one database (see the module docstring);
    ``db``, ``readonly`` and ``transaction`` come from :class:`~hermes_store.storage_base.EngineStorage`."""

    # ---- provenance ----------------------------------------------------------------------

    @abstractmethod
    def synced_hash(self, target: str) -> str | None:
        """The fingerprint of the target's entries when provenance last matched the file."""

    @abstractmethod
    def set_synced_hash(self, target: str, digest: str, at: float) -> None:
        """Record the fingerprint provenance now matches."""

    @abstractmethod
    def entry_texts(self, target: str) -> list[str]:
        """Texts of the target's recorded entries, oldest first (then by text)."""

    @abstractmethod
    def entry_exists(self, target: str, text: str) -> bool:
        """True when an entry with exactly this text is recorded for the target."""

    @abstractmethod
    def insert_entry(self, target: str, text: str, at: float, origin: str, session_id: str) -> None:
        """Record a new entry (created and updated now); an existing one is left alone."""

    @abstractmethod
    def delete_entry(self, target: str, text: str) -> None:
        """Forget an entry's provenance row."""

    @abstractmethod
    def rename_entry(self, target: str, old: str, new: str) -> None:
        """The entry ``old`` now reads ``new`` (its creation data kept)."""

    @abstractmethod
    def touch_entry(self, target: str, text: str, at: float, origin: str, session_id: str) -> None:
        """Stamp who last updated an entry, and when."""

    @abstractmethod
    def entry_rows(self, target: str) -> list[dict[str, Any]]:
        """Provenance rows of the target's entries (see the module docstring)."""

    @abstractmethod
    def append_history(self, target: str, action: str, old_text: str | None, new_text: str | None,
                       at: float, origin: str, session_id: str, restored_from: int | None) -> int:
        """Append one history event; returns its id (ids grow with time)."""

    @abstractmethod
    def history(self, target: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """History events, newest first (optionally one target, at most ``limit``)."""

    @abstractmethod
    def history_event(self, event_id: int) -> dict[str, Any] | None:
        """One history event by id, or None."""

    # ---- entry search index --------------------------------------------------------------

    @abstractmethod
    def indexed_hash(self, target: str) -> str | None:
        """The file fingerprint the target's index rows were built from (None: never built)."""

    @abstractmethod
    def replace_index(self, target: str, digest: str, entries: Sequence[str], at: float) -> None:
        """Replace the target's index rows by ``entries`` (1-based positions) built from ``digest``.

        Raises :class:`hermes_store.db.DatabaseError` when the database cannot be written.
        """

    @abstractmethod
    def search_index(self, query: str | QueryPlan, targets: Sequence[str], limit: int,
                     marks: tuple[str, str] = HIGHLIGHT_MARKS) -> tuple[list[dict[str, Any]], str | None]:
        """Index hits of a user query among ``targets``, best first, and the query note; each
        snippet's matched words between ``marks`` (open, close).

        ``query`` is the text a person typed (the :mod:`hermes_store.query` language) or its
        compiled :class:`~hermes_store.query.QueryPlan` (engine-neutral :class:`~hermes_store.query.Match`
        trees an implementation renders in its own syntax).
        """


def open_builtin_storage(db: StoreDatabase) -> BuiltinStorage:
    """The built-in memory storage over ``db`` (chosen by ``db.engine``)."""
    return engine_class(STORAGE_ENGINES, db.engine, "built-in memory storage")(db)
