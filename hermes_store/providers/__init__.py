"""Memory providers: the MemoryProvider contract, the providers themselves (built-in
memory in :mod:`.builtin`, the fact store ``holographic_store`` in
:mod:`.holographic_store`), the manager, context fencing, activation and discovery.

May import: ``hermes_store.builtin``, ``hermes_store.facts``, ``hermes_store.sessions``
and the lowest layer. Never ``hermes_store.recall``, ``hermes_store.tools``, ``cli`` or
:mod:`hermes_store.hermes_plugin` (the Hermes adapter one layer up, which may use the
tool registry to serve ``recall``).

Names are imported lazily so that light users (``fencing`` from recall) stay cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from hermes_store.providers.base import MemoryProvider, RecallStatus, is_trivial_prompt

_LAZY = {
    "BuiltinMemoryProvider": "hermes_store.providers.builtin",
    "MemoryManager": "hermes_store.providers.manager",
    "build_memory_context_block": "hermes_store.providers.fencing",
    "sanitize_context": "hermes_store.tooling",
    "StreamingContextScrubber": "hermes_store.providers.fencing",
    "discover_providers": "hermes_store.providers.discovery",
    "ProviderInfo": "hermes_store.providers.discovery",
    "load_plugin_dir": "hermes_store.providers.discovery",
    "build_memory_manager": "hermes_store.providers.activation",
    "select_provider": "hermes_store.providers.activation",
    "set_config_value": "hermes_store.config_edit",
}

__all__ = ["MemoryProvider", "RecallStatus", "is_trivial_prompt", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_store.providers' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
