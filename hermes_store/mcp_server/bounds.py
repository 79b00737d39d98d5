"""Bounds on what the MCP server writes (issue 25, "MCP output bounded").

Two bounds:

- **Each reply is capped in bytes.** A tool reply's JSON text is at most
  :data:`REPLY_CAP_BYTES` (128 KiB) of UTF-8; the JSON-RPC message carries it twice (as
  text and as structured content), so a message stays under 256 KiB. A larger reply is cut
  where it stays valid JSON: the longest lists lose their last items and the longest strings
  are cut (ending in :data:`CUT_MARK`), and the reply gains
  ``"truncated": {"original_bytes": N, "cap_bytes": 131072, ...}``. A resource's text is
  cut at the same cap, ending in a line that says so.
- **A client that never reads cannot make the server grow.** The SDK's stdio transport hands
  each request to its own task, and a task whose reply cannot be written waits holding that
  reply; a client that sends and never reads would pile up one waiting reply per request.
  :func:`bounded_streams` wraps the transport's two streams so at most :data:`MAX_IN_FLIGHT`
  requests are being handled or waiting to be written: the next request is not read from
  stdin until a reply went out (or its request was cancelled), so the client's own writes
  block instead (backpressure through the pipe).
"""

from __future__ import annotations

import json
from typing import Any

import anyio

from hermes_store.mcp_server.inbound import invalid_request_reply, repaired

REPLY_CAP_BYTES = 128 * 1024
MAX_IN_FLIGHT = 8
LOOKAHEAD = (
    32  # messages read ahead while a request waits for a slot (so cancellations get through)
)
POLL_SECONDS = 0.05
CUT_MARK = "…[cut by hermes-store: reply over the MCP size cap]"
_NOTE = "reply over the MCP size cap: the longest lists and texts were cut; ask for fewer or smaller results"


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def _biggest(value: Any, path: tuple = ()) -> tuple[int, tuple, Any] | None:
    """The largest cuttable part (a list of 2+ items or a long string): (size, path, value)."""
    best: tuple[int, tuple, Any] | None = None
    if isinstance(value, str) and len(value) > 2 * len(CUT_MARK):
        best = (len(value.encode("utf-8")), path, value)
    elif isinstance(value, list | dict):
        items = enumerate(value) if isinstance(value, list) else value.items()
        if isinstance(value, list) and len(value) > 1:
            best = (_size(value), path, value)
        for key, item in items:
            found = _biggest(item, (*path, key))
            if found is not None and (best is None or found[0] > best[0]):
                best = found
    return best


