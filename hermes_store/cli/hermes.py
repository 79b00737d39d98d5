"""``hermes-store hermes``: integrate with a Hermes Agent installation."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import click

from hermes_store.cli.common import counted, fail, get_home
from hermes_store.config_edit import set_config_value
from hermes_store.db import DatabaseError
from hermes_store.facts.config import load_fact_config
from hermes_store.facts.store import FactStore, FactStoreError
from hermes_store.hermes_plugin import (
    DEFAULT_PLUGIN_NAME,
    install_plugin,
    valid_plugin_name,
)
from hermes_store.home import DATABASE_URL_ENV, ConfigError, Home
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
@click.option("--from-holographic", "from_holographic", is_flag=True,
              help="Take over from Hermes' holographic provider: import its memory_store.db (ids, trust "
                   "and counts kept), back up config.yaml and switch memory.provider to NAME. "
                   "Undo with `hermes-store hermes revert`.")
@click.pass_context
def install(ctx: click.Context, hermes_home: str | None, name: str, activate: bool,
            from_holographic: bool) -> None:
    """Write plugins/NAME/ (plugin.yaml + __init__.py) so Hermes loads hermes_store as its
    memory provider: tools fact_store, fact_feedback and recall."""
    if not valid_plugin_name(name):
        fail(f"invalid plugin name {name!r}: use letters, digits and _ (not starting with _)", 2)
    home = get_home(ctx)
    root = home.root if hermes_home is None else click.format_filename(hermes_home)
    _refuse_a_store_hermes_will_not_use(home, Home(root))
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
    if from_holographic:
        _take_over_holographic(Home(root), name)
        click.echo("Start a new session to activate.")
        return
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


def _refuse_a_store_hermes_will_not_use(home: Home, plugin_home: Home) -> None:
    """Fail (exit 1, nothing written) when ``--database-url`` names a store other than the one
    the plugin will open inside Hermes, which never sees this command line: ``plugin_home``'s
    ``$HERMES_STORE_DATABASE_URL`` (Hermes' environment), ``config.yaml`` or own file. Else the
    takeover's facts land in one store and the agent reads another."""
    if home.database_url_origin() != "--database-url":
        return
    try:
        named, used = home.store_location(), plugin_home.store_location()
    except ConfigError as exc:
        fail(str(exc))
    if named != used:
        fail(f"--database-url names {named}, but Hermes loads the plugin with {plugin_home.root}'s own "
             f"store, {used}: name the store in {plugin_home.config_path} (store.database_url) or in "
             f"${DATABASE_URL_ENV} of Hermes' environment instead; nothing was installed")


TAKEOVER_FILE = "hermes_store_takeover.json"  # what `install --from-holographic` changed, for `revert`


def holographic_db_path(home: Home) -> Path:
    """Where Hermes' holographic provider keeps its store: ``plugins.hermes-memory-store.db_path``
    (``$HERMES_HOME`` / ``${HERMES_HOME}`` substituted, ``~`` expanded), else ``<home>/memory_store.db``."""
    plugins = home.config().get("plugins") or {}
    section = plugins.get("hermes-memory-store") if isinstance(plugins, dict) else None
    raw = section.get("db_path") if isinstance(section, dict) else None
    if not raw:
        return home.root / "memory_store.db"
    text = str(raw).replace("${HERMES_HOME}", str(home.root)).replace("$HERMES_HOME", str(home.root))
    return Path(os.path.expanduser(text))


def _take_over_holographic(home: Home, name: str) -> None:
    """Import the holographic store, back up config.yaml, switch the provider; say each step."""
    try:
        previous = home.memory_config().provider
    except ConfigError as exc:
        fail(str(exc))
    source = holographic_db_path(home)
    if not source.is_file():
        fail(f"no holographic store at {source} (nothing to take over; use --activate for a fresh store)")
    try:
        with FactStore(home.ensure(), config=load_fact_config(home)) as store:
            counts = store.import_hermes(source)
    except (FactStoreError, DatabaseError, ConfigError) as exc:
        fail(str(exc))
    click.echo(f"Imported {counted(counts['imported'], 'fact')} from {source} with their ids, trust and counts "
               f"({counts['skipped']} already stored, {counts['renumbered']} given a new id, "
               f"{counts['entities']} entities kept); {source.name} itself was only read.")
    config_path = home.config_path
    backup = None
    if config_path.exists():
        backup = config_path.with_name(f"config.yaml.bak.{int(time.time())}")
        shutil.copy2(config_path, backup)
        click.echo(f"Backed up {config_path} to {backup}")
    try:
        set_config_value(config_path, "memory.provider", name)
    except (ConfigError, OSError) as exc:
        fail(str(exc))
    record: dict[str, Any] = {"previous_provider": previous, "provider": name, "source": str(source),
                              "config_backup": None if backup is None else str(backup),
                              "imported": counts, "at": time.time()}
    (home.root / TAKEOVER_FILE).write_text(json.dumps(record, indent=2), encoding="utf-8")
    click.echo(f"Switched memory.provider from {previous or '(none)'!r} to {name!r} in {config_path}")
    click.echo("Undo with: hermes-store hermes revert (sets memory.provider back; the imported facts stay "
               f"in {home.store_location()} and {source.name} is unchanged)")


@hermes.command("revert")
@click.option("--hermes-home", "hermes_home", type=click.Path(file_okay=False), default=None,
              help="Hermes home (default: --home, $HERMES_HOME or ~/.hermes).")
@click.pass_context
def revert(ctx: click.Context, hermes_home: str | None) -> None:
    """Undo `hermes install --from-holographic`: memory.provider goes back to what it was."""
    home = get_home(ctx) if hermes_home is None else Home(click.format_filename(hermes_home))
    path = home.root / TAKEOVER_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        previous = str(record["previous_provider"])
    except FileNotFoundError:
        fail(f"nothing to revert: {path} does not exist (was `hermes install --from-holographic` run here?)")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        fail(f"{path}: unreadable takeover record: {exc}")
    try:
        set_config_value(home.config_path, "memory.provider", previous)
    except (ConfigError, OSError) as exc:
        fail(str(exc))
    path.unlink()
    click.echo(f"Set memory.provider back to {previous or '(none)'!r} in {home.config_path}")
    if record.get("config_backup"):
        click.echo(f"The config.yaml from before the takeover is kept at {record['config_backup']}")
