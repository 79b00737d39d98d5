"""The Hermes Agent drop-in: a memory provider plugin exposing fact_store, fact_feedback and recall.

``hermes-store hermes install`` writes ``<hermes_home>/plugins/<name>/plugin.yaml`` and an
``__init__.py`` whose ``register(ctx)`` calls ``ctx.register_memory_provider(make_provider(name))``.
With ``memory.provider: <name>`` in Hermes' config.yaml, Hermes then loads it like any user
memory plugin.

Layering: this module is a front end (beside ``cli`` and ``tools``). It may use
``hermes_store.tools`` (for the ``recall`` tool) and ``hermes_store.providers``; nothing in
the package imports it except the CLI's ``hermes install``.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from hermes_store.fsutil import atomic_write_text
from hermes_store.home import Home
from hermes_store.providers.base import (
    PRE_COMPRESS_CHECKPOINT_API_VERSION,
    MemoryProvider,
    RecallStatus,
)
from hermes_store.providers.calls import call_filtered, call_memory_write
from hermes_store.sessions.state_sync import StateDbSync

logger = logging.getLogger(__name__)
DEFAULT_PLUGIN_NAME = "hermes_store"
RECALL_TOOL_NAME = "recall"
RECALL_SYNC_WAIT = 1.0  # seconds a recall waits for a running state.db sync (never longer)
CHECKPOINT_WAIT = 10.0  # seconds a pre-compress checkpoint waits for a running sync
PLUGIN_DESCRIPTION = ("hermes_store — local SQLite fact store (fact_store, fact_feedback) and recall "
                      "across built-in memory, facts and past sessions")
# modules whose install locations let Hermes' Python find hermes_store and its dependencies
_RUNTIME_MODULES = ("hermes_store", "apsw", "yaml", "click", "filelock", "numpy", "sqlite_utils")


def _fact_provider(home: Home | None = None) -> MemoryProvider:
    from hermes_store.providers.holographic_store import FactStoreProvider

    return FactStoreProvider(home=home)


def hermes_home_now() -> Home:
    """The Hermes home in effect for the caller, resolved as Hermes resolves it.

    Inside Hermes that is ``hermes_constants.get_hermes_home()``: the context-local profile
    override a multi-profile gateway sets per task (a ContextVar, never ``os.environ``), then
    ``$HERMES_HOME``, then the platform default. Outside Hermes (``hermes_constants`` not
    loaded) it is :class:`Home`'s own default (``$HERMES_HOME``, else ``~/.hermes``).
    Cheap and read-only: Hermes' module is only used when Hermes already loaded it.
    """
    get_home = getattr(sys.modules.get("hermes_constants"), "get_hermes_home", None)
    if callable(get_home):
        try:
            return Home(get_home())
        except Exception as exc:  # a broken Hermes resolution falls back to ours
            logger.debug("hermes_constants.get_hermes_home() failed: %s", exc)
    return Home()


class HermesStoreProvider(MemoryProvider):
    """Hermes-facing provider: the fact store's hooks and tools, plus ``recall``.

    Every hook is delegated to :class:`hermes_store.providers.holographic_store.FactStoreProvider`;
    ``recall`` is served through :mod:`hermes_store.tools` on the Hermes home. The session
    index follows Hermes' own ``state.db`` (:class:`~hermes_store.sessions.state_sync.StateDbSync`):
    a background sync is started on initialize and at every turn boundary, and a recall waits
    at most ``RECALL_SYNC_WAIT`` for one in flight, so it sees the session running now.

    Pre-compress checkpoint API v2: before Hermes compresses, ``on_pre_compress`` imports
    ``state.db`` up to now, so the transcript about to be summarised is durably indexed; when
    that cannot be done and Hermes asks for a required checkpoint
    (``compression.checkpoint_required``), it raises and the compression stops.
    """

    pre_compress_checkpoint_api_version = PRE_COMPRESS_CHECKPOINT_API_VERSION

    def __init__(self, name: str = DEFAULT_PLUGIN_NAME, facts: MemoryProvider | None = None) -> None:
        self._name = name
        self._facts = facts
        self._home: Home | None = None
        self.session_id = ""
        self.state_sync: StateDbSync | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def facts(self) -> MemoryProvider:
        """The delegate fact-store provider (created on first use)."""
        if self._facts is None:
            self._facts = _fact_provider(self._home or hermes_home_now())
        return self._facts

    @property
    def home(self) -> Home:
        """The Hermes home given at initialize, else the one Hermes resolves for the caller
        (:func:`hermes_home_now`: its profile override, ``$HERMES_HOME``, ``~/.hermes``)."""
        return self._home or hermes_home_now()

    def is_available(self) -> bool:
        """Available when the fact store is (SQLite is local; no network)."""
        try:
            return bool(self.facts.is_available())
        except Exception:
            return False

    def unavailable_reason(self) -> str:
        """Why the fact store cannot run here."""
        try:
            return self.facts.unavailable_reason()
        except Exception as exc:
            return f"fact store failed to load: {type(exc).__name__}: {exc}"

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Bind to the Hermes home and session, then initialise the fact store."""
        self.session_id = session_id or ""
        if kwargs.get("hermes_home"):
            self._home = Home(kwargs["hermes_home"])
        self.facts.initialize(session_id, **kwargs)
        self.state_sync = StateDbSync(self.home)
        self.state_sync.kick()

    def _kick_sync(self) -> None:
        if self.state_sync is not None:
            self.state_sync.kick()

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """fact_store and fact_feedback (from the fact store) plus recall."""
        from hermes_store.tools import get_tool

        schemas = [s for s in (self.facts.get_tool_schemas() or [])
                   if (s.get("function", s) if isinstance(s, dict) else {}).get("name") != RECALL_TOOL_NAME]
        return [*schemas, get_tool(RECALL_TOOL_NAME).schema]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """``recall`` runs here; fact_store / fact_feedback go to the fact store."""
        if tool_name == RECALL_TOOL_NAME:
            from hermes_store.tools import handle_tool_call

            if self.state_sync is not None:
                self.state_sync.kick()
                self.state_sync.wait(RECALL_SYNC_WAIT)

            session_id = kwargs.get("session_id") or self.session_id
            return handle_tool_call(RECALL_TOOL_NAME, args, home=self.home, session_id=session_id)
        result = self.facts.handle_tool_call(tool_name, args, **kwargs)
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)

    # ---- pure delegation ------------------------------------------------------------------

    def system_prompt_block(self) -> str:
        return self.facts.system_prompt_block()

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return self.facts.prefetch(query, session_id=session_id)

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self.facts.queue_prefetch(query, session_id=session_id)

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None,
                  turn_author: dict[str, Any] | None = None) -> None:
        extra = {} if turn_author is None else {"turn_author": turn_author}
        call_filtered(self.facts.sync_turn, user_content, assistant_content, session_id=session_id,
                      messages=messages, **extra)
        self._kick_sync()

    def identity_signature(self) -> dict[str, Any]:
        """The home this provider writes to (the given ``hermes_home``, else the one Hermes
        resolves for the caller, its per-task profile override included): a profile switch must
        rebuild a cached agent. Cheap and read-only; works before :meth:`initialize` (Hermes'
        gateway calls it on an uninitialised instance for every inbound message)."""
        try:
            root = str(self.home.root)
        except Exception:  # e.g. a home naming the filesystem root: say what was asked for
            root = os.environ.get("HERMES_HOME", "")
        return {f"{self._name}.home": root}

    def checkpoint(self) -> str | None:
        """Import ``state.db`` up to now (waiting at most ``CHECKPOINT_WAIT`` for a running
        sync); None when the transcript is durably indexed, else why it is not."""
        sync = self.state_sync or StateDbSync(self.home)
        self.state_sync = sync
        if not sync.wait(CHECKPOINT_WAIT):
            return f"a state.db sync still running after {CHECKPOINT_WAIT:.0f}s"
        result = sync.sync()
        if result.status in ("imported", "unchanged") and result.error is None:
            return None
        return result.error or result.status

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self._kick_sync()
        self.facts.on_turn_start(turn_number, message, **kwargs)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self.facts.on_session_end(messages)
        self._kick_sync()

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "",
                          reset: bool = False, rewound: bool = False, **kwargs: Any) -> None:
        self.session_id = new_session_id or self.session_id
        self.facts.on_session_switch(new_session_id, parent_session_id=parent_session_id,
                                     reset=reset, rewound=rewound, **kwargs)

    def on_pre_compress(self, messages: list[dict[str, Any]], *,
                        evidence_messages: list[dict[str, Any]] | None = None,
                        require_checkpoint: bool = False, **kwargs: Any) -> str:
        """Checkpoint (see the class docstring), then the fact store's pre-compress text. With
        ``require_checkpoint`` a checkpoint that cannot be written raises ``RuntimeError``
        (fail-closed, Hermes' API v2); otherwise it is logged and compression goes on."""
        problem = self.checkpoint()
        if problem is not None:
            if require_checkpoint:
                raise RuntimeError(f"{self._name}: pre-compress checkpoint not written: {problem}")
            logger.warning("%s: pre-compress checkpoint not written: %s", self._name, problem)
        return self.facts.on_pre_compress(messages)

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any) -> None:
        self.facts.on_delegation(task, result, child_session_id=child_session_id, **kwargs)

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        call_memory_write(self.facts.on_memory_write, action, target, content, metadata)

    def get_config_schema(self) -> list[dict[str, Any]]:
        return self.facts.get_config_schema()

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        self.facts.save_config(values, hermes_home)

    def recall_status(self) -> RecallStatus | None:
        return self.facts.recall_status()

    def backup_paths(self) -> list[str]:
        return self.facts.backup_paths()

    def shutdown(self) -> None:
        if self.state_sync is not None:
            self.state_sync.wait(RECALL_SYNC_WAIT)
        if self._facts is not None:
            self._facts.shutdown()


