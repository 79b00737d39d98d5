"""The resources the MCP server lists: live MEMORY.md / USER.md entries and the frozen prompt block.

``memory://MEMORY.md`` and ``memory://USER.md`` are the entries on disk now, in the
file's own format (entries separated by ``§`` lines), each scanned as it would be for
a prompt (a poisoned entry shows as ``[BLOCKED: …]``). ``memory://prompt`` is exactly
what ``hermes-store memory prompt`` prints: the blocks a new session's system prompt
would get. Every text goes through the fence scrubber, so no stored text can forge a
``<memory-context>`` fence. A store disabled in config reads as an empty text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hermes_store.builtin.entries import ENTRY_DELIMITER
from hermes_store.builtin.store import MemoryStore
from hermes_store.home import ConfigError, Home, MemoryConfig
from hermes_store.tooling import sanitize_context


@dataclass(frozen=True)
class ResourceSpec:
    """One readable resource."""

    uri: str
    name: str
    title: str
    description: str
    mime_type: str
    read: Callable[[Home], str]


def _config(home: Home) -> MemoryConfig:
    try:
        return home.memory_config()
    except ConfigError:
        return MemoryConfig()


def _store(home: Home, cfg: MemoryConfig) -> MemoryStore:
    return MemoryStore(home, cfg.memory_char_limit, cfg.user_char_limit, render=cfg.render,
                       origin="mcp", provenance=False)


def _entries(target: str) -> Callable[[Home], str]:
    def read(home: Home) -> str:
        cfg = _config(home)
        enabled = cfg.user_profile_enabled if target == "user" else cfg.memory_enabled
        if not enabled:
            return ""
        store = _store(home, cfg)
        try:
            return sanitize_context(ENTRY_DELIMITER.join(store.current_entries(target)))
        finally:
            store.close()
    return read


def _prompt(home: Home) -> str:
    cfg = _config(home)
    store = _store(home, cfg)
    try:
        store.load_from_disk()
        return sanitize_context(store.system_prompt(memory_enabled=cfg.memory_enabled,
                                                    user_profile_enabled=cfg.user_profile_enabled))
    finally:
        store.close()


RESOURCES: dict[str, ResourceSpec] = {spec.uri: spec for spec in (
    ResourceSpec("memory://MEMORY.md", "MEMORY.md", "Agent notes (MEMORY.md)",
                 "The live entries of MEMORY.md, separated by lines holding only '§'.",
                 "text/markdown", _entries("memory")),
    ResourceSpec("memory://USER.md", "USER.md", "User profile (USER.md)",
                 "The live entries of USER.md, separated by lines holding only '§'.",
                 "text/markdown", _entries("user")),
    ResourceSpec("memory://prompt", "prompt", "Memory block of a new session's system prompt",
                 "The frozen MEMORY and USER blocks a session started now would get.",
                 "text/plain", _prompt),
)}


class UnknownResource(KeyError):
    """No resource has that URI."""


def read_resource(uri: str, home: Home) -> str:
    """The text of resource ``uri`` (UnknownResource when there is none)."""
    spec = RESOURCES.get(uri)
    if spec is None:
        raise UnknownResource(f"no resource {uri!r}; available: {', '.join(RESOURCES)}")
    return spec.read(home)
