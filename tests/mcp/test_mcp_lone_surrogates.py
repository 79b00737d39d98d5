"""A request holding half of a UTF-16 surrogate pair gets its answer (it used to get none).

JavaScript's ``JSON.stringify`` writes a lone surrogate as ``\\ud83d`` (a string cut between
the two halves of an emoji), so an MCP client in Node can send one. The SDK's JSON parser
refuses the line and the server dropped it without a word: found with a raw stdio client, the
``recall`` call never got a reply and the client waited until its own timeout. Now the message
is read with each lone surrogate as U+FFFD, as every tool argument is (``tooling.valid_text``).
"""

from __future__ import annotations

import json
import os
import select
import subprocess

from mcp_helpers import SERVER_CMD, build_home

REPLY_WAIT = 30.0


class RawClient:
    """``hermes-store mcp`` spoken to line by line, as a client that writes its own JSON does."""

    def __init__(self, home) -> None:
        self.proc = subprocess.Popen([*SERVER_CMD, "--home", str(home), "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=dict(os.environ))
        self.send('{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": '
                  '"2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}')
        assert self.reply()["id"] == 0
        self.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: str) -> None:
        self.proc.stdin.write(line.encode("ascii") + b"\n")
        self.proc.stdin.flush()

    def reply(self) -> dict | None:
        ready, _, _ = select.select([self.proc.stdout], [], [], REPLY_WAIT)
        return json.loads(self.proc.stdout.readline()) if ready else None

    def call(self, request_id: int, name: str, arguments_json: str) -> dict | None:
        self.send(f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
                  f'"params": {{"name": "{name}", "arguments": {arguments_json}}}}}')
        return self.reply()

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def test_lone_surrogates_in_arguments_are_answered_and_the_next_call_works(tmp_path):
    root = tmp_path / "home"
    build_home(root)
    client = RawClient(root)
    try:
        answer = client.call(1, "recall", r'{"query": "zebrafish \ud83d"}')
        assert answer is not None, "no reply to a request holding a lone surrogate"
        payload = json.loads(answer["result"]["content"][0]["text"])
        assert answer["id"] == 1 and payload["success"] is True and payload["count"] >= 1, payload
        answer = client.call(2, "fact_store", r'{"action": "add", "content": "Ada likes tea \udc00 a lot"}')
        assert answer is not None and answer["id"] == 2
        assert json.loads(answer["result"]["content"][0]["text"])["success"] is True
        answer = client.call(3, "fact_store", '{"action": "search", "query": "tea"}')
        assert "Ada likes tea \ufffd a lot" in answer["result"]["content"][0]["text"]
    finally:
        client.close()


def test_a_request_of_the_wrong_shape_gets_an_invalid_request_error(tmp_path):
    """A request the SDK refuses for its shape got no reply at all (found with a raw client:
    ``"jsonrpc": "1.0"``, positional ``"params": []``, no ``"jsonrpc"``), so the client's call
    hung until its own timeout. Each now gets JSON-RPC's "Invalid Request" error under its own
    id, naming what was wrong, and the server goes on answering."""
    root = tmp_path / "home"
    build_home(root)
    client = RawClient(root)
    try:
        for request_id, line, said in [
            (21, '{"jsonrpc": "1.0", "id": 21, "method": "tools/list"}', "jsonrpc: Input should be '2.0'"),
            (22, '{"jsonrpc": "2.0", "id": 22, "method": "tools/list", "params": []}', "params:"),
            ("r23", '{"id": "r23", "method": "tools/list"}', "jsonrpc: Field required"),
        ]:
            client.send(line)
            answer = client.reply()
            assert answer is not None, f"no reply to {line}"
            assert answer["id"] == request_id and answer["error"]["code"] == -32600, answer
            assert answer["error"]["message"].startswith("not a JSON-RPC 2.0 request: "), answer
            assert said in answer["error"]["message"], answer
        answer = client.call(24, "recall", '{"query": "zebrafish"}')
        assert answer is not None and answer["id"] == 24
        assert json.loads(answer["result"]["content"][0]["text"])["count"] >= 1
    finally:
        client.close()


def test_a_line_that_is_not_json_or_has_no_usable_id_is_answered_under_a_null_id(tmp_path):
    """A line that is not JSON, and a message of the wrong shape with no id, got no
    reply at all (found with a raw client), so the client could not tell it was refused.
    JSON-RPC 2.0 answers them with "Parse error" / "Invalid Request" under a null id; a blank
    line and a refused reply of the client's stay unanswered, and the next call is answered."""
    root = tmp_path / "home"
    build_home(root)
    client = RawClient(root)
    try:
        for line, code, request_id in [("this is not json", -32700, None),
                                       ('{"jsonrpc": "2.0", "id": 1, "method"', -32700, 1),  # cut short
                                       ("[]", -32600, None), ("7", -32600, None),
                                       ('{"jsonrpc": "2.0", "method": 1, "params": "bar"}', -32600, None)]:
            client.send(line)
            answer = client.reply()
            assert answer is not None, f"no reply to {line!r}"
            assert answer["id"] == request_id and answer["error"]["code"] == code, (line, answer)
        client.send("")
        client.send('{"jsonrpc": "2.0", "id": 9, "result": 5}')
        answer = client.call(25, "recall", '{"query": "zebrafish"}')
        assert answer is not None and answer["id"] == 25, answer  # nothing answered the two lines
        assert json.loads(answer["result"]["content"][0]["text"])["count"] >= 1
    finally:
        client.close()


def _peak_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


def test_a_request_line_over_the_cap_is_answered_and_not_held(tmp_path):
    """A request line of any length was read whole (then decoded and parsed: three copies), so a
    client writing 64 MiB without a newline grew the server by hundreds of MiB. A line over
    4 MiB is now read and dropped in pieces and answered with "Invalid Request" under its id;
    the next request is answered as usual."""
    from hermes_store.mcp_server.transport import MAX_REQUEST_BYTES

    root = tmp_path / "home"
    build_home(root)
    client = RawClient(root)
    try:
        before = _peak_kib(client.proc.pid)
        filler = "a" * (64 * 1024 * 1024)
        client.send('{"jsonrpc": "2.0", "id": 31, "method": "tools/call", "params": {"name": "recall", '
                    f'"arguments": {{"query": "{filler}"}}}}}}')
        answer = client.reply()
        assert answer is not None and answer["id"] == 31 and answer["error"]["code"] == -32600, answer
        assert f"cap of {MAX_REQUEST_BYTES} bytes" in answer["error"]["message"], answer
        grown_mib = (_peak_kib(client.proc.pid) - before) / 1024
        assert grown_mib < 32, f"the server's peak memory grew {grown_mib:.0f} MiB for one request"
        answer = client.call(32, "recall", '{"query": "zebrafish"}')
        assert answer is not None and answer["id"] == 32
        assert json.loads(answer["result"]["content"][0]["text"])["count"] >= 1
    finally:
        client.close()


def test_a_request_nested_too_deeply_to_parse_is_answered(tmp_path):
    """A tools/call whose arguments nest 100,000 lists deep is JSON the SDK's parser refuses
    ("recursion limit exceeded"); the line was dropped without a word, so the client's call
    hung (found with a raw client). It now gets "Parse error" under its id, naming why,
    and the next call is answered."""
    root = tmp_path / "home"
    build_home(root)
    client = RawClient(root)
    try:
        answer = client.call(31, "recall", '{"query": "zebrafish", "kinds": ' + "[" * 100_000 + "]" * 100_000 + "}")
        assert answer is not None, "no reply to a deeply nested request"
        assert answer["id"] == 31 and answer["error"]["code"] == -32700, answer
        assert answer["error"]["message"].startswith("request not read: Invalid JSON: recursion limit exceeded"), answer
        answer = client.call(32, "recall", '{"query": "zebrafish"}')
        assert answer is not None and answer["id"] == 32
    finally:
        client.close()
