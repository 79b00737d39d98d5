"""Finding memory providers: bundled, installed (entry points) and Hermes-style plugin dirs.

Sources, in precedence order (the first one wins on a name clash):

1. bundled — ``builtin`` and the entry points declared by the ``hermes_store`` distribution;
2. installed packages — entry-point group ``hermes_store.providers`` (value: a provider
   class, a zero-argument factory, or an instance);
3. user plugins — ``$HERMES_HOME/plugins/<name>/`` holding ``plugin.yaml`` and an
   ``__init__.py`` whose ``register(ctx)`` calls ``ctx.register_memory_provider(...)``;
   recognised and loaded the way Hermes' ``plugins/memory`` loader does: a marker in
   ``__init__.py`` or, failing that, a ``register_memory_provider(...)`` call or
   ``MemoryProvider`` subclass in a top-level module (parsed, not imported); sibling modules
   first, then ``register`` (a raise after registering keeps the provider), else the first
   ``MemoryProvider`` subclass. A plug-in listed in config.yaml's ``plugins.disabled`` (by
   directory or manifest name) is listed as unavailable and its code is not run.

:func:`discover_providers` returns one :class:`ProviderInfo` per provider with its
availability and, when unavailable, the reason — the single source for ``provider list``,
``status`` and selection.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import logging
import re
import sys
import types
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from hermes_store.home import ConfigError, Home, load_config
from hermes_store.providers.base import BUILTIN_NAME, MemoryProvider, is_core_provider

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "hermes_store.providers"
BUILTIN_DESCRIPTION = "Built-in MEMORY.md / USER.md store (always active)"
USER_PLUGIN_PACKAGE = "_hermes_user_memory"
PLUGIN_MARKERS = ("register_memory_provider", "MemoryProvider")
MARKER_SCAN_CHARS = 8192
_OWN_DISTRIBUTION = "hermes_store"
_REQUIRED_MEMBERS = ("name", "is_available", "initialize", "get_tool_schemas")


@dataclass
class ProviderInfo:
    """One discovered provider: where it came from and whether it can run here."""

    name: str
    source: str  # "bundled" | "entry_point" | "plugin_dir"
    description: str = ""
    location: str = ""
    available: bool = False
    reason: str = ""
    tools: list[str] = field(default_factory=list)
    provider: Any = None  # the instance created during discovery (None when loading failed)
    shadowed_by: str = ""
    loaded: bool = False

    @property
    def usable(self) -> bool:
        """True when the provider loaded, is available and is not shadowed."""
        return self.available and self.loaded and not self.shadowed_by

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly view (no instance)."""
        return {
            "name": self.name,
            "source": self.source,
            "description": self.description,
            "location": self.location,
            "available": self.usable,
            "reason": self.reason,
            "tools": list(self.tools),
        }


def is_provider_like(obj: Any) -> bool:
    """True for our ``MemoryProvider`` instances and duck-typed ones (e.g. Hermes' own ABC)."""
    if isinstance(obj, MemoryProvider):
        return True
    if isinstance(obj, type):
        return False
    return all(hasattr(obj, member) for member in _REQUIRED_MEMBERS)


def _is_provider_class(obj: Any, module_name: str | None = None) -> bool:
    if not inspect.isclass(obj) or inspect.isabstract(obj):
        return False
    if module_name is not None and obj.__module__ != module_name:
        return False
    if issubclass(obj, MemoryProvider):
        return obj is not MemoryProvider
    return any(base.__name__ == "MemoryProvider" for base in obj.__mro__[1:])