def _replace(root: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    parent = root
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return root


def cap_payload(payload: Any, cap: int = REPLY_CAP_BYTES) -> tuple[Any, bool]:
    """``payload`` cut until its JSON is at most ``cap`` bytes (a copy); whether it was cut."""
    original = _size(payload)
    if original <= cap:
        return payload, False
    work = json.loads(json.dumps(payload, ensure_ascii=False))
    marker = {"original_bytes": original, "cap_bytes": cap, "note": _NOTE}
    room = cap - _size({"truncated": marker}) - 16
    while _size(work) > room:
        found = _biggest(work)
        if found is None:  # nothing left to cut: the bare marker
            work = {}
            break
        _, path, part = found
        if isinstance(part, list):
            work = _replace(work, path, part[: max(1, len(part) // 2)])
        else:
            keep = max(len(CUT_MARK), len(part) // 2)
            work = _replace(work, path, part[:keep] + CUT_MARK)
    if isinstance(work, dict):
        work["truncated"] = marker
        if "count" in work and isinstance(work.get("results", work.get("facts")), list):
            work["count"] = len(work.get("results", work.get("facts")))
        return work, True
    return {"result": work, "truncated": marker}, True


def cap_text(text: str, cap: int = REPLY_CAP_BYTES) -> str:
    """A tool reply's JSON text at most ``cap`` bytes, still valid JSON (non-JSON text is cut)."""
    if len(text.encode("utf-8")) <= cap:
        return text
    try:
        payload = json.loads(text)
    except json.JSONDecodeError:
        return cap_plain(text, cap)
    capped, _ = cap_payload(payload, cap)
    return json.dumps(capped, ensure_ascii=False)


def cap_plain(text: str, cap: int = REPLY_CAP_BYTES) -> str:
    """Plain text (a resource) at most ``cap`` bytes, ending in a line that says it was cut."""
    data = text.encode("utf-8")
    if len(data) <= cap:
        return text
    tail = f"\n{CUT_MARK} ({len(data)} bytes, cap {cap})\n"
    keep = cap - len(tail.encode("utf-8"))
    return data[:keep].decode("utf-8", "ignore") + tail


def _root(message: Any) -> Any:
    inner = getattr(message, "message", None)
    root = getattr(inner, "root", inner)
    return root


class _InFlight:
    """The ids of the requests being handled or waiting for their reply to be written."""

    def __init__(self, limit: int) -> None:
        self.slots = anyio.Semaphore(limit)
        self.pending: set[Any] = set()
        self.freed = anyio.Event()  # set when a slot is freed (a new one is made after each wait)

    def take(self, request_id: Any) -> bool:
        """Take a slot for ``request_id`` if one is free."""
        try:
            self.slots.acquire_nowait()
        except anyio.WouldBlock:
            return False
        self.pending.add(request_id)
        return True

    def done(self, request_id: Any) -> None:
        """The request was answered (or cancelled: the SDK never answers a cancelled request)."""
        if request_id in self.pending:
            self.pending.discard(request_id)
            self.slots.release()
            self.freed.set()

    async def wait_freed(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until a slot is freed."""
        with anyio.move_on_after(timeout):
            await self.freed.wait()
        if self.freed.is_set():
            self.freed = anyio.Event()


def _is_request(item: Any) -> bool:
    root = _root(item)
    return getattr(root, "method", None) is not None and getattr(root, "id", None) is not None


def _cancelled_id(item: Any) -> Any:
    root = _root(item)
    if (
        getattr(root, "method", None) != "notifications/cancelled"
        or getattr(root, "id", None) is not None
    ):
        return None
    params = getattr(root, "params", None)
    return params.get("requestId") if isinstance(params, dict) else None


class BoundedReceive:
    """The transport's read stream, handing a request on only when a slot is free.

    While the next request waits for a slot, up to :data:`LOOKAHEAD` further messages are read
    ahead: notifications and the client's replies go on at once (a ``notifications/cancelled``
    frees its request's slot, since a cancelled request is never answered), requests wait in
    order. Beyond that nothing is read, so a client that sends and never reads is blocked.
    A line the SDK refused only for its lone surrogates is read anyway (:mod:`.inbound`)."""

    def __init__(self, inner: Any, inflight: _InFlight, replies: Any = None) -> None:
        self._inner = inner
        self._inflight = inflight
        self._replies = replies  # where a refused request's error is written (the write stream)
        self._buffer: list[Any] = []
        self._ended = False

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item (the SDK restores it for the handler)."""
        return getattr(self._inner, "last_context", None)

    async def _pass_on(self, item: Any) -> Any:
        cancelled = _cancelled_id(item)
        if cancelled is not None:
            self._inflight.done(cancelled)
        refused = invalid_request_reply(item)
        if refused is not None and self._replies is not None:  # answered, never left to hang
            await self._replies.send(refused)
        return item

    async def receive(self) -> Any:
        """The next message; a request waits for a free slot first."""
        while True:
            for index, item in enumerate(self._buffer):
                if not _is_request(item):
                    return await self._pass_on(self._buffer.pop(index))
            if self._buffer and self._inflight.take(_root(self._buffer[0]).id):
                return self._buffer.pop(0)
            if not self._buffer:
                if self._ended:
                    raise anyio.EndOfStream
                item = repaired(await self._inner.receive())
                if not _is_request(item):
                    return await self._pass_on(item)
                self._buffer.append(item)
                continue
            if self._ended or len(self._buffer) >= LOOKAHEAD:
                await self._inflight.wait_freed(POLL_SECONDS)  # a reply written frees a slot
                continue
            with anyio.move_on_after(POLL_SECONDS):  # a memory stream's receive is safe to cancel
                try:
                    self._buffer.append(repaired(await self._inner.receive()))
                except anyio.EndOfStream:
                    self._ended = True

    def __aiter__(self) -> BoundedReceive:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        """Close the wrapped stream."""
        self._inner.close()

    async def aclose(self) -> None:
        """Close the wrapped stream."""
        await self._inner.aclose()

    async def __aenter__(self) -> BoundedReceive:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class BoundedSend:
    """The transport's write stream: a reply written frees its request's slot."""

    def __init__(self, inner: Any, inflight: _InFlight) -> None:
        self._inner = inner
        self._inflight = inflight

    async def send(self, item: Any) -> None:
        """Write ``item`` (waits while the client does not read); a reply frees its slot."""
        await self._inner.send(item)
        root = _root(item)
        if getattr(root, "method", None) is None and getattr(root, "id", None) is not None:
            self._inflight.done(root.id)

    def close(self) -> None:
        """Close the wrapped stream."""
        self._inner.close()

    async def aclose(self) -> None:
        """Close the wrapped stream."""
        await self._inner.aclose()

    async def __aenter__(self) -> BoundedSend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def bounded_streams(
    read_stream: Any, write_stream: Any, limit: int = MAX_IN_FLIGHT
) -> tuple[Any, Any]:
    """The transport's (read, write) streams with at most ``limit`` requests in flight."""
    inflight = _InFlight(limit)
    send = BoundedSend(write_stream, inflight)
    return BoundedReceive(read_stream, inflight, send), send
