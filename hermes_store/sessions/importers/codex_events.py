"""Tool calls a Codex rollout keeps only as ``event_msg`` records.

Codex persists a few ``*_end`` events beside the ``response_item`` records (openai/codex
``codex-rs/rollout/src/policy.rs``, ``should_persist_event_msg``): ``patch_apply_end``,
``mcp_tool_call_end``, ``web_search_end``, ``image_generation_end``. For a call the model made
directly they repeat a ``function_call`` / ``custom_tool_call`` / ``web_search_call`` /
``image_generation_call`` item with the same call id, which is what is stored. Since the unified
``exec`` tool (code mode, 0.144+), the model's script calls ``tools.apply_patch``, MCP tools and
web search itself: those nested calls have no item of their own (their call ids, ``exec-…``, name
no item), so the event is the only record of the file edit, the MCP result or the search. Such an
event is stored as the call it records (an ``assistant`` row calling ``apply_patch`` with the
changed paths, ``mcp__<server>__<tool>`` with its arguments, ``web_search`` with its action, or
``image_generation`` with its prompt) and its ``tool`` result.

:class:`~.openai_common.ToolNames` keeps the calls met so far (the read's items and events, and
the newest of earlier reads, in the file's state), so an event repeating an item -- or an item
repeating an event already stored, which a web search's may -- is stored once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_store.sessions.importers.base import MessageRecord, flatten_content, opt_str
from hermes_store.sessions.importers.codex_exec_legacy import change_kind, mcp_result
from hermes_store.sessions.importers.doc_common import dumps, tool_call
from hermes_store.sessions.importers.openai_common import ToolNames


def _patch(event: dict[str, Any]) -> tuple[str, Any, str]:
    changes = event.get("changes") if isinstance(event.get("changes"), dict) else {}
    listed = [{"path": path, "kind": change_kind(change)} for path, change in changes.items()]
    lines = [f"{c['kind']} {c['path']}" for c in listed]
    output = "\n".join(t for t in (opt_str(event.get("stdout")), opt_str(event.get("stderr"))) if t)
    if event.get("success") is False or event.get("status") == "failed":
        lines.append("[patch failed]")
    return "apply_patch", {"changes": listed}, "\n".join(t for t in (output.rstrip("\n"), *lines) if t)


def _mcp(event: dict[str, Any]) -> tuple[str, Any, str]:
    invocation = event.get("invocation") if isinstance(event.get("invocation"), dict) else {}
    result = event.get("result")
    if isinstance(result, dict) and ("Ok" in result or "Err" in result):
        text = mcp_result(result.get("Ok"), result.get("Err"))
    else:
        text = mcp_result(result, event.get("error"))
    return f"mcp__{invocation.get('server')}__{invocation.get('tool')}", invocation.get("arguments"), text


def _search(event: dict[str, Any]) -> tuple[str, Any, str]:
    arguments = {k: event[k] for k in ("query", "action") if event.get(k)}
    hits = []
    for hit in event.get("results") if isinstance(event.get("results"), list) else []:
        if isinstance(hit, dict):
            hits.append(" ".join(str(hit[k]) for k in ("title", "url", "snippet") if hit.get(k))
                        or flatten_content(hit))
        elif hit is not None:
            hits.append(flatten_content(hit))
    return "web_search", arguments, "\n".join(h for h in hits if h)


def _image(event: dict[str, Any]) -> tuple[str, Any, str]:
    arguments = {k: event[k] for k in ("revised_prompt", "prompt") if event.get(k)}
    saved = opt_str(event.get("saved_path"))
    status = opt_str(event.get("status"))
    return "image_generation", arguments, saved or (f"[{status}]" if status else "")  # never the image's bytes


# event type -> (tool name, arguments, result text) of the call it records
END_EVENTS: dict[str, Callable[[dict[str, Any]], tuple[str, Any, str]]] = {
    "patch_apply_end": _patch,
    "mcp_tool_call_end": _mcp,
    "web_search_end": _search,
    "image_generation_end": _image,
}


def end_event_rows(event: dict[str, Any], session_id: str, timestamp: float | None, line: int,
                   tools: ToolNames) -> list[MessageRecord]:
    """The call and result rows of an ``*_end`` event whose call no stored item or event holds."""
    call_id = opt_str(event.get("call_id"))
    if tools.lookup(call_id) is not None:
        return []  # the call's item (or this event, read before) is stored already
    name, arguments, result = END_EVENTS[str(event.get("type"))](event)
    call = tool_call(call_id, name, arguments)
    tools.remember([call])
    return [MessageRecord(session_id, "assistant", "", tool_calls=dumps([call]), timestamp=timestamp, line=line),
            MessageRecord(session_id, "tool", result, tool_name=name, tool_call_id=call_id, timestamp=timestamp,
                          line=line)]
