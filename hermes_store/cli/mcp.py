"""``hermes-store mcp`` — serve the tools and memory resources over MCP (stdio)."""

from __future__ import annotations

import click

from hermes_store.cli.common import store_home


@click.command("mcp")
@click.option("--tools", "tool_list", default=None, metavar="A,B",
              help="Serve only these tools (comma-separated; default: all).")
@click.option("--read-only", is_flag=True,
              help="Expose no writing action: memory and fact_feedback are withheld, fact_store "
                   "add/update/remove are refused.")
@click.option("--session-id", default="",
              help="The current session: excluded from session_search and recall, recorded with "
                   "every memory write.")
@click.pass_context
def mcp(ctx: click.Context, tool_list: str | None, read_only: bool, session_id: str) -> None:
    """Run a stdio MCP server (for Claude Code, Codex, Cursor, Gemini CLI, Hermes, ...).

    Replies are exactly those of `hermes-store tool NAME`; writes record origin
    `mcp:CLIENT`. Needs the `mcp` extra: pip install 'hermes_store[mcp]'.
    """
    try:
        from hermes_store.mcp_server import catalog
        from hermes_store.mcp_server.server import ServerOptions, parse_tool_list, serve
    except ImportError as exc:
        raise click.ClickException(
            f"the MCP SDK is not installed ({exc}); install it with: pip install 'hermes_store[mcp]'"
        ) from exc
    try:
        names = catalog.select_tools(parse_tool_list(tool_list))
    except catalog.ToolSelectionError as exc:
        raise click.UsageError(f"--tools: {exc}") from exc
    home = store_home(ctx)  # a bad store URL fails here (exit 1), not in every tool call
    home.read_only = read_only  # no write at all, not even a search's retrieval_count
    serve(ServerOptions(home=home, tool_names=names, read_only=read_only, session_id=session_id))
