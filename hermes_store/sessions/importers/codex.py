"""``codex``: OpenAI Codex CLI rollouts ``~/.codex/sessions/**/rollout-*.jsonl``.

Current files wrap every record as ``{"timestamp", "type", "payload"}`` with
types ``session_meta`` (id, cwd, originator), ``response_item`` (``message``,
``function_call``, ``function_call_output``, ``custom_tool_call``,
``local_shell_call``, ``reasoning``), ``turn_context`` (cwd, model),
``event_msg`` (UI duplicates, skipped) and ``compacted``. Older files put the
items at the top level after a first ``{"id", "timestamp", "instructions"}`` line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from hermes_store.sessions.importers.base import (
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    flatten_content,
    json_text,
    opt_str,
    read_jsonl,
    safe_timestamp,
)
from hermes_store.sessions.importers.openai_common import ToolNames

_UUID_TAIL = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$", re.I)
ENVELOPE_TYPES = {"session_meta", "response_item", "turn_context", "event_msg", "compacted"}
ITEM_TYPES = {"message", "function_call", "function_call_output", "custom_tool_call",
              "custom_tool_call_output", "local_shell_call", "reasoning", "web_search_call"}


class CodexImporter(Importer):
    """Codex rollout JSONL (current envelope format and the older flat format)."""

    name = "codex"
    agent = "OpenAI Codex CLI / Desktop"
    default_locations = {"linux": ("~/.codex/sessions/**/rollout-*.jsonl",
                                   "~/.codex/archived_sessions/**/rollout-*.jsonl"),
                         "darwin": ("~/.codex/sessions/**/rollout-*.jsonl",
                                    "~/.codex/archived_sessions/**/rollout-*.jsonl")}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """``{"timestamp", "type", "payload"}`` envelopes, or the older flat rollout first line."""
        objects = head.objects()
        if not objects:
            return 0.0
        for obj in objects:
            if obj.get("type") in ENVELOPE_TYPES and isinstance(obj.get("payload"), dict):
                return 0.95
        first = objects[0]
        if "id" in first and "instructions" in first and "timestamp" in first:
            return 0.9 if head.path.name.startswith("rollout-") else 0.7
        if head.path.name.startswith("rollout-") and first.get("record_type"):
            return 0.8
        return 0.0

    def default_session_id(self) -> str:
        match = _UUID_TAIL.search(self.path.stem)
        return match.group(1) if match else self.path.stem

    def read(self, state: SourceState) -> Iterator[Event]:
        tools = ToolNames()
        session_id = state.meta.get("session_id") or self.default_session_id()
        context: dict[str, Any] = {"session_id": session_id, "announced": bool(state.resume_at)}

        def announce(**fields: Any) -> SessionRecord:
            context["announced"] = True
            return SessionRecord(id=context["session_id"], **fields)

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            problems: list[Problem] = []
            timestamp = safe_timestamp(obj.get("timestamp"), line, problems)
            kind = obj.get("type")
            payload = obj.get("payload") if isinstance(obj.get("payload"), dict) else None
            if kind == "session_meta" or (line == 1 and "id" in obj and kind is None):
                meta = payload if payload is not None else obj
                native = opt_str(meta.get("id"))
                if native and not context["announced"]:
                    context["session_id"] = native
                    state.meta["session_id"] = native
                extra = {k: meta[k] for k in ("originator", "cli_version", "git") if meta.get(k)}
                if meta.get("source"):
                    extra["codex_source"] = meta["source"]
                yield announce(
                    source="codex",
                    workspace=opt_str(meta.get("cwd")),
                    started_at=safe_timestamp(meta.get("timestamp"), line, problems) or timestamp,
                    meta=extra,
                )
            elif kind == "turn_context" and payload is not None:
                yield announce(model=opt_str(payload.get("model")),
                               workspace=opt_str(payload.get("cwd")))
            elif kind == "response_item" and payload is not None:
                if not context["announced"]:
                    yield announce(source="codex")
                yield from _item_events(payload, context["session_id"], timestamp, line, tools)
            elif kind in ITEM_TYPES and payload is None:
                if not context["announced"]:
                    yield announce(source="codex")
                yield from _item_events(obj, context["session_id"], timestamp, line, tools)
            elif kind == "compacted" and payload is not None:
                text = opt_str(payload.get("message"))
                if text:
                    yield MessageRecord(context["session_id"], "system", text,
                                        timestamp=timestamp, line=line)
            yield from problems

        yield from read_jsonl(self, state, handle)


def _item_events(item: dict[str, Any], session_id: str, timestamp: float | None,
                 line: int, tools: ToolNames) -> Iterator[Event]:
    kind = item.get("type")
    if kind == "message":
        role = opt_str(item.get("role")) or "user"
        yield MessageRecord(session_id, role, flatten_content(item.get("content")),
                            timestamp=timestamp, line=line)
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        call_id = opt_str(item.get("call_id")) or opt_str(item.get("id"))
        name = opt_str(item.get("name")) or ("shell" if kind == "local_shell_call" else kind)
        arguments = item.get("arguments", item.get("input", item.get("action")))
        call = {"id": call_id, "type": "function",
                "function": {"name": name, "arguments": json_text(arguments) or ""}}
        tools.remember([call])
        yield MessageRecord(session_id, "assistant", "",
                            tool_calls=json.dumps([call], ensure_ascii=False),
                            timestamp=timestamp, line=line)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        call_id = opt_str(item.get("call_id"))
        yield MessageRecord(session_id, "tool", _output_text(item.get("output")),
                            tool_name=tools.lookup(call_id), tool_call_id=call_id,
                            timestamp=timestamp, line=line)
    # reasoning items are encrypted or summaries: not indexed (like Hermes' reasoning columns)


def _output_text(output: Any) -> str:
    """Codex stores tool output as text or as JSON text ``{"output": ..., "metadata": ...}``."""
    if isinstance(output, str):
        stripped = output.lstrip()
        if stripped.startswith("{"):
            try:
                decoded = json.loads(stripped)
            except (ValueError, RecursionError):
                return output
            if isinstance(decoded, dict) and "output" in decoded:
                return flatten_content(decoded["output"])
        return output
    return flatten_content(output)
