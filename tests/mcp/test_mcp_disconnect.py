"""A client that disconnects mid-call: the server finishes or drops the work cleanly and exits by itself."""

from __future__ import annotations

import anyio
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install 'hermes_store[mcp]')")

import mcp.client.stdio as sdk_stdio  # noqa: E402
import mcp.types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp_helpers import CLIENT_NAME, build_home, served, server_params  # noqa: E402

from hermes_store.builtin.entries import ENTRY_DELIMITER, parse_entries  # noqa: E402

EXIT_LINE = "hermes-store mcp: the client closed the connection; exiting"
GRACE = 60.0  # the SDK would SIGTERM the server after 2 s; give a loaded machine room to finish writes


def test_disconnect_mid_call_leaves_a_consistent_store(tmp_path, monkeypatch):
    root = tmp_path / "home"
    build_home(root)
    errlog = tmp_path / "stderr.log"
    contents = [f"Note written while the client hung up {i}" for i in range(4)]
    # A server the SDK has to kill never prints its exit line, so the line proves a clean exit.
    monkeypatch.setattr(sdk_stdio, "PROCESS_TERMINATION_TIMEOUT", GRACE)

    async def hang_up_mid_calls() -> None:
        with open(errlog, "w", encoding="utf-8") as err:
            client = Client(sdk_stdio.stdio_client(server_params(root), errlog=err),
                            client_info=types.Implementation(name=CLIENT_NAME, version="1"))
            async with client:
                async with anyio.create_task_group() as tg:
                    for content in contents:
                        tg.start_soon(client.call_tool, "memory",
                                      {"action": "add", "target": "memory", "content": content})
                        tg.start_soon(client.call_tool, "recall", {"query": "billing"})
                    await anyio.sleep(0.05)
                    tg.cancel_scope.cancel()  # the client gives up on every call in flight
            # leaving the client closes the server's stdin and waits for the process to end

    anyio.run(hang_up_mid_calls)
    log = errlog.read_text(encoding="utf-8")
    assert EXIT_LINE in log and "Traceback" not in log, log

    raw = (root / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    entries = parse_entries(raw)
    assert raw == ENTRY_DELIMITER.join(entries)  # no torn write
    assert all(e in contents or "billing" in e for e in entries)

    with served(root) as again:  # the next client gets a working server on the same store
        assert again.read("memory://MEMORY.md") == ENTRY_DELIMITER.join(entries)
        assert again.call("memory", {"action": "add", "target": "memory", "content": "after"}).is_error is False