class PluginContext:
    """The collector handed to ``register(ctx)``: keeps memory providers, ignores the rest."""

    def __init__(self, hermes_home: str = "") -> None:
        self.hermes_home = hermes_home
        self.providers: list[Any] = []

    def register_memory_provider(self, provider: Any) -> None:
        """Collect ``provider`` (the call a plugin's ``register(ctx)`` makes)."""
        self.providers.append(provider)

    def register_tool(self, *args: Any, **kwargs: Any) -> None:
        """Accepted and ignored (general plugins also register tools)."""

    def register_hook(self, *args: Any, **kwargs: Any) -> None:
        """Accepted and ignored."""

    def register_cli_command(self, *args: Any, **kwargs: Any) -> None:
        """Accepted and ignored."""

    def __getattr__(self, attr: str) -> Any:
        """Any other ``register_*`` call (skills, commands, middleware, ...) is accepted and
        ignored, as Hermes' memory-provider collector forwards them all and never lets one cost
        the provider; any other missing name still raises ``AttributeError``."""
        if not attr.startswith("register_"):
            raise AttributeError(attr)

        def _ignored(*args: Any, **kwargs: Any) -> None:
            logger.debug("memory plug-in registration %s ignored outside Hermes", attr)

        return _ignored


def _ensure_package(name: str, path: Path | None = None) -> types.ModuleType:
    module = sys.modules.get(name)
    if module is None:
        module = types.ModuleType(name)
        module.__path__ = [str(path)] if path is not None else []
        module.__package__ = name
        sys.modules[name] = module
    return module


def _exec_module(name: str, file: Path, *, package_dir: Path | None = None) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(
        name, file, submodule_search_locations=[str(package_dir)] if package_dir is not None else None)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def read_plugin_yaml(plugin_dir: Path) -> dict[str, Any]:
    """The parsed ``plugin.yaml`` (``{}`` when absent); bad YAML raises ValueError naming the file."""
    path = plugin_dir / "plugin.yaml"
    return load_config(path) if path.is_file() else {}


def looks_like_memory_plugin(plugin_dir: Path) -> bool:
    """Hermes' acceptance test (``_is_memory_provider_dir``): ``__init__.py`` mentions a marker
    within its first 8192 chars, or, failing that, one of the package's top-level modules
    calls ``register_memory_provider(...)`` or defines a ``MemoryProvider`` subclass."""
    init = plugin_dir / "__init__.py"
    try:
        head = init.read_text(encoding="utf-8-sig", errors="replace")[:MARKER_SCAN_CHARS]
    except OSError:
        return False
    return any(marker in head for marker in PLUGIN_MARKERS) or defines_memory_provider(plugin_dir)


def defines_memory_provider(plugin_dir: Path) -> bool:
    """True when a top-level module of ``plugin_dir`` (parsed, never imported) calls
    ``register_memory_provider(...)`` or subclasses ``MemoryProvider`` (under any ``as`` name):
    Hermes' ``_defines_memory_provider``. A docstring or comment naming them does not count."""
    for module in sorted(plugin_dir.glob("*.py")):
        try:
            tree = ast.parse(module.read_text(encoding="utf-8-sig", errors="replace"))
        except (OSError, SyntaxError, ValueError):
            continue
        bases = {"MemoryProvider"} | {alias.asname for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                                      for alias in node.names if alias.name == "MemoryProvider" and alias.asname}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and "register_memory_provider" in (
                    getattr(node.func, "attr", None), getattr(node.func, "id", None)):
                return True
            if isinstance(node, ast.ClassDef) and any(
                    (getattr(base, "attr", None) or getattr(base, "id", None)) in bases for base in node.bases):
                return True
    return False


def disabled_plugin_names(home: Home) -> frozenset[str]:
    """The names config.yaml's ``plugins.disabled`` lists (``hermes plugins disable`` writes it);
    empty when the file, the key or the list is absent or unreadable, as Hermes reads it."""
    try:
        plugins = home.config().get("plugins")
    except ConfigError:
        return frozenset()
    disabled = plugins.get("disabled") if isinstance(plugins, dict) else None
    return frozenset(v for v in disabled if isinstance(v, str)) if isinstance(disabled, list) else frozenset()


def plugins_problems(config: dict[str, Any]) -> list[str]:
    """What is wrong with ``plugins:`` of a parsed config.yaml, one ``key: problem`` each: read
    as Hermes reads it (:func:`disabled_plugin_names`), a ``disabled`` that is no list of names
    disables nothing without a word, so ``status`` lists it."""
    plugins = config.get("plugins")
    if plugins is None:
        return []
    if not isinstance(plugins, dict):
        return [f"plugins: expected a mapping (disabled: [...], ...), got {plugins!r}; no plug-in is disabled"]
    disabled = plugins.get("disabled")
    if disabled is None or (isinstance(disabled, list) and all(isinstance(v, str) for v in disabled)):
        return []
    return [f"plugins.disabled: expected a list of plug-in names, got {disabled!r}; "
            "what is not a name disables nothing"]


