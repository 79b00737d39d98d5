"""``FactStoreProvider``: the fact store as a Hermes-style MemoryProvider (``holographic_store``).

Hooks: ``system_prompt_block`` (how to use the tools, fact count), ``prefetch``
(top facts for the user message as ``- [trust] content (#id)`` lines, so the
model can rate them), ``handle_tool_call`` (``fact_store``/``fact_feedback``),
``on_session_end`` (conservative auto-extraction, off unless ``auto_extract``),
``on_memory_write`` (mirrors add, replace and remove of MEMORY.md/USER.md),
``on_turn_start`` (the turn's author trio, recorded on the facts the turn adds).
No hook ever raises into the agent: failures are logged and answered with an
empty result or an error JSON.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

from hermes_store.budget import (
    DEFAULT_TOOL_QUERY_BUDGET,
    TOOL_BUDGET_ENV,
    configured_budget,
    query_budget,
)
from hermes_store.config_edit import set_config_values
from hermes_store.db import DatabaseError
from hermes_store.facts.config import SECTION, FactConfig, load_fact_config
from hermes_store.facts.extract import extract_from_messages
from hermes_store.facts.fact_tools import (
    FACT_FEEDBACK_SCHEMA,
    FACT_STORE_SCHEMA,
    run_fact_feedback,
    run_fact_store,
)
from hermes_store.facts.shown import guard_fact, guard_reply
from hermes_store.facts.storage import FactAuthor
from hermes_store.facts.store import FactBlocked, FactStore, FactStoreError
from hermes_store.home import Home, load_config
from hermes_store.providers.base import MemoryProvider, RecallStatus, turn_author_of
from hermes_store.providers.worker import BackgroundWorker
from hermes_store.threats import sanitize_sequence
from hermes_store.tooling import ToolArgumentError, fence_reply, sanitize_context

log = logging.getLogger(__name__)

PREFETCH_HEADER = "## Holographic Memory"
PREFETCH_MIN_COVERAGE = 0.34  # a prefetched fact holds a third of the message's words or names its entity
WRITING_CONTEXTS = ("primary", "")  # cron/flush/subagent contexts read but never write
MIRROR_PATIENCE = 0.5  # seconds a mirrored memory write waits for a lock inside the agent's tool call
MIRROR_DRAIN = 5.0  # seconds shutdown waits for mirrored writes finishing in the background


def format_prefetch(facts: list[dict[str, Any]]) -> str:
    """``## Holographic Memory`` followed by ``- [trust] content (#id)`` lines ("" when empty).

    What is prefetched is scanned again (a fact stored before the scan, or written into
    the database by hand, becomes a ``[BLOCKED: …]`` notice) and fence-sanitised.
    """
    if not facts:
        return ""
    lines = [PREFETCH_HEADER]
    contents = sanitize_sequence([(str(guard_fact(fact)["content"]), f"fact #{fact['fact_id']}")
                                  for fact in facts])
    for fact, content in zip(facts, contents, strict=True):
        lines.append(f"- [{float(fact['trust_score']):.1f}] {content} (#{fact['fact_id']})")
    return sanitize_context("\n".join(lines))


class FactStoreProvider(MemoryProvider):
    """Memory provider over :class:`~hermes_store.facts.store.FactStore`."""

    def __init__(self, config: dict[str, Any] | FactConfig | None = None, *,
                 home: Home | str | None = None) -> None:
        self._explicit_config = config
        self._home = home if isinstance(home, Home) else (Home(home) if home else None)
        self._config: FactConfig | None = config if isinstance(config, FactConfig) else None
        self._store: FactStore | None = None
        self._lock = threading.RLock()
        self._session_id = ""
        self._writes_enabled = True
        self._last_recalled: int | None = None
        self._turn_author: dict[str, Any] | None = None  # who wrote the current turn
        self._worker = BackgroundWorker("hermes-store-fact-mirror")  # mirrored writes deferred by a lock

    # ------------------------------------------------------------------ identity

    @property
    def name(self) -> str:
        return "holographic_store"

    def is_available(self) -> bool:
        """Always true here: SQLite and NumPy are package dependencies (no network)."""
        return True

    # ------------------------------------------------------------------ setup

    @property
    def config(self) -> FactConfig:
        """Settings: the explicit ones given, else ``memory.holographic_store`` of the home."""
        if self._config is None:
            if isinstance(self._explicit_config, dict):
                self._config = FactConfig.from_mapping(self._explicit_config)
            else:
                self._config = load_fact_config(self.home)
        return self._config

    @property
    def home(self) -> Home:
        if self._home is None:
            self._home = Home()
        return self._home

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Bind to ``hermes_home`` (default: $HERMES_HOME) and open the store lazily."""
        hermes_home = kwargs.get("hermes_home")
        if hermes_home:
            new_home = Home(hermes_home)
            if self._home is None or new_home.root != self._home.root:
                self.shutdown()
                self._home = new_home
                if not isinstance(self._explicit_config, (dict, FactConfig)):
                    self._config = None
        self._session_id = session_id or ""
        self._turn_author = None  # a new session: no turn has named its author yet
        context = kwargs.get("agent_context")
        self._writes_enabled = context is None or str(context) in WRITING_CONTEXTS

    @property
    def store(self) -> FactStore:
        """The open FactStore (created on first use)."""
        with self._lock:
            if self._store is None:
                store = FactStore(self.home.ensure(), config=self.config)
                if self._writes_enabled:
                    store.ensure_vectors()  # a writer brings stored vectors to its settings once
                self._store = store
            return self._store

    def shutdown(self) -> None:
        """Finish deferred mirrored writes (waiting at most ``MIRROR_DRAIN`` seconds), then close
        the store."""
        abandoned: dict[str, int] = {}
        if self._worker.pending():
            abandoned = self._worker.stop(MIRROR_DRAIN)
            self._worker = BackgroundWorker("hermes-store-fact-mirror")
            if abandoned:
                log.warning("fact store: deferred mirrored writes still waiting for the database "
                            "after %.0fs; left to finish in the background: %s", MIRROR_DRAIN, abandoned)
        with self._lock:
            if self._store is not None:
                if not abandoned:  # else a deferred write still uses it: the process exit closes it
                    try:
                        self._store.close()
                    except Exception:  # closing must never raise into the agent
                        log.exception("fact store: close failed")
                self._store = None

    def backup_paths(self) -> list[str]:
        """The store's file when it lies outside the Hermes home (``sqlite:///`` elsewhere), so
        a backup of the home takes it too; none for the home's own file or a server's store."""
        try:
            path = self.home.sqlite_path
        except ValueError:  # a bad store URL (ConfigError): the tools report it; nothing to add
            return []
        if path is None or path.absolute().is_relative_to(self.home.root):
            return []
        return [str(path)]

    # ------------------------------------------------------------------ tools

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """The ``fact_store`` and ``fact_feedback`` schemas."""
        return [FACT_STORE_SCHEMA, FACT_FEEDBACK_SCHEMA]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run ``fact_store``/``fact_feedback`` and return the JSON reply (never raises; searches
        bounded by the tool time budget)."""
        with query_budget(configured_budget(TOOL_BUDGET_ENV, DEFAULT_TOOL_QUERY_BUDGET)):
            return self._handle_tool_call(tool_name, args)

    def _handle_tool_call(self, tool_name: str, args: Any) -> str:
        try:
            if isinstance(args, str):
                args = json.loads(args) if args.strip() else {}
            if not isinstance(args, dict):
                raise ToolArgumentError("arguments must be a JSON object")
            if tool_name == "fact_store":
                reply = guard_reply(run_fact_store(args, self.store, author=self._turn_author))  # re-scanned
            elif tool_name == "fact_feedback":
                reply = run_fact_feedback(args, self.store)
            else:
                reply = {"success": False, "error": f"Unknown tool: {tool_name}"}
        except (ToolArgumentError, FactStoreError, json.JSONDecodeError) as exc:
            reply = {"success": False, "error": str(exc)}
        except Exception as exc:  # a provider failure must never reach the agent as an exception
            log.exception("fact store: %s failed", tool_name)
            reply = {"success": False, "error": f"{tool_name} failed: {type(exc).__name__}: {exc}"}
        return json.dumps(fence_reply(reply), ensure_ascii=False, default=str)

    # ------------------------------------------------------------------ prompt and recall

    def system_prompt_block(self) -> str:
        """How to use the fact tools, with the number of stored facts."""
        try:
            count = self.store.count()
        except Exception:
            log.exception("fact store: count failed")
            return ""
        if count == 0:
            return ("# Holographic Memory\n"
                    "Active. Empty fact store — proactively add durable facts about the user, "
                    "their projects and decisions with fact_store(action='add').\n"
                    "Rate facts you used with fact_feedback (helpful/unhelpful).")
        return ("# Holographic Memory\n"
                f"Active. {count} facts stored with entity resolution and trust scoring.\n"
                "Use fact_store to search, probe entities, reason across entities, or add facts.\n"
                "Recalled facts end with (#id): rate them with fact_feedback(action, fact_id).")

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Top facts for ``query`` above the trust threshold, as ``- [trust] content (#id)`` lines."""
        with query_budget(configured_budget(TOOL_BUDGET_ENV, DEFAULT_TOOL_QUERY_BUDGET)):
            return self._prefetch(query)

    def _prefetch(self, query: str) -> str:
        self._last_recalled = None
        try:
            if not query or not query.strip():
                return ""
            facts = self.store.search(query, limit=self.config.prefetch_limit,
                                      min_trust=self.config.min_trust_threshold,
                                      min_coverage=PREFETCH_MIN_COVERAGE)
            self._last_recalled = len(facts)
            return format_prefetch(facts)
        except Exception:
            log.exception("fact store: prefetch failed")
            return ""

    def recall_status(self) -> RecallStatus | None:
        """How many facts the last prefetch recalled (None before any or when nothing)."""
        if not self._last_recalled:
            return None
        return RecallStatus("Holographic", self._last_recalled)

    # ------------------------------------------------------------------ writes from the agent

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """Remember who wrote this turn (``author_id``/``author_name``/``author_is_bot``): facts
        ``fact_store add`` stores until the next turn record it (none named: no author)."""
        self._turn_author = turn_author_of(kwargs)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Store preference/decision clauses of the user's messages when ``auto_extract`` is on."""
        try:
            if not self.config.auto_extract or not self._writes_enabled:
                return
            added = 0
            for item in extract_from_messages(messages or []):
                try:
                    if self.store.add_fact(item.content, item.category)["status"] == "added":
                        added += 1
                except FactBlocked as exc:  # one poisoned clause never stops the others
                    log.warning("fact store: extracted fact not stored: %s", exc)
            log.info("fact store: auto-extracted %d fact(s)", added)
        except Exception:
            log.exception("fact store: auto-extraction failed")

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """Mirror a committed built-in memory write: add, replace or remove.

        It runs inside the agent's ``memory`` tool call, so it waits at most
        ``MIRROR_PATIENCE`` for another process's write lock; then it is finished on the
        background worker with the store's full patience (``shutdown`` waits for it, bounded)."""
        if not self._writes_enabled:
            return
        metadata = dict(metadata or {})
        store: FactStore | None = None
        try:
            store = self.store
            with store.storage.lock_patience(MIRROR_PATIENCE):
                mirror_memory_write(store, action, target, content, metadata)
            return
        except DatabaseError as exc:  # busy (or the server away): try again off the agent's turn
            log.info("fact store: mirroring %s deferred: %s", action, exc)
        except Exception:
            log.exception("fact store: mirroring %s failed", action)
            return
        if store is not None:  # the store is open and was busy: not one it could not open
            self._worker.submit("mirror", lambda: _mirror_later(store, action, target, content, metadata))

    # ------------------------------------------------------------------ setup wizard

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Fields of ``memory.holographic_store`` for the setup wizard."""
        return [
            {"key": "auto_extract", "description": "Store preferences and decisions from your messages "
             "at session end", "default": "false", "choices": ["true", "false"], "type": "boolean"},
            {"key": "default_trust", "description": "Trust of a new fact (0-1)", "default": "0.5",
             "type": "number", "minimum": 0, "maximum": 1},
            {"key": "min_trust_threshold", "description": "Facts below this trust are not recalled",
             "default": "0.3", "type": "number", "minimum": 0, "maximum": 1},
            {"key": "hrr_dim", "description": "Vector dimension (changing it re-encodes all facts)",
             "default": "1024", "type": "integer", "minimum": 16},
            {"key": "half_life_days", "description": "Score half-life in days (0 = no decay)",
             "default": "0", "type": "number", "minimum": 0},
        ]

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        """Merge ``values`` into ``memory.holographic_store`` of ``<hermes_home>/config.yaml`` atomically.

        Values are validated first (a bad value raises ConfigError naming the
        key and nothing is written); other sections, keys and comments are kept.
        """
        section_values = dict(values or {})
        path = Path(hermes_home) / "config.yaml"
        memory = load_config(path).get("memory") or {}
        section = dict(memory.get(SECTION) or {}) if isinstance(memory, dict) else {}
        section.update(section_values)
        validated = FactConfig.from_mapping(section)
        set_config_values(path, {
            f"memory.{SECTION}.{key}": getattr(validated, key) if hasattr(validated, key) else value
            for key, value in section_values.items()
        })
        self._config = None if not isinstance(self._explicit_config, (dict, FactConfig)) else self._config


def _mirror_later(store: FactStore, action: str, target: str, content: str, metadata: dict[str, Any]) -> None:
    """A mirrored write deferred by a lock, on the background worker (full patience)."""
    try:
        mirror_memory_write(store, action, target, content, metadata)
    except Exception:
        log.exception("fact store: mirroring %s failed", action)


def _category_for(target: str) -> str:
    return "user_pref" if target == "user" else "general"


def _find_mirrored(store: FactStore, category: str, exact: list[str], fragment: str | None) -> int | None:
    """The fact an earlier mirrored entry became: exact content first, then a unique substring."""
    for text in exact:
        if text and text.strip():
            found = store.find_by_content(text)
            if found is not None:
                return int(found)
    if fragment and fragment.strip():
        ids = store.facts_containing(category, fragment.strip(), 2)
        if len(ids) == 1:
            return ids[0]
    return None


def mirror_memory_write(store: FactStore, action: str, target: str, content: str,
                        metadata: dict[str, Any]) -> str:
    """Apply one built-in memory write to the fact store; returns what was done.

    ``add`` stores the entry (``user_pref`` for USER.md, ``general`` otherwise).
    ``replace`` finds the old entry's fact (``previous_content`` exactly, else a
    unique fact containing ``old_text``) and rewrites it, or adds the new text.
    ``remove`` deletes the fact found the same way (``content`` is tried too).
    """
    category = _category_for(target)
    previous = metadata.get("previous_content")
    previous_list = previous if isinstance(previous, list) else [previous]
    exact = [p for p in previous_list if isinstance(p, str)]
    old_text = metadata.get("old_text") if isinstance(metadata.get("old_text"), str) else None
    author = FactAuthor.from_fields(metadata)  # the manager's author_* keys of the turn that wrote it
    if action == "add":
        if not content or not content.strip():
            return "skipped"
        return store.add_fact(content, category, author=author)["status"]
    if action == "replace":
        if not content or not content.strip():
            return "skipped"
        fact_id = _find_mirrored(store, category, exact, old_text)
        if fact_id is None:
            return store.add_fact(content, category, author=author)["status"]
        existing = store.find_by_content(content)
        if existing is not None and int(existing) != fact_id:
            store.remove_fact(fact_id)
            return "merged"
        store.update_fact(fact_id, content=content)
        return "replaced"
    if action == "remove":
        fact_id = _find_mirrored(store, category, [*exact, content or ""], old_text or content)
        if fact_id is None:
            return "not_found"
        store.remove_fact(fact_id)
        return "removed"
    return "ignored"
