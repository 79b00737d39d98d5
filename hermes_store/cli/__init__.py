"""The ``hermes-store`` command line.

Every command is a thin wrapper over a library call. Sub-commands are loaded
lazily from the modules named in ``COMMANDS`` so start-up stays fast and one
broken area cannot hide the others' help.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

import click

from hermes_store.budget import (
    CLI_BUDGET_ENV,
    DEFAULT_CLI_QUERY_BUDGET,
    configured_budget,
    query_budget,
)
from hermes_store.cli.common import (
    ARGS_KEY,
    LaidOutUsageError,
    ReaderGone,
    asked_for_json,
    echo_error,
    echo_json,
    explain_failure,
    terminal_safe_output,
    unhandled_warnings_echoed,
)
from hermes_store.cli.style import (
    COLOR_MODES,
    HelpContext,
    echo_after_ctrl_c,
    narrow_help,
    set_color_mode,
)
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
    "mcp": "hermes_store.cli.mcp:mcp",
    "browse": "hermes_store.cli.browse:browse",
    "migrate": "hermes_store.cli.migrate:migrate",
    "backup": "hermes_store.cli.backup:backup",
    "restore": "hermes_store.cli.backup:restore",
    "service": "hermes_store.cli.service:service",
    "hooks": "hermes_store.cli.hooks:hooks",
    "redact": "hermes_store.cli.privacy:redact",
    "forget": "hermes_store.cli.privacy:forget",
    "tui": "hermes_store.cli.tui:tui",
}


class LazyGroup(click.Group):
    """A click group whose sub-commands named in ``lazy`` are imported on first use.

    ``lazy`` maps a command name to ``"module:attribute"``; commands added the
    ordinary way (``@group.command``) work alongside. Every command's help is laid out at the
    terminal's width (:func:`style.narrow_help`).
    """

    context_class = HelpContext

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
        return narrow_help(getattr(importlib.import_module(module_name), attr))

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Click's parsing; the command line is kept so a failure can answer ``--json`` in JSON;
        a usage error's hint is laid out for the terminal (:class:`LaidOutUsageError`)."""
        ctx.meta[ARGS_KEY] = list(args)
        try:
            return super().parse_args(ctx, args)
        except click.exceptions.UsageError as exc:
            if isinstance(exc, LaidOutUsageError):
                raise
            raise LaidOutUsageError(exc) from exc

    def invoke(self, ctx: click.Context) -> object:
        """Run the command; any failure of ours becomes ``Error: …`` naming the path, exit 1
        (with ``--json``, also ``{"success": false, "error": …}`` on stdout, as docs/cli.md
        promises a JSON reader: it got nothing there when the store could not be opened).

        Click's own exceptions (usage errors, ``ctx.exit``) pass through. Set
        ``HERMES_STORE_DEBUG=1`` to see the traceback instead.
        """
        try:
            return super().invoke(ctx)
        except click.exceptions.UsageError as exc:  # a sub-command's: its hint laid out for the terminal
            if isinstance(exc, LaidOutUsageError):
                raise
            raise LaidOutUsageError(exc) from exc
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort,
                ReaderGone):
            raise
        except KeyboardInterrupt:  # Ctrl-C: the status a shell reports for SIGINT (docs/cli.md), not click's 1
            echo_after_ctrl_c("Interrupted.")
            ctx.exit(130)
        except Exception as exc:
            if os.environ.get("HERMES_STORE_DEBUG"):
                raise
            message = explain_failure(exc, ctx.obj if isinstance(ctx.obj, Home) else None)
            echo_error(message)
            if asked_for_json(ctx.meta.get(ARGS_KEY, [])):
                echo_json({"success": False, "error": message})
            ctx.exit(1)


@click.group(cls=LazyGroup, lazy=COMMANDS)
@click.option("--home", "home_dir", type=click.Path(file_okay=False), default=None,
              help="Hermes home directory (default: $HERMES_HOME or ~/.hermes).")
@click.option("--profile", default=None, help="Use the profile <home>/profiles/NAME.")
@click.option("--database-url", "database_url", default=None, metavar="URL",
              help="Keep sessions, facts and memory history in this database "
                   "(postgresql://... or sqlite:///path; default: $HERMES_STORE_DATABASE_URL, "
                   "store.database_url in config.yaml, else <home>/hermes_store.db).")
@click.option("--color", "color", type=click.Choice(COLOR_MODES), default="auto", show_default=True,
              help="Style output (bold hits, headings): on a terminal only (auto; NO_COLOR turns "
                   "it off), always, or never.")
@click.version_option(package_name="hermes_store")
@click.pass_context
def cli(ctx: click.Context, home_dir: str | None, profile: str | None, database_url: str | None,
        color: str) -> None:
    """hermes-store: built-in memory, past sessions and facts for AI agents."""
    set_color_mode(color)
    if database_url is not None and not database_url.strip():  # "$UNSET_VAR": never the default store silently
        raise click.BadParameter("empty: name a store URL (sqlite:///path/to/file.db or postgresql://...), "
                                 "or leave the option out for the default store", param_hint="'--database-url'")
    try:
        ctx.obj = Home(home_dir, profile, database_url=database_url)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    if database_url:  # a bad --database-url is a usage error (2); a bad configured URL fails (1)
        try:
            ctx.obj.store_engine()
        except ConfigError as exc:
            problem = str(exc).removeprefix(f"{ctx.obj.database_url_origin()}: ")
            raise click.BadParameter(problem, param_hint="'--database-url'") from exc
    ctx.with_resource(terminal_safe_output())  # stored text never reaches the terminal raw
    # that filter alone decides what becomes of an escape sequence: click must not strip
    # ``ESC[…`` sequences before it when output is not a terminal (they vanished from
    # ``sessions show ID > file``, ``--raw`` too, instead of showing as ``\u001b[…``)
    ctx.color = True
    ctx.with_resource(unhandled_warnings_echoed())  # library warnings wrapped like the rest of stderr
    # every search a command runs is bounded in time ($HERMES_STORE_CLI_QUERY_BUDGET seconds; 0 = off)
    ctx.with_resource(query_budget(configured_budget(CLI_BUDGET_ENV, DEFAULT_CLI_QUERY_BUDGET)))


# exit status when the reader of our output went away (``… | head -1``): what a Unix
# tool killed by SIGPIPE reports (128 + 13), quietly, as cat, seq and git do
EXIT_READER_GONE = 141


# exit status after SIGTERM, as a process the signal killed reports it (128 + 15)
EXIT_TERMINATED = 143


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM: end as an exit does, so every ``with`` and ``finally`` on the way out runs (a
    progress bar shows the cursor again, a transaction is rolled back, a lock is released)."""
    raise SystemExit(EXIT_TERMINATED)


def main() -> None:
    """Console-script entry point. SIGTERM unwinds like an exit (:func:`_terminated`) unless it
    was ignored when we started; commands that stop on it on their own (``sessions watch``,
    ``browse``) set their own handler while they run."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminated)
    try:
        with terminal_safe_output():
            try:
                cli(prog_name="hermes-store")
            except ConfigError as exc:  # a bad config value: a failure, as in LazyGroup.invoke
                echo_error(str(exc))
                sys.exit(1)
    except ReaderGone:
        sys.exit(EXIT_READER_GONE)
