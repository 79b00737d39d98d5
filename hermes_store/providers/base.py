"""The ``MemoryProvider`` contract: the Hermes memory-provider method names and signatures.

A provider is a pluggable memory backend managed by
:class:`hermes_store.providers.manager.MemoryManager`. Four members are
abstract (``name``, ``is_available``, ``initialize``, ``get_tool_schemas``);
every other hook has a harmless default so a provider implements only what it
needs. Signatures match Hermes' ``agent/memory_provider.py`` so a provider
written for one works in the other.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from hermes_store.threads import ctx_bound, spawn_context_thread

BUILTIN_NAME = "builtin"  # the built-in memory provider's name (config.yaml ``memory.provider``)
#: ``memory.provider`` values that select the built-in store and no external provider, compared
#: stripped and case-insensitively (Hermes' ``CORE_MEMORY_PROVIDER_SENTINELS``).
CORE_PROVIDER_NAMES = frozenset({"", "default", BUILTIN_NAME, "built-in", "none"})
#: Hermes' pre-compress checkpoint API: 1 = best-effort ``on_pre_compress(messages)``; 2 = the
#: opt-in fail-closed checkpoint (normalised evidence, failures propagate under
#: ``compression.checkpoint_required``).
PRE_COMPRESS_CHECKPOINT_API_VERSION = 2
AUTHOR_KEYS = ("author_id", "author_name", "author_is_bot")  # on_turn_start's writer of the turn
INDICATOR_GLYPH = "🧠"  # Hermes' default glyph of the recall status line

#: Prompts with no semantic signal, where recall is skipped: Hermes' ``TRIVIAL_PROMPT_RE``
#: (``agent/memory_provider.py``), word for word. Anchored and followed only by whitespace or
#: punctuation, so "k8s", "yolo" and "note" do not match while "hi!", "thanks :)" and "done???" do.
TRIVIAL_PROMPT_RE = re.compile(
    r'^(yes|no|ok|okay|sure|thanks|thank you|y|n|yep|nope|yeah|nah|'
    r'hi|hey|hello|yo|sup|'
    r'continue|go ahead|do it|proceed|got it|cool|nice|great|done|next|lgtm|k)'
    r'[\s!?.:;,"' + "'" + r'~\u2018\u2019\u201c\u201d\u2014\u2013\u2026()\[\]{}<>*&^%$#@!+=`\u00a0]*$',
    re.IGNORECASE,
)


def is_trivial_prompt(text: str | None) -> bool:
    """True for empty input, a slash command, or a bare greeting or acknowledgement (Hermes'
    ``is_trivial_prompt``): recall is skipped for these."""
    stripped = (text or "").strip()
    if not stripped or stripped.startswith("/"):
        return True
    return bool(TRIVIAL_PROMPT_RE.match(stripped))


def is_core_provider(name: str | None) -> bool:
    """True when a ``memory.provider`` value means the built-in store only (not a plug-in name)."""
    return str(name or "").strip().lower() in CORE_PROVIDER_NAMES


# The same names under Hermes' spelling (``agent/memory_provider.py``, zons 35c6ba51), so a provider
# module written against Hermes' imports them from here unchanged.
CORE_MEMORY_PROVIDER_SENTINELS = CORE_PROVIDER_NAMES
is_core_memory_provider = is_core_provider
__all__ = ["AUTHOR_KEYS", "BUILTIN_NAME", "CORE_MEMORY_PROVIDER_SENTINELS", "CORE_PROVIDER_NAMES",
           "INDICATOR_GLYPH", "PRE_COMPRESS_CHECKPOINT_API_VERSION", "TRIVIAL_PROMPT_RE", "MemoryProvider",
           "RecallStatus", "ctx_bound", "is_core_memory_provider", "is_core_provider", "is_trivial_prompt",
           "spawn_context_thread", "turn_author_of"]


def turn_author_of(kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """``{"id", "name", "is_bot"}`` from on_turn_start's author trio; None when no author was named."""
    author_id, name = kwargs.get("author_id"), kwargs.get("author_name")
    if author_id in (None, "") and name in (None, ""):
        return None
    return {"id": None if author_id is None else str(author_id),
            "name": None if name is None else str(name), "is_bot": bool(kwargs.get("author_is_bot"))}


