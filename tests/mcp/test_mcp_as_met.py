"""``hermes-store mcp`` as another agent meets it: a raw client on the pipes (2026-12-07 audit).

Each test is a finding of that audit, driving the real server process line by line:

- the server's ``instructions`` named every tool even when ``--tools`` or ``--read-only`` left
  some out, so a model was told to use ``memory`` on a server that does not list it;
- a request whose params the SDK refuses (``tools/call`` without ``name``, ``resources/read``
  without ``uri``) got only "Invalid request parameters", naming no field;
- a ``tools/list`` / ``resources/list`` cursor this server never gave was answered with page
  one, where MCP's pagination asks for Invalid params (-32602);
- a search cancelled with ``notifications/cancelled`` ran on to its end in its worker thread
  (its reply dropped), so a client cancelling searches kept the server's CPU busy.
"""

from __future__ import annotations

import json
import os
import select
import subprocess

import pytest
from mcp_helpers import SERVER_CMD, build_home

REPLY_WAIT = 30.0
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "1"}}}


class Pipe:
    """A server started with ``argv`` after ``--home HOME``, spoken to one JSON line at a time."""

    def __init__(self, home, *argv: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([*SERVER_CMD, "--home", str(home), *argv], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, **(env or {})})
        self.send(INITIALIZE)
        self.initialized = self.reply()
        assert self.initialized is not None and self.initialized["id"] == 0, self.initialized
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def reply(self, wait: float = REPLY_WAIT) -> dict | None:
        ready, _, _ = select.select([self.proc.stdout], [], [], wait)
        return json.loads(self.proc.stdout.readline()) if ready else None

    def request(self, request_id: int, method: str, params: dict | None = None) -> dict | None:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.reply()

    def close(self) -> str:
        """Close stdin, wait for the exit; the server's stderr."""
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        return self.proc.stderr.read().decode("utf-8", "replace")


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    root = tmp_path_factory.mktemp("as-met") / "home"
    build_home(root)
    return root


@pytest.fixture(scope="module")
def pipe(home):
    served = Pipe(home, "mcp")
    yield served
    assert "Traceback" not in served.close()


@pytest.mark.parametrize(("argv", "absent"), [
    (("mcp", "--tools", "recall,session_search"), ("`memory`", "`fact_store`", "`fact_feedback`")),
    (("mcp", "--read-only"), ("`memory`", "`fact_feedback`")),
])
def test_instructions_name_only_the_tools_served(home, argv, absent):
    pipe = Pipe(home, *argv)
    try:
        instructions = pipe.initialized["result"]["instructions"]
        listed = {t["name"] for t in pipe.request(1, "tools/list")["result"]["tools"]}
    finally:
        pipe.close()
    assert "`recall`" in instructions and "recall" in listed
    for name in absent:
        assert name not in instructions, instructions
        assert name.strip("`") not in listed
    assert ("read-only" in instructions) is ("--read-only" in argv)


def test_the_full_server_names_every_tool_recall_first(pipe):
    instructions = pipe.initialized["result"]["instructions"]
    named = [n for n in ("recall", "session_search", "memory", "fact_store", "fact_feedback")
             if f"`{n}`" in instructions]
    assert len(named) == 5 and instructions.index("`recall`") < instructions.index("`memory`")


@pytest.mark.parametrize(("method", "params", "named"), [
    ("tools/call", {"arguments": {"query": "x"}}, "params.name: Field required"),
    ("tools/call", {"name": 5}, "params.name: Input should be a valid string"),
    ("tools/call", {"name": "recall", "arguments": '{"query": "x"}'}, "params.arguments:"),
    ("tools/call", None, "params: Field required"),
    ("resources/read", {}, "params.uri: Field required"),
])
def test_refused_params_name_the_field(pipe, method, params, named):
    answer = pipe.request(7, method, params)
    assert answer["id"] == 7 and answer["error"]["code"] == -32602, answer
    assert method in answer["error"]["message"] and named in answer["error"]["message"], answer
    after = pipe.request(8, "tools/call", {"name": "recall", "arguments": {"query": "zebrafish"}})
    assert after["result"]["isError"] is False  # the server goes on


@pytest.mark.parametrize("method", ["tools/list", "resources/list"])
def test_a_cursor_the_server_never_gave_is_invalid_params(pipe, method):
    refused = pipe.request(1, method, {"cursor": "eyJwYWdlIjogMn0="})
    assert refused["error"]["code"] == -32602 and "cursor" in refused["error"]["message"], refused
    first = pipe.request(2, method, {})
    assert "nextCursor" not in first["result"] and first["result"][method.split("/")[0]]
