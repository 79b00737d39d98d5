"""What every area's storage seam shares: :class:`EngineStorage` and :func:`engine_class`.

Each area (``builtin``, ``facts``, ``sessions``) names its reads and writes in an abstract
storage class with one implementation per database engine, registered in the area's
``STORAGE_ENGINES`` dict as ``"module:Class"`` strings (imported on use, so an engine's
driver is only needed where it is chosen). This module holds the part that is the same for
every area: the database the storage works on, its read-only flag, the write transaction's
contract and the look-up in a registry.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from hermes_store.engines import StoreDatabase, load


class EngineStorage(ABC):
    """One area's storage over one database object (``db``: a ``Database`` or ``PgDatabase``,
    typed by :class:`~hermes_store.engines.StoreDatabase`)."""

    engine: str = ""

    def __init__(self, db: StoreDatabase) -> None:
        self.db = db

    @property
    def readonly(self) -> bool:
        """True when this storage must not be written (a read-only reader)."""
        return bool(getattr(self.db, "readonly", False))

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Any]:
        """A write transaction: committed on success, rolled back on error; nested use joins."""

    def lock_patience(self, seconds: float) -> AbstractContextManager[None]:
        """Within: a write transaction begun here waits at most ``seconds`` for a lock another
        process holds, then fails with ``DatabaseError`` (see ``StoreDatabase.lock_patience``)."""
        return self.db.lock_patience(seconds)


def engine_class(registry: Mapping[str, str], engine: str, what: str) -> type:
    """The class ``registry`` names for ``engine`` (a ``"module:Class"`` string, imported now).

    ``what`` names the area in the error raised for an engine the registry does not know
    (``ValueError`` listing the known engines).
    """
    target = registry.get(engine)
    if target is None:
        raise ValueError(f"no {what} for database engine {engine!r} (known: {', '.join(sorted(registry))})")
    return load(target)
