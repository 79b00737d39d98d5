"""``--help`` of every command and subcommand renders as the rest of the help does."""

from __future__ import annotations

from collections.abc import Iterator

import click

from hermes_store.cli import cli


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
