"""Issue 14 point 5: status runs no plug-in code but the configured provider's (which any
session loads anyway); provider list says plainly when it runs plug-ins."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hermes_store.cli import cli

PLUGIN = '''
import pathlib
pathlib.Path(__file__).with_name("RAN").write_text("executed")
class Provider:  # MemoryProvider-like
    name = "canary"
    def is_available(self): return True
    def initialize(self, session_id, **kw): pass
    def get_tool_schemas(self): return []
def register(ctx):
    ctx.register_memory_provider(Provider())
'''


def _canary(home):
    plugin = home.plugins_dir / "canary"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: canary\ndescription: writes RAN when imported\n", encoding="utf-8")
    (plugin / "__init__.py").write_text(PLUGIN, encoding="utf-8")
    return plugin / "RAN"


def test_status_lists_plugins_without_running_them(home):
    ran = _canary(home)
    runner = CliRunner()
    for argv in (["status"], ["status", "--json"], ["provider", "list", "--no-load"],
                 ["provider", "list", "--no-load", "--json"]):
        result = runner.invoke(cli, ["--home", str(home.root), *argv])
        assert result.exit_code == 0, result.output
        assert "canary" in result.output, (argv, result.output)
        assert not ran.exists(), argv
    data = json.loads(runner.invoke(cli, ["--home", str(home.root), "status", "--json"]).stdout)
    assert "canary" in json.dumps(data)


def test_provider_list_says_plainly_that_it_runs_plugin_code(home):
    ran = _canary(home)
    result = CliRunner().invoke(cli, ["--home", str(home.root), "provider", "list"])
    assert result.exit_code == 0
    assert "running each plug-in's code" in result.output
    assert ran.exists()


def test_status_runs_only_the_configured_provider(home):
    ran = _canary(home)
    home.config_path.write_text("memory:\n  provider: canary\n", encoding="utf-8")
    other = home.plugins_dir / "other"
    other.mkdir()
    (other / "plugin.yaml").write_text("name: other\n", encoding="utf-8")
    (other / "__init__.py").write_text(PLUGIN.replace("RAN", "OTHER_RAN").replace('"canary"', '"other"'),
                                       encoding="utf-8")
    assert CliRunner().invoke(cli, ["--home", str(home.root), "status"]).exit_code == 0
    assert ran.exists() and not (other / "OTHER_RAN").exists()