def load_plugin_dir(plugin_dir: str | Path, *, package: str = USER_PLUGIN_PACKAGE,
                    hermes_home: str = "") -> Any:
    """Load a provider from a plugin directory exactly as Hermes loads a user plugin.

    The directory becomes the synthetic package ``<package>.<name>``; every sibling ``*.py``
    is executed as a submodule before ``__init__.py`` (so relative imports resolve); then
    ``register(ctx)`` is called with a collector context. Without a registration the first
    ``MemoryProvider`` subclass defined in the module is instantiated with no arguments.
    Raises on failure (callers log it).
    """
    plugin_dir = Path(plugin_dir)
    init = plugin_dir / "__init__.py"
    if not init.is_file():
        raise ImportError(f"{plugin_dir}: no __init__.py")
    _ensure_package(package)
    module_name = f"{package}.{plugin_dir.name}"
    for stale in [m for m in sys.modules if m == module_name or m.startswith(module_name + ".")]:
        del sys.modules[stale]
    _ensure_package(module_name, plugin_dir)
    for sibling in sorted(plugin_dir.glob("*.py")):
        if sibling.name == "__init__.py" or f"{module_name}.{sibling.stem}" in sys.modules:
            continue  # already imported by an earlier sibling
        _exec_module(f"{module_name}.{sibling.stem}", sibling)
    del sys.modules[module_name]
    module = _exec_module(module_name, init, package_dir=plugin_dir)
    ctx = PluginContext(hermes_home)
    register = getattr(module, "register", None)
    failure = ""
    if callable(register):
        try:
            register(ctx)
        except Exception as exc:  # Hermes: a raise after registering keeps the registered provider
            if not ctx.providers:
                failure = f" (register() raised {type(exc).__name__}: {exc})"
            else:
                logger.warning("Memory provider '%s' raised after registering (%s) — using the registered "
                               "provider; later registrations were skipped", plugin_dir.name, exc)
        if ctx.providers:
            return ctx.providers[-1]  # Hermes keeps the last registration
    for scope in (module_name, None):  # classes defined in the plug-in first, then imported ones
        instance = _first_buildable(module, scope)
        if instance is not None:
            return instance
    raise ImportError(f"{plugin_dir}: register(ctx) registered no memory provider{failure} and no "
                      "MemoryProvider subclass could be built")


def _first_buildable(module: types.ModuleType, module_name: str | None) -> Any:
    """The first ``MemoryProvider`` subclass of ``module`` (defined in ``module_name`` when given)
    that builds with no arguments; a constructor that raises is skipped, as in Hermes'
    ``_instantiate_subclass``. None when none builds."""
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if _is_provider_class(obj, module_name):
            try:
                return obj()
            except Exception as exc:
                logger.debug("memory provider class %s not built: %s", obj.__qualname__, exc)
    return None


def _registered(register: Any) -> Any:
    """The provider ``register(ctx)`` registers last (None when it registers none)."""
    ctx = PluginContext()
    register(ctx)
    return ctx.providers[-1] if ctx.providers else None  # the last, as Hermes


def _instantiate(target: Any) -> Any:
    """Turn an entry-point target into a provider instance, in Hermes' order
    (``_load_provider_from_entry_point``): an instance, a provider class, a module with
    ``register(ctx)``, a factory or ``register`` callable, or a module holding a subclass."""
    if is_provider_like(target):
        return target
    if _is_provider_class(target):
        return target()
    if isinstance(target, types.ModuleType) and callable(getattr(target, "register", None)):
        provider = _registered(target.register)
        if provider is not None:
            return provider
    if callable(target) and not isinstance(target, type):
        try:
            instance = target()
        except TypeError:  # a register(ctx) callable
            instance = _registered(target)
        if is_provider_like(instance):
            return instance
        raise TypeError(f"{target!r} did not return or register a memory provider")
    if isinstance(target, types.ModuleType):
        for scope in (target.__name__, None):
            instance = _first_buildable(target, scope)
            if instance is not None:
                return instance
    raise TypeError(f"{target!r} is not a memory provider")


