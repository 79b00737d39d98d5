"""Helpers for the MCP tests: a real ``hermes-store mcp`` subprocess driven by the SDK's stdio client.

One server per test module: :func:`served` starts it in a blocking portal (an event loop
in a thread) so plain synchronous tests can call ``served.call(...)``.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install 'hermes_store[mcp]')")

import mcp.types as types  # noqa: E402
from anyio.from_thread import BlockingPortal, start_blocking_portal  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from hermes_store.builtin import MemoryStore  # noqa: E402
from hermes_store.cli import cli  # noqa: E402
from hermes_store.facts import FactStore  # noqa: E402
from hermes_store.home import Home  # noqa: E402
from hermes_store.sessions import SessionIndex  # noqa: E402

CLIENT_NAME = "pytest-client"
CURRENT_SESSION = "mcp-current-session"
SERVER_CMD = [sys.executable, "-c", "from hermes_store.cli import main; main()"]


def build_home(root: Path) -> Home:
    """A home with memory, a user profile, two facts and two sessions (one is the 'current' one)."""
    root.mkdir(parents=True, exist_ok=True)
    home = Home(root).ensure()
    store = MemoryStore(home)
    store.load_from_disk()
    assert store.add("memory", "The billing service deploys with scripts/deploy.sh on Fridays")["success"]
    assert store.add("user", "Alice owns the billing service and prefers short answers")["success"]
    store.close()
    with home.open_db() as db:
        facts = FactStore(db)
        facts.add_fact("Billing service runs on Postgres 15", "project", "billing")
        facts.add_fact("The office plant needs water weekly", "general", "")
        index = SessionIndex(db)
        past = index.create_session(source="cli", title="Billing outage", started_at=time.time() - 86400)
        index.append_message(past, "user", "Why did the zebrafish billing job fail last night?")
        index.append_message(past, "assistant", "A migration locked the zebrafish table.")
        index.create_session(session_id=CURRENT_SESSION, source="cli", title="now")
        index.append_message(CURRENT_SESSION, "user", "zebrafish question in the current session")
    return home


def cli_tool(home: Path, name: str, args: dict[str, Any], *extra: str) -> str:
    """What ``hermes-store --home HOME tool NAME ARGS`` prints (without the newline)."""
    result = CliRunner().invoke(cli, ["--home", str(home), "tool", name, json.dumps(args), *extra])
    assert result.exit_code == 0, result.output
    return result.stdout.rstrip("\n")


def cli_out(home: Path, *argv: str) -> str:
    """Any other CLI command's stdout."""
    result = CliRunner().invoke(cli, ["--home", str(home), *argv])
    assert result.exit_code == 0, result.output
    return result.stdout


@dataclass
class Served:
    """A running server and the client connected to it."""

    portal: BlockingPortal
    client: Client
    home: Path
    errlog: Path

    def call(self, name: str, args: dict[str, Any] | None = None) -> types.CallToolResult:
        """Call a tool through MCP and check the reply's two forms agree."""
        result = self.portal.call(self.client.call_tool, name, args or {})
        assert len(result.content) == 1 and result.content[0].type == "text"
        assert result.structured_content == json.loads(result.content[0].text)
        return result

    def tools(self) -> list[types.Tool]:
        return self.portal.call(self.client.list_tools).tools

    def resources(self) -> list[types.Resource]:
        return self.portal.call(self.client.list_resources).resources

    def read(self, uri: str) -> str:
        result = self.portal.call(self.client.read_resource, uri)
        assert len(result.contents) == 1
        return result.contents[0].text


def server_params(home: Path, *args: str, options: tuple[str, ...] = ()) -> StdioServerParameters:
    """The stdio parameters that start ``hermes-store --home HOME OPTIONS mcp ARGS``."""
    return StdioServerParameters(command=SERVER_CMD[0],
                                 args=[*SERVER_CMD[1:], "--home", str(home), *options, "mcp", *args])


@contextlib.contextmanager
def served(home: Path, *args: str, mode: str = "auto", client_name: str = CLIENT_NAME,
           options: tuple[str, ...] = ()) -> Iterator[Served]:
    """Start a server on ``home`` with ``args`` (and the global ``options``, e.g.
    ``--database-url URL``) and yield a connected client.

    ``mode="legacy"`` speaks the initialize handshake (protocol 2025-11-25 and earlier), as most
    MCP clients in the field still do; the default lets the SDK pick the newest protocol.
    """
    errlog = home.parent / f"{home.name}-mcp-stderr.log"
    with open(errlog, "w", encoding="utf-8") as err, start_blocking_portal() as portal:
        client = Client(stdio_client(server_params(home, *args, options=options), errlog=err), mode=mode,
                        client_info=types.Implementation(name=client_name, version="1.0"))
        with portal.wrap_async_context_manager(client) as connected:
            yield Served(portal, connected, home, errlog)
    assert "Traceback" not in errlog.read_text(encoding="utf-8"), errlog.read_text(encoding="utf-8")
