"""The ``builtin`` provider: MEMORY.md / USER.md behind the MemoryProvider contract.

Always registered first by the manager. Its one tool is ``memory`` (the Hermes
schema and dispatcher from :mod:`hermes_store.builtin.memory_tool`); its system-prompt
block is the store's frozen snapshot; every committed write is reported to the
write listener (the manager), which mirrors it to the external provider.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from hermes_store.builtin.memory_tool import MEMORY_SCHEMA, MEMORY_TOOL
from hermes_store.builtin.store import MemoryStore
from hermes_store.home import Home, MemoryConfig
from hermes_store.providers.base import BUILTIN_NAME, MemoryProvider
from hermes_store.tooling import ToolArgumentError, ToolContext, fence_reply

logger = logging.getLogger(__name__)

WriteListener = Callable[[str, str, str, dict], Any]


class BuiltinMemoryProvider(MemoryProvider):
    """MEMORY.md / USER.md as a provider (name ``builtin``, tool ``memory``)."""

    def __init__(self, home: Home | str | None = None, *, store: MemoryStore | None = None,
                 origin: str = "tool") -> None:
        self._home = home if isinstance(home, Home) or home is None else Home(home)
        self._store = store
        self._owns_store = store is None
        self._origin = origin
        self._listener: WriteListener | None = None
        self._ctx: ToolContext | None = None
        self.session_id = ""
        if store is not None:
            store.on_write = self._on_store_write

    # ---- identity / setup -----------------------------------------------------------------

    @property
    def name(self) -> str:
        return BUILTIN_NAME

    def is_available(self) -> bool:
        """Always available: plain files in the Hermes home."""
        return True

    @property
    def home(self) -> Home:
        """The Hermes home this provider serves."""
        if self._home is None:
            self._home = Home()
        return self._home

    def config(self) -> MemoryConfig:
        """The ``memory:`` section read key by key (a bad key keeps its default, with a warning;
        the memory tool then refuses writes)."""
        cfg = self.home.read_memory_config()
        for problem in cfg.errors:
            logger.warning("built-in memory: %s; writes refused until fixed", problem)
        return cfg

    @property
    def store(self) -> MemoryStore:
        """The MemoryStore (created and loaded on first use)."""
        if self._store is None:
            cfg = self.config()
            self._store = MemoryStore(self.home, cfg.memory_char_limit, cfg.user_char_limit,
                                      render=cfg.render, on_write=self._on_store_write,
                                      origin=self._origin, session_id=self.session_id)
            self._store.load_from_disk()
        return self._store

    def set_write_listener(self, listener: WriteListener | None) -> None:
        """Receive ``(action, target, content, metadata)`` after each committed write."""
        self._listener = listener

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Bind to the session; ``hermes_home`` picks the home when none was given; loads the snapshot."""
        self.session_id = session_id or ""
        if self._home is None and kwargs.get("hermes_home"):
            self._home = Home(kwargs["hermes_home"])
        store = self.store
        store.session_id = self.session_id
        self._ctx = None

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """``[memory]`` unless both the memory and the user-profile stores are disabled."""
        cfg = self.config()
        return [MEMORY_SCHEMA] if (cfg.memory_enabled or cfg.user_profile_enabled) else []

    # ---- hooks ----------------------------------------------------------------------------

    def system_prompt_block(self) -> str:
        """The frozen MEMORY and USER blocks enabled in config (taken at load time)."""
        cfg = self.config()
        return self.store.system_prompt(memory_enabled=cfg.memory_enabled,
                                        user_profile_enabled=cfg.user_profile_enabled)

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """A new turn re-arms the consolidation-failure budget."""
        if self._store is not None:
            self._store.reset_consolidation_failures()

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "",
                          reset: bool = False, rewound: bool = False, **kwargs: Any) -> None:
        """A new session (or compression) refreshes the frozen snapshot from disk."""
        self.session_id = new_session_id or self.session_id
        if self._store is not None:
            self._store.session_id = self.session_id
            self._store.load_from_disk()
        self._ctx = None

    def _context(self) -> ToolContext:
        if self._ctx is None or self._ctx.session_id != self.session_id:
            self._ctx = ToolContext(self.home, session_id=self.session_id,
                                    options={"store": self.store, "origin": self._origin})
        return self._ctx

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run the ``memory`` tool and return its JSON result."""
        if tool_name != "memory":
            return json.dumps({"success": False, "error": f"builtin provider has no tool '{tool_name}'"})
        session_id = kwargs.get("session_id")
        if session_id and session_id != self.session_id:
            self.session_id = session_id
            self.store.session_id = session_id
        try:
            result = MEMORY_TOOL.handler(args if isinstance(args, dict) else {}, self._context())
        except ToolArgumentError as exc:
            result = {"success": False, "error": str(exc)}
        return json.dumps(fence_reply(result), ensure_ascii=False, default=str)

    def _on_store_write(self, action: str, target: str, content: str, metadata: dict) -> None:
        listener = self._listener
        if listener is None:
            return
        meta = dict(metadata or {})
        if action == "remove" and not content:
            content = str(meta.get("previous_content") or "")
        listener(action, target, content, meta)

    def shutdown(self) -> None:
        """Close the store's provenance database (when this provider created the store)."""
        if self._store is not None and self._owns_store:
            self._store.close()
