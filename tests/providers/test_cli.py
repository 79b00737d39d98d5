"""``hermes-store provider`` and ``hermes-store hermes install`` commands."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from hermes_store.cli import cli

CONFIG = "# my settings\nmemory:\n  memory_enabled: true  # keep\n  provider: \"\"\nmodel:\n  default: x\n"


def run(home, *args):
    return CliRunner().invoke(cli, ["--home", str(home.root), *args], catch_exceptions=False)


def test_provider_list_json_derives_from_the_registry(home):
    result = run(home, "provider", "list", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["configured"] == "" and doc["active"] == "builtin"
    by_name = {row["name"]: row for row in doc["providers"]}
    assert by_name["builtin"]["available"] and by_name["builtin"]["active"]
    facts = by_name["holographic_store"]
    assert facts["available"] and not facts["active"] and facts["tools"] == ["fact_store", "fact_feedback"]


def test_provider_list_text_shows_reason_for_unavailable_plugins(home):
    plugin = home.plugins_dir / "needs_key"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(
        "from hermes_store.providers.base import MemoryProvider\n"
        "class P(MemoryProvider):\n"
        "    name = 'needs_key'\n"
        "    def is_available(self): return False\n"
        "    def unavailable_reason(self): return 'NEEDS_KEY_API_KEY is not set'\n"
        "    def initialize(self, session_id, **kw): pass\n"
        "    def get_tool_schemas(self): return []\n"
        "def register(ctx):\n    ctx.register_memory_provider(P())\n")
    result = run(home, "provider", "list")
    assert result.exit_code == 0
    assert "needs_key" in result.output and "not available ✗" in result.output
    assert "reason: NEEDS_KEY_API_KEY is not set" in result.output
    refused = run(home, "provider", "use", "needs_key")
    assert refused.exit_code == 1
    assert "Memory provider 'needs_key' is not available: NEEDS_KEY_API_KEY is not set" in refused.output
    forced = run(home, "provider", "use", "needs_key", "--force")
    assert forced.exit_code == 0
    assert yaml.safe_load(home.config_path.read_text())["memory"]["provider"] == "needs_key"
    doc = json.loads(run(home, "provider", "list", "--json").output)
    assert doc["active"] == "builtin" and "not available" in doc["warning"]


def test_provider_use_and_off_keep_comments_and_other_keys(home):
    home.config_path.write_text(CONFIG)
    result = run(home, "provider", "use", "holographic_store")
    assert result.exit_code == 0, result.output
    assert "Memory provider: holographic_store" in result.output
    text = home.config_path.read_text()
    assert text == CONFIG.replace('provider: ""', "provider: holographic_store")
    doc = json.loads(run(home, "provider", "list", "--json").output)
    assert doc["active"] == "holographic_store" and doc["configured"] == "holographic_store"
    assert run(home, "provider", "off").exit_code == 0
    assert home.config_path.read_text() == CONFIG
    assert run(home, "provider", "use", "builtin").exit_code == 0
    assert home.config_path.read_text() == CONFIG


def test_core_provider_names_mean_built_in_only_as_in_hermes(home):
    """``none``, ``default``, ``built-in`` (any case) select the built-in store: no warning, no lookup."""
    for value in ("none", "default", "Built-In", "BUILTIN"):
        home.config_path.write_text(f"memory:\n  provider: {value}\n")
        doc = json.loads(run(home, "provider", "list", "--json").output)
        assert doc["active"] == "builtin" and "warning" not in doc, (value, doc)
    home.config_path.write_text(CONFIG.replace('provider: ""', "provider: holographic_store"))
    result = run(home, "provider", "use", "none")
    assert result.exit_code == 0 and "built-in only" in result.output
    assert home.config_path.read_text() == CONFIG


def test_provider_use_unknown_name_fails_listing_the_known_ones(home):
    result = run(home, "provider", "use", "nope")
    assert result.exit_code == 1
    assert "Memory provider 'nope' not found. Available: holographic_store" in result.output
    assert not home.config_path.exists()


def test_hermes_install_writes_and_verifies_the_plugin(home, tmp_path):
    hermes_home = tmp_path / "hermes"
    result = run(home, "hermes", "install", "--hermes-home", str(hermes_home))
    assert result.exit_code == 0, result.output
    plugin = hermes_home / "plugins" / "hermes_store"
    assert (plugin / "plugin.yaml").is_file() and (plugin / "__init__.py").is_file()
    assert "Verified: provider 'hermes_store' loads with tools fact_store, fact_feedback, recall" in result.output
    assert not (hermes_home / "config.yaml").exists()
    again = run(home, "hermes", "install", "--hermes-home", str(hermes_home), "--name", "store2",
                "--activate")
    assert again.exit_code == 0, again.output
    assert yaml.safe_load((hermes_home / "config.yaml").read_text()) == {"memory": {"provider": "store2"}}
    assert yaml.safe_load((hermes_home / "plugins" / "store2" / "plugin.yaml").read_text())["name"] == "store2"


def test_hermes_install_rejects_bad_names(home, tmp_path):
    result = run(home, "hermes", "install", "--hermes-home", str(tmp_path), "--name", "../evil")
    assert result.exit_code == 2 and "invalid plugin name" in result.output
    assert not (tmp_path / "plugins").exists()


def test_install_from_holographic_takes_over_and_reverts(home, tmp_path):
    from hermes_store.facts.store import FactStore
    from hermes_store.home import Home
    from tests.facts.holographic_fixture import make_holographic_db

    hermes_home = tmp_path / "hermes"
    hermes_home.mkdir()
    config = ("# hand-written\nmemory:\n  provider: holographic  # the old one\n"
              "plugins:\n  hermes-memory-store:\n    db_path: $HERMES_HOME/facts/mem.db\n")
    (hermes_home / "config.yaml").write_text(config)
    (hermes_home / "facts").mkdir()
    source = make_holographic_db(
        hermes_home / "facts" / "mem.db",
        facts=[{"content": "Alice Smith lives in Paris", "trust": 0.8, "helpful": 4},
               {"content": "gone"}, {"content": "Bob Jones drinks tea", "retrievals": 7}],
        entities=["Alice Smith", "Bob Jones"], links=[("Alice Smith lives in Paris", 1)], delete=["gone"])
    before = source.read_bytes()
    result = run(home, "hermes", "install", "--hermes-home", str(hermes_home), "--from-holographic")
    assert result.exit_code == 0, result.output
    assert (f"Imported 2 facts from {source} with their ids, trust and counts (0 already stored, "
            "0 given a new id, 2 entities kept)") in result.output
    assert "Switched memory.provider from 'holographic' to 'hermes_store'" in result.output
    backups = list(hermes_home.glob("config.yaml.bak.*"))
    assert len(backups) == 1 and backups[0].read_text() == config
    assert f"Backed up {hermes_home / 'config.yaml'} to {backups[0]}" in result.output
    text = (hermes_home / "config.yaml").read_text()
    assert "provider: hermes_store  # the old one" in text and "# hand-written" in text
    assert source.read_bytes() == before  # only read
    with FactStore(Home(hermes_home)) as store:
        rows = {f["fact_id"]: f for f in store.list_facts(limit=10)}
    assert sorted(rows) == [1, 3]
    assert (rows[1]["trust_score"], rows[1]["helpful_count"], rows[3]["retrieval_count"]) == (0.8, 4, 7)
    undone = run(home, "hermes", "revert", "--hermes-home", str(hermes_home))
    assert undone.exit_code == 0, undone.output
    assert "Set memory.provider back to 'holographic'" in undone.output
    assert (hermes_home / "config.yaml").read_text() == config
    again = run(home, "hermes", "revert", "--hermes-home", str(hermes_home))
    assert again.exit_code == 1 and "nothing to revert" in again.output


def test_install_from_holographic_without_a_store_says_so(home, tmp_path):
    result = run(home, "hermes", "install", "--hermes-home", str(tmp_path), "--from-holographic")
    assert result.exit_code == 1 and f"no holographic store at {tmp_path / 'memory_store.db'}" in result.output
    assert not (tmp_path / "config.yaml").exists()
