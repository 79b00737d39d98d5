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
import random
import select
import string
import subprocess
import threading
import time

import apsw
import psutil
import pytest
from mcp_helpers import SERVER_CMD, build_home

from hermes_store.budget import bounded_query, query_budget, stop_when
from hermes_store.db import Database
from hermes_store.home import Home

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


# ---- a cancelled search stops -----------------------------------------------------------------

SLOW_QUERY = {"name": "session_search", "arguments": {"query": "comm*", "limit": 10}}
CANCELLED = 8  # searches cancelled 20 ms after they were sent


@pytest.fixture(scope="module")
def slow_home(tmp_path_factory):
    """10,000 messages of ten words sharing the prefix ``comm``: ``comm*`` takes about a second
    inside SQLite (built with SQL for speed)."""
    root = tmp_path_factory.mktemp("as-met-slow") / "home"
    home = Home(root).ensure()
    rng = random.Random(7)

    def word() -> str:
        return "comm" + "".join(rng.choice(string.ascii_lowercase) for _ in range(5))

    db = home.open_db()
    with db.write():
        db.executemany("INSERT INTO sessions (id, origin_format, source, title, started_at) "
                       "VALUES (?, 'live', 'cli', ?, ?)", [(f"s{i}", f"session {i}", 1.7e9 + i) for i in range(300)])
        db.executemany("INSERT INTO messages (session_id, seq, role, content, timestamp) VALUES (?, ?, ?, ?, ?)",
                       [(f"s{i % 300}", i // 300, "user", " ".join(word() for _ in range(10)), 1.7e9 + i)
                        for i in range(10_000)])
    db.close()
    return root


def _cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def _settled_cpu(proc: psutil.Process, limit: float = 30.0) -> float:
    """The process's CPU seconds once it stopped using any (or after ``limit`` seconds)."""
    last, ends = _cpu(proc), time.monotonic() + limit
    while time.monotonic() < ends:
        time.sleep(0.5)
        now = _cpu(proc)
        if now - last < 0.02:
            return now
        last = now
    return last


def test_a_cancelled_search_stops_instead_of_running_on(slow_home):
    # no time budget: only the cancellation can stop the search
    pipe = Pipe(slow_home, "mcp", env={"HERMES_STORE_TOOL_QUERY_BUDGET": "0"})
    proc = psutil.Process(pipe.proc.pid)
    try:
        assert pipe.request(1, "tools/call", SLOW_QUERY)["result"]["structuredContent"]["count"] == 10
        before = _settled_cpu(proc)  # the store's pages are in memory now, as for the searches below
        assert pipe.request(2, "tools/call", SLOW_QUERY)["result"]["structuredContent"]["count"] == 10
        one = _settled_cpu(proc) - before  # the CPU one whole search takes
        assert one > 0.15, f"the search is too quick ({one:.2f} s) to tell a stopped one from a whole one"
        before = _cpu(proc)
        for request_id in range(10, 10 + CANCELLED):
            pipe.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": SLOW_QUERY})
            time.sleep(0.02)
            pipe.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": request_id, "reason": "the user moved on"}})
        assert pipe.request(20, "ping") == {"jsonrpc": "2.0", "id": 20, "result": {}}
        spent = _settled_cpu(proc) - before
        assert pipe.reply(wait=0.5) is None  # a cancelled request is never answered
        after = pipe.request(21, "tools/call", SLOW_QUERY)  # the server serves whole searches still
        assert after["result"]["structuredContent"]["count"] == 10
    finally:
        stderr = pipe.close()
    # the cancelled searches ran on to their ends before: about CANCELLED x one
    assert spent < CANCELLED / 3 * one, (f"{CANCELLED} cancelled searches took {spent:.2f} s of CPU "
                                         f"(one whole search: {one:.2f} s)")
    assert "Traceback" not in stderr


def test_stop_when_interrupts_a_bounded_statement_only():
    slow = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000)"
            " SELECT count(*) FROM n")
    db = Database(":memory:")
    stop = threading.Event()
    stop.set()
    try:
        with query_budget(None), stop_when(stop):
            assert db.scalar(slow) == 3000000  # outside a bounded region: never interrupted
            started = time.monotonic()
            with bounded_query(), pytest.raises(apsw.InterruptError):
                db.scalar(slow)
            assert time.monotonic() - started < 0.5
        with query_budget(None), bounded_query():  # no stop, no budget: runs to its end
            assert db.scalar(slow) == 3000000
    finally:
        db.close()


def test_reason_with_a_huge_entity_list_is_refused_at_once(pipe):
    # 100,000 entities (under the 4 MiB request cap) were each looked up: no reply for minutes
    started = time.monotonic()
    answer = pipe.request(30, "tools/call", {"name": "fact_store", "arguments": {
        "action": "reason", "entities": [f"entity{i}" for i in range(100_000)]}})
    assert time.monotonic() - started < 10.0
    reply = answer["result"]["structuredContent"]
    assert answer["result"]["isError"] is True and "'entities'" in reply["error"], reply
    assert "100,000" in reply["error"] and "64" in reply["error"]
    found = pipe.request(31, "tools/call", {"name": "fact_store", "arguments": {
        "action": "reason", "entities": ["billing"] * 64}})
    assert found["result"]["isError"] is False, found


def test_a_postgresql_server_with_no_socket_is_not_said_to_have_been_waited_for(tmp_path):
    # the socket is gone (the server stopped): libpq fails at once, but the reply said
    # "not reachable within 5s", as if the client had waited for a slow server
    url = f"postgresql://sam:s3cret@/x?host={tmp_path}&port=1"
    pipe = Pipe(tmp_path / "home", "--database-url", url, "mcp")
    try:
        started = time.monotonic()
        answer = pipe.request(1, "tools/call", {"name": "recall", "arguments": {"query": "zebrafish"}})
        seconds = time.monotonic() - started
    finally:
        stderr = pipe.close()
    error = answer["result"]["structuredContent"]["errors"]["database"]
    assert "not reachable: " in error and "No such file or directory" in error, error
    assert "within" not in error and "s3cret" not in error, error
    assert seconds < 5.0 and "Traceback" not in stderr
