"""``--help`` of every command and subcommand renders as the rest of the help does."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from hermes_store.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def _commands(command: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=path[-1] if path else "hermes-store")
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                yield from _commands(sub, (*path, name))


def test_no_rst_markup_in_any_help() -> None:
    """``forget --help``, ``redact --help``, ``migrate --help`` and ``sessions show --help`` (and
    the listing of ``hermes-store --help``) printed their docstrings' RST ````double backticks````
    while every other command quotes with single backticks."""
    seen = 0
    for path, command in _commands(cli):
        text = command.get_help(click.Context(command, info_name=" ".join(("hermes-store", *path))))
        seen += 1
        for artefact in ("``", ":func:", ":class:", ":data:", ":meth:", "**"):
            assert artefact not in text, (path, artefact, text)
    assert seen > 50


def _tmux_rows(command: str, columns: int) -> tuple[list[str], list[str]]:
    """``command``'s screen in a tmux window ``columns`` wide: (rows as shown, lines as written)."""
    socket = f"hs-help-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", socket]
    subprocess.run([*tmux, "new-session", "-d", "-x", str(columns), "-y", "50",
                    f"{command}; echo DONE; sleep 30"], check=True, timeout=20)
    try:
        deadline = time.monotonic() + 30
        while "DONE" not in (rows := subprocess.run([*tmux, "capture-pane", "-p", "-S", "-"], capture_output=True,
                                                    text=True, timeout=20).stdout):
            assert time.monotonic() < deadline, rows
            time.sleep(0.1)
        joined = subprocess.run([*tmux, "capture-pane", "-p", "-J", "-S", "-"], capture_output=True, text=True,
                                timeout=20).stdout
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, timeout=20)
    return [row.rstrip() for row in rows.splitlines()], [line.rstrip() for line in joined.splitlines()]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_help_fits_a_40_column_terminal() -> None:
    """Click lays help out at least 50 columns wide with a 30-column option column: in a
    40-column terminal every line of ``hermes-store --help`` was broken by the terminal inside
    words (``Hermes ho`` / ``me``, ``Copy the store's database to`` / `` DEST...``). The help now
    follows the terminal's width: no line is wider than the screen."""
    cli_args = f"{sys.executable} -m hermes_store.cli"
    for args in ("--help", "sessions search --help", "facts --help"):
        rows, joined = _tmux_rows(f"cd {ROOT} && env -u COLUMNS TERM=xterm-256color {cli_args} {args}", 40)
        assert "Usage: hermes-store" in rows[0] and "DONE" in rows, rows
        assert rows == joined, (args, "\n".join(rows))


def test_every_help_fits_40_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command's help, as a 40-column terminal gets it, fits in 40 columns."""
    monkeypatch.setenv("COLUMNS", "40")
    for path, command in _commands(cli):
        text = command.get_help(command.context_class(command, info_name=" ".join(("hermes-store", *path))))
        wide = [line for line in text.splitlines() if len(line) > 40]
        assert not wide, (path, wide)
