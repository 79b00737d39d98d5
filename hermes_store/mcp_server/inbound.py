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
message naming its size and id. A line the parser could not read at all (nested too deeply:
"recursion limit exceeded") is answered the same way when its id stands at its start.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
from mcp.shared.message import SessionMessage
from mcp.types.jsonrpc import INVALID_REQUEST
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


def _refused_message(errors: list[Any]) -> dict[str, Any] | None:
    """The request object a refusal was about (the validator's input of a missing-field error
    holds it whole), else None."""
    for error in errors:
        value = error.get("input")
        if isinstance(value, dict) and "method" in value:
            return value
    return None


def _over_cap(errors: list[Any]) -> SessionMessage | None:
    """The "Invalid Request" error for a line the transport did not read for its size (None:
    not such a line, or no id to answer)."""
    for error in errors:
        value = error.get("input")
        if isinstance(value, dict) and isinstance(value.get(OVERSIZE_KEY), dict):
            over = value[OVERSIZE_KEY]
            request_id = over.get("id")
            if isinstance(request_id, bool) or not isinstance(request_id, int | str):
                return None
            detail = (f"request of {over.get('bytes')} bytes not read: over the server's cap of "
                      f"{MAX_REQUEST_BYTES} bytes a message")
            return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id,
                                                     error=types.ErrorData(code=INVALID_REQUEST, message=detail)))
    return None


def _unparsed(errors: list[Any]) -> SessionMessage | None:
    """The "Invalid Request" error for a line that is no JSON the parser could read (nested too
    deeply, cut short) but whose id stands at its start; None when there is no id to answer."""
    if len(errors) != 1 or errors[0].get("type") != "json_invalid" or not isinstance(errors[0].get("input"), str):
        return None
    request_id = transport_request_id(errors[0]["input"][:HEAD_CHARS].encode("utf-8", "replace"))
    if request_id is None:
        return None
    detail = f"request not read: {errors[0].get('msg', 'invalid JSON')}"
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id,
                                             error=types.ErrorData(code=INVALID_REQUEST, message=detail)))


def invalid_request_reply(item: Any) -> SessionMessage | None:
    """For a refused line that is a request with a usable id, the "Invalid Request" error to
    write back (naming the first problem); None for anything else (no id to answer)."""
    if not isinstance(item, ValidationError):
        return None
    errors = item.errors(include_url=False)
    over = _over_cap(errors)
    if over is not None:
        return over
    unparsed = _unparsed(errors)
    if unparsed is not None:
        return unparsed
    message = _refused_message(errors)
    request_id = message.get("id") if message is not None else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    problems = [e for e in errors if e.get("loc")[:1] == ("JSONRPCRequest",)] or errors
    where = ".".join(str(part) for part in problems[0].get("loc", ())[1:]) or "message"
    detail = f"not a JSON-RPC 2.0 request: {where}: {problems[0].get('msg', 'invalid')}"
    error = types.JSONRPCError(jsonrpc="2.0", id=request_id,
                               error=types.ErrorData(code=INVALID_REQUEST, message=detail))
    return SessionMessage(error)
