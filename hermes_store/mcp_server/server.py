"""The stdio MCP server: the tool registry and the memory resources over the official SDK.

Every tool call goes through :func:`hermes_store.tools.handle_tool_call`, so the
text of a reply is byte for byte what ``hermes-store tool NAME ARGS`` prints, and
the same fence, threat scan and query time budget apply. Replies are capped in bytes and at
most a few requests are in flight (``bounds.py``). The reply carries that
JSON as text and as structured content; a reply whose ``success`` is false is a
tool error (``isError``). Nothing a client sends can stop the server: unknown
tools, bad arguments and internal failures all come back as tool errors.

Memory writes record the origin ``mcp:CLIENT`` (``mcp`` when the client gives no name),
with the ``--session-id`` given at start-up as their session (a fact records no writer).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, TypeVar

import anyio
import mcp.types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.types.jsonrpc import INVALID_PARAMS
from pydantic import ValidationError

from hermes_store import tools
from hermes_store.budget import stop_when
from hermes_store.home import Home
from hermes_store.mcp_server import catalog
from hermes_store.mcp_server.bounds import bounded_streams, cap_plain, cap_text
from hermes_store.mcp_server.resources import RESOURCES, UnknownResource, read_resource
from hermes_store.mcp_server.transport import capped_stdin

logger = logging.getLogger(__name__)

SERVER_NAME = "hermes-store"
ORIGIN = "mcp"
MAX_CLIENT_NAME = 64
_UNSAFE = re.compile(r"[^\w.\-+/@ ]")
T = TypeVar("T")


@dataclass
class ServerOptions:
    """How one server process behaves (set from the command line)."""

    home: Home
    tool_names: tuple[str, ...] = field(default_factory=lambda: tools.TOOL_NAMES)
    read_only: bool = False
    session_id: str = ""

    def served(self) -> tuple[str, ...]:
        """The tools this server lists and accepts."""
        if not self.read_only:
            return self.tool_names
        return tuple(n for n in self.tool_names if catalog.visible_in_read_only(n))


def client_name(ctx: Any) -> str:
    """The name the connected client gave (``clientInfo.name``), cleaned; '' when none."""
    name: Any = None
    params = getattr(getattr(ctx, "session", None), "client_params", None)
    info = getattr(params, "client_info", None)
    if info is not None:
        name = getattr(info, "name", None)
    if not name:
        meta = getattr(ctx, "meta", None)
        envelope = meta.get(types.CLIENT_INFO_META_KEY) if isinstance(meta, dict) else None
        if isinstance(envelope, dict):
            name = envelope.get("name")
    if not isinstance(name, str):
        return ""
    return _UNSAFE.sub("", name).strip()[:MAX_CLIENT_NAME]


def origin_for(ctx: Any) -> str:
    """The provenance origin of writes made for this request: ``mcp`` or ``mcp:CLIENT``."""
    name = client_name(ctx)
    return f"{ORIGIN}:{name}" if name else ORIGIN


def mcp_tool(name: str, read_only: bool) -> types.Tool:
    """The MCP description of tool ``name``: schema from the registry, title and hints from the catalog."""
    spec = catalog.spec_for(name)
    return types.Tool(
        name=name,
        title=spec.title,
        description=catalog.description(name, read_only=read_only),
        input_schema=catalog.input_schema(name, read_only=read_only),
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only or (read_only and bool(spec.writing_actions)),
            destructive_hint=False if read_only else spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=False,
        ),
    )


def error_result(message: str) -> types.CallToolResult:
    """A tool error carrying ``{"success": false, "error": message}`` as text and structure."""
    payload = {"success": False, "error": message}
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(payload))],
                                structured_content=payload, is_error=True)


def reply(text: str) -> types.CallToolResult:
    """Wrap the JSON a tool returned: the same text (cut to the size cap, still JSON), the parsed
    object, isError when it failed."""
    text = cap_text(text)
    try:
        payload = json.loads(text)
    except json.JSONDecodeError:  # handle_tool_call always returns JSON; be safe anyway
        payload = {"success": False, "error": "tool returned no JSON"}
    failed = isinstance(payload, dict) and (
        payload.get("success") is False or ("error" in payload and "success" not in payload))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=payload if isinstance(payload, dict) else None,
                                is_error=failed)


def run_tool(options: ServerOptions, name: str, args: Any, origin: str) -> types.CallToolResult:
    """Check that ``name`` is served and allowed, then run it exactly as ``hermes-store tool`` does."""
    if name not in options.tool_names:
        if name in tools.TOOL_LOCATIONS:
            return error_result(f"tool '{name}' is not served here (--tools "
                                f"{','.join(options.tool_names)})")
        return error_result(f"Unknown tool '{name}'. Available: {', '.join(options.served())}")
    refused = catalog.refusal(name, args, read_only=options.read_only)
    if refused:
        return error_result(refused)
    text = tools.handle_tool_call(name, args if args is not None else {}, home=options.home,
                                  session_id=options.session_id, origin=origin)
    return reply(text)


def build_server(options: ServerOptions) -> Server:
    """The SDK server with the tool and resource handlers bound to ``options``."""
    if options.read_only:
        options.home.read_only = True  # every store it opens is read-only: no write at all

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        refuse_cursor("tools/list", params)
        return types.ListToolsResult(tools=[mcp_tool(n, options.read_only) for n in options.served()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        origin = origin_for(ctx)
        try:
            return await stoppable(functools.partial(run_tool, options, params.name, params.arguments, origin))
        except Exception as exc:  # never a dead server: any failure is the caller's tool error
            logger.exception("tool %s failed", params.name)
            return error_result(f"{params.name} failed: {type(exc).__name__}: {exc}")

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        refuse_cursor("resources/list", params)
        return types.ListResourcesResult(resources=[
            types.Resource(uri=s.uri, name=s.name, title=s.title, description=s.description,
                           mime_type=s.mime_type) for s in RESOURCES.values()])

    async def read(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            text = await anyio.to_thread.run_sync(read_resource, uri, options.home, abandon_on_cancel=True)
        except UnknownResource as exc:  # the spec's answer for an unknown URI: invalid params
            raise MCPError(INVALID_PARAMS, exc.args[0]) from None
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=uri, mime_type=RESOURCES[uri].mime_type, text=cap_plain(text))])

    server = Server(SERVER_NAME, version=_version(),
                    instructions=catalog.instructions(options.served(), read_only=options.read_only),
                    on_list_tools=list_tools, on_call_tool=call_tool,
                    on_list_resources=list_resources, on_read_resource=read)
    server.middleware.append(params_named)
    return server


def refuse_cursor(method: str, params: Any) -> None:
    """Every list is one page (no ``nextCursor`` is ever given), so any cursor is not one this
    server gave: MCP's answer for an invalid cursor is Invalid params (-32602), not page one."""
    cursor = getattr(params, "cursor", None)
    if cursor is not None:
        raise MCPError(INVALID_PARAMS, f"{method}: cursor {cursor[:64]!r} was not given by this server "
                                       "(every list is one page; send no cursor)")