def make_provider(name: str = DEFAULT_PLUGIN_NAME) -> MemoryProvider:
    """The provider a Hermes plugin registers.

    Inside Hermes the class also subclasses Hermes' own ``agent.memory_provider.MemoryProvider``
    so ``isinstance`` checks there pass; elsewhere it is a plain :class:`HermesStoreProvider`.
    """
    try:
        hermes_abc = importlib.import_module("agent.memory_provider").MemoryProvider
    except Exception:
        hermes_abc = None
    cls: type = HermesStoreProvider
    if isinstance(hermes_abc, type) and not issubclass(HermesStoreProvider, hermes_abc):
        try:
            cls = type("HermesStoreProvider", (HermesStoreProvider, hermes_abc), {})
        except TypeError:
            cls = HermesStoreProvider
    return cls(name)


def register(ctx: Any, name: str = DEFAULT_PLUGIN_NAME) -> None:
    """Hermes plugin entry: ``ctx.register_memory_provider(make_provider(name))``."""
    ctx.register_memory_provider(make_provider(name))


# ---- installation ----------------------------------------------------------------------------

_INIT_TEMPLATE = '''"""hermes_store memory provider for Hermes Agent.

Written by `hermes-store hermes install`; safe to re-run that command to refresh it.
Set `memory.provider: {name}` in config.yaml to activate (tools: fact_store, fact_feedback, recall).
"""

import sys

PROVIDER_NAME = {name!r}
# Where hermes_store and its dependencies were installed, used only when Hermes runs on the
# same Python version and cannot import hermes_store on its own.
_INSTALL_PATHS = {paths!r}
_INSTALL_PYTHON = {python!r}


def _import_plugin_module():
    try:
        from hermes_store import hermes_plugin
    except ImportError:
        if tuple(sys.version_info[:2]) != tuple(_INSTALL_PYTHON):
            raise ImportError(
                "hermes_store is not installed for this Python (" + sys.executable + "); "
                "install it with: " + sys.executable + " -m pip install hermes_store"
            ) from None
        for path in _INSTALL_PATHS:
            if path not in sys.path:
                sys.path.append(path)
        from hermes_store import hermes_plugin
    return hermes_plugin


def register(ctx):
    """Hermes calls this: ctx.register_memory_provider(<MemoryProvider>)."""
    ctx.register_memory_provider(_import_plugin_module().make_provider(PROVIDER_NAME))
'''


