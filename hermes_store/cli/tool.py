"""``hermes-store tool NAME 'JSON-ARGS'`` — call a tool handler exactly as an agent would."""

from __future__ import annotations

import json

import click

from hermes_store import tools
from hermes_store.cli.common import get_home


@click.command("tool")
@click.argument("name", required=False)
@click.argument("args", required=False, default="{}")
@click.option("--list", "list_tools", is_flag=True, help="Print every tool schema (OpenAI function format).")
@click.option("--session-id", default="",
              help="The calling session: excluded from session_search and recall, recorded with every memory write.")
@click.pass_context
def tool(ctx: click.Context, name: str | None, args: str, list_tools: bool, session_id: str) -> None:
    """Call tool NAME with ARGS (a JSON object; '-' reads stdin) and print its JSON result.

    Exits 0 even when the result says success: false; 2 for an unknown tool.
    """
    if list_tools:
        click.echo(json.dumps(tools.openai_tools(), ensure_ascii=False, indent=2))
        return
    if not name:
        raise click.UsageError("NAME is required (or use --list)")
    if name not in tools.TOOL_NAMES:
        raise click.UsageError(f"unknown tool {name!r}; available: {', '.join(tools.TOOL_NAMES)}")
    if args == "-":
        args = click.get_text_stream("stdin").read()
    click.echo(tools.handle_tool_call(name, args, home=get_home(ctx), session_id=session_id))
