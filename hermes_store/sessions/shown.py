"""What a model is shown of a recorded session message or title (``session_search``).

Every piece of recorded text passes the one threat scan of the past
(:func:`hermes_store.threats.guard_past`): a flagged message reaches the model as a
``[BLOCKED: …]`` notice while the stored text stays as it was.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_store.sessions.calltext import TERMINAL_ESCAPES
from hermes_store.sessions.importers.base import MAX_LABEL_CHARS, cap_chars, cap_title
from hermes_store.sessions.refs import message_ref
from hermes_store.threats import guard_past, is_past_notice

__all__ = ["ANSI", "SHOWN_HEAD_CHARS", "shown_calls", "shown_message", "shown_title", "tool_calls", "without_escapes"]

ANSI = TERMINAL_ESCAPES
#: characters of a message's content and calls a reader of capped messages needs
#: (:func:`shown_message` at any cap up to it, and the part beyond the cap the scan reads)
SHOWN_HEAD_CHARS = 16_384


def without_escapes(text: str) -> str:
    """``text`` without terminal escape sequences (:data:`ANSI`) and without any ESC left over
    (a sequence a search excerpt cut or marked inside)."""
    return ANSI.sub("", text).replace("\x1b", "")


def shown_message(row: dict[str, Any], cap: int, *, anchor: bool = False) -> dict[str, Any]:
    """A message as the tool shows it, content ANSI-stripped, capped at ``cap`` characters and
    scanned (``threats.guard_past``: a flagged message is a ``[BLOCKED: …]`` notice).

    A row read with a ``head`` (``content_chars`` / ``tool_calls_chars``: the whole lengths,
    the texts cut in the database; :data:`SHOWN_HEAD_CHARS` is enough) is shown and scanned the
    same as the whole row; a cut text's ``original_content_chars`` is its stored length."""
    raw = row.get("content") or ""
    content = ANSI.sub("", raw)
    full_chars = row.get("content_chars") or 0
    out: dict[str, Any] = {"id": row["id"], "role": row["role"]}  # keys in Hermes' _shape_message order
    shown = guard_past(content[:cap], f"session message #{row['id']}", also=content)
    flagged = is_past_notice(shown)  # the model sees the notice, never the text
    cut = not flagged and (len(content) > cap or full_chars > len(raw))
    out["content"] = shown + "…" if cut else shown
    if row.get("timestamp") is not None:  # Hermes drops a None value (content excepted)
        out["timestamp"] = row["timestamp"]
    calls_cut = 0
    if row.get("tool_name"):
        out["tool_name"] = guard_past(cap_chars(row["tool_name"], MAX_LABEL_CHARS),
                                      f"tool name of session message #{row['id']}")
    if row.get("tool_calls"):  # a call's arguments are recorded text like the content: scanned and cut
        calls, calls_flagged, calls_cut = shown_calls(row["tool_calls"], cap,
                                                      f"tool calls of session message #{row['id']}",
                                                      row.get("tool_calls_chars"))
        out["tool_calls"] = calls
        flagged = flagged or calls_flagged
    if row.get("tool_call_id"):
        out["tool_call_id"] = row["tool_call_id"]
    if anchor:
        out["anchor"] = True
    if cut:
        out.update(content_truncated=True,
                   original_content_chars=full_chars if full_chars > len(raw) else len(content))
    if calls_cut and not flagged:
        out.update(tool_calls_truncated=True, original_tool_calls_chars=calls_cut)
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


def shown_calls(value: Any, cap: int, source: str, full_chars: int | None = None) -> tuple[Any, bool, int]:
    """A message's ``tool_calls`` as a model may see them: ``(shown, flagged, full_chars)``.

    Their JSON text is scanned like a message (``threats.guard_past``: flagged, the model sees
    the notice); up to ``cap`` characters they are the decoded calls (:func:`tool_calls`),
    longer ones are their text cut at ``cap`` (``full_chars`` is then the whole text's length),
    so one huge recorded call (a file written in one tool call) never makes a huge reply.
    ``full_chars``: the whole text's length when ``value`` is its head (read with ``head``)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    whole = max(full_chars or 0, len(text))
    shown = guard_past(text[:cap], source, also=text)
    if is_past_notice(shown):
        return shown, True, 0
    if whole <= cap:
        return tool_calls(value), False, 0
    return shown + "…", False, whole


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
