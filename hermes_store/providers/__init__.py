"""Memory providers: the MemoryProvider contract, the built-in provider, the manager,
context fencing and discovery.

Layering: this package sits above ``hermes_store.builtin`` and ``hermes_store.facts``
and never imports ``hermes_store.recall`` or ``hermes_store.tools``; the one exception
is :mod:`hermes_store.providers.hermes_plugin`, the top-level adapter that a Hermes
home's plugin directory loads (it serves the ``recall`` tool).

Names are imported lazily so that light users (``fencing`` from recall) stay cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from hermes_store.providers.base import MemoryProvider, RecallStatus

_LAZY = {
    "BuiltinMemoryProvider": "hermes_store.providers.builtin",
    "MemoryManager": "hermes_store.providers.manager",
    "build_memory_context_block": "hermes_store.providers.fencing",
    "sanitize_context": "hermes_store.providers.fencing",
    "StreamingContextScrubber": "hermes_store.providers.fencing",
    "discover_providers": "hermes_store.providers.discovery",
    "ProviderInfo": "hermes_store.providers.discovery",
    "load_plugin_dir": "hermes_store.providers.discovery",
    "build_memory_manager": "hermes_store.providers.activation",
    "select_provider": "hermes_store.providers.activation",
    "set_config_value": "hermes_store.providers.config_edit",
}

__all__ = ["MemoryProvider", "RecallStatus", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_store.providers' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
