"""Rows of OpenCode's v2 session messages (the ``session_message`` table of ``opencode.db``).

Newer OpenCode versions record a session as durable events and keep its messages in
``session_message`` (``id, session_id, type, seq, time_created, data``), one row per
message, its content inline instead of in ``part`` rows; a session adopted from the
older ``message``/``part`` tables is copied there too. ``type`` is

* ``user``: ``{text, files?, agents?, references?, time: {created}}``;
* ``synthetic``: injected text ``{text}`` (kept as ``system``: nobody typed it);
* ``shell``: a command the user ran ``{callID, command, output}`` (a ``tool`` row);
* ``assistant``: ``{agent, model: {id, providerID}, content: [...], error?, time}`` whose
  content items are ``text`` (``ignored`` ones left out), ``reasoning`` and ``tool``
  (``{id, name, state: {status, input, content: [{type: "text", text} | {type: "file"}],
  error?}}``);
* ``compaction``: the summary a compaction wrote ``{summary}`` (kept as ``system``);
* ``agent-switched`` / ``model-switched``: bookkeeping, not indexed.
"""

from __future__ import annotations

from typing import Any

from hermes_store.sessions.importers.base import (
    MessageRecord,
    Problem,
    flatten_content,
    opt_str,
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import dumps, tool_call

_BOOKKEEPING = {"agent-switched", "model-switched"}


def _stamp(value: Any) -> float | None:
    if isinstance(value, dict):
        value = value.get("created")
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _attachment(item: Any) -> str:
    """The marker of a file or image attached to a prompt or a tool result."""
    if not isinstance(item, dict):
        return "[file]"
    mime = opt_str(item.get("mime")) or opt_str(item.get("mediaType")) or "file"
    name = opt_str(item.get("filename")) or opt_str(item.get("name")) or opt_str(item.get("path")) \
        or opt_str(item.get("uri")) or opt_str(item.get("url")) or ""
    return f"[{mime} {name}]" if name and not name.startswith("data:") else f"[{mime}]"


def _output_text(content: Any) -> str:
    """Text of a tool state's ``content`` (``{type: "text", text}`` and ``{type: "file"}`` items)."""
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for item in content if isinstance(content, list) else []:
        if isinstance(item, dict) and item.get("type") == "text":
            texts.append(str(item.get("text") or ""))
        elif isinstance(item, dict) and item.get("type") == "file":
            texts.append(_attachment(item))
        elif item is not None:
            texts.append(flatten_content(item))
    return "\n".join(t for t in texts if t)


def _tool_rows(session_id: str, item: dict[str, Any], stamp: float | None) -> tuple[dict[str, Any], MessageRecord]:
    """The call and the result row of an assistant's ``tool`` content item."""
    state = item.get("state") if isinstance(item.get("state"), dict) else {}
    call_id, name = opt_str(item.get("id")), opt_str(item.get("name"))
    status = opt_str(state.get("status"))
    call = tool_call(call_id, name, state.get("input") if state.get("input") not in (None, "") else {})
    text = _output_text(state.get("content"))
    if status == "error":
        error = state.get("error")
        message = opt_str(error.get("message")) if isinstance(error, dict) else opt_str(error)
        text = "\n".join(t for t in (text, message or "[error]") if t)
    for attachment in state.get("attachments") or []:
        text = f"{text}\n{_attachment(attachment)}" if text else _attachment(attachment)
    if not text and status not in ("completed", None):
        text = f"[{status}]"
    times = item.get("time") if isinstance(item.get("time"), dict) else {}
    done = _stamp({"created": times.get("completed")}) if times.get("completed") is not None else None
    return call, MessageRecord(session_id, "tool", text, tool_name=name, tool_call_id=call_id,
                               timestamp=done or stamp)


def v2_message_rows(session_id: str, kind: Any, data: dict[str, Any], where: str,
                    problems: list[Problem]) -> list[MessageRecord]:
    """The rows of one ``session_message`` row of type ``kind`` and JSON ``data``."""
    stamp = _stamp(data.get("time"))
    if kind in _BOOKKEEPING:
        return []
    if kind == "user":
        files = [_attachment(f) for f in data.get("files") or []]
        text = "\n".join(t for t in [str(data.get("text") or ""), *files] if t)
        return [MessageRecord(session_id, "user", text, timestamp=stamp)] if text else []
    if kind in ("synthetic", "compaction"):
        text = str(data.get("text" if kind == "synthetic" else "summary") or "")
        return [MessageRecord(session_id, "system", text, timestamp=stamp)] if text else []
    if kind == "shell":
        text = "\n".join(t for t in (f"$ {data.get('command') or ''}", str(data.get("output") or "")) if t)
        return [MessageRecord(session_id, "tool", text, tool_name="shell", tool_call_id=opt_str(data.get("callID")),
                              timestamp=stamp)]
    if kind != "assistant":
        problems.append(Problem(None, f"{where}: unknown message type {kind!r} (skipped)"))
        return []
    rows: list[MessageRecord] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[MessageRecord] = []

    def flush() -> None:
        text = "\n".join(t for t in texts if t)
        if text or calls:
            rows.append(MessageRecord(session_id, "assistant", text, tool_calls=dumps(calls) if calls else None,
                                      timestamp=stamp))
        rows.extend(results)
        texts.clear()
        calls.clear()
        results.clear()

    for index, item in enumerate(data.get("content") or []):
        part = item.get("type") if isinstance(item, dict) else None
        if part == "text":
            if not item.get("ignored"):
                if calls:
                    flush()  # text after a tool call answers its result: a new row
                texts.append(str(item.get("text") or ""))
        elif part == "reasoning":
            flush()
            if opt_str(item.get("text")):
                rows.append(MessageRecord(session_id, "reasoning", str(item["text"]), timestamp=stamp))
        elif part == "tool":
            call, result = _tool_rows(session_id, item, stamp)
            calls.append(call)
            results.append(result)
        else:
            problems.append(Problem(None, f"{where} content[{index}]: unknown content type {part!r} (skipped)"))
    flush()
    error = data.get("error")
    if isinstance(error, dict) and (opt_str(error.get("message")) or opt_str(error.get("name"))):
        rows.append(MessageRecord(session_id, "system",
                                  f"[{error.get('name') or error.get('type') or 'error'}] {error.get('message') or ''}"
                                  .strip(), timestamp=_stamp({"created": (data.get("time") or {}).get("completed")})
                                  or stamp))
    return rows


def v2_model(data: dict[str, Any]) -> str | None:
    """``provider/model`` of an assistant's ``model`` reference."""
    model = data.get("model") if isinstance(data.get("model"), dict) else {}
    name = opt_str(model.get("id")) or opt_str(model.get("modelID"))
    provider = opt_str(model.get("providerID"))
    return f"{provider}/{name}" if provider and name else name
