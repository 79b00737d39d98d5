"""MCP output bounded (issue 25): replies capped in bytes, and a client that never reads cannot
make the server's memory grow (it stops reading the client's requests instead)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip(
    "mcp", reason="the mcp extra is not installed (pip install 'hermes_store[mcp]')"
)
psutil = pytest.importorskip("psutil")

from hermes_store.facts import FactStore  # noqa: E402
from hermes_store.mcp_server.bounds import (  # noqa: E402
    CUT_MARK,
    MAX_IN_FLIGHT,
    REPLY_CAP_BYTES,
    cap_plain,
    cap_text,
)
from hermes_store.mcp_server.server import ServerOptions, reply, run_tool  # noqa: E402

SERVER_CMD = [sys.executable, "-c", "from hermes_store.cli import main; main()"]


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def test_a_big_json_reply_is_cut_to_the_cap_and_stays_json():
    big = {
        "success": True,
        "results": [{"fact_id": i, "content": "é" * 5000} for i in range(200)],
        "count": 200,
    }
    text = json.dumps(big, ensure_ascii=False)
    assert _bytes(text) > 10 * REPLY_CAP_BYTES
    cut = cap_text(text)
    assert _bytes(cut) <= REPLY_CAP_BYTES
    payload = json.loads(cut)
    assert payload["success"] is True and payload["truncated"]["original_bytes"] == _bytes(text)
    assert payload["truncated"]["cap_bytes"] == REPLY_CAP_BYTES
    assert 1 <= len(payload["results"]) < 200 and payload["count"] == len(payload["results"])
    assert payload["results"][0] == big["results"][0]  # the first results are kept whole
    one_huge = json.dumps({"success": True, "text": "x" * (3 * REPLY_CAP_BYTES)})
    payload = json.loads(cap_text(one_huge))
    assert payload["text"].endswith(CUT_MARK) and _bytes(json.dumps(payload)) <= REPLY_CAP_BYTES
    small = json.dumps({"success": True, "results": []})
    assert cap_text(small) == small  # under the cap: byte for byte unchanged
    plain = cap_plain("line\n" * 100_000)
    assert _bytes(plain) <= REPLY_CAP_BYTES and CUT_MARK in plain.splitlines()[-1]


def test_tool_replies_through_the_server_are_capped(home):
    with FactStore(home) as store:
        for i in range(100):
            store.add_fact(f"okapi fact {i} " + " ".join(f"word{i}x{j}" for j in range(250)))
    result = run_tool(
        ServerOptions(home=home), "fact_store", {"action": "list", "limit": 100}, "test"
    )
    text = result.content[0].text
    assert _bytes(text) <= REPLY_CAP_BYTES
    assert result.structured_content == json.loads(text)
    assert result.structured_content["truncated"]["original_bytes"] > REPLY_CAP_BYTES
    assert result.structured_content["success"] is True and not result.is_error
    assert reply('{"success": true}').content[0].text == '{"success": true}'


def _message(obj: dict) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def test_a_client_that_never_reads_blocks_the_server_instead_of_growing_it(home, tmp_path):
    """Thousands of requests, stdout never read: the server stops reading (the client's writes
    block) with its memory flat; once the client reads, every request is answered."""
    total = 4000
    proc = subprocess.Popen(
        [*SERVER_CMD, "--home", str(home.root), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=open(tmp_path / "mcp.err", "w"),
    )  # noqa: SIM115
    try:
        proc.stdin.write(
            _message(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "never-reads", "version": "1"},
                    },
                }
            )
        )
        proc.stdin.write(_message({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write(
            _message({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        )  # warm the catalog
        proc.stdin.flush()
        time.sleep(4)
        server = psutil.Process(proc.pid)
        before = server.memory_info().rss
        sent = [0]

        def write_all() -> None:
            for i in range(2, total + 2):
                proc.stdin.write(_message({"jsonrpc": "2.0", "id": i, "method": "tools/list"}))
                proc.stdin.flush()
                sent[0] = i

        writer = threading.Thread(target=write_all, daemon=True)
        writer.start()
        time.sleep(6)
        grown = server.memory_info().rss - before
        stuck_at = sent[0]
        assert writer.is_alive() and stuck_at < total, (
            "the server kept reading a client that never reads"
        )
        time.sleep(2)
        assert sent[0] == stuck_at  # blocked, not slow
        assert grown < 40_000_000, (
            f"server memory grew {grown / 1e6:.1f} MB while the client did not read"
        )
        # the client starts reading: every request is answered, in full
        answered: set[int] = set()
        for line in proc.stdout:  # replies come in any order (requests run concurrently)
            message = json.loads(line)
            if "result" in message:
                answered.add(message["id"])
            if len(answered) == total + 2:
                break
        assert answered == set(range(total + 2))
        writer.join(30)
        assert not writer.is_alive()
    finally:
        proc.kill()
        proc.wait()
    assert MAX_IN_FLIGHT <= 16


def test_the_in_flight_bound_frees_a_slot_on_reply_and_on_cancel():
    import anyio
    import mcp_types
    from mcp.shared.message import SessionMessage

    from hermes_store.mcp_server.bounds import bounded_streams

    def parse(obj: dict) -> SessionMessage:
        return SessionMessage(
            mcp_types.jsonrpc_message_adapter.validate_json(json.dumps(obj), by_name=False)
        )

    async def blocked(reader) -> bool:
        with anyio.move_on_after(0.3):
            await reader.receive()
            return False
        return True

    async def main() -> None:
        in_send, in_recv = anyio.create_memory_object_stream(10)
        out_send, _out_recv = anyio.create_memory_object_stream(10)
        reader, writer = bounded_streams(in_recv, out_send, limit=2)
        for i in (1, 2, 3, 4):
            await in_send.send(parse({"jsonrpc": "2.0", "id": i, "method": "tools/list"}))
        assert (await reader.receive()).message.id == 1 and (await reader.receive()).message.id == 2
        assert await blocked(reader)  # two in flight: request 3 waits
        await writer.send(parse({"jsonrpc": "2.0", "id": 1, "result": {}}))  # a reply frees a slot
        assert (await reader.receive()).message.id == 3
        assert await blocked(reader)
        # a cancellation behind the waiting request 4 is read ahead, passed on and frees 2's slot
        await in_send.send(
            parse(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
            )
        )
        assert (await reader.receive()).message.method == "notifications/cancelled"
        assert (await reader.receive()).message.id == 4
        assert await blocked(reader)
        in_send.close()
        await writer.send(parse({"jsonrpc": "2.0", "id": 3, "result": {}}))
        with pytest.raises(anyio.EndOfStream):
            await reader.receive()

    anyio.run(main)