def _probe(info: ProviderInfo, instance: Any) -> None:
    """Fill availability, reason and tool names from a loaded instance."""
    info.provider = instance
    info.loaded = True
    try:
        info.available = bool(instance.is_available())
    except Exception as exc:
        info.available = False
        info.reason = f"is_available() failed: {type(exc).__name__}: {exc}"
        return
    if not info.available:
        hint = ""
        reason_fn = getattr(instance, "unavailable_reason", None)
        if callable(reason_fn):
            try:
                hint = str(reason_fn() or "")
            except Exception as exc:
                hint = f"unavailable_reason() failed: {exc}"
        info.reason = hint or "is_available() returned False"
    try:
        info.tools = [
            (s.get("function", s) if isinstance(s, dict) else {}).get("name", "")
            for s in (instance.get_tool_schemas() or [])
        ]
        info.tools = [t for t in info.tools if t]
    except Exception as exc:
        logger.debug("provider %s: get_tool_schemas failed during discovery: %s", info.name, exc)


def _summary(doc: str | None) -> str:
    """First line of a docstring with reST roles reduced to their names."""
    line = (doc or "").strip().split("\n", 1)[0]
    return re.sub(r":\w+:`~?(?:[\w.]+\.)?([^`.]+)`", r"\1", line)


def _entry_points() -> list[metadata.EntryPoint]:
    try:
        return list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    except TypeError:  # Python < 3.10 style API
        return list(metadata.entry_points().get(ENTRY_POINT_GROUP, []))  # type: ignore[attr-defined]


def _entry_point_infos() -> list[ProviderInfo]:
    infos = []
    for ep in _entry_points():
        dist = getattr(ep, "dist", None)
        dist_name = (getattr(dist, "name", "") or "").replace("-", "_").lower()
        bundled = dist_name == _OWN_DISTRIBUTION
        info = ProviderInfo(name=ep.name, source="bundled" if bundled else "entry_point", location=ep.value)
        try:
            target = ep.load()
            info.description = _summary(inspect.getdoc(target))
            _probe(info, _instantiate(target))
        except Exception as exc:
            info.available = False
            info.reason = f"failed to load {ep.value}: {type(exc).__name__}: {exc}"
        infos.append(info)
    infos.sort(key=lambda i: (i.source != "bundled", i.name))
    return infos


NOT_RUN_REASON = "plug-in code not run (this listing only reads plugin.yaml)"
DISABLED_REASON = ("disabled by plugins.disabled in {config} (Hermes does not load it either); "
                   "run `hermes plugins enable {name}` or remove it from that list")


def _plugin_dir_infos(home: Home, run_code: bool | frozenset[str] = True) -> list[ProviderInfo]:
    infos = []
    root = home.plugins_dir
    if not root.is_dir():
        return infos
    disabled = disabled_plugin_names(home)
    for plugin_dir in sorted(root.iterdir()):
        if not plugin_dir.is_dir() or plugin_dir.name.startswith(("_", ".")):
            continue
        if not (plugin_dir / "__init__.py").is_file() or not looks_like_memory_plugin(plugin_dir):
            continue
        info = ProviderInfo(name=plugin_dir.name, source="plugin_dir", location=str(plugin_dir))
        try:
            manifest = read_plugin_yaml(plugin_dir)
            info.description = str(manifest.get("description") or "").strip()
            if {plugin_dir.name, str(manifest.get("name") or "")} & disabled:
                info.reason = DISABLED_REASON.format(name=plugin_dir.name, config=home.config_path)
                infos.append(info)
                continue
            if not (run_code is True or (run_code and plugin_dir.name in run_code)):
                info.reason = NOT_RUN_REASON
                infos.append(info)
                continue
            _probe(info, load_plugin_dir(plugin_dir, hermes_home=str(home.root)))
        except Exception as exc:
            info.available = False
            info.reason = f"failed to load {plugin_dir}: {type(exc).__name__}: {exc}"
        infos.append(info)
    return infos