@dataclass(frozen=True)
class RecallStatus:
    """What a provider recalled this turn, for a one-line status ("🧠 Label — recalled 3 memories")."""

    provider_label: str
    count: int
    glyph: str = INDICATOR_GLYPH

    def describe(self) -> str:
        """The status segment Hermes prints after a prefetch."""
        if self.count <= 0:
            what = "recalled relevant memory"
        elif self.count == 1:
            what = "recalled 1 memory"
        else:
            what = f"recalled {self.count} memories"
        return f"{self.glyph} {self.provider_label} — {what}"


class MemoryProvider(ABC):
    """Base class of every memory provider (the built-in one and external plugins)."""

    #: Set to 2 to opt into the pre-compress checkpoint contract (evidence + must-succeed).
    pre_compress_checkpoint_api_version: int = 1

    # ---- required -------------------------------------------------------------------------

    @property
    @abstractmethod
    def name(self) -> str:
        """Short identifier, e.g. ``"builtin"`` or ``"holographic_store"`` (used in config.yaml)."""

    @abstractmethod
    def is_available(self) -> bool:
        """True when the provider can run here: configuration and dependencies only, no network."""

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Prepare for a session. kwargs include ``hermes_home``, ``platform``, ``agent_context``…"""

    @abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """OpenAI function schemas of the tools this provider handles (may be empty)."""

    # ---- optional, with defaults ----------------------------------------------------------

    def system_prompt_block(self) -> str:
        """Static text added to the system prompt once per session ("" for none)."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Context recalled for ``query`` before the tool loop; must be fast ("" for none)."""
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start background recall for the next turn (runs on the manager's worker)."""
        return None

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None,
                  turn_author: dict[str, Any] | None = None) -> None:
        """Record a completed turn (runs on the manager's ordered background worker).
        ``turn_author`` (``{"id", "name", "is_bot"}``) is who wrote the user side; the manager
        passes it only to signatures that accept it."""
        return None

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of this provider's tools and return its JSON result string."""
        raise NotImplementedError(f"memory provider '{self.name}' does not handle tool calls ({tool_name})")

    def shutdown(self) -> None:
        """Release resources (called once, in reverse registration order)."""
        return None

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """A user turn begins (before prefetch). kwargs may include remaining_tokens, model,
        platform, tool_count and the author trio ``author_id``/``author_name``/``author_is_bot``
        (None, None, False without one): who wrote THIS turn, read per turn since a shared
        session has several participants."""
        return None

    def identity_signature(self) -> dict[str, Any]:
        """Identity-mapping values whose change must rebuild a cached gateway agent
        (provider-namespaced keys, JSON values). Called on an uninitialised instance on every
        inbound message: cheap and read-only."""
        return {}

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A real session boundary: CLI exit, /reset, /new, gateway expiry."""
        return None

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "",
                          reset: bool = False, rewound: bool = False, **kwargs: Any) -> None:
        """The agent continues under another session id (/resume, /branch, compression…)."""
        return None

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Before context compression: text to feed the summary prompt ("" for none)."""
        return ""

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "",
                      **kwargs: Any) -> None:
        """A subagent finished ``task`` with ``result`` (called on the parent)."""
        return None

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """A committed built-in memory write (add/replace/remove) to mirror."""
        return None

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Setup-wizard fields (keys: key, description, secret, required, default, choices, type…)."""
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        """Persist non-secret setup values to the provider's own location."""
        return None

    def initialize_for_inspection(self, session_id: str, **kwargs: Any) -> None:
        """Initialise for an inspection-only agent (status, doctor); defaults to ``initialize``."""
        self.initialize(session_id, **kwargs)

    def unavailable_reason(self) -> str:
        """A user-facing hint explaining why ``is_available()`` is False ("" when unknown)."""
        return ""

    def recall_status(self) -> RecallStatus | None:
        """What the last prefetch recalled, for the status line (None when not reported)."""
        return None

    def backup_paths(self) -> list[str]:
        """Paths outside the Hermes home that a backup should include (no I/O here)."""
        return []

    def __repr__(self) -> str:
        try:
            label = self.name
        except Exception:  # a broken property must not break logging
            label = "?"
        return f"<{type(self).__name__} name={label!r}>"
