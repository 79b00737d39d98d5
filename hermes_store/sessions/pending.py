"""The row the bulk loader buffers for one message, with the values derived from it.

Built once per message on the parser thread (the writer only binds it): the cleaned fields in
:data:`~hermes_store.sessions.storage.MESSAGE_ROW_FIELDS` order, the CJK projection, the
tool-call text and tool names, and the content without agent boilerplate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_store.sessions.calltext import call_fields, derived, search_text_of
from hermes_store.sessions.importers.base import MessageRecord
from hermes_store.sessions.rows import scrub
from hermes_store.tokens import message_projection

REDACTED_COLUMNS = (3, 5, 9, 11)  # content, tool_calls, calls and search_text of a pending row
_ROLE, _CONTENT, _TOOL_NAME, _TOOL_CALLS, _CJK, _CALLS, _TOOLS, _SEARCH_TEXT = 2, 3, 4, 5, 8, 9, 10, 11
_NO_CALLS = (None, None)  # (calls, tools) of a message without tool calls


def redacted_rows(redactor: Any, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``rows`` with their secrets replaced (:data:`REDACTED_COLUMNS`, one prefilter scan for the
    batch) and, in each row redaction changed, the values derived from content and tool calls
    made again from the redacted text: the CJK projection keeps the Latin part glued to CJK
    (``密钥sk-proj-…``) and the calls' text keeps argument values without their keys
    (``{"password": "hunter2"}`` gives ``hunter2``, which no rule can tell from a word), so
    values derived from the text as it came would store the secret the text no longer holds."""
    out = redactor.redact_rows(rows, REDACTED_COLUMNS)
    for index, (row, new) in enumerate(zip(rows, out, strict=True)):
        if new is row:
            continue
        fixed = list(new)
        if new[_CONTENT] != row[_CONTENT]:
            fixed[_SEARCH_TEXT] = redactor.redact(search_text_of(fixed[_CONTENT]))
            if new[_CJK] is not None:
                fixed[_CJK] = message_projection(fixed[_ROLE], fixed[_CONTENT])
        if new[_TOOL_CALLS] != row[_TOOL_CALLS]:
            calls, fixed[_TOOLS] = call_fields(fixed[_TOOL_NAME], fixed[_TOOL_CALLS])
            fixed[_CALLS] = redactor.redact(calls)
        out[index] = tuple(fixed)
    return out


def message_deriver(redactor: Any) -> tuple[tuple[str, ...], Callable[[dict[str, Any]], dict[str, Any]]]:
    """What ``hermes-store redact`` makes again in a rewritten message (see
    ``redaction.storage.rewrite_texts``): its projection, call text, tool names and search text,
    from its redacted content and tool calls (for the reason :func:`redacted_rows` gives)."""

    def make(row: dict[str, Any]) -> dict[str, Any]:
        role, content = str(row["role"]), row["content"] or ""
        calls, tools, search_text = derived(role, content, row["tool_name"], row["tool_calls"])
        return {"cjk": message_projection(role, content), "calls": redactor.redact(calls), "tools": tools,
                "search_text": redactor.redact(search_text)}

    return ("role", "content", "tool_name", "tool_calls"), make


def pending_row(session_id: str, seq: int | None, record: MessageRecord, content: str, tool_calls: str | None,
                ascii_only: bool) -> tuple[Any, ...]:
    """A pending message row in ``MESSAGE_ROW_FIELDS`` order (content and tool_calls cleaned)."""
    role = record.role
    tool_name = record.tool_name
    if tool_name is not None and not tool_name.isascii():
        tool_name = scrub(tool_name)
    call_id = record.tool_call_id
    return (
        session_id, seq, role if role.isascii() else scrub(role), content, tool_name, tool_calls,
        call_id if call_id is None or call_id.isascii() else scrub(call_id), record.timestamp,
        None if ascii_only else message_projection(role, content),
        *(call_fields(tool_name, tool_calls, record.tool_calls_value if tool_calls is record.tool_calls else None)
          if tool_name or tool_calls else _NO_CALLS),
        search_text_of(content),
        record.message_uid or None,
    )
