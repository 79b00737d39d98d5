"""A stored session given back whole: every message, tool call and tool result.

``jsonl``: one JSON object per line -- first ``{"type": "session", ...}`` (the session row and
where it came from), then ``{"type": "message", ...}`` per message in ``seq`` order with every
stored field (``tool_calls`` decoded). ``md``: a readable Markdown transcript, tool calls and
results in code fences long enough never to be closed by the text inside.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import timezone
from typing import Any

from hermes_store import timeutil
from hermes_store.sessions.calltext import render_calls
from hermes_store.sessions.provenance import SOURCE_DELETED, source_status
from hermes_store.sessions.rows import SessionNotFound
from hermes_store.sessions.storage import SessionStorage

PAGE = 500  # messages read per query
_TICKS = re.compile(r"`{3,}")


def _when(ts: float | None) -> str:
    moment = timeutil.datetime_of(ts, timezone.utc)
    return "" if ts is None else str(ts) if moment is None else moment.isoformat()


def _messages(storage: SessionStorage, session_id: str) -> Iterator[dict[str, Any]]:
    after: int | None = None
    while True:
        page = storage.get_messages(session_id, after_seq=after, limit=PAGE)
        yield from page
        if len(page) < PAGE:
            return
        after = int(page[-1]["seq"])


def _decoded(value: str | None) -> Any:
    if not value:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return value


def _fence(text: str, lang: str = "") -> str:
    longest = max((len(m.group()) for m in _TICKS.finditer(text)), default=2)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _jsonl(session: dict[str, Any], messages: Iterator[dict[str, Any]]) -> Iterator[str]:
    yield json.dumps({"type": "session", **session}, ensure_ascii=False) + "\n"
    for message in messages:
        row = {"type": "message", **message, "tool_calls": _decoded(message.get("tool_calls"))}
        if row.get("message_uid") is None:  # only messages whose source gave them a uid
            row.pop("message_uid", None)
        yield json.dumps(row, ensure_ascii=False) + "\n"


def _markdown(session: dict[str, Any], messages: Iterator[dict[str, Any]]) -> Iterator[str]:
    yield f"# {session.get('title') or session['id']}\n\n"
    for label in ("id", "source", "origin_format", "model", "workspace", "parent_session_id"):
        if session.get(label):
            yield f"- {label}: {session[label]}\n"
    yield f"- started: {_when(session.get('started_at'))}\n- ended: {_when(session.get('ended_at'))}\n"
    if session.get("source_path"):
        gone = f" ({SOURCE_DELETED})" if session.get("source_deleted") else ""
        yield f"- source file: {session['source_path']}{gone}\n"
    for message in messages:
        head = message["role"] + (f" · {message['tool_name']}" if message.get("tool_name") else "")
        yield f"\n## [{message['seq']}] {head} {_when(message.get('timestamp'))}\n\n"
        content = message.get("content") or ""
        if message["role"] == "tool":
            yield _fence(content) + "\n"
        elif content:
            yield content + "\n"
        for call in render_calls(message.get("tool_calls")):
            yield "\n**tool call**\n\n" + _fence(call) + "\n"


#: export format -> writer of (session, messages) as text pieces
EXPORT_FORMATS: dict[str, Callable[[dict[str, Any], Iterator[dict[str, Any]]], Iterator[str]]] = {
    "jsonl": _jsonl,
    "md": _markdown,
}


def export_session(storage: SessionStorage, session_id: str, fmt: str = "md") -> Iterator[str]:
    """The session as text pieces in ``fmt`` (see :data:`EXPORT_FORMATS`); raises
    :class:`SessionNotFound` or ValueError for an unknown format."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (expected {', '.join(EXPORT_FORMATS)})")
    session = storage.get_session(session_id)
    if session is None:
        raise SessionNotFound(session_id)
    session.update(source_status(storage, [session_id]).get(
        session_id, {"source_path": None, "source_deleted": False}))
    return EXPORT_FORMATS[fmt](session, _messages(storage, session_id))
