"""Helpers shared by the CLI commands: JSON output and error reporting."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from hermes_store.home import Home


def get_home(ctx: click.Context) -> Home:
    """The Home chosen by the root ``--home/--profile`` options."""
    obj = ctx.find_root().obj
    return obj if isinstance(obj, Home) else Home()


def echo_json(data: Any) -> None:
    """Print ``data`` as indented JSON (UTF-8, non-ASCII kept readable)."""
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def fail(message: str, code: int = 1) -> None:
    """Print ``Error: message`` to stderr and exit with ``code``."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)
