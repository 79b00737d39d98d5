"""Discovery by entry point and by plugin directory; selection from memory.provider."""

from __future__ import annotations

import textwrap

import pytest

from hermes_store.providers.activation import build_memory_manager, select_provider
from hermes_store.providers.discovery import (
    PluginContext,
    discover_providers,
    find_provider,
    load_plugin_dir,
    looks_like_memory_plugin,
    release_unused,
)

PROVIDER_SOURCE = '''
from hermes_store.providers.base import MemoryProvider


class {cls}(MemoryProvider):
    """{doc}"""

    def __init__(self):
        self.initialized = None

    @property
    def name(self):
        return "{name}"

    def is_available(self):
        return {available}

    def unavailable_reason(self):
        return "set {name_upper}_API_KEY"

    def initialize(self, session_id, **kwargs):
        self.initialized = (session_id, kwargs.get("hermes_home"))

    def get_tool_schemas(self):
        return [{{"name": "{name}_search", "description": "search", "parameters": {{}}}}]

    def handle_tool_call(self, tool_name, args, **kwargs):
        return '{{"success": true, "from": "{name}"}}'
'''


def make_distribution(root, dist: str, module: str, ep_name: str, *, cls: str = "Provider",
                      available: bool = True, doc: str = "A third-party provider.") -> None:
    """A minimal installed distribution (module + dist-info with an entry point) under ``root``."""
    (root / f"{module}.py").write_text(PROVIDER_SOURCE.format(
        cls=cls, doc=doc, name=ep_name, name_upper=ep_name.upper(), available=available))
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[hermes_store.providers]\n{ep_name} = {module}:{cls}\n")


def make_plugin_dir(home, name: str, *, init: str, siblings: dict[str, str] | None = None,
                    manifest: str | None = None):
    plugin = home.plugins_dir / name
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(textwrap.dedent(init))
    for file_name, text in (siblings or {}).items():
        (plugin / file_name).write_text(textwrap.dedent(text))
    if manifest is not None:
        (plugin / "plugin.yaml").write_text(manifest)
    return plugin


def test_builtin_and_bundled_fact_store_are_listed_first(home):
    infos = discover_providers(home)
    assert infos[0].name == "builtin" and infos[0].usable and infos[0].tools == ["memory"]
    facts = find_provider(infos, "holographic_store")
    assert facts is not None and facts.source == "bundled" and facts.usable
    assert facts.tools == ["fact_store", "fact_feedback"]
    release_unused(infos)
    assert facts.provider is None


