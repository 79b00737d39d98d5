"""hermes_store.facts: the fact store (holographic-style memory with trust scores).

``FactStore`` is the library API; ``FactStoreProvider`` the MemoryProvider
(name ``holographic_store``); the ``fact_store``/``fact_feedback`` tools live in
:mod:`hermes_store.facts.tool`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_store.facts.store import FactNotFound, FactStore, FactStoreError

if TYPE_CHECKING:
    from hermes_store.facts.provider import FactStoreProvider

__all__ = ["FactNotFound", "FactStore", "FactStoreError", "FactStoreProvider"]


def __getattr__(name: str) -> Any:
    if name == "FactStoreProvider":  # imported lazily: the provider pulls in providers.base
        from hermes_store.facts.provider import FactStoreProvider

        return FactStoreProvider
    raise AttributeError(name)
