"""The MCP server's stdin, read a line at a time with a cap on a line's bytes.

The SDK's stdio transport reads each JSON-RPC message as one line of any length: a client that
writes a request of hundreds of megabytes (or a stream with no newline at all) made the server
hold all of it, then its decoded copy, then the parsed JSON. :func:`capped_stdin` gives the
transport a reader whose lines are at most :data:`MAX_REQUEST_BYTES`: the rest of a longer line
is read and dropped in 1 MiB pieces, and the line stands for a message that names its size and
the request's id (found at its start), which :func:`hermes_store.mcp_server.inbound.invalid_request_reply`
answers with JSON-RPC's "Invalid Request" error, so the client's call does not hang. Nothing a
tool takes comes near the cap (a memory entry is a few KiB).

As the SDK does for its own reader, the process's fd 0 points at the null device while the
server runs (a handler or a child process reading stdin reads nothing, instead of taking bytes
of the protocol), and is pointed back at the wire afterwards.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

import anyio

MAX_REQUEST_BYTES = 4 * 1024 * 1024
#: the key of the message an over-long line stands for (see :func:`oversize_message`)
OVERSIZE_KEY = "hermes_store_request_over_cap"
_PIECE = 1024 * 1024
_HEAD = 64 * 1024
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\]|\\.){0,256}")')


def request_id(head: bytes) -> int | str | None:
    """The top-level ``id`` of a request from its first bytes (before its ``params``), else None."""
    before = head.split(b'"params"', 1)[0]
    match = _ID.search(before)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def oversize_message(head: bytes, size: int) -> str:
    """The line an over-long request stands for: ``{OVERSIZE_KEY: {"id": ..., "bytes": size}}``."""
    return json.dumps({OVERSIZE_KEY: {"id": request_id(head), "bytes": size}}) + "\n"


class CappedLines:
    """A text reader of ``buffer`` whose :meth:`readline` never holds more than ``cap`` bytes."""

    def __init__(self, buffer: BinaryIO, cap: int = MAX_REQUEST_BYTES) -> None:
        self.buffer = buffer
        self.cap = cap

    def readline(self) -> str:
        """The next line ('' at the end); an over-long one as :func:`oversize_message`."""
        line = self.buffer.readline(self.cap + 1)
        if len(line) <= self.cap or line.endswith(b"\n"):
            return line.decode("utf-8", errors="replace")
        head, size = line[:_HEAD], len(line)
        del line
        while True:
            piece = self.buffer.readline(_PIECE)
            size += len(piece)
            if not piece or piece.endswith(b"\n"):
                break
        print(f"hermes-store mcp: a request line of {size} bytes is over the {self.cap} byte cap; "
              "it was not read", file=sys.stderr, flush=True)
        return oversize_message(head, size)

    def close(self) -> None:
        """Nothing to close: the wire is not the reader's (see :func:`capped_stdin`)."""


def _fd0_backed(stream: Any) -> bool:
    try:
        return stream.buffer.fileno() == 0
    except (AttributeError, OSError, ValueError):
        return False


@contextmanager
def capped_stdin(cap: int = MAX_REQUEST_BYTES) -> Iterator[anyio.AsyncFile[str]]:
    """``sys.stdin`` as the transport's capped reader (see the module docstring)."""
    stream = sys.stdin
    if not _fd0_backed(stream):
        yield anyio.wrap_file(CappedLines(stream.buffer, cap))
        return
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        # closefd=False: a worker thread may still block on the wire when the server ends
        yield anyio.wrap_file(CappedLines(os.fdopen(wire, "rb", closefd=False), cap))
    finally:
        os.dup2(wire, 0)
