"""hermes_store.facts: the fact store (holographic-style memory with trust scores).

Holds: :class:`FactStore` (the library API) and its helpers (entities, retrieval,
conflicts, trust, HRR vectors, extraction), the storage seam (:mod:`.storage`, the
APSW implementation in :mod:`.storage_sqlite`) and the ``fact_store`` /
``fact_feedback`` tools (:mod:`hermes_store.facts.fact_tools`).

May import: the lowest layer only (``db``, ``home``, ``query``, ``tooling``, ``fsutil``,
``timeutil``, ``config_edit``). Never ``builtin``, ``sessions``, ``providers``, ``recall``
or ``tools``. The MemoryProvider over it (``holographic_store``) lives in
:mod:`hermes_store.providers.holographic_store`.
"""

from __future__ import annotations

from hermes_store.facts.store import FactNotFound, FactStore, FactStoreError

__all__ = ["FactNotFound", "FactStore", "FactStoreError"]
