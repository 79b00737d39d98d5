"""A client that disconnects mid-call: the server finishes or drops the work cleanly and exits by itself."""

from __future__ import annotations

import time

import anyio
import mcp.types as types
from mcp import Client
from mcp.client.stdio import PROCESS_TERMINATION_TIMEOUT, stdio_client
from mcp_helpers import CLIENT_NAME, build_home, served, server_params

from hermes_store.builtin.entries import ENTRY_DELIMITER, parse_entries


def test_disconnect_mid_call_leaves_a_consistent_store(tmp_path):
    root = tmp_path / "home"
    build_home(root)
    errlog = tmp_path / "stderr.log"
    contents = [f"Note written while the client hung up {i}" for i in range(4)]

    async def hang_up_mid_calls() -> float:
        with open(errlog, "w", encoding="utf-8") as err:
            client = Client(stdio_client(server_params(root), errlog=err),
                            client_info=types.Implementation(name=CLIENT_NAME, version="1"))
            async with client:
                async with anyio.create_task_group() as tg:
                    for content in contents:
                        tg.start_soon(client.call_tool, "memory",
                                      {"action": "add", "target": "memory", "content": content})
                        tg.start_soon(client.call_tool, "recall", {"query": "billing"})
                    await anyio.sleep(0.05)
                    tg.cancel_scope.cancel()  # the client gives up on every call in flight
                started = time.monotonic()
            return time.monotonic() - started  # closing stdin until the server process is gone

    shutdown = anyio.run(hang_up_mid_calls)
    # The SDK kills a server that has not exited PROCESS_TERMINATION_TIMEOUT after stdin closes.
    assert shutdown < PROCESS_TERMINATION_TIMEOUT, f"server did not exit by itself ({shutdown:.2f}s)"
    assert "Traceback" not in errlog.read_text(encoding="utf-8")

    raw = (root / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    entries = parse_entries(raw)
    assert raw == ENTRY_DELIMITER.join(entries)  # no torn write
    assert all(e in contents or "billing" in e for e in entries)

    with served(root) as again:  # the next client gets a working server on the same store
        listed = again.read("memory://MEMORY.md")
        assert listed == ENTRY_DELIMITER.join(entries)
        assert again.call("memory", {"action": "add", "target": "memory", "content": "after"}).is_error is False
