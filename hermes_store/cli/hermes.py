"""``hermes-store hermes``: integrate with a Hermes Agent installation."""

from __future__ import annotations

from pathlib import Path

import click

from hermes_store.cli.common import fail, get_home
from hermes_store.config_edit import set_config_value
from hermes_store.hermes_plugin import (
    DEFAULT_PLUGIN_NAME,
    install_plugin,
    valid_plugin_name,
)
from hermes_store.home import ConfigError
from hermes_store.providers.discovery import load_plugin_dir


@click.group("hermes")
def hermes() -> None:
    """Hermes Agent integration."""


@hermes.command("install")
@click.option("--hermes-home", "hermes_home", type=click.Path(file_okay=False), default=None,
              help="Hermes home to install into (default: --home, $HERMES_HOME or ~/.hermes).")
@click.option("--name", default=DEFAULT_PLUGIN_NAME, show_default=True,
              help="Plugin directory and provider name.")
@click.option("--activate", is_flag=True, help="Also set memory.provider to NAME in its config.yaml.")
@click.pass_context
def install(ctx: click.Context, hermes_home: str | None, name: str, activate: bool) -> None:
    """Write plugins/NAME/ (plugin.yaml + __init__.py) so Hermes loads hermes_store as its
    memory provider: tools fact_store, fact_feedback and recall."""
    if not valid_plugin_name(name):
        fail(f"invalid plugin name {name!r}: use letters, digits and _ (not starting with _)", 2)
    home = get_home(ctx)
    root = home.root if hermes_home is None else click.format_filename(hermes_home)
    try:
        plugin_dir = install_plugin(root, name)
    except OSError as exc:
        fail(f"cannot write the plugin: {exc}")
    click.echo(f"Installed Hermes memory plugin '{name}' in {plugin_dir}")
    try:
        provider = load_plugin_dir(plugin_dir, hermes_home=str(root))
        tools = [s.get("function", s).get("name") for s in provider.get_tool_schemas()]
        provider.shutdown()
    except Exception as exc:
        fail(f"the plugin was written but does not load: {type(exc).__name__}: {exc}")
    click.echo(f"Verified: provider '{provider.name}' loads with tools {', '.join(tools)}")
    config_path = Path(root) / "config.yaml"
    if activate:
        try:
            set_config_value(config_path, "memory.provider", name)
        except (ConfigError, OSError) as exc:
            fail(str(exc))
        click.echo(f"Activated: memory.provider: {name} in {config_path}")
    else:
        click.echo(f"Activate it: set memory.provider: {name} in {config_path} "
                   f"(or: hermes config set memory.provider {name})")
    click.echo("Start a new session to activate.")
