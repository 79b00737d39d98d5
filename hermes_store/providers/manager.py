"""MemoryManager: the built-in provider plus at most one external provider, behind one API.

The agent calls the manager; the manager fans each hook out to its providers in order
(``builtin`` always first) and isolates them: an exception in one provider is logged and
the next provider still runs; an external ``prefetch`` runs on its own daemon thread with a
timeout; after-turn ``sync_turn`` and ``queue_prefetch`` run on one ordered background
worker; ``shutdown_all`` drains that worker with a bound and closes providers in reverse.
Tool calls are routed by name. Committed built-in writes are mirrored to the external
provider through ``on_memory_write``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from hermes_store.home import resolve_home
from hermes_store.providers.base import (
    BUILTIN_NAME,
    MemoryProvider,
    is_trivial_prompt,
    turn_author_of,
)
from hermes_store.providers.calls import call_filtered, call_memory_write
from hermes_store.providers.fencing import StreamingContextScrubber, build_memory_context_block
from hermes_store.providers.mirroring import expand_memory_writes
from hermes_store.providers.worker import BackgroundWorker
from hermes_store.threads import spawn_context_thread
from hermes_store.tooling import (
    ToolArgumentError,
    fence_reply,
    fence_reply_json,
    parse_arguments,
    sanitize_context,
)
from hermes_store.tooling import tool_error as error_reply

logger = logging.getLogger(__name__)

DEFAULT_PREFETCH_TIMEOUT = 8.0
DEFAULT_SHUTDOWN_TIMEOUT = 5.0
DEFAULT_MAX_PREFETCH_CHARS = 16_000

#: Tool names an external provider may never take over (the agent's core tools).
#: Tool names a provider may not take: Hermes' ``_HERMES_CORE_TOOLS`` (``toolsets.py``, zons
#: 03d70b32), plus the pre-rename names its dispatcher still maps onto three of them
#: (``_LEGACY_TOOL_ALIASES``, the 2026-08 renames: todo, cronjob, process).
CORE_TOOL_NAMES: frozenset[str] = frozenset({
    "web_search", "web_extract", "terminal", "process_manage", "read_file", "write_file", "patch",
    "search_files", "vision_analyze", "image_generate", "skills_list", "skill_view", "skill_manage",
    "browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_scroll",
    "browser_back", "browser_press", "browser_get_images", "browser_vision", "browser_console",
    "browser_cdp", "browser_dialog", "browser_vault_list", "browser_vault_unlock", "browser_vault_fill",
    "browser_vault_save_login", "browser_vault_enter_code", "browser_exec", "text_to_speech",
    "todo_list", "memory", "session_search", "clarify", "execute_code", "delegate_task",
    "cronjob_manage", "kanban_show", "kanban_list", "kanban_complete", "kanban_block",
    "kanban_request_review", "kanban_request_changes", "kanban_heartbeat", "kanban_comment",
    "kanban_create", "kanban_link", "kanban_unblock", "kanban_attach", "kanban_attach_url",
    "kanban_attachments", "computer_use", "manage_connections",
    "todo", "cronjob", "process",  # legacy aliases
})

REJECTED_EXTERNAL = (
    "Rejected memory provider '%s' — external provider '%s' is already registered. "
    "Only one external memory provider is allowed at a time. "
    "Configure which one via memory.provider in config.yaml."
)
SHADOWS_CORE = (
    "Memory provider '%s' tool '%s' shadows a reserved core tool name; registration ignored. "
    "Core tools always win — rename the provider's tool to something unique."
)
TOOL_CONFLICT = "Memory tool name conflict: '%s' already registered by %s, ignoring from %s"
REGISTERED = "Memory provider '%s' registered (%d tools)"
CHECKPOINT_FAILED = "No active memory provider completed pre-compress checkpoint API v{version}"


def _checkpoint_api_version(provider: MemoryProvider) -> int:
    """A provider's ``pre_compress_checkpoint_api_version`` (1, the legacy contract, when absent
    or not a number), as Hermes reads it."""
    try:
        return int(getattr(provider, "pre_compress_checkpoint_api_version", 1))
    except (TypeError, ValueError):
        return 1

def tool_error(message: str) -> str:
    """The JSON error string a routed tool call returns: Hermes' ``tool_error`` (``{"error": …}``)."""
    return json.dumps(error_reply(message), ensure_ascii=False)


