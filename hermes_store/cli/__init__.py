"""The ``hermes-store`` command line.

Every command is a thin wrapper over a library call. Sub-commands are loaded
lazily from the modules named in ``COMMANDS`` so start-up stays fast and one
broken area cannot hide the others' help.
"""

from __future__ import annotations

import importlib
import sys

import click

from hermes_store.home import ConfigError, Home

# command name -> "module:attribute" of a click command or group
COMMANDS: dict[str, str] = {
    "status": "hermes_store.cli.status:status",
    "memory": "hermes_store.cli.memory:memory",
    "tool": "hermes_store.cli.tool:tool",
    "sessions": "hermes_store.cli.sessions:sessions",
    "doctor": "hermes_store.cli.doctor:doctor",
    "facts": "hermes_store.cli.facts:facts",
    "provider": "hermes_store.cli.provider:provider",
    "hermes": "hermes_store.cli.hermes:hermes",
    "recall": "hermes_store.cli.recall:recall",
    "migrate": "hermes_store.cli.migrate:migrate",
}


class LazyGroup(click.Group):
    """A click group whose sub-commands named in ``lazy`` are imported on first use.

    ``lazy`` maps a command name to ``"module:attribute"``; commands added the
    ordinary way (``@group.command``) work alongside.
    """

    def __init__(self, *args, lazy: dict[str, str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)


@click.group(cls=LazyGroup, lazy=COMMANDS)
@click.option("--home", "home_dir", type=click.Path(file_okay=False), default=None,
              help="Hermes home directory (default: $HERMES_HOME or ~/.hermes).")
@click.option("--profile", default=None, help="Use the profile <home>/profiles/NAME.")
@click.option("--database-url", "database_url", default=None, metavar="URL",
              help="Keep sessions, facts and memory history in this database "
                   "(postgresql://... or sqlite:///path; default: $HERMES_STORE_DATABASE_URL, "
                   "store.database_url in config.yaml, else <home>/hermes_store.db).")
@click.version_option(package_name="hermes_store")
@click.pass_context
def cli(ctx: click.Context, home_dir: str | None, profile: str | None, database_url: str | None) -> None:
    """hermes-store: built-in memory, past sessions and facts for AI agents."""
    try:
        ctx.obj = Home(home_dir, profile, database_url=database_url)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc


def main() -> None:
    """Console-script entry point."""
    try:
        cli(prog_name="hermes-store")
    except ConfigError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
