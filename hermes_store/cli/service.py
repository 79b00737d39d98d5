"""``hermes-store service install|uninstall|status``: run ``sessions watch --discover`` at login.

Linux: a systemd user unit, ``~/.config/systemd/user/hermes-store-watch.service``. macOS: a
launchd agent, ``~/Library/LaunchAgents/io.hermes-store.watch.plist``. The file is written
atomically and never silently replaced: a different file already there is kept unless
``--force``. The service manager (``systemctl --user`` / ``launchctl``) is called only when it
is installed; otherwise the command says so and what to run.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import click

from hermes_store.cli.common import echo_json, fail, store_home
from hermes_store.fsutil import atomic_write_text
from hermes_store.home import DATABASE_URL_ENV, Home

UNIT_NAME = "hermes-store-watch.service"
AGENT_LABEL = "io.hermes-store.watch"
COMMAND_TIMEOUT = 30.0  # seconds a systemctl/launchctl call may take


def run_command(argv: Sequence[str]) -> tuple[int, str]:
    """Run a service-manager command; ``(exit code, output)``. Tests replace this function."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, str(exc)
    return done.returncode, (done.stdout + done.stderr).strip()


def _watch_argv() -> list[str]:
    """The command the service runs: this interpreter, this package, ``sessions watch``."""
    return [sys.executable, "-c", "from hermes_store.cli import main; main()",
            "sessions", "watch", "--discover", "--quiet"]


def _systemd_quote(arg: str) -> str:
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%") + '"'


@dataclass(frozen=True)
class ServiceKind:
    """One platform's service manager: where its file goes and how to talk to it."""

    name: str
    tool: str
    path: Callable[[Path], Path]
    render: Callable[[list[str], dict[str, str]], str]  # (argv, environment) -> the file
    start: Callable[[Path], list[list[str]]]
    stop: Callable[[Path], list[list[str]]]
    enabled: Callable[[Path], list[str]]
    running: Callable[[Path], list[str]]


def _systemd_unit(argv: list[str], environment: dict[str, str]) -> str:
    return ("[Unit]\nDescription=hermes-store: index agent transcripts as they are written\n\n"
            "[Service]\nType=simple\n"
            + "".join(f"Environment={_systemd_quote(f'{k}={v}')}\n" for k, v in environment.items()) +
            f"ExecStart={' '.join(_systemd_quote(a) for a in argv)}\n"
            "Restart=on-failure\nRestartSec=10\nNice=10\n\n"
            "[Install]\nWantedBy=default.target\n")


def _launchd_plist(argv: list[str], environment: dict[str, str]) -> str:
    args = "".join(f"\n        <string>{escape(a)}</string>" for a in argv)
    env = "".join(f"\n        <key>{escape(k)}</key>\n        <string>{escape(v)}</string>"
                  for k, v in environment.items())
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
            '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
            '<plist version="1.0">\n<dict>\n'
            f"    <key>Label</key>\n    <string>{AGENT_LABEL}</string>\n"
            f"    <key>ProgramArguments</key>\n    <array>{args}\n    </array>\n"
            f"    <key>EnvironmentVariables</key>\n    <dict>{env}\n    </dict>\n"
            "    <key>RunAtLoad</key>\n    <true/>\n    <key>KeepAlive</key>\n    <true/>\n"
            "    <key>ProcessType</key>\n    <string>Background</string>\n"
            "</dict>\n</plist>\n")


#: platform -> its service manager
KINDS: dict[str, ServiceKind] = {
    "linux": ServiceKind(
        "systemd user unit", "systemctl",
        lambda home: home / ".config" / "systemd" / "user" / UNIT_NAME, _systemd_unit,
        lambda _p: [["systemctl", "--user", "daemon-reload"],
                    ["systemctl", "--user", "enable", "--now", UNIT_NAME]],
        lambda _p: [["systemctl", "--user", "disable", "--now", UNIT_NAME]],
        lambda _p: ["systemctl", "--user", "is-enabled", UNIT_NAME],
        lambda _p: ["systemctl", "--user", "is-active", UNIT_NAME]),
    "macos": ServiceKind(
        "launchd agent", "launchctl",
        lambda home: home / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist", _launchd_plist,
        lambda p: [["launchctl", "load", "-w", str(p)]],
        lambda p: [["launchctl", "unload", "-w", str(p)]],
        lambda _p: ["launchctl", "list", AGENT_LABEL],
        lambda _p: ["launchctl", "list", AGENT_LABEL]),
}