def test_discovery_by_entry_point(home, tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    make_distribution(site, "acme_memory", "acme_memory_ep", "acme")
    make_distribution(site, "gated_memory", "gated_memory_ep", "gated", available=False)
    monkeypatch.syspath_prepend(str(site))
    infos = discover_providers(home)
    acme = find_provider(infos, "acme")
    assert acme is not None and acme.source == "entry_point" and acme.usable
    assert acme.description == "A third-party provider." and acme.tools == ["acme_search"]
    assert acme.location == "acme_memory_ep:Provider"
    gated = find_provider(infos, "gated")
    assert gated is not None and not gated.usable and gated.reason == "set GATED_API_KEY"


def test_broken_entry_point_is_listed_with_its_error(home, tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    info = site / "broken_mem-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken_mem\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[hermes_store.providers]\nbroken = no_such_module_xyz:P\n")
    monkeypatch.syspath_prepend(str(site))
    broken = find_provider(discover_providers(home), "broken")
    assert broken is not None and not broken.usable
    assert "failed to load no_such_module_xyz:P" in broken.reason and "ModuleNotFoundError" in broken.reason


def test_discovery_by_plugin_directory_with_siblings_and_register(home):
    make_plugin_dir(home, "dirmem", manifest="name: dirmem\ndescription: Plugin dir memory\n",
                    siblings={"store.py": "BACKEND = 'sibling loaded'\n"},
                    init='''
                    from hermes_store.providers.base import MemoryProvider
                    from .store import BACKEND


                    class DirMem(MemoryProvider):
                        name = "dirmem"

                        def is_available(self):
                            return True

                        def initialize(self, session_id, **kwargs):
                            pass

                        def get_tool_schemas(self):
                            return [{"name": "dirmem_tool", "parameters": {}}]

                        def system_prompt_block(self):
                            return BACKEND


                    def register(ctx):
                        ctx.register_memory_provider(DirMem())
                    ''')
    info = find_provider(discover_providers(home), "dirmem")
    assert info is not None and info.source == "plugin_dir" and info.usable
    assert info.description == "Plugin dir memory" and info.tools == ["dirmem_tool"]
    assert info.provider.system_prompt_block() == "sibling loaded"


def test_plugin_without_register_falls_back_to_the_provider_subclass(home):
    plugin = make_plugin_dir(home, "fallback_mem", init='''
        from hermes_store.providers.base import MemoryProvider


        class Fallback(MemoryProvider):
            @property
            def name(self):
                return "fallback_mem"

            def is_available(self):
                return True

            def initialize(self, session_id, **kwargs):
                pass

            def get_tool_schemas(self):
                return []
        ''')
    provider = load_plugin_dir(plugin)
    assert provider.name == "fallback_mem"


def test_plugin_dirs_without_markers_or_private_names_are_ignored(home):
    make_plugin_dir(home, "not_memory", init="def register(ctx):\n    ctx.register_tool('x')\n")
    make_plugin_dir(home, "_private", init="MemoryProvider = None\n")
    assert not looks_like_memory_plugin(home.plugins_dir / "not_memory")
    names = {i.name for i in discover_providers(home)}
    assert "not_memory" not in names and "_private" not in names


def test_bundled_wins_on_a_name_clash(home):
    make_plugin_dir(home, "holographic_store", init='''
        from hermes_store.providers.base import MemoryProvider

        class Impostor(MemoryProvider):
            name = "holographic_store"
            def is_available(self): return True
            def initialize(self, session_id, **kwargs): pass
            def get_tool_schemas(self): return []

        def register(ctx):
            ctx.register_memory_provider(Impostor())
        ''')
    infos = [i for i in discover_providers(home) if i.name == "holographic_store"]
    assert [i.source for i in infos] == ["bundled", "plugin_dir"]
    assert infos[0].usable and not infos[1].usable and "shadowed by the bundled provider" in infos[1].reason
    assert type(find_provider(infos, "holographic_store").provider).__name__ == "FactStoreProvider"


def test_failing_plugin_is_reported_not_raised(home):
    make_plugin_dir(home, "crashy", init="MemoryProvider = 1\nraise RuntimeError('boom at import')\n")
    info = find_provider(discover_providers(home), "crashy")
    assert info is not None and not info.usable and "boom at import" in info.reason


@pytest.mark.parametrize("config,active,ok,fragment", [
    ("", "", True, "not set"),
    ("memory:\n  provider: builtin\n", "", True, "'builtin'"),
    # Hermes' CORE_MEMORY_PROVIDER_SENTINELS: these name the built-in store, not a plug-in.
    ("memory:\n  provider: none\n", "", True, "memory.provider is 'none': built-in memory only"),
    ("memory:\n  provider: default\n", "", True, "'default': built-in memory only"),
    ("memory:\n  provider: Built-In\n", "", True, "'Built-In': built-in memory only"),
    ("memory:\n  provider: holographic_store\n", "holographic_store", True, "active"),
    ("memory:\n  provider: nonexistent\n", "", False, "Memory provider 'nonexistent' not found"),
])
def test_selection_by_memory_provider(home, config, active, ok, fragment):
    home.config_path.write_text(config)
    selection = select_provider(home)
    assert (selection.active, selection.ok) == (active, ok)
    assert fragment in selection.message
    release_unused(selection.infos)


def test_unavailable_provider_falls_back_to_builtin_with_a_clear_message(home, tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    make_distribution(site, "gated2_memory", "gated2_memory_ep", "gated2", available=False)
    monkeypatch.syspath_prepend(str(site))
    home.config_path.write_text("memory:\n  provider: gated2\n")
    manager, selection = build_memory_manager(home, session_id="s")
    try:
        assert [manager.name_of(p) for p in manager.providers] == ["builtin"]
        assert selection.message == ("Memory provider 'gated2' is not available: set GATED2_API_KEY; "
                                     "using built-in memory only.")
    finally:
        manager.shutdown_all()


def test_build_memory_manager_with_an_entry_point_provider(home, tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    make_distribution(site, "acme2_memory", "acme2_memory_ep", "acme2")
    monkeypatch.syspath_prepend(str(site))
    home.config_path.write_text("# mine\nmemory:\n  provider: acme2\n")
    manager, selection = build_memory_manager(home, session_id="sess-1")
    try:
        assert selection.active == "acme2"
        assert [manager.name_of(p) for p in manager.providers] == ["builtin", "acme2"]
        assert manager.get_all_tool_names() == {"memory", "acme2_search"}
        assert manager.external_provider.initialized == ("sess-1", str(home.root))
    finally:
        manager.shutdown_all()


SIBLING_PROVIDER = '''
from hermes_store.providers.base import MemoryProvider as Base


class Sibling(Base):
    name = "sibling_mem"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return []


def register(ctx):
    ctx.register_memory_provider(Sibling())
'''


def test_a_provider_defined_only_in_a_sibling_module_is_found_as_in_hermes(home):
    # Hermes' _is_memory_provider_dir: no marker in __init__.py -> parse (never import) the
    # package's top-level modules for register_memory_provider(...) or a MemoryProvider subclass.
    make_plugin_dir(home, "sibling_mem", init="from .impl import register  # the plug-in's entry\n",
                    siblings={"impl.py": SIBLING_PROVIDER})
    assert looks_like_memory_plugin(home.plugins_dir / "sibling_mem")
    info = find_provider(discover_providers(home), "sibling_mem")
    assert info is not None and info.usable and type(info.provider).__name__ == "Sibling"
    # a mention in a comment or docstring is not a definition
    make_plugin_dir(home, "mention_only", init="from .doc import x\n",
                    siblings={"doc.py": '"""Not a MemoryProvider; never calls register_memory_provider."""\nx = 1\n'})
    assert not looks_like_memory_plugin(home.plugins_dir / "mention_only")


def test_plugins_disabled_keeps_a_plugin_dir_provider_from_loading_as_in_hermes(home):
    # Hermes' load_memory_provider refuses a user provider parked in plugins.disabled (by its
    # directory name or its plugin.yaml name) and falls back to the built-in store.
    make_plugin_dir(home, "parked", manifest="name: parked_manifest\n", init=SIBLING_PROVIDER.replace(
        "sibling_mem", "parked") + "\nraise SystemExit('must not run')\n")
    for listed in ("parked", "parked_manifest"):
        home.config_path.write_text(f"memory:\n  provider: parked\nplugins:\n  disabled: [{listed}]\n")
        info = find_provider(discover_providers(home), "parked")
        assert info is not None and not info.usable and "plugins.disabled" in info.reason
        selection = select_provider(home)
        assert selection.active == "" and "plugins.disabled" in selection.message


def test_a_register_that_raises_after_registering_keeps_the_provider_as_in_hermes(home):
    plugin = make_plugin_dir(home, "late_raise", init=SIBLING_PROVIDER.replace("sibling_mem", "late_raise").replace(
        "    ctx.register_memory_provider(Sibling())",
        "    ctx.register_memory_provider(Sibling())\n    raise RuntimeError('optional hook failed')"))
    assert load_plugin_dir(plugin).name == "late_raise"


def test_other_registrations_before_the_provider_do_not_cost_it_as_in_hermes(home):
    """Hermes' collector (``_ProviderCollector`` in plugins/memory/__init__.py, zons 03d70b32)
    takes every ``register_*`` call a provider's ``register(ctx)`` makes (skills, commands,
    middleware, ...), so one made before ``register_memory_provider`` never costs the provider.
    Ours raised AttributeError there, and the fallback built a bare, unconfigured instance."""
    plugin = make_plugin_dir(home, "with_skills", init=SIBLING_PROVIDER.replace("sibling_mem", "with_skills").replace(
        "class Sibling(Base):\n",
        "class Sibling(Base):\n    def __init__(self, region='unset'):\n        self.region = region\n\n").replace(
        "    ctx.register_memory_provider(Sibling())",
        "    ctx.register_skill('recall-howto', __file__)\n"
        "    ctx.register_command('notes', lambda *a: None, description='notes')\n"
        "    ctx.register_memory_provider(Sibling(region='ams'))"))
    provider = load_plugin_dir(plugin)
    assert (provider.name, provider.region) == ("with_skills", "ams")
    with pytest.raises(AttributeError):  # a name that is no registration still fails loudly
        PluginContext().regster_memory_provider(object())


def test_the_last_provider_registered_is_the_one_used_as_in_hermes(home):
    """Hermes' collector keeps the LAST ``register_memory_provider`` call (``self.provider =
    provider``, plugins/memory/__init__.py @03d70b32), for plug-in directories and entry points
    alike; ours kept the first."""
    plugin = make_plugin_dir(home, "twice", init=SIBLING_PROVIDER.replace("sibling_mem", "twice").replace(
        "class Sibling(Base):\n",
        "class Sibling(Base):\n    def __init__(self, region='unset'):\n        self.region = region\n\n").replace(
        "    ctx.register_memory_provider(Sibling())",
        "    ctx.register_memory_provider(Sibling(region='draft'))\n"
        "    ctx.register_memory_provider(Sibling(region='final'))"))
    assert load_plugin_dir(plugin).region == "final"


def test_the_subclass_fallback_skips_a_class_that_cannot_be_built_as_in_hermes(home):
    """Without a registration Hermes instantiates the first ``MemoryProvider`` subclass that
    builds (``_instantiate_subclass``: a constructor that raises is skipped); ours raised the
    first one's error and the plug-in failed to load."""
    source = SIBLING_PROVIDER.replace("sibling_mem", "fallback_mem").split("def register(ctx):")[0]
    source += ("\n\nclass AConfigured(Sibling):\n"
               "    def __init__(self, endpoint):\n"
               "        self.endpoint = endpoint\n")
    plugin = make_plugin_dir(home, "fallback_mem", init=source)
    provider = load_plugin_dir(plugin)
    assert type(provider).__name__ == "Sibling" and provider.name == "fallback_mem"


def test_a_provider_whose_tool_schemas_raise_falls_back_to_builtin_naming_the_error(home):
    """Hermes' ``add_provider`` lets a provider's ``get_tool_schemas()`` error out (#9948); our
    manager now does too, and ``build_memory_manager`` turns it into the fallback message."""
    make_plugin_dir(home, "bad_schemas", init=SIBLING_PROVIDER.replace("sibling_mem", "bad_schemas").replace(
        "    def get_tool_schemas(self):\n        return []",
        "    def get_tool_schemas(self):\n        raise RuntimeError('schema file missing')"))
    home.config_path.write_text("memory:\n  provider: bad_schemas\n")
    manager, selection = build_memory_manager(home, session_id="s")
    try:
        assert [manager.name_of(p) for p in manager.providers] == ["builtin"]
        assert not selection.ok and selection.active == ""
        assert selection.message == ("Memory provider 'bad_schemas' could not be registered: "
                                     "RuntimeError: schema file missing; using built-in memory only.")
    finally:
        manager.shutdown_all()


EP_MODULE = '''
from hermes_store.providers.base import MemoryProvider


class Provider(MemoryProvider):
    name = "entrymem"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return []


def register(ctx):
    ctx.register_memory_provider(Provider())


def make_provider():
    return Provider()
'''


@pytest.mark.parametrize("target", ["{m}:register", "{m}:Provider", "{m}:make_provider", "{m}"])
def test_an_entry_point_may_name_register_a_class_a_factory_or_the_module(home, tmp_path, monkeypatch, target):
    """Upstream ``_load_provider_from_entry_point`` (zons plugins/memory/__init__.py @03d70b32, its
    test ``test_load_entry_point_provider[register|Provider|make_provider]``): an instance, a
    subclass, a module with ``register(ctx)``, a factory or ``register`` callable, or a namespace
    holding a subclass. Ours called every callable with no argument, so ``register`` failed."""
    site = tmp_path / "site"
    site.mkdir()
    module = "ep_mem_" + target.replace("{m}", "").strip(":") + "_target"
    (site / f"{module}.py").write_text(EP_MODULE)
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[hermes_store.providers]\nentrymem = {target.format(m=module)}\n")
    monkeypatch.syspath_prepend(str(site))
    found = find_provider(discover_providers(home), "entrymem")
    try:
        assert found is not None and found.usable, found and found.reason
        assert found.provider.name == "entrymem"
    finally:
        release_unused([found] if found else [])