def discover_providers(home: Home | None = None, *, include_builtin: bool = True,
                       run_plugin_code: bool | frozenset[str] = True) -> list[ProviderInfo]:
    """Every provider visible from ``home``: bundled, entry points, then plugin directories.

    On a name clash the earlier source wins; the later one is listed as shadowed and
    unavailable. With ``run_plugin_code=False`` no ``plugins/*/__init__.py`` of the home
    is executed (with a set of names, only those): the others are described from their
    ``plugin.yaml`` only (availability unknown, ``reason`` says so); installed entry points
    are still loaded.
    """
    home = home or Home()
    infos: list[ProviderInfo] = []
    if include_builtin:
        infos.append(ProviderInfo(name=BUILTIN_NAME, source="bundled", description=BUILTIN_DESCRIPTION,
                                  location="hermes_store.providers.builtin:BuiltinMemoryProvider",
                                  available=True, loaded=True, tools=["memory"]))
    seen: dict[str, ProviderInfo] = {BUILTIN_NAME: infos[0]} if include_builtin else {}
    for info in _entry_point_infos() + _plugin_dir_infos(home, run_plugin_code):
        first = seen.get(info.name)
        if first is not None:
            info.shadowed_by = first.source
            info.available = False
            info.reason = f"shadowed by the {first.source} provider of the same name ({first.location})"
            _shutdown_quietly(info.provider)
        else:
            seen[info.name] = info
        infos.append(info)
    return infos


def _shutdown_quietly(provider: Any) -> None:
    closer = getattr(provider, "shutdown", None)
    if callable(closer):
        try:
            closer()
        except Exception as exc:
            logger.debug("shutdown of a discarded provider failed: %s", exc)


def find_provider(infos: list[ProviderInfo], name: str) -> ProviderInfo | None:
    """The winning (non-shadowed) entry called ``name``."""
    for info in infos:
        if info.name == name and not info.shadowed_by:
            return info
    return None


def release_unused(infos: list[ProviderInfo], keep: Any = None) -> None:
    """Shut down every instance created during discovery except ``keep``."""
    for info in infos:
        if info.provider is not None and info.provider is not keep:
            _shutdown_quietly(info.provider)
            info.provider = None


def describe_registry(home: Home | None = None, infos: list[ProviderInfo] | None = None) -> dict[str, Any]:
    """The registry as one JSON-friendly document (what ``provider list --json`` prints).

    Keys: ``configured`` (memory.provider), ``active`` (the provider a new session would use,
    ``builtin`` when none), ``providers`` (one row per provider: name, source, description,
    location, available, reason, tools, shadowed_by, configured, active) and, when the
    configured provider cannot be used, ``warning`` (or ``config_error``). Instances created
    for the report are shut down. Use this for any status display so all views agree.
    """
    home = home or Home()
    own = infos is None
    infos = discover_providers(home) if infos is None else infos
    try:
        try:
            configured, error = home.memory_config().provider, ""
        except ConfigError as exc:
            configured, error = "", str(exc)
        chosen = None if is_core_provider(configured) else find_provider(infos, configured)
        active = configured if chosen is not None and chosen.usable else ""
        rows = []
        for info in infos:
            row = info.to_dict()
            winner = not info.shadowed_by
            row["shadowed_by"] = info.shadowed_by
            row["configured"] = bool(configured) and info.name == configured and winner
            row["active"] = info.name == BUILTIN_NAME or (bool(active) and info.name == active and winner)
            rows.append(row)
        document: dict[str, Any] = {"configured": configured, "active": active or BUILTIN_NAME,
                                    "providers": rows}
        if error:
            document["config_error"] = error
        elif not is_core_provider(configured) and not active:
            problem = "not found" if chosen is None else f"not available: {chosen.reason}"
            document["warning"] = f"memory.provider '{configured}' {problem}; built-in memory only"
        return document
    finally:
        if own:
            release_unused(infos)
