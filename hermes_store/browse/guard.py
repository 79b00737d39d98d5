"""The ASGI guard in front of Datasette: only the store's owner, only on its loopback Host.

``hermes-store browse`` makes a random token per run and hands it to the Datasette child in
its environment (``HERMES_STORE_BROWSE_TOKEN``; a process's environment is readable by its owner
only, its command line by everyone). Every HTTP request must either carry ``?token=TOKEN`` (the
first one: it is then answered with an HttpOnly, SameSite=Strict cookie, and the token is taken out
of the query string before Datasette sees it) or that cookie; anything else gets 403. A request
whose ``Host`` header is not ``127.0.0.1:PORT`` or ``localhost:PORT`` gets 400 whatever it carries,
so a page on another site that re-points its DNS name at 127.0.0.1 (DNS rebinding) is not served.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

TOKEN_ENV = "HERMES_STORE_BROWSE_TOKEN"
PORT_ENV = "HERMES_STORE_BROWSE_PORT"
TOKEN_PARAM = "token"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def new_token() -> str:
    """A fresh per-run token (32 random bytes, URL-safe)."""
    return secrets.token_urlsafe(32)


def cookie_name(port: int) -> str:
    """The cookie's name: cookies are shared by every port of a host, so it names the port."""
    return f"hermes_store_browse_{port}"


def allowed_hosts(port: int) -> frozenset[str]:
    """The ``Host`` header values served: the loopback address and ``localhost`` with the port."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})


def _header(scope: Scope, name: bytes) -> str | None:
    values = [v for k, v in scope.get("headers", ()) if k.lower() == name]
    if len(values) != 1:  # none, or several (an ambiguous request): treated as missing
        return None
    return values[0].decode("latin-1")


def _cookie(scope: Scope, name: str) -> str | None:
    found = None
    for raw in scope.get("headers", ()):
        if raw[0].lower() != b"cookie":
            continue
        for part in raw[1].decode("latin-1").split(";"):
            key, _, value = part.strip().partition("=")
            if key == name:
                found = value
    return found


def _is_token(value: str | None, token: str) -> bool:
    """Whether ``value`` (a query parameter or cookie, any text) is ``token``, in constant time.
    Compared as UTF-8 bytes: ``secrets.compare_digest`` refuses str holding non-ASCII characters
    (``?token=%C3%A9`` raised TypeError, a 500 and a traceback in the browse terminal)."""
    return value is not None and secrets.compare_digest(value.encode("utf-8", "surrogatepass"), token.encode("utf-8"))


async def _refuse(send: Send, status: int, text: str) -> None:
    body = text.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def guard(app: App, token: str, port: int) -> App:
    """Wrap the ASGI ``app`` so only requests with the token (or its cookie) on a loopback Host pass."""
    hosts = allowed_hosts(port)
    name = cookie_name(port)
    set_cookie = f"{name}={token}; HttpOnly; SameSite=Strict; Path=/".encode("latin-1")

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await app(scope, receive, send)
            return
        if scope["type"] != "http":  # Datasette speaks HTTP only: anything else is not answered
            return
        host = _header(scope, b"host")
        if host is None or host.lower() not in hosts:
            await _refuse(
                send,
                400,
                f"hermes-store browse: Host {host!r} is not served "
                f"(only 127.0.0.1:{port} and localhost:{port})\n",
            )
            return
        pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [v for k, v in pairs if k == TOKEN_PARAM]
        cookie = _cookie(scope, name)
        by_token = len(given) == 1 and _is_token(given[0], token)
        if not by_token and not _is_token(cookie, token):
            await _refuse(
                send,
                403,
                "hermes-store browse: open the URL that `hermes-store browse` "
                "printed (it carries this run's token)\n",
            )
            return
        if not by_token:
            await app(scope, receive, send)
            return
        rest = [(k, v) for k, v in pairs if k != TOKEN_PARAM]
        inner = dict(scope, query_string=urlencode(rest).encode("latin-1"))

        async def send_with_cookie(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = dict(
                    message, headers=[*message.get("headers", []), (b"set-cookie", set_cookie)]
                )
            await send(message)

        await app(inner, receive, send_with_cookie)

    return guarded


def from_environment(app: App) -> App:
    """``guard(app)`` with the token and port ``hermes-store browse`` put in the environment.

    Without them every request is refused (a Datasette started with this plugin some other way
    serves nobody)."""
    token = os.environ.get(TOKEN_ENV, "")
    try:
        port = int(os.environ.get(PORT_ENV, ""))
    except ValueError:
        port = -1
    if len(token) < 32 or port <= 0:
        return guard(app, new_token(), -1)  # an unknowable token on an impossible port
    return guard(app, token, port)
