"""Choosing the active provider from ``memory.provider`` and building the manager.

Unknown, unloadable or unavailable providers never stop the agent: the manager then holds
the built-in provider only and :class:`Selection` carries a message saying why.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from hermes_store.home import ConfigError, Home
from hermes_store.providers.base import is_core_provider
from hermes_store.providers.discovery import (
    ProviderInfo,
    discover_providers,
    find_provider,
    release_unused,
)

logger = logging.getLogger(__name__)


@dataclass
class Selection:
    """The outcome of reading ``memory.provider``: what was asked for and what is active."""

    requested: str
    active: str  # the external provider in use, "" for built-in only
    message: str
    ok: bool  # False when the request could not be honoured
    provider: Any = None
    infos: list[ProviderInfo] = field(default_factory=list)


def select_provider(home: Home | None = None, infos: list[ProviderInfo] | None = None) -> Selection:
    """Resolve ``memory.provider`` against the discovered providers."""
    home = home or Home()
    try:
        requested = home.memory_config().provider
    except ConfigError as exc:
        message = f"{exc}; using built-in memory only"
        logger.warning(message)
        return Selection("", "", message, False, infos=infos or [])
    if is_core_provider(requested):
        label = "not set" if not requested.strip() else f"'{requested}'"
        return Selection(requested, "", f"memory.provider is {label}: built-in memory only", True,
                         infos=infos or [])
    infos = discover_providers(home) if infos is None else infos
    info = find_provider(infos, requested)
    if info is None:
        known = ", ".join(sorted({i.name for i in infos if not i.shadowed_by})) or "none"
        message = (f"Memory provider '{requested}' not found (memory.provider in {home.config_path}); "
                   f"using built-in memory only. Known providers: {known}. "
                   "Run 'hermes-store provider list' to see them.")
        logger.warning(message)
        return Selection(requested, "", message, False, infos=infos)
    if not info.usable:
        reason = info.reason or "is_available() returned False"
        message = f"Memory provider '{requested}' is not available: {reason}; using built-in memory only."
        logger.warning(message)
        return Selection(requested, "", message, False, infos=infos)
    return Selection(requested, requested, f"Memory provider '{requested}' active (with built-in memory)",
                     True, provider=info.provider, infos=infos)


def build_memory_manager(home: Home | None = None, *, session_id: str | None = None,
                         infos: list[ProviderInfo] | None = None, **manager_kwargs: Any):
    """A :class:`MemoryManager` with ``builtin`` plus the configured provider (if usable).

    When ``session_id`` is given, ``initialize_all`` is called too. Returns
    ``(manager, selection)``; instances created during discovery but not used are shut down.
    """
    from hermes_store.providers.builtin import BuiltinMemoryProvider
    from hermes_store.providers.manager import MemoryManager

    home = home or Home()
    manager_kwargs.setdefault("hermes_home", str(home.root))
    manager = MemoryManager(**manager_kwargs)
    manager.add_provider(BuiltinMemoryProvider(home))
    selection = select_provider(home, infos)
    refusal = _registration_refusal(manager, selection.provider) if selection.provider is not None else None
    if refusal is not None:
        selection.message = (f"Memory provider '{selection.requested}' could not be registered{refusal}; "
                             "using built-in memory only.")
        selection.ok = False
        selection.active = ""
        selection.provider = None
    release_unused(selection.infos, keep=selection.provider)
    if session_id is not None:
        manager.initialize_all(session_id, hermes_home=str(home.root))
    return manager, selection


def _registration_refusal(manager: Any, provider: Any) -> str | None:
    """None when ``manager`` registered ``provider``; else what to add to the message (the
    provider's own error, when reading its name or tool schemas raised)."""
    try:
        return None if manager.add_provider(provider) else ""
    except Exception as exc:  # a plug-in's get_tool_schemas/name: anything can come out
        logger.warning("Memory provider %r could not be registered: %s", provider, exc)
        return f": {type(exc).__name__}: {exc}"
