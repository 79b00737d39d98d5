"""``hermes-store provider``: list memory providers, choose one, or turn external ones off.

Everything shown comes from the discovery registry, so the list, ``use`` validation and
``status`` always agree.
"""

from __future__ import annotations

import click

from hermes_store.cli.common import echo_json, fail, get_home, model_facing
from hermes_store.cli.style import fill, output_columns
from hermes_store.config_edit import set_config_value
from hermes_store.home import ConfigError, Home
from hermes_store.providers.base import is_core_provider
from hermes_store.providers.discovery import (
    BUILTIN_NAME,
    describe_registry,
    discover_providers,
    find_provider,
    release_unused,
)

PROVIDER_KEY = "memory.provider"


@click.group("provider")
def provider() -> None:
    """Memory providers: list them, choose one (memory.provider), or use built-in only."""


@provider.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--no-load", is_flag=True, help="Do not run plug-in code: describe plugins/*/ from plugin.yaml only.")
@click.pass_context
@model_facing  # plug-in names, descriptions and reasons are third-party text an agent may read
def list_providers(ctx: click.Context, as_json: bool, no_load: bool) -> None:
    """Show every provider (bundled, installed, plugin dirs) with availability and reason.

    To tell whether a plug-in is available this RUNS each plugins/*/__init__.py of the
    home (as Hermes does when it loads them); --no-load only reads plugin.yaml.
    """
    home = get_home(ctx)
    infos = discover_providers(home, run_plugin_code=not no_load)
    try:
        document = describe_registry(home, infos)
    finally:
        release_unused(infos)
    if as_json:
        echo_json(document)
        return
    width = max(len(row["name"]) for row in document["providers"])
    columns = output_columns()  # on a terminal, a long description wraps at words under itself
    under = " " * (width + 4)
    if not no_load:
        click.echo(fill("(availability checked by running each plug-in's code; --no-load only reads plugin.yaml)",
                        output_columns(err=True), "", " "), err=True)
    click.echo(fill(f"Memory providers (memory.provider: {document['configured'] or '(none — built-in only)'})",
                    columns, "", "  "))
    for row in document["providers"]:
        status = "available ✓" if row["available"] else "not available ✗"
        marker = "  ← active" if row["active"] and row["name"] != BUILTIN_NAME else ""
        click.echo(fill(f"  {row['name']:<{width}}  {row['source']:<11}  {status}{marker}", columns, "", under))
        if row["description"]:
            click.echo(fill(row["description"], columns, under))
        if not row["available"] and row["reason"]:
            click.echo(fill(f"reason: {row['reason']}", columns, under, under + "  "))
    for key in ("config_error", "warning"):
        if key in document:
            click.echo(f"Warning: {document[key]}", err=True)


@provider.command("use")
@click.argument("name")
@click.option("--force", is_flag=True, help="Select the provider even if it is not available here.")
@click.pass_context
def use(ctx: click.Context, name: str, force: bool) -> None:
    """Set memory.provider to NAME in config.yaml (comments and other keys are kept)."""
    home = get_home(ctx)
    if is_core_provider(name):
        _write(home, "")
        click.echo("✓ Memory provider: built-in only")
        click.echo(f"Saved to {home.config_path}")
        return
    infos = discover_providers(home)
    try:
        info = find_provider(infos, name)
        known = sorted({i.name for i in infos if not i.shadowed_by and i.name != BUILTIN_NAME})
    finally:
        release_unused(infos)
    if info is None:
        fail(f"Memory provider '{name}' not found. Available: {', '.join(known) or 'none'} "
             "(run 'hermes-store provider list').")
    if not info.usable and not force:
        fail(f"Memory provider '{name}' is not available: {info.reason or 'unknown reason'} "
             "(use --force to select it anyway).")
    _write(home, name)
    click.echo(f"Memory provider: {name}")
    click.echo(f"Activation saved to {home.config_path}")
    click.echo("Start a new session to activate.")


@provider.command("off")
@click.pass_context
def off(ctx: click.Context) -> None:
    """Disable the external provider (built-in memory only)."""
    home = get_home(ctx)
    _write(home, "")
    click.echo("✓ Memory provider: built-in only")
    click.echo(f"Saved to {home.config_path}")


def _write(home: Home, value: str) -> None:
    try:
        set_config_value(home.config_path, PROVIDER_KEY, value)
    except (ConfigError, OSError) as exc:
        fail(str(exc))
