"""Every tool an agent can call, in one place: schemas and a single dispatch.

Tools: ``memory`` (built-in MEMORY.md / USER.md), ``session_search``,
``fact_store``, ``fact_feedback`` and ``recall``. Each is defined beside the
library it drives (a module attribute holding a :class:`~hermes_store.tooling.Tool`)
and only listed here, so this module stays the one index.

``handle_tool_call`` returns the JSON string an agent sees. It never raises:
bad arguments and internal failures come back as
``{"success": false, "error": "..."}``.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from hermes_store.budget import (
    DEFAULT_TOOL_QUERY_BUDGET,
    TOOL_BUDGET_ENV,
    configured_budget,
    query_budget,
)
from hermes_store.home import Home
from hermes_store.tooling import (
    Tool,
    ToolArgumentError,
    ToolContext,
    bound_error_reply,
    fence_reply,
    parse_arguments,
    tool_error,
)

# tool name -> "module:attribute" holding its Tool
TOOL_LOCATIONS: dict[str, str] = {
    "memory": "hermes_store.builtin.memory_tool:MEMORY_TOOL",
    "session_search": "hermes_store.sessions.session_search:SESSION_SEARCH_TOOL",
    "fact_store": "hermes_store.facts.fact_tools:FACT_STORE_TOOL",
    "fact_feedback": "hermes_store.facts.fact_tools:FACT_FEEDBACK_TOOL",
    "recall": "hermes_store.recall:RECALL_TOOL",
}
TOOL_NAMES: tuple[str, ...] = tuple(TOOL_LOCATIONS)


def get_tool(name: str) -> Tool:
    """Return the Tool called ``name`` (KeyError when there is none)."""
    module_name, attr = TOOL_LOCATIONS[name].split(":")
    return getattr(importlib.import_module(module_name), attr)


def tool_schemas(names: tuple[str, ...] | list[str] | None = None) -> list[dict[str, Any]]:
    """OpenAI function schemas for ``names`` (default: every tool)."""
    return [get_tool(n).schema for n in (names or TOOL_NAMES)]


def openai_tools(names: tuple[str, ...] | list[str] | None = None) -> list[dict[str, Any]]:
    """The schemas wrapped as ``{"type": "function", "function": ...}`` entries."""
    return [{"type": "function", "function": s} for s in tool_schemas(names)]


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message}, ensure_ascii=False)


def call_tool(name: str, args: Any, ctx: ToolContext) -> dict[str, Any]:
    """Run a tool and return its result dict, fenced; errors become ``success: false`` dicts.

    This is the one door every tool reply leaves through (CLI ``tool``, the MCP server,
    the Hermes adapter): every string in it passes :func:`~hermes_store.tooling.fence_reply`.
    """
    budget = ctx.options.get("query_budget", configured_budget(TOOL_BUDGET_ENV, DEFAULT_TOOL_QUERY_BUDGET))
    with query_budget(budget):  # every search of the call is bounded in time inside SQLite
        return fence_reply(bound_error_reply(_call_tool(name, args, ctx)))


def _call_tool(name: str, args: Any, ctx: ToolContext) -> dict[str, Any]:
    if name not in TOOL_LOCATIONS:
        return {"success": False, "error": f"Unknown tool '{name}'. Available: {', '.join(TOOL_NAMES)}"}
    try:
        return get_tool(name).handler(parse_arguments(args), ctx)
    except ToolArgumentError as exc:  # shaped as Hermes' tool_error: error first
        return tool_error(str(exc), success=False)
    except Exception as exc:  # a tool failure must never reach the agent as a traceback
        return {"success": False, "error": f"{name} failed: {type(exc).__name__}: {exc}"}


def handle_tool_call(name: str, args: Any, *, home: Home | str | None = None, session_id: str = "",
                     ctx: ToolContext | None = None, **options: Any) -> str:
    """Dispatch one tool call exactly as an agent would and return its JSON string."""
    own_ctx = ctx is None
    if ctx is None:
        ctx = ToolContext(home if isinstance(home, Home) else Home(home), session_id=session_id,
                          options=dict(options))
    try:
        return json.dumps(call_tool(name, args, ctx), ensure_ascii=False, default=str)
    finally:
        if own_ctx:
            ctx.close()
