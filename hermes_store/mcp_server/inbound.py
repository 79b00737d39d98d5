"""Messages the SDK's JSON parser refuses only for lone UTF-16 surrogates, read anyway.

A JSON text may escape half of a surrogate pair (``"\\ud83d"``): JavaScript's
``JSON.stringify`` writes one for a string cut between the two halves of an emoji, so an MCP
client in Node can send it. The SDK's parser (pydantic) refuses such a line and its stdio
transport hands the server an exception instead of the message, which the server drops: the
client never gets an answer and its tool call hangs until its own timeout. :func:`repaired`
reads such a message with Python's ``json`` module, each lone surrogate replaced by U+FFFD (as
every tool argument is: :func:`hermes_store.tooling.valid_text`); anything else the SDK refused
goes on as it was.

A request the SDK refuses for its shape (``"jsonrpc": "1.0"``, ``"params": []``, no
``"jsonrpc"``, a method that is not a string) was dropped the same way, so its call hung too:
:func:`invalid_request_reply` is the JSON-RPC "Invalid Request" error the server now writes for
it, under the request's own id, naming what was wrong; so does a request line over the
transport's cap (:mod:`hermes_store.mcp_server.transport`), which reaches the server as a small
message naming its size and id. A line the parser cannot read (not JSON, cut short, nested too
deeply: "recursion limit exceeded") gets JSON-RPC's "Parse error", under its id when the id
stands at its start and a null id otherwise, and a message of the wrong shape whose id cannot
be read (an array, a number, a request whose id is not a string or integer) gets "Invalid
Request" under a null id, as JSON-RPC 2.0 asks (found with a raw client: such lines got no
reply, so the client could not tell it was refused, and its call hung). A blank line and a
refused *reply* of the client's (``result`` / ``error``, no ``method``) are never answered.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import INVALID_REQUEST, PARSE_ERROR
from pydantic import ValidationError

from hermes_store.mcp_server.transport import MAX_REQUEST_BYTES, OVERSIZE_KEY
from hermes_store.mcp_server.transport import request_id as transport_request_id
from hermes_store.tooling import valid_text

HEAD_CHARS = 64 * 1024  # where a refused line's id is looked for (before its params)


def _clean(value: Any) -> Any:
    """``value`` (parsed JSON) with every string's lone surrogates replaced by U+FFFD."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, dict):
        return {valid_text(key): _clean(item) for key, item in value.items()}
    return value


def repaired(item: Any) -> Any:
    """``item`` from the transport's read stream; a parse failure whose text is JSON that only
    holds lone surrogates becomes the message it carries."""
    if not isinstance(item, ValidationError):
        return item
    errors = item.errors(include_url=False)
    text = errors[0].get("input") if len(errors) == 1 and errors[0].get("type") == "json_invalid" else None
    if not isinstance(text, str) or "\\u" not in text:
        return item
    try:
        message = types.jsonrpc_message_adapter.validate_python(_clean(json.loads(text)), by_name=False)
    except (ValueError, RecursionError):  # not JSON, or not a message once read: as the SDK said
        return item
    return SessionMessage(message)


_WHOLE = {"missing", "model_type"}  # errors whose input is the message itself


def _refused_message(errors: list[Any]) -> Any:
    """The message a shape refusal was about (a missing field's or a wrong type's input holds it
    whole), else None."""
    for error in errors:
        if error.get("type") in _WHOLE and len(error.get("loc", ())) <= 2:
            return error.get("input")
    return None


def _error(request_id: int | str | None, code: int, detail: str) -> SessionMessage:
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id,
                                             error=types.ErrorData(code=code, message=detail)))


def _parse_error(text: Any, reason: str) -> SessionMessage | None:
    """JSON-RPC's "Parse error" for a line the parser could not read, under the id found at its
    start (else a null id); None for a blank line."""
    if not isinstance(text, str) or not text.strip():
        return None
    request_id = transport_request_id(text[:HEAD_CHARS].encode("utf-8", "replace"))
    return _error(request_id, PARSE_ERROR, f"request not read: {reason}")


def _over_cap(errors: list[Any]) -> SessionMessage | None:
    """The "Invalid Request" error for a line the transport did not read for its size (under a
    null id where its id could not be read); None for any other line."""
    for error in errors:
        value = error.get("input")
        if isinstance(value, dict) and isinstance(value.get(OVERSIZE_KEY), dict):
            over = value[OVERSIZE_KEY]
            request_id = over.get("id")
            if isinstance(request_id, bool) or not isinstance(request_id, int | str):
                request_id = None  # answered under a null id, as JSON-RPC asks
            return _error(request_id, INVALID_REQUEST,
                          f"request of {over.get('bytes')} bytes not read: over the server's cap of "
                          f"{MAX_REQUEST_BYTES} bytes a message")
    return None


def invalid_request_reply(item: Any) -> SessionMessage | None:
    """For a refused line, the error to write back: "Parse error" for one that is not JSON,
    "Invalid Request" (naming the first problem) for a message of the wrong shape, under its id
    when it has a usable one and a null id otherwise; None for what is not answered (a blank
    line, a refused reply of the client's)."""
    if not isinstance(item, ValidationError):
        return None
    errors = item.errors(include_url=False)
    over = _over_cap(errors)
    if over is not None:
        return over
    if len(errors) == 1 and errors[0].get("type") == "json_invalid":
        return _parse_error(errors[0].get("input"), errors[0].get("msg", "invalid JSON"))
    message = _refused_message(errors)
    if isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
        return None  # a reply of the client's: never answered
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    problems = [e for e in errors if e.get("loc")[:1] == ("JSONRPCRequest",)] or errors
    where = ".".join(str(part) for part in problems[0].get("loc", ())[1:]) or "message"
    return _error(request_id, INVALID_REQUEST,
                  f"not a JSON-RPC 2.0 request: {where}: {problems[0].get('msg', 'invalid')}")