def _install_paths() -> list[str]:
    paths: list[str] = []
    for module_name in _RUNTIME_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        file = getattr(module, "__file__", None)
        if not file:
            continue
        location = Path(file).resolve().parent
        if Path(file).name == "__init__.py":
            location = location.parent
        if str(location) not in paths:
            paths.append(str(location))
    return paths


def render_plugin_files(name: str = DEFAULT_PLUGIN_NAME) -> dict[str, str]:
    """The files of the plugin directory: ``plugin.yaml`` and ``__init__.py``."""
    from hermes_store import __version__ as version

    manifest = (
        f"name: {name}\n"
        f"version: {json.dumps(str(version))}\n"
        f"description: {json.dumps(PLUGIN_DESCRIPTION, ensure_ascii=False)}\n"
        "hooks:\n"
        "  - on_session_end\n"
        "  - on_memory_write\n"
    )
    init = _INIT_TEMPLATE.format(name=name, paths=_install_paths(), python=list(sys.version_info[:2]))
    return {"plugin.yaml": manifest, "__init__.py": init}


def _atomic_write(path: Path, text: str) -> None:
    atomic_write_text(path, text, mode=0o644)


def valid_plugin_name(name: str) -> bool:
    """A plugin directory name Hermes will scan (identifier-like, not hidden or private)."""
    return bool(name) and name.isidentifier() and not name.startswith("_")


def install_plugin(hermes_home: str | os.PathLike[str], name: str = DEFAULT_PLUGIN_NAME) -> Path:
    """Write (or refresh) ``<hermes_home>/plugins/<name>/``; returns the plugin directory."""
    if not valid_plugin_name(name):
        raise ValueError(f"invalid plugin name {name!r}: use letters, digits and _ (not starting with _)")
    plugin_dir = Path(hermes_home).expanduser() / "plugins" / name
    plugin_dir.mkdir(parents=True, exist_ok=True)
    for file_name, text in render_plugin_files(name).items():
        _atomic_write(plugin_dir / file_name, text)
    return plugin_dir