async def params_named(ctx: Any, call_next: Any) -> Any:
    """Middleware: a request whose params the SDK refuses gets Invalid params naming the field and
    the problem (``tools/call: params.name: Field required``) where the SDK says only "Invalid
    request parameters", so the client can tell what to mend."""
    try:
        return await call_next(ctx)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0] if errors else {}
        loc = tuple(str(part) for part in first.get("loc", ()))
        where = ".".join(loc if loc[:1] == ("params",) else ("params", *loc))
        raise MCPError(INVALID_PARAMS, f"Invalid request parameters: {ctx.method}: {where}: "
                                       f"{first.get('msg', 'invalid')}", data="") from None


async def stoppable(work: Callable[[], T]) -> T:
    """``work()`` in a worker thread, its searches stopped at once when the call is cancelled.

    A cancelled request (the client's ``notifications/cancelled``, or the client hanging up) is
    never answered, so its search used to run on to its end for nobody, in a thread the
    cancellation did not reach; a client cancelling searches kept the server's CPU busy. Now the
    cancellation sets the stop of :func:`hermes_store.budget.stop_when`, and the running statement is
    interrupted as at a spent budget. The thread itself is waited for, never abandoned: a write
    in progress finishes (bounded by the tool's own budgets) before the cancellation goes on.
    """
    stop, done = threading.Event(), anyio.Event()
    outcome: dict[str, Any] = {}

    def job() -> T:
        with stop_when(stop):
            return work()

    async def run() -> None:
        with anyio.CancelScope(shield=True):
            try:
                outcome["value"] = await anyio.to_thread.run_sync(job)
            except Exception as exc:  # handed to the caller below
                outcome["error"] = exc
            finally:
                done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        try:
            await done.wait()
        except anyio.get_cancelled_exc_class():
            stop.set()  # the group still waits for run(): the thread ends before this call does
            raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _version() -> str:
    try:
        return metadata.version("hermes_store")
    except metadata.PackageNotFoundError:
        return ""


@contextlib.contextmanager
def protocol_streams() -> Iterator[None]:
    """Within: ``sys.stdin``/``sys.stdout`` are the process's own streams, the protocol channel.

    The CLI wraps ``sys.stdout`` to keep control characters off terminals; the MCP channel is
    no terminal (JSON-RPC escapes what it must) and the SDK needs the real binary buffers.
    """
    saved = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = sys.__stdin__, sys.__stdout__
    try:
        yield
    finally:
        sys.stdin, sys.stdout = saved


def serve(options: ServerOptions) -> None:
    """Serve MCP on stdin/stdout until the client closes the connection."""
    server = build_server(options)

    async def main(stdin: anyio.AsyncFile[str]) -> None:
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            # a client that never reads blocks the server's reading, never grows its memory
            read_stream, write_stream = bounded_streams(read_stream, write_stream)
            await server.run(read_stream, write_stream, server.create_initialization_options())

    with protocol_streams(), capped_stdin() as stdin:  # a request line is at most 4 MiB
        anyio.run(main, stdin)
    # stdout is the protocol channel; the log line goes to stderr, which clients keep as the server log.
    print("hermes-store mcp: the client closed the connection; exiting", file=sys.stderr, flush=True)


def parse_tool_list(value: str | None) -> Iterable[str] | None:
    """``--tools a,b`` as a list of names (None when not given)."""
    if value is None:
        return None
    return [part for part in value.split(",")]