def normalize_schema(schema: Any) -> dict[str, Any] | None:
    """Accept a bare ``{name, description, parameters}`` or a wrapped ``{"type": "function",
    "function": {...}}`` schema; return the bare form, or None when it has no name."""
    if not isinstance(schema, dict):
        return None
    if schema.get("type") == "function" and isinstance(schema.get("function"), dict):
        schema = schema["function"]
    name = schema.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    return schema


# Hermes' ``agent/memory_manager.py`` names (zons 03d70b32) for what this module already has, so
# code written against that module finds them here: the schema normaliser and the fence helpers.
normalize_tool_schema = normalize_schema
__all__ = ["CHECKPOINT_FAILED", "MemoryManager", "StreamingContextScrubber", "build_memory_context_block",
           "expand_memory_writes", "is_trivial_prompt", "normalize_schema", "normalize_tool_schema",
           "sanitize_context", "tool_error"]


def _provider_name(provider: MemoryProvider) -> str:
    name = provider.name
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"provider {type(provider).__name__} has no name")
    return name


class MemoryManager:
    """Ordered memory providers: ``builtin`` at position 0 and at most one external one."""

    def __init__(self, *, external_prefetch_timeout: float = DEFAULT_PREFETCH_TIMEOUT,
                 shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
                 core_tool_names: Iterable[str] | None = None,
                 hermes_home: str | None = None,
                 max_prefetch_chars: int = DEFAULT_MAX_PREFETCH_CHARS) -> None:
        if not external_prefetch_timeout or external_prefetch_timeout <= 0:
            raise ValueError("external_prefetch_timeout must be > 0")
        self.external_prefetch_timeout = float(external_prefetch_timeout)
        self.shutdown_timeout = float(shutdown_timeout)
        self.max_prefetch_chars = int(max_prefetch_chars)
        self.core_tool_names = frozenset(CORE_TOOL_NAMES if core_tool_names is None else core_tool_names)
        self.hermes_home = hermes_home
        self._providers: list[MemoryProvider] = []
        self._names: dict[int, str] = {}
        self._tool_routes: dict[str, MemoryProvider] = {}
        self._tool_schemas: dict[str, dict[str, Any]] = {}
        self._worker = BackgroundWorker()
        self._stuck: dict[str, threading.Thread] = {}
        self._shut_down = False
        self.abandoned: dict[str, int] = {}
        self._drain_state: dict[str, Any] = {"status": "not_started", "abandoned_writes": 0,
                                              "abandoned_prefetches": 0, "active_tasks": 0}
        self.session_id = ""
        self.parent_session_id = ""
        self._write_context: dict[str, Any] = {}
        self.turn_author: dict[str, Any] | None = None  # who wrote the current turn (on_turn_start)

    # ---- composition ----------------------------------------------------------------------

    @property
    def providers(self) -> list[MemoryProvider]:
        """The providers in call order (a copy)."""
        return list(self._providers)

    def name_of(self, provider: MemoryProvider) -> str:
        """The name a provider was registered under."""
        return self._names.get(id(provider), "?")

    def get_provider(self, name: str) -> MemoryProvider | None:
        """The registered provider called ``name`` (None when absent)."""
        for provider in self._providers:
            if self._names[id(provider)] == name:
                return provider
        return None

    @property
    def external_provider(self) -> MemoryProvider | None:
        """The one non-builtin provider, if any."""
        for provider in self._providers:
            if self._names[id(provider)] != BUILTIN_NAME:
                return provider
        return None

    def add_provider(self, provider: MemoryProvider) -> bool:
        """Register ``provider``; False (with a warning) when refused: a second external
        provider or a duplicate name.

        A provider whose name or tool schemas cannot be read raises what it raised, as Hermes'
        ``add_provider`` does (#9948); both are read before any state changes, so the manager
        is left as it was and a later provider still registers.
        """
        name = _provider_name(provider)
        raw_schemas = list(provider.get_tool_schemas() or [])
        if self.get_provider(name) is not None:
            logger.warning("Memory provider '%s' is already registered; ignoring the duplicate", name)
            return False
        if name != BUILTIN_NAME:
            existing = self.external_provider
            if existing is not None:
                logger.warning(REJECTED_EXTERNAL, name, self._names[id(existing)])
                return False
        schemas: list[dict[str, Any]] = []
        for raw in raw_schemas:
            schema = normalize_schema(raw)
            if schema is None:
                logger.warning("Memory provider '%s' returned a tool schema without a name; skipped", name)
                continue
            schemas.append(schema)
        self._names[id(provider)] = name
        if name == BUILTIN_NAME:
            self._providers.insert(0, provider)
        else:
            self._providers.append(provider)
        routed = 0
        for schema in schemas:
            tool = schema["name"]
            if name != BUILTIN_NAME and tool in self.core_tool_names:
                logger.warning(SHADOWS_CORE, name, tool)
                continue
            owner = self._tool_routes.get(tool)
            if owner is not None:
                logger.warning(TOOL_CONFLICT, tool, self._names[id(owner)], name)
                continue
            self._tool_routes[tool] = provider
            self._tool_schemas[tool] = schema
            routed += 1
        listen = getattr(provider, "set_write_listener", None)
        if name == BUILTIN_NAME and callable(listen):
            listen(self.mirror_builtin_write)
        logger.info(REGISTERED, name, routed)
        return True

    # ---- tools ----------------------------------------------------------------------------

    def _routed_in_order(self) -> list[str]:
        """Every routed tool, in provider order (builtin's first)."""
        return [tool for provider in self._providers
                for tool, owner in self._tool_routes.items() if owner is provider]

    def get_all_tool_names(self) -> set[str]:
        """Names of every routed tool: a set, as Hermes' (callers union it into their own)."""
        return set(self._tool_routes)

    def get_all_tool_schemas(self) -> list[dict[str, Any]]:
        """Schemas of every routed tool, in provider order (builtin's first)."""
        return [self._tool_schemas[tool] for tool in self._routed_in_order()]

    def has_tool(self, name: str) -> bool:
        """True when some provider handles tool ``name``."""
        return name in self._tool_routes

    def handle_tool_call(self, tool_name: str, args: Any, **kwargs: Any) -> str:
        """Route a tool call to its provider; always returns a JSON string, never raises."""
        provider = self._tool_routes.get(tool_name)
        if provider is None:
            return tool_error(f"No memory provider handles tool '{tool_name}'")
        try:
            args = parse_arguments(args)
        except ToolArgumentError as exc:
            return tool_error(str(exc))
        kwargs.setdefault("session_id", self.session_id)
        try:
            result = call_filtered(provider.handle_tool_call, tool_name, args, **kwargs)
        except Exception as exc:
            logger.error("Memory tool '%s' failed: %s", tool_name, exc)
            return tool_error(f"Memory tool '{tool_name}' failed: {exc}")
        if isinstance(result, str):  # any provider's reply (plug-ins too) is fenced on the way out
            return fence_reply_json(result)
        return json.dumps(fence_reply(result), ensure_ascii=False, default=str)

    # ---- fan-out helpers ------------------------------------------------------------------

    def _each(self, label: str, level: int, call: Callable[[MemoryProvider], Any],
              providers: Iterable[MemoryProvider] | None = None) -> list[tuple[MemoryProvider, Any]]:
        """Run ``call`` on each provider; failures are logged and skipped."""
        results = []
        for provider in list(self._providers if providers is None else providers):
            try:
                results.append((provider, call(provider)))
            except Exception as exc:
                logger.log(level, "Memory provider '%s' %s: %s", self.name_of(provider), label, exc)
        return results

    def _externals(self) -> list[MemoryProvider]:
        return [p for p in self._providers if self._names[id(p)] != BUILTIN_NAME]

    # ---- lifecycle hooks ------------------------------------------------------------------

    def initialize_all(self, session_id: str, **kwargs: Any) -> None:
        """Initialise every provider; ``hermes_home`` is injected when absent."""
        self.session_id = session_id or ""
        self._write_context = {key: kwargs[source] for key, source in
                               (("platform", "platform"), ("execution_context", "agent_context"))
                               if kwargs.get(source)}
        if not kwargs.get("hermes_home"):
            kwargs["hermes_home"] = self.hermes_home or str(resolve_home())
        self._each("initialize", logging.WARNING,
                   lambda p: call_filtered(p.initialize, session_id, **kwargs))

    def build_system_prompt(self) -> str:
        """Non-blank provider system-prompt blocks, each as written, joined by a blank line."""
        blocks = self._each("system_prompt_block", logging.WARNING, lambda p: p.system_prompt_block())
        return "\n\n".join(b for _, b in blocks if isinstance(b, str) and b.strip())  # as written, as Hermes

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """A user turn begins (extra kwargs reach only providers that accept them). The author
        trio (``author_id``/``author_name``/``author_is_bot``) becomes the writer recorded on
        what the turn stores: memory writes mirrored during the turn carry it in their metadata
        and the turn's ``sync_turn`` gets it as ``turn_author``."""
        self.turn_author = turn_author_of(kwargs)
        self._each("on_turn_start", logging.DEBUG,
                   lambda p: call_filtered(p.on_turn_start, turn_number, message, **kwargs))

    def _run_with_timeout(self, provider: MemoryProvider, query: str, session_id: str) -> str:
        name = self._names[id(provider)]
        stuck = self._stuck.get(name)
        if stuck is not None:
            if stuck.is_alive():
                logger.debug("Memory provider '%s' prefetch still running; skipped this turn", name)
                return ""
            del self._stuck[name]
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = call_filtered(provider.prefetch, query, session_id=session_id)
            except Exception as exc:
                box["error"] = exc

        thread = spawn_context_thread(target, name=f"prefetch-{name}")  # the caller's profile ContextVar
        thread.start()
        thread.join(self.external_prefetch_timeout)
        if thread.is_alive():
            self._stuck[name] = thread
            logger.warning("Memory provider '%s' prefetch timed out after %.1fs; skipped until it returns",
                           name, self.external_prefetch_timeout)
            return ""
        if "error" in box:
            raise box["error"]
        value = box.get("value")
        return value if isinstance(value, str) else ""

    def prefetch_all(self, query: str, *, session_id: str = "") -> str:
        """Recall for ``query`` from every provider, joined by a blank line ("" for trivial prompts).

        The built-in provider runs inline; an external provider runs on a daemon thread with
        ``external_prefetch_timeout`` and, after a timeout, is skipped until its call returns.
        """
        if is_trivial_prompt(query):
            return ""
        session_id = session_id or self.session_id

        def one(provider: MemoryProvider) -> str:
            if self._names[id(provider)] == BUILTIN_NAME:
                value = call_filtered(provider.prefetch, query, session_id=session_id)
                return value if isinstance(value, str) else ""
            return self._cap(self._names[id(provider)], self._run_with_timeout(provider, query, session_id))

        results = self._each("prefetch", logging.DEBUG, one)
        return "\n\n".join(r for _, r in results if r and r.strip())  # each text as written, as Hermes

    def _cap(self, name: str, text: str) -> str:
        """Trim an oversized external recall at a line boundary, saying how much was left out."""
        if self.max_prefetch_chars <= 0 or len(text) <= self.max_prefetch_chars:
            return text
        cut = text.rfind("\n", 0, self.max_prefetch_chars)
        cut = cut if cut > self.max_prefetch_chars // 2 else self.max_prefetch_chars
        omitted = len(text) - cut
        logger.warning("Memory provider '%s' prefetch returned %d chars; kept %d", name, len(text), cut)
        return f"{text[:cut].rstrip()}\n[… {omitted:,} more chars of recalled memory omitted]"

    def prefetch_context(self, query: str, *, session_id: str = "") -> str:
        """``prefetch_all`` wrapped in the ``<memory-context>`` fence ("" when nothing recalled)."""
        return build_memory_context_block(self.prefetch_all(query, session_id=session_id))

    def describe_recall(self) -> str:
        """Status line for what providers recalled, e.g. ``"🧠 Facts — recalled 3 memories"``."""
        segments = []
        for _, status in self._each("recall_status", logging.DEBUG, lambda p: p.recall_status()):
            if status is not None:
                segments.append(status.describe())
        return "  ".join(segments)

    def sync_all(self, user_content: str | None, assistant_content: str, *, session_id: str = "",
                 messages: list[dict[str, Any]] | None = None, turn_author: Any = None) -> None:
        """Queue ``sync_turn`` for every provider on the ordered background worker (none for
        an empty user turn, as Hermes' ``sync_all``)."""
        if not user_content:
            return
        session_id = session_id or self.session_id
        kwargs: dict[str, Any] = {"session_id": session_id, "messages": messages}
        turn_author = turn_author if turn_author is not None else self.turn_author
        if turn_author is not None:
            kwargs["turn_author"] = turn_author
        providers = list(self._providers)

        def task() -> None:
            self._each("sync_turn", logging.WARNING,
                       lambda p: call_filtered(p.sync_turn, user_content, assistant_content, **kwargs),
                       providers)

        self._worker.submit("sync", task)

    def queue_prefetch_all(self, query: str, *, session_id: str = "") -> None:
        """Queue ``queue_prefetch`` for every provider on the same worker (after the sync);
        nothing for an empty query, as Hermes' ``queue_prefetch_all``."""
        if not query:
            return
        session_id = session_id or self.session_id
        providers = list(self._providers)

        def task() -> None:
            self._each("queue_prefetch", logging.DEBUG,
                       lambda p: call_filtered(p.queue_prefetch, query, session_id=session_id),
                       providers)

        self._worker.submit("prefetch", task)

    def on_pre_compress(self, messages: list[dict[str, Any]], *,
                        evidence_messages: list[dict[str, Any]] | None = None,
                        require_checkpoint: bool = False, checkpoint_api_version: int = 2) -> str:
        """Before compression: provider texts joined by a blank line (Hermes' ``on_pre_compress``).

        A checkpoint provider (``pre_compress_checkpoint_api_version`` at least
        ``checkpoint_api_version``) gets ``evidence_messages`` as its messages when the host
        gives them, ``require_checkpoint`` when its signature takes it, and (ours) the evidence
        normalised as ``evidence_messages=`` when it declares that; any other provider gets
        ``messages``. With ``require_checkpoint`` a checkpoint provider's failure propagates and,
        when none succeeded, ``RuntimeError`` names the version asked for.
        """
        given = evidence_messages if evidence_messages is not None else messages
        texts: list[str] = []
        checkpointed = False
        for provider in list(self._providers):
            checkpoint = _checkpoint_api_version(provider) >= checkpoint_api_version
            try:
                if checkpoint:
                    value = call_filtered(provider.on_pre_compress, given, require_checkpoint=require_checkpoint,
                                          evidence_messages=_normalize_messages(given))
                    checkpointed = True
                else:
                    value = provider.on_pre_compress(messages)
            except Exception as exc:
                if checkpoint and require_checkpoint:
                    raise
                logger.debug("Memory provider '%s' on_pre_compress: %s", self.name_of(provider), exc)
                continue
            if isinstance(value, str) and value.strip():
                texts.append(value.strip())
        if require_checkpoint and not checkpointed:
            raise RuntimeError(CHECKPOINT_FAILED.format(version=checkpoint_api_version))
        return "\n\n".join(texts)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A real session boundary (CLI exit, /reset, /new, gateway expiry); None is ``[]``."""
        messages = messages or []
        self._each("on_session_end", logging.WARNING, lambda p: p.on_session_end(messages))

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "",
                          reset: bool = False, rewound: bool = False, **kwargs: Any) -> None:
        """The agent continues under ``new_session_id`` (no-op for an empty id)."""
        if not new_session_id:
            return
        self.session_id = new_session_id
        self.parent_session_id = parent_session_id or ""
        extra = dict(kwargs)
        if rewound:
            extra["rewound"] = True
        self._each("on_session_switch", logging.DEBUG,
                   lambda p: call_filtered(p.on_session_switch, new_session_id,
                                           parent_session_id=parent_session_id, reset=reset, **extra))

    def commit_session_boundary_async(self, messages: list[dict[str, Any]], new_session_id: str,
                                      parent_session_id: str = "", reason: str = "new_session") -> None:
        """Queue session end followed by ``on_session_switch(reset=True, reason=...)`` as one
        background task (Hermes' default reason is ``new_session``), on a copy of ``messages``
        taken now: the agent resets its own list right after."""
        if not self._providers:
            return
        snapshot = list(messages or [])

        def task() -> None:
            self.on_session_end(snapshot)
            self.on_session_switch(new_session_id, parent_session_id=parent_session_id,
                                   reset=True, reason=reason)

        self._worker.submit("session_boundary", task)

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any) -> None:
        """A subagent finished (called on the parent's manager)."""
        self._each("on_delegation", logging.DEBUG,
                   lambda p: call_filtered(p.on_delegation, task, result,
                                           child_session_id=child_session_id, **kwargs))

    # ---- built-in write mirroring ---------------------------------------------------------

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """Tell every external provider about a committed built-in write (builtin skipped)."""
        self._each("on_memory_write", logging.DEBUG,
                   lambda p: call_memory_write(p.on_memory_write, action, target, content, metadata),
                   self._externals())

    def identity_signature(self) -> dict[str, Any]:
        """Every provider's :meth:`MemoryProvider.identity_signature`, merged (cheap, read-only;
        a provider whose signature fails contributes nothing)."""
        merged: dict[str, Any] = {}
        for _, value in self._each("identity_signature", logging.DEBUG, lambda p: p.identity_signature()):
            if isinstance(value, dict):
                merged.update(value)
        return merged

    def _write_metadata(self, metadata: dict[str, Any] | None) -> dict[str, Any]:
        """Metadata for a mirrored write: the caller's keys plus session and platform context
        and the current turn's author."""
        meta = dict(metadata or {})
        for key, value in (self.turn_author or {}).items():
            meta.setdefault(f"author_{key}", value)
        if not meta.get("session_id"):
            meta["session_id"] = self.session_id
        if self.parent_session_id:
            meta.setdefault("parent_session_id", self.parent_session_id)
        for key, value in self._write_context.items():
            meta.setdefault(key, value)
        meta.setdefault("tool_name", "memory")
        return meta

    def mirror_builtin_write(self, action: str, target: str, content: str,
                             metadata: dict[str, Any] | None = None) -> None:
        """Listener given to the built-in provider's store: one call per committed write."""
        self.on_memory_write(action, target, content, self._write_metadata(metadata))

    def notify_memory_tool_write(self, result: Any, args: dict[str, Any],
                                 build_metadata: Callable[[], dict[str, Any]] | None = None) -> int:
        """Mirror a ``memory`` tool call made outside the manager; returns writes mirrored.

        Only committed writes count (``success`` is True and not ``staged``); batches are
        expanded into their add/replace/remove operations.
        """
        if isinstance(result, str):
            try:
                result = json.loads(result)
            except json.JSONDecodeError:
                return 0
        if not isinstance(result, dict) or result.get("success") is not True or result.get("staged"):
            return 0
        if not self._externals():
            return 0
        base = self._write_metadata(build_metadata() if build_metadata else None)
        writes = expand_memory_writes(result, args or {})
        for action, target, content, extra in writes:
            self.on_memory_write(action, target, content, {**base, **extra})
        return len(writes)

    # ---- shutdown -------------------------------------------------------------------------

    def flush_pending(self, timeout: float = DEFAULT_SHUTDOWN_TIMEOUT) -> bool:
        """Wait up to ``timeout`` seconds for queued background work; True when it all ran."""
        return self._worker.flush(timeout)

    @property
    def shutdown_drain_state(self) -> dict[str, Any]:
        """Hermes' report of the last bounded shutdown drain: ``status`` (``not_started``,
        ``drained`` or ``timed_out``), queued writes and prefetches abandoned unrun, and
        ``active_tasks`` still running detached."""
        return dict(self._drain_state)

    def shutdown_all(self) -> dict[str, int]:
        """Drain background work (bounded), then ``shutdown()`` providers in reverse order, each
        waited for at most ``shutdown_timeout`` seconds.

        Returns the abandoned background tasks by kind (empty when everything ran); a provider
        whose ``shutdown()`` was still running counts under ``"shutdown"``.
        """
        if self._shut_down:
            return dict(self.abandoned)
        self._shut_down = True
        self.abandoned = self._worker.stop(self.shutdown_timeout)
        running = self._worker.running if self.abandoned else None
        queued = Counter(self.abandoned)
        if running is not None:
            queued[running] -= 1  # the task still on the thread is detached, not abandoned unrun
        self._drain_state = {"status": "timed_out" if self.abandoned else "drained",
                             "abandoned_writes": sum(n for kind, n in queued.items() if kind != "prefetch"),
                             "abandoned_prefetches": queued["prefetch"], "active_tasks": int(running is not None)}
        if self.abandoned:
            logger.warning("memory shutdown abandoned background work: %s", self.abandoned)
        hung = [provider for provider, done in self._each("shutdown", logging.WARNING, self._close_bounded,
                                                   list(reversed(self._providers))) if not done]
        if hung:
            self.abandoned["shutdown"] = len(hung)
        return dict(self.abandoned)

    def _close_bounded(self, provider: MemoryProvider) -> bool:
        """``provider.shutdown()`` on its own daemon thread, waited for at most
        ``shutdown_timeout`` seconds; False (logged) when it was still running then."""
        box: dict[str, BaseException] = {}

        def target() -> None:
            try:
                provider.shutdown()
            except Exception as exc:
                box["error"] = exc

        thread = spawn_context_thread(target, name=f"shutdown-{self.name_of(provider)}")
        thread.start()
        thread.join(self.shutdown_timeout)
        if thread.is_alive():
            logger.warning("Memory provider '%s' shutdown still running after %.1fs; not waited for",
                           self.name_of(provider), self.shutdown_timeout)
            return False
        if "error" in box:
            raise box["error"]
        return True


def _normalize_messages(messages: Any) -> list[dict[str, str]]:
    """Messages reduced to ``{"role", "content"}`` with string content (text parts joined)."""
    out: list[dict[str, str]] = []
    for message in messages or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list):
            parts = [p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
            content = "\n".join(parts)
        if not isinstance(content, str) or not content.strip():
            continue
        out.append({"role": str(message.get("role") or ""), "content": content})
    return out
