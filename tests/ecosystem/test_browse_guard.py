"""The browse guard (an ASGI wrapper) answering odd requests itself, without Datasette behind it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hermes_store.browse.guard import cookie_name, guard, new_token

PORT = 8123
TOKEN = new_token()


def _call(query: bytes = b"", cookie: bytes | None = None) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """One GET through the guard around an app that answers 200 "inner": (status, headers, body)."""
    sent: list[dict[str, Any]] = []

    async def inner(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"inner"})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message) -> None:
        sent.append(dict(message))

    headers = [(b"host", f"127.0.0.1:{PORT}".encode())]
    if cookie is not None:
        headers.append((b"cookie", cookie))
    scope = {"type": "http", "method": "GET", "path": "/", "query_string": query, "headers": headers}
    asyncio.run(guard(inner, TOKEN, PORT)(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], start.get("headers", []), body



@pytest.mark.parametrize(("query", "cookie"), [
    (b"token=%C3%A9", None),  # a percent-encoded non-ASCII token
    (b"token=\xc3\xa9", None),  # raw bytes in the query string
    (b"", "=".join([cookie_name(PORT), "é"]).encode("utf-8")),  # a non-ASCII cookie value
    (b"token=%ED%A0%80", None),  # not UTF-8 at all (a lone surrogate's bytes)
])
def test_a_non_ascii_token_or_cookie_is_refused_with_403(query: bytes, cookie: bytes | None) -> None:
    """``?token=%C3%A9`` (or such a cookie) used to raise TypeError in secrets.compare_digest:
    the browser got "Internal Server Error" (500) and the browse terminal a traceback."""
    status, headers, body = _call(query, cookie)
    assert status == 403 and b"open the URL" in body
    assert not any(name == b"set-cookie" for name, _ in headers)


def test_the_token_and_its_cookie_still_pass() -> None:
    status, headers, body = _call(b"token=" + TOKEN.encode())
    assert status == 200 and body == b"inner" and any(name == b"set-cookie" for name, _ in headers)
    status, _, body = _call(cookie=f"{cookie_name(PORT)}={TOKEN}".encode())
    assert status == 200 and body == b"inner"
