"""The row the bulk loader buffers for one message, with the values derived from it.

Built once per message on the parser thread (the writer only binds it): the cleaned fields in
:data:`~hermes_store.sessions.storage.MESSAGE_ROW_FIELDS` order, the CJK projection, the
tool-call text and tool names, and the content without agent boilerplate.
"""

from __future__ import annotations

from typing import Any

from hermes_store.sessions.calltext import call_fields, search_text_of
from hermes_store.sessions.importers.base import MessageRecord
from hermes_store.sessions.rows import scrub
from hermes_store.tokens import message_projection

REDACTED_COLUMNS = (3, 5, 9, 11)  # content, tool_calls, calls and search_text of a pending row
_ROLE, _CONTENT, _CJK = 2, 3, 8
_NO_CALLS = (None, None)  # (calls, tools) of a message without tool calls


def redacted_rows(redactor: Any, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``rows`` with their secrets replaced (:data:`REDACTED_COLUMNS`, one prefilter scan for the
    batch) and the CJK projection of each changed content made again from the redacted text:
    the projection keeps the Latin part glued to CJK (``密钥sk-proj-…``), so one made from the
    text as it came would store the secret the content no longer holds."""
    out = redactor.redact_rows(rows, REDACTED_COLUMNS)
    for index, (row, new) in enumerate(zip(rows, out, strict=True)):
        if new is not row and new[_CJK] is not None and new[_CONTENT] != row[_CONTENT]:
            fixed = list(new)
            fixed[_CJK] = message_projection(fixed[_ROLE], fixed[_CONTENT])
            out[index] = tuple(fixed)
    return out


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
