"""Memory providers: the MemoryProvider contract, the built-in provider, the manager,
context fencing and discovery.

Layering: this package sits above ``hermes_store.builtin`` and ``hermes_store.facts``
and never imports ``hermes_store.recall`` or ``hermes_store.tools``; the one exception
is :mod:`hermes_store.providers.hermes_plugin`, the top-level adapter loaded by a
Hermes home's plugin directory.
"""

from hermes_store.providers.base import MemoryProvider, RecallStatus

__all__ = ["MemoryProvider", "RecallStatus"]
