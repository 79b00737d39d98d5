"""The Hermes drop-in: install, then load the way Hermes loads user memory plugins.

``hermes_style_load`` below is written from the reference description of Hermes' loader
(hermes_holographic.md §6), independently of ``hermes_store.providers.discovery``:
marker check on the first 8192 chars of ``__init__.py``, a synthetic
``_hermes_user_memory`` package, sibling modules executed before ``__init__``,
``register(ctx)`` with a collector, fallback to the first MemoryProvider subclass.
"""

from __future__ import annotations

import abc
import importlib.util
import json
import subprocess
import sys
import types

import pytest
import yaml

from hermes_store.hermes_plugin import HermesStoreProvider, install_plugin, make_provider
from hermes_store.providers.discovery import load_plugin_dir
from hermes_store.providers.manager import MemoryManager


class Collector:
    def __init__(self):
        self.providers = []

    def register_memory_provider(self, provider):
        self.providers.append(provider)

    def register_tool(self, *a, **k):
        pass

    def register_hook(self, *a, **k):
        pass

    def register_cli_command(self, *a, **k):
        pass


def hermes_style_load(plugin_dir):
    init = plugin_dir / "__init__.py"
    head = init.read_text(encoding="utf-8")[:8192]
    if "register_memory_provider" not in head and "MemoryProvider" not in head:
        return None
    package = "_hermes_user_memory"
    if package not in sys.modules:
        parent = types.ModuleType(package)
        parent.__path__ = []
        sys.modules[package] = parent
    module_name = f"{package}.{plugin_dir.name}"
    synthetic = types.ModuleType(module_name)
    synthetic.__path__ = [str(plugin_dir)]
    sys.modules[module_name] = synthetic
    for sibling in sorted(plugin_dir.glob("*.py")):
        if sibling.name != "__init__.py":
            spec = importlib.util.spec_from_file_location(f"{module_name}.{sibling.stem}", sibling)
            sub = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = sub
            spec.loader.exec_module(sub)
    spec = importlib.util.spec_from_file_location(module_name, init,
                                                  submodule_search_locations=[str(plugin_dir)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    ctx = Collector()
    if hasattr(module, "register"):
        module.register(ctx)
        if ctx.providers:
            return ctx.providers[0]
    for value in vars(module).values():
        if isinstance(value, type) and any(b.__name__ == "MemoryProvider" for b in value.__mro__[1:]):
            return value()
    return None


def test_installed_plugin_files(tmp_path):
    plugin = install_plugin(tmp_path / "hermes", "hermes_store")
    manifest = yaml.safe_load((plugin / "plugin.yaml").read_text())
    assert manifest["name"] == "hermes_store" and "recall" in manifest["description"]
    init = (plugin / "__init__.py").read_text()
    assert "register_memory_provider" in init[:8192]
    assert "def register(ctx):" in init


def test_hermes_style_load_and_full_session(tmp_path, engine):  # the provider on each engine
    hermes_home = tmp_path / "hermes"
    plugin = install_plugin(hermes_home, "hermes_store")
    provider = hermes_style_load(plugin)
    assert provider is not None and provider.name == "hermes_store" and provider.is_available()
    tools = [s["name"] for s in provider.get_tool_schemas()]
    assert tools == ["fact_store", "fact_feedback", "recall"]

    manager = MemoryManager(hermes_home=str(hermes_home))
    assert manager.add_provider(provider)
    manager.initialize_all("hermes-session-1", platform="cli", agent_context="primary")
    try:
        added = json.loads(manager.handle_tool_call(
            "fact_store", {"action": "add", "content": "The deploy target is Fly.io in region ams",
                           "category": "project"}))
        assert added.get("fact_id"), added
        found = json.loads(manager.handle_tool_call("recall", {"query": "deploy target region"}))
        assert found["success"] is True and found["query"] == "deploy target region"
        # recall ran on the Hermes home over the fact store written through the plugin
        assert "facts" in found["kinds_searched"] or "facts" in found.get("errors", {}), found
        assert "Fly.io" in manager.prefetch_all("where do we deploy the app?")
        assert manager.build_system_prompt()
        manager.on_memory_write("add", "user", "User prefers tabs over spaces")
        listed = json.loads(manager.handle_tool_call("fact_store", {"action": "search", "query": "tabs"}))
        assert any("tabs" in r["content"] for r in listed["results"]), listed
    finally:
        manager.shutdown_all()
    # on PostgreSQL everything went to the server: no SQLite file beside the home
    assert (hermes_home / "hermes_store.db").is_file() is (engine == "sqlite")
    from hermes_store.facts.store import FactStore
    from hermes_store.home import Home

    with FactStore(Home(hermes_home)) as store:
        assert any("Fly.io" in f["content"] for f in store.list_facts())


def test_our_loader_and_the_hermes_style_loader_agree(tmp_path):
    plugin = install_plugin(tmp_path / "hermes", "store_x")
    ours = load_plugin_dir(plugin)
    theirs = hermes_style_load(plugin)
    assert type(ours).__name__ == type(theirs).__name__ == "HermesStoreProvider"
    assert ours.name == theirs.name == "store_x"


def test_plugin_subclasses_hermes_own_abc_when_present(monkeypatch):
    class HermesABC(abc.ABC):
        @property
        @abc.abstractmethod
        def name(self): ...

    agent = types.ModuleType("agent")
    agent.__path__ = []
    memory_provider = types.ModuleType("agent.memory_provider")
    memory_provider.MemoryProvider = HermesABC
    monkeypatch.setitem(sys.modules, "agent", agent)
    monkeypatch.setitem(sys.modules, "agent.memory_provider", memory_provider)
    provider = make_provider("hermes_store")
    assert isinstance(provider, HermesABC) and isinstance(provider, HermesStoreProvider)


def test_plugin_loads_in_a_python_without_hermes_store_on_its_path(tmp_path):
    """``python -S`` skips site-packages: the plugin falls back to the recorded install paths."""
    plugin = install_plugin(tmp_path / "hermes", "hermes_store")
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('_hermes_user_memory_x', {str(plugin / '__init__.py')!r})\n"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        "got = []\n"
        "class Ctx:\n"
        "    def register_memory_provider(self, p): got.append(p)\n"
        "mod.register(Ctx())\n"
        "print(got[0].name, [s['name'] for s in got[0].get_tool_schemas()])\n"
    )
    out = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "hermes_store ['fact_store', 'fact_feedback', 'recall']"


def test_hermes_finds_the_provider_through_its_entry_point_group():
    """Hermes loads pip-installed memory providers from the entry-point group
    ``hermes_agent.memory_providers`` (plugins/memory/__init__.py). The target is taken, in
    Hermes' order, as a provider instance, a provider class, then a module with ``register(ctx)``."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    from pathlib import Path

    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text("utf-8"))
    group = project["project"]["entry-points"]["hermes_agent.memory_providers"]
    assert set(group) == {"hermes_store"}
    module_name, _, attr = group["hermes_store"].partition(":")
    loaded = importlib.import_module(module_name)
    loaded = getattr(loaded, attr) if attr else loaded
    assert not isinstance(loaded, type) and callable(loaded.register)
    ctx = Collector()
    loaded.register(ctx)
    assert [p.name for p in ctx.providers] == ["hermes_store"]
    assert {"fact_store", "fact_feedback", "recall"} <= {s["name"] for s in ctx.providers[0].get_tool_schemas()}


def _hermes_manifest_kind(plugin_dir):
    """Hermes' general plug-in manager's reading of a plugin directory's kind, restated from
    ``_manifest_kind`` / ``_detect_kind_from_source`` (zons hermes_cli/plugins_manifest.py
    @03d70b32): a declared ``kind:`` wins; without one, a memory-provider marker in the first
    8 KB of ``__init__.py`` makes it ``exclusive`` (left to memory discovery, never imported by
    the general manager); else ``standalone``."""
    manifest = yaml.safe_load((plugin_dir / "plugin.yaml").read_text(encoding="utf-8-sig")) or {}
    if "kind" in manifest:
        return str(manifest["kind"]).strip().lower()
    head = (plugin_dir / "__init__.py").read_text(encoding="utf-8-sig", errors="replace")[:8192]
    markers = ("register_memory_provider", "MemoryProvider", "register_cron_scheduler", "CronScheduler",
               "register_computer_use_provider", "ComputerUseProvider")
    return "exclusive" if any(m in head for m in markers) else "standalone"


def test_hermes_general_plugin_manager_leaves_both_plugin_dirs_to_memory_discovery(tmp_path):
    """Both the directory ``hermes install`` writes and the catalog's ``hermes-plugin/`` sit in
    ``$HERMES_HOME/plugins/``, which Hermes' general plug-in manager scans too; it must read them
    as ``exclusive`` so only the memory loader (``memory.provider``) runs their ``register(ctx)``."""
    from pathlib import Path

    catalog = Path(__file__).resolve().parents[2] / "hermes-plugin"
    for plugin in (install_plugin(tmp_path / "hermes", "hermes_store"), catalog):
        assert _hermes_manifest_kind(plugin) == "exclusive", plugin