def _platform() -> str:
    return "macos" if sys.platform == "darwin" else "linux"


def _manager(kind: ServiceKind) -> bool:
    return shutil.which(kind.tool) is not None


@click.group("service")
@click.option("--platform", "platform_name", type=click.Choice(sorted(KINDS)), default=None,
              hidden=True, help="Service manager to write for (default: this machine's).")
@click.pass_context
def service(ctx: click.Context, platform_name: str | None) -> None:
    """Run 'sessions watch --discover' at login (systemd user unit / launchd agent)."""
    ctx.meta["service_kind"] = KINDS[platform_name or _platform()]


def _environment(home: Home) -> dict[str, str]:
    """The service's environment: this home, and the store named on this command line or in
    this environment (the service manager's own environment and working directory would not
    name it; a store named in the home's config.yaml the service finds itself)."""
    environment = {"HERMES_HOME": str(Path(home.root).absolute())}
    url = home.database_url_to_pass()
    if url:
        environment[DATABASE_URL_ENV] = url
    return environment


def _context(ctx: click.Context) -> tuple[ServiceKind, Path, str]:
    kind: ServiceKind = ctx.meta["service_kind"]
    path = kind.path(Path.home())
    return kind, path, kind.render(_watch_argv(), _environment(store_home(ctx)))


@service.command("install")
@click.option("--force", is_flag=True, help="Replace a different file already there.")
@click.option("--no-start", is_flag=True, help="Write the file only; do not enable or start it.")
@click.pass_context
def install(ctx: click.Context, force: bool, no_start: bool) -> None:
    """Write the service file and (where the service manager is present) enable and start it."""
    kind, path, text = _context(ctx)
    if path.exists() and not force:
        try:
            same = path.read_text(encoding="utf-8") == text
        except (OSError, UnicodeError):
            same = False
        if not same:
            fail(f"{path} exists and differs from what would be written; kept as it is "
                 "(use --force to replace it)")
        click.echo(f"{kind.name} already installed: {path}")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text, mode=0o600)  # it may hold the store URL's password
        click.echo(f"wrote {kind.name}: {path}")
    if no_start:
        return
    if not _manager(kind):
        click.echo(f"{kind.tool} not found: start it with your service manager, or run "
                   f"'hermes-store sessions watch --discover'")
        return
    for argv in kind.start(path):
        code, output = run_command(argv)
        if code != 0:
            fail(f"{' '.join(argv)} failed ({code}): {output}")
    click.echo("enabled and started")


@service.command("uninstall")
@click.pass_context
def uninstall(ctx: click.Context) -> None:
    """Stop and disable the service (where the manager is present) and remove its file."""
    kind: ServiceKind = ctx.meta["service_kind"]
    path = kind.path(Path.home())  # the store is not needed (nor checked) to remove the service
    if not path.exists():
        click.echo(f"not installed: {path}")
        return
    if _manager(kind):
        for argv in kind.stop(path):
            code, output = run_command(argv)
            if code != 0:
                click.echo(f"warning: {' '.join(argv)} failed ({code}): {output}", err=True)
    path.unlink()
    click.echo(f"removed {path}")


@service.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Whether the service file is installed (and current), enabled and running."""
    kind, path, text = _context(ctx)
    installed = path.exists()
    current = installed and path.read_text(encoding="utf-8", errors="replace") == text
    enabled: bool | None = None
    running: bool | None = None
    note = None
    if not _manager(kind):
        note = f"{kind.tool} not found: enabled/running unknown"
    elif installed:
        enabled = run_command(kind.enabled(path))[0] == 0
        running = run_command(kind.running(path))[0] == 0
    data = {"kind": kind.name, "path": str(path), "installed": installed, "current": current,
            "enabled": enabled, "running": running, "note": note}
    if as_json:
        echo_json(data)
        return

    def word(value: bool | None) -> str:
        return "unknown" if value is None else ("yes" if value else "no")

    click.echo(f"{kind.name}: {path}")
    click.echo(f"  installed: {word(installed)}" + ("" if current or not installed else
                                                    " (differs from what install would write)"))
    click.echo(f"  enabled: {word(enabled)}\n  running: {word(running)}")
    if note:
        click.echo(f"  note: {note}")

