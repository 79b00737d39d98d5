"""``grok-stream``: what ``grok -p --output-format streaming-json`` (xAI's Grok CLI) prints, saved.

One event per line, tagged by ``type``:

* ``{"type": "thought", "data"}`` / ``{"type": "text", "data"}``: the model's thinking and reply,
  one event per token: adjacent events of one type are joined (thinking a ``reasoning`` row);
* ``{"type": "tool_call", toolCallId, toolName, rawInput}``: a call (an ``assistant`` row holding
  the reply text before it); ``use_tool`` (how Grok starts an MCP tool found by ``search_tool``)
  is named by ``rawInput.tool_name`` (``<server>__<tool>``) with ``rawInput.tool_input`` as its
  arguments, and a ``toolName`` that is a title (``Web search:``) by ``rawInput.variant``;
* ``{"type": "tool_call_update", toolCallId, status, rawOutput}``: several per call; the one with
  ``status`` ``completed`` / ``failed`` / ``error`` holds the output, a ``tool`` row: an MCP
  result's ``output.OkayOutput``, a shell run's ``output_for_prompt`` (its non-zero
  ``exit_code`` noted), a read's ``FileContent.content``, anything else as JSON;
* ``{"type": "error", message | error: {message}}``: a ``system`` row;
* ``{"type": "end", stopReason, num_turns, modelUsage}``: the run's end (kept in the session's
  meta, the model named by ``modelUsage``); ``available_commands`` and ``usage`` are bookkeeping.

The prompt is not in the stream and the stream names no session: the session is the file's
name, read whole again when the file changes. Read from a third-party evaluation harness's
parser of real Grok CLI transcripts ("These names come from true transcripts").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    opt_str,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    dumps,
    json_objects,
    shape_guarded,
    tool_call,
)

_DELTAS = {"thought": "reasoning", "text": "assistant"}
_BOOKKEEPING = {"available_commands", "usage"}
_EVENTS = {*_DELTAS, *_BOOKKEEPING, "tool_call", "tool_call_update", "error", "end"}
_DONE = {"completed": "", "failed": "[failed] ", "error": "[failed] "}


def _call_name(name: str, raw: dict[str, Any]) -> tuple[str, Any]:
    """(tool name, arguments) of a ``tool_call`` event."""
    if name == "use_tool" and opt_str(raw.get("tool_name")):
        return str(raw["tool_name"]), raw.get("tool_input") if isinstance(raw.get("tool_input"), dict) else {}
    if not name.isidentifier() and opt_str(raw.get("variant")):
        return str(raw["variant"]), raw
    return name or "tool", raw


def _output(raw: Any) -> str:
    """The text a call's final ``rawOutput`` gave the model."""
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, dict):
        return "" if raw is None else dumps(raw)
    kind = raw.get("type")
    if kind == "MCP":
        output = raw.get("output")
        value = output.get("OkayOutput", output) if isinstance(output, dict) else output
        return value if isinstance(value, str) else dumps(value)
    if kind == "Bash" and isinstance(raw.get("output_for_prompt"), str):
        code = raw.get("exit_code")
        return raw["output_for_prompt"] + (f"\n[exit code {code}]" if isinstance(code, int) and code else "")
    if kind == "ReadFile" and isinstance(raw.get("FileContent"), dict):
        return str(raw["FileContent"].get("content") or "")
    return dumps(raw)


class GrokStreamImporter(ReplacedWhenChanged, Importer):
    """A saved ``grok -p --output-format streaming-json`` run."""

    name = "grok-stream"
    agent = "Grok CLI (grok -p --output-format streaming-json)"
    indexes = "replies and thinking joined from their deltas, tool calls with arguments and their results, errors"
    source: str | None = "grok"
    resumable_by_offset = False
    snapshot = True

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Only Grok's stream events, at least one a ``text`` / ``thought`` delta (``data`` text) or a
        ``tool_call`` with ``toolCallId`` and ``rawInput``."""
        if head.is_sqlite:
            return 0.0
        objects = head.objects()
        if not objects or not all(o.get("type") in _EVENTS for o in objects):
            return 0.0
        if any("sessionID" in o or "session_id" in o or "timestamp" in o for o in objects):
            return 0.0  # other agents' streams with event names alike (opencode run, gemini -p)
        deltas = [o for o in objects if o.get("type") in _DELTAS]
        calls = [o for o in objects if o.get("type") == "tool_call"]
        if not all(isinstance(o.get("data"), str) for o in deltas) or not all(
                "toolCallId" in o and isinstance(o.get("rawInput"), dict) for o in calls):
            return 0.0
        if not deltas and not calls:
            return 0.0
        return 0.9 if any(o.get("type") in ("available_commands", "end") for o in objects) else 0.8

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        session_id = self.path.stem
        meta: dict[str, Any] = {}
        model = None
        rows: list[MessageRecord] = []
        problems: list[Problem] = []
        names: dict[str, str] = {}
        buffer: list[str] = []
        kind_open, line_open = "", 0
        reported: set[str] = set()

        def flush(keep_text: bool = False) -> str:
            """Close the joined deltas; the reply text is returned instead when ``keep_text``."""
            nonlocal kind_open
            text = "".join(buffer).strip()
            buffer.clear()
            role, kind_open = _DELTAS.get(kind_open), ""
            if text and role and not (keep_text and role == "assistant"):
                rows.append(MessageRecord(session_id, role, text, line=line_open))
                return ""
            return text if role == "assistant" else ""

        for line, obj in json_objects(self.path, self.hasher, problems):
            kind = str(obj.get("type"))
            if kind in _DELTAS:
                if kind != kind_open:
                    flush()
                    kind_open, line_open = kind, line
                buffer.append(str(obj.get("data") or ""))
            elif kind == "tool_call":
                said = flush(keep_text=True)
                raw = obj.get("rawInput") if isinstance(obj.get("rawInput"), dict) else {}
                name, arguments = _call_name(str(obj.get("toolName") or ""), raw)
                call_id = opt_str(obj.get("toolCallId"))
                names[call_id or ""] = name
                rows.append(MessageRecord(session_id, "assistant", said, line=line,
                                          tool_calls=dumps([tool_call(call_id, name, arguments)])))
            elif kind == "tool_call_update":
                status = opt_str(obj.get("status")) or ""
                if status in _DONE:
                    flush()
                    call_id = opt_str(obj.get("toolCallId"))
                    text = _DONE[status] + _output(obj.get("rawOutput"))
                    rows.append(MessageRecord(session_id, "tool", text.rstrip() if _DONE[status] else text,
                                              tool_name=names.get(call_id or ""), tool_call_id=call_id, line=line))
            elif kind == "error":
                flush()
                error = obj.get("error")
                text = opt_str(obj.get("message")) or (opt_str(error.get("message")) if isinstance(error, dict)
                                                       else opt_str(error)) or dumps(obj)
                rows.append(MessageRecord(session_id, "system", f"[error] {text}", line=line))
            elif kind == "end":
                flush()
                meta.update({k: obj[k] for k in ("stopReason", "num_turns") if obj.get(k) is not None})
                usage = obj.get("modelUsage")
                model = next(iter(usage), None) if isinstance(usage, dict) and usage else model
            elif kind not in _BOOKKEEPING and kind not in reported:
                reported.add(kind)
                problems.append(Problem(line, f"unknown event type {kind!r} (skipped; reported once per file)"))
        flush()
        yield SessionRecord(id=session_id, source=self.source, model=model, meta=meta)
        yield from rows
        yield from problems
        yield Checkpoint(str(self.path.stat().st_size), 0)
