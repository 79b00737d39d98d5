"""What a model is shown of a recorded session message or title (``session_search``).

Every piece of recorded text passes the one threat scan of the past
(:func:`hermes_store.threats.guard_past`): a flagged message reaches the model as a
``[BLOCKED: …]`` notice while the stored text stays as it was.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_store.sessions.calltext import TERMINAL_ESCAPES
from hermes_store.sessions.importers.base import cap_title
from hermes_store.sessions.refs import message_ref
from hermes_store.threats import guard_past, is_past_notice

__all__ = ["ANSI", "shown_message", "shown_title", "tool_calls", "without_escapes"]

ANSI = TERMINAL_ESCAPES


def without_escapes(text: str) -> str:
    """``text`` without terminal escape sequences (:data:`ANSI`) and without any ESC left over
    (a sequence a search excerpt cut or marked inside)."""
    return ANSI.sub("", text).replace("\x1b", "")


def shown_message(row: dict[str, Any], cap: int, *, anchor: bool = False) -> dict[str, Any]:
    """A message as the tool shows it, content ANSI-stripped, capped at ``cap`` characters and
    scanned (``threats.guard_past``: a flagged message is a ``[BLOCKED: …]`` notice)."""
    content = ANSI.sub("", row.get("content") or "")
    out: dict[str, Any] = {"id": row["id"], "role": row["role"]}  # keys in Hermes' _shape_message order
    shown = guard_past(content[:cap], f"session message #{row['id']}", also=content)
    flagged = is_past_notice(shown)  # the model sees the notice, never the text
    cut = not flagged and len(content) > cap
    out["content"] = shown + "…" if cut else shown
    if row.get("timestamp") is not None:  # Hermes drops a None value (content excepted)
        out["timestamp"] = row["timestamp"]
    for key in ("tool_name", "tool_calls", "tool_call_id"):
        if row.get(key):
            out[key] = tool_calls(row[key]) if key == "tool_calls" else row[key]
    if anchor:
        out["anchor"] = True
    if cut:
        out.update(content_truncated=True, original_content_chars=len(content))
    if flagged:
        out["flagged"] = True
    if row.get("session_id") is not None and row.get("seq") is not None:
        out["ref"] = message_ref(row["session_id"], row["seq"])  # SESSION_ID#N, accepted back
    return out


def shown_title(row: dict[str, Any]) -> str:
    """A session's title as a model may see it: without terminal escapes, capped (a title stored
    before the cap, or by hand, included) and scanned whole (a flagged one is a notice)."""
    title = row.get("title")
    shown = without_escapes(title) if isinstance(title, str) else title
    return guard_past(cap_title(shown), f"title of session {row.get('id')}", also=title)


def tool_calls(value: Any) -> Any:
    """``tool_calls`` as Hermes returns them: the decoded list of call objects (text that is not
    JSON stays as it is)."""
    if not isinstance(value, str):
        return value
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    return decoded if isinstance(decoded, (list, dict)) else value
