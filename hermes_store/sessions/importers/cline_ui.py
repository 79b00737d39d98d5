"""A Cline / Roo Code task's ``ui_messages.json`` read as the conversation itself.

Used when a task folder has no ``api_conversation_history.json`` (deleted, or a
folder copied without it): the panel's entries ``[{ts, type: "say" | "ask",
say | ask, text}]`` are what the user saw, and they are read into rows:

* ``say: task`` (or the ``say: text`` entry opening the panel: how Cline and Roo Code
  write the task) and ``say: user_feedback``: the user's words;
* ``say: text`` and ``completion_result`` (say or ask), ``ask: followup``
  (its ``question``): the assistant's words;
* ``say: reasoning``: ``reasoning``;
* ``ask``/``say: tool`` (JSON ``{"tool", "path", ..., "content"}``): a tool call
  whose arguments are the JSON without ``content``, then its result (the
  ``content``, empty when there is none);
* ``ask: command``: an ``execute_command`` call; the following ``say:
  command_output`` lines are its result;
* ``ask``/``say: use_mcp_server`` (JSON ``ClineAskUseMcpServer``: ``{serverName, type:
  use_mcp_tool | access_mcp_resource, toolName?, arguments? (JSON text), uri?, response?}``):
  a call of the MCP tool (``access_mcp_resource`` for a resource), answered by its
  ``response`` or by the ``say: mcp_server_response`` entries that follow;
* ``say: error``, ``api_req_failed``, ``mistake_limit_reached``: ``system`` rows.

Bookkeeping entries (``api_req_started``, ``mcp_server_request_started``, checkpoints,
``partial`` updates) are skipped.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_store.sessions.importers.base import MessageRecord, Problem, parse_timestamp
from hermes_store.sessions.importers.doc_common import dumps, tool_call

USER_SAYS = {"task", "user_feedback"}
ASSISTANT_SAYS = {"text", "completion_result"}
SYSTEM_SAYS = {"error", "api_req_failed", "mistake_limit_reached", "diff_error"}


def is_ui_entry(entry: Any) -> bool:
    """True for one ``{ts, type: say|ask, say|ask}`` panel entry."""
    return (isinstance(entry, dict) and entry.get("type") in ("say", "ask") and "ts" in entry
            and isinstance(entry.get(entry.get("type")), str))


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _json(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _mcp_rows(text: str, call_id: str, session_id: str,
              stamp: float | None) -> tuple[str, MessageRecord, MessageRecord | None]:
    """A ``use_mcp_server`` entry: the tool's name, the call, and its result when the entry holds
    its ``response``."""
    spec = _json(text) or {}
    resource = spec.get("type") == "access_mcp_resource"
    name = str(spec.get("toolName") or ("access_mcp_resource" if resource else "use_mcp_tool"))
    raw = spec.get("arguments")
    decoded = _json(raw) if isinstance(raw, str) else raw if isinstance(raw, dict) else None
    arguments: dict[str, Any] = {"server": spec.get("serverName")} if spec.get("serverName") else {}
    if resource and spec.get("uri"):
        arguments["uri"] = spec["uri"]
    if decoded is not None:
        arguments.update(decoded)
    elif isinstance(raw, str) and raw.strip():
        arguments["arguments"] = raw
    call = MessageRecord(session_id, "assistant", "", timestamp=stamp,
                         tool_calls=dumps([tool_call(call_id, name, arguments)]))
    response = spec.get("response")
    result = MessageRecord(session_id, "tool", response, tool_name=name, tool_call_id=call_id,
                           timestamp=stamp) if isinstance(response, str) and response.strip() else None
    return name, call, result


def is_task_entry(entries: list[Any], index: int) -> bool:
    """The task itself: a ``say: task`` entry, or the ``say: text`` entry that opens the panel
    (Cline's and Roo Code's ``startTask`` write the task with ``say("text", task, images)``)."""
    entry = entries[index] if 0 <= index < len(entries) else None
    if not is_ui_entry(entry) or entry.get("type") != "say":
        return False
    return entry.get("say") == "task" or (index == 0 and entry.get("say") == "text")


def ui_rows(entries: list[Any], session_id: str, problems: list[Problem]) -> list[MessageRecord]:
    """The rows of a task's panel entries (see the module docstring)."""
    rows: list[MessageRecord] = []
    pending_command: str | None = None
    pending_mcp: tuple[str, str] | None = None  # (call id, tool name) awaiting mcp_server_response
    for index, entry in enumerate(entries):
        if not is_ui_entry(entry):
            problems.append(Problem(None, f"[{index}]: expected a {{ts, type, say|ask}} entry (skipped)"))
            continue
        if entry.get("partial"):
            continue  # a streaming update; the complete entry follows
        kind = entry[entry["type"]]
        if is_task_entry(entries, index):
            kind = "task"
        text = entry.get("text") if isinstance(entry.get("text"), str) else ""
        stamp = _stamp(entry.get("ts"))
        call_id = f"ui-{index}"
        if kind == "command_output" and pending_command is not None:
            rows.append(MessageRecord(session_id, "tool", text, tool_name="execute_command",
                                      tool_call_id=pending_command, timestamp=stamp))
            continue
        pending_command = None
        if kind == "mcp_server_response":
            if pending_mcp is not None:
                rows.append(MessageRecord(session_id, "tool", text, tool_name=pending_mcp[1],
                                          tool_call_id=pending_mcp[0], timestamp=stamp))
                pending_mcp = None
            continue
        if kind == "use_mcp_server" and text.strip():
            name, call, result = _mcp_rows(text, call_id, session_id, stamp)
            rows.extend([call, result] if result is not None else [call])
            pending_mcp = (call_id, name) if result is None else None
            continue
        if kind in USER_SAYS and entry["type"] == "say":
            images = entry.get("images")
            marker = "\n[image]" * len(images) if isinstance(images, list) else ""
            rows.append(MessageRecord(session_id, "user", text + marker, timestamp=stamp))
        elif kind in ASSISTANT_SAYS:
            if text.strip():
                rows.append(MessageRecord(session_id, "assistant", text, timestamp=stamp))
        elif kind == "reasoning":
            if text.strip():
                rows.append(MessageRecord(session_id, "reasoning", text, timestamp=stamp))
        elif kind == "followup":
            question = (_json(text) or {}).get("question", text)
            rows.append(MessageRecord(session_id, "assistant", str(question), timestamp=stamp))
        elif kind in ("tool", "command") and not text.strip():
            continue  # an ask the panel never filled in: nothing to record
        elif kind == "tool":
            spec = _json(text) or {"text": text}
            name = str(spec.get("tool") or "tool")
            arguments = {k: v for k, v in spec.items() if k not in ("tool", "content")}
            rows.append(MessageRecord(session_id, "assistant", "", timestamp=stamp,
                                      tool_calls=dumps([tool_call(call_id, name, arguments)])))
            result = spec.get("content")
            rows.append(MessageRecord(session_id, "tool", result if isinstance(result, str) else
                                      (dumps(result) if result is not None else ""),
                                      tool_name=name, tool_call_id=call_id, timestamp=stamp))
        elif kind == "command":
            rows.append(MessageRecord(session_id, "assistant", "", timestamp=stamp, tool_calls=dumps(
                [tool_call(call_id, "execute_command", {"command": text})])))
            pending_command = call_id
        elif kind in SYSTEM_SAYS:
            rows.append(MessageRecord(session_id, "system", text, timestamp=stamp))
    return rows
