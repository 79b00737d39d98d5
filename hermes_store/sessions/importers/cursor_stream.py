"""``cursor-stream``: what ``cursor-agent -p --output-format stream-json`` prints, saved to a file.

Cursor's Agent CLI (``cursor-agent``, also installed as ``agent``) prints one event per line,
each naming the chat as ``session_id``. Its ``system``/``user``/``assistant``/``result`` events
copy Claude Code's stream-json, so they are read by amp-stream's reader; the rest is Cursor's own:

* ``{"type": "system", "subtype": "init", apiKeySource, cwd, session_id, model, permissionMode}``
  (``model`` is a display name such as ``"Claude 4.5 Sonnet"`` or ``"Auto"``; no ``tools``,
  ``uuid`` or ``claude_code_version`` as Claude Code's init has);
* ``{"type": "user" | "assistant", message: {role, content: [{type: "text", text}]},
  session_id}``: no ``uuid``, no ``parent_tool_use_id``. An assistant message before tool calls
  carries ``model_call_id`` (shared by the calls it made) and ``timestamp_ms``. With
  ``--stream-partial-output`` an assistant event with ``timestamp_ms`` and no ``model_call_id``
  is a piece of text (appended to the message being built) and the other assistant events of
  that run repeat what the pieces said (skipped);
* ``{"type": "thinking", "subtype": "delta", text, timestamp_ms}`` pieces of the model's thinking
  up to ``{"type": "thinking", "subtype": "completed"}``: one ``reasoning`` row;
* ``{"type": "tool_call", "subtype": "started" | "completed", call_id, tool_call:
  {"<kind>ToolCall": {args, result?}, ...}, model_call_id}``: ``readToolCall``,
  ``writeToolCall``, ``shellToolCall``, ``mcpToolCall`` ... (or ``function: {name, arguments}``).
  A call is stored once, on the assistant message of its ``model_call_id`` (else the message
  just before it, else an empty assistant message), named after its kind (``read``, ``shell``;
  an MCP call after the MCP tool); ``result.success`` is the ``tool`` row (its ``content``, or a
  shell's ``stdout``/``stderr`` and exit code, else the object as JSON); ``result.error`` and
  ``result.rejected`` are kept as ``[error] ...`` / ``[rejected] ...``;
* ``{"type": "result", subtype, is_error, duration_ms, result, session_id, request_id, usage}``:
  ``result`` is every assistant text of the run run together, kept only when no message said it
  (as in ``--output-format json``, whose whole output is that one object);
* ``interaction_query`` (a question the CLI asks and answers itself) is bookkeeping.

The stream has no session title; the file is read whole. Read from Cursor's output-format
reference (cursor.com/docs/cli/reference/output-format) and real runs quoted by third-party
Cursor CLI wrappers (thinking and tool events of CLI 2026.01-2026.10).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from hermes_store.sessions.importers.amp_stream import AmpStreamImporter, StreamRun
from hermes_store.sessions.importers.base import (
    Head,
    MessageRecord,
    Problem,
    flatten_content,
    opt_str,
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import dumps, tool_call

_EVENTS = {"system", "user", "assistant", "result", "thinking", "tool_call", "interaction_query"}
_SPACE = re.compile(r"\s+")


def is_cursor_event(obj: dict[str, Any]) -> bool:
    """A line only Cursor's stream has (other agents' stream-json never writes it)."""
    kind = obj.get("type")
    if kind == "tool_call":
        return isinstance(obj.get("tool_call"), dict) and "call_id" in obj
    if kind == "thinking":
        return obj.get("subtype") in ("delta", "completed")
    if kind in ("user", "assistant") and "model_call_id" in obj:
        return True
    if kind == "system" and obj.get("subtype") == "init":
        return "apiKeySource" in obj and not {"tools", "uuid", "claude_code_version", "qwen_code_version"} & obj.keys()
    return kind == "result" and "request_id" in obj and not {"num_turns", "uuid", "total_cost_usd"} & obj.keys()


@dataclass
class _CursorRun(StreamRun):
    """Cursor's stream state beside amp-stream's: thinking and text pieces, calls by id."""

    thinking: list[str] = field(default_factory=list)
    thinking_line: int = 0
    thinking_stamp: float | None = None
    pieces: MessageRecord | None = None  # the message --stream-partial-output is building
    partial: bool = False  # this run printed pieces: its whole-message assistant events repeat them
    by_model_call: dict[tuple[str, str], MessageRecord] = field(default_factory=dict)
    started: dict[str, MessageRecord] = field(default_factory=dict)  # call id -> its assistant row
    answered: set[str] = field(default_factory=set)
    turn_start: int = 0  # index in ``rows`` where the current run's rows begin


def _tool(tool: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """``(name, body)`` of a ``tool_call`` object: its ``<kind>ToolCall`` key, or ``function``."""
    for key, body in tool.items():
        if key.endswith("ToolCall") and isinstance(body, dict):
            name = key[: -len("ToolCall")] or key
            args = body.get("args")
            if name == "mcp" and isinstance(args, dict):
                name = opt_str(args.get("name")) or opt_str(args.get("toolName")) or name
            return name, body
    function = tool.get("function")
    if isinstance(function, dict):
        return opt_str(function.get("name")) or "function", {"args": function.get("arguments")}
    return None


def _arguments(args: Any) -> Any:
    """A call's ``args`` without its ``toolCallId`` (the call id again)."""
    if isinstance(args, dict):
        return {k: v for k, v in args.items() if k != "toolCallId"}
    return args if args is not None else {}


def _result_text(result: Any) -> str:
    """The text of a completed call's ``result`` (``success``, ``error`` or ``rejected``)."""
    if not isinstance(result, dict):
        return "" if result is None else flatten_content(result)
    if "success" in result:
        success = result["success"]
        if not isinstance(success, dict):
            return flatten_content(success)
        if success.get("content") is not None:
            return flatten_content(success["content"])
        if "stdout" in success or "stderr" in success:
            text = "\n".join(str(success[k]).rstrip("\n") for k in ("stdout", "stderr") if opt_str(success.get(k)))
            code = success.get("exitCode")
            return f"{text}\n[exit code {code}]".lstrip("\n") if code not in (None, 0) else text
        return dumps(success)
    for outcome in ("error", "rejected", "failure"):
        if outcome in result:
            value = result[outcome]
            if isinstance(value, dict):
                value = value.get("error") or value.get("message") or value.get("reason") or dumps(value)
            return f"[{outcome}] {flatten_content(value)}".rstrip()
    return dumps(result)


def _normal(text: str) -> str:
    """``text`` without whitespace (the run's result joins its messages without a separator)."""
    return _SPACE.sub("", text)


class CursorStreamImporter(AmpStreamImporter):
    """A saved ``cursor-agent -p --output-format stream-json`` (or ``json``) run."""

    name = "cursor-stream"
    agent = "Cursor Agent CLI (cursor-agent -p --output-format stream-json)"
    indexes = ("messages (partial output joined), thinking, tool calls with arguments and their results, "
               "the run's result when no message said it, errors")
    source = "cursor"
    quiet_events: ClassVar[frozenset[str]] = frozenset({"interaction_query"})

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Events of Cursor's stream naming a ``session_id``, at least one of a kind only Cursor
        prints (``tool_call``, ``thinking``, an init with ``apiKeySource`` and no ``tools``/``uuid``,
        a ``model_call_id``, a ``result`` with ``request_id`` and no ``num_turns``)."""
        if head.is_sqlite:
            return 0.0
        objects = head.objects()
        if not objects or not all(isinstance(o.get("session_id"), str) and o["session_id"]
                                  and not o["session_id"].startswith("T-") for o in objects):
            return 0.0
        if not any(is_cursor_event(o) for o in objects):
            return 0.0
        known = sum(o.get("type") in _EVENTS for o in objects)
        if known * 5 < len(objects) * 4:
            return 0.0
        first = objects[0]
        return 0.97 if first.get("type") == "system" and first.get("subtype") == "init" else 0.9

    @staticmethod
    def _run(run: StreamRun) -> _CursorRun:
        """``run`` as made by :meth:`new_run`."""
        return cast(_CursorRun, run)

    def new_run(self) -> StreamRun:
        """Cursor's run state (see :class:`_CursorRun`)."""
        return _CursorRun(self.path.stem, self.source)

    def event(self, run: StreamRun, obj: dict[str, Any], line: int) -> None:
        """Thinking pieces and tool calls here; the events Claude Code's stream has too, there."""
        state = self._run(run)
        kind = obj.get("type")
        if kind != "thinking" or obj.get("subtype") != "delta":
            self._end_thinking(state)
        if not (kind == "assistant" and self._is_piece(obj)):
            state.pieces = None
        if kind == "thinking":
            if obj.get("subtype") == "delta":
                if not state.thinking:
                    state.thinking_line, state.thinking_stamp = line, self._stamp(obj, line, state)
                state.thinking.append(str(obj.get("text") or ""))
            elif obj.get("subtype") != "completed":
                state.problems.append(Problem(line, f"thinking event {obj.get('subtype')!r} (skipped)"))
            return
        if kind == "tool_call":
            self._tool_call(state, obj, line)
            return
        if kind == "user" or (kind == "system" and obj.get("subtype") == "init"):
            state.partial = False
            state.turn_start = len(state.rows)
        super().event(run, obj, line)

    def message_event(self, run: StreamRun, obj: dict[str, Any], line: int) -> None:
        """A whole message (read as Claude Code's), or a piece of one (``--stream-partial-output``)."""
        state = self._run(run)
        if obj.get("type") == "assistant":
            if self._is_piece(obj):
                self._piece(state, obj, line)
                return
            if state.partial:
                return  # the whole message again, after its pieces
        before = len(state.rows)
        super().message_event(run, obj, line)
        model_call = opt_str(obj.get("model_call_id"))
        stamp = self._stamp(obj, line, state) if "timestamp_ms" in obj else None
        for row in state.rows[before:]:
            row.timestamp = row.timestamp if row.timestamp is not None else stamp
            if model_call and row.role == "assistant":
                state.by_model_call[(state.thread, model_call)] = row

    def result_rows(self, run: StreamRun, obj: dict[str, Any], line: int) -> list[MessageRecord]:
        """An error as amp-stream keeps it; ``result`` only when this run's messages did not say it."""
        state = self._run(run)
        state.partial = False
        if obj.get("is_error") or str(obj.get("subtype") or "").startswith("error"):
            return super().result_rows(run, obj, line)
        text = opt_str(obj.get("result"))
        said = [r.content for r in state.rows[state.turn_start:]
                if r.session_id == state.thread and r.role == "assistant" and r.content]
        out = [] if not text or _normal(text) in (_normal("".join(said)), _normal(said[-1]) if said else "") \
            else [MessageRecord(state.thread, "assistant", text, line=line)]
        state.turn_start = len(state.rows) + len(out)  # a run continued without a user event
        return out

    def finish(self, run: StreamRun) -> None:
        """Thinking still being pieced together when the stream ended is kept."""
        self._end_thinking(self._run(run))

    # ----------------------------------------------------------------- Cursor's own events

    @staticmethod
    def _is_piece(obj: dict[str, Any]) -> bool:
        """A ``--stream-partial-output`` piece: ``timestamp_ms`` and no ``model_call_id``."""
        return "timestamp_ms" in obj and "model_call_id" not in obj

    def _piece(self, state: _CursorRun, obj: dict[str, Any], line: int) -> None:
        message = obj.get("message")
        if not isinstance(message, dict):
            state.problems.append(Problem(line, "field 'message': missing or not an object"))
            return
        state.partial = True
        text = flatten_content(message.get("content")) if isinstance(message.get("content"), list) \
            else str(message.get("content") or "")
        if state.pieces is None:
            state.pieces = MessageRecord(state.thread, "assistant", "", line=line,
                                         timestamp=self._stamp(obj, line, state))
            state.rows.append(state.pieces)
        state.pieces.content += text

    def _end_thinking(self, state: _CursorRun) -> None:
        text = "".join(state.thinking)
        if text.strip():
            state.rows.append(MessageRecord(state.thread, "reasoning", text, line=state.thinking_line,
                                            timestamp=state.thinking_stamp))
        state.thinking = []

    @staticmethod
    def _stamp(obj: dict[str, Any], line: int, state: _CursorRun) -> float | None:
        try:
            return parse_timestamp(obj.get("timestamp_ms"))
        except ValueError as exc:
            state.problems.append(Problem(line, f"field 'timestamp_ms': {exc}"))
            return None

    def _tool_call(self, state: _CursorRun, obj: dict[str, Any], line: int) -> None:
        state.main()
        tool = obj.get("tool_call")
        found = _tool(tool) if isinstance(tool, dict) else None
        if found is None:
            state.problems.append(Problem(line, "tool_call without a '<kind>ToolCall' or 'function' object (skipped)"))
            return
        name, body = found
        call_id = opt_str(obj.get("call_id")) or f"{state.thread}:line-{line}"
        subtype = obj.get("subtype")
        if subtype not in ("started", "completed"):
            state.problems.append(Problem(line, f"tool_call event {subtype!r} (skipped)"))
            return
        if call_id not in state.started:
            self._start(state, obj, call_id, name, body, line)
        if subtype == "completed" and call_id not in state.answered:
            state.answered.add(call_id)
            state.rows.append(MessageRecord(state.thread, "tool", _result_text(body.get("result")),
                                            tool_name=name, tool_call_id=call_id, line=line,
                                            timestamp=self._stamp(obj, line, state)))

    def _start(self, state: _CursorRun, obj: dict[str, Any], call_id: str, name: str,
               body: dict[str, Any], line: int) -> None:
        """The call, on the assistant message that made it (else a new empty one)."""
        model_call = opt_str(obj.get("model_call_id"))
        row = state.by_model_call.get((state.thread, model_call)) if model_call else None
        if row is None and state.rows and state.rows[-1].role == "assistant" \
                and state.rows[-1].session_id == state.thread:
            row = state.rows[-1]
        if row is None:
            row = MessageRecord(state.thread, "assistant", "", line=line, timestamp=self._stamp(obj, line, state))
            state.rows.append(row)
        if model_call:
            state.by_model_call.setdefault((state.thread, model_call), row)
        state.calls.setdefault(id(row), []).append(tool_call(call_id, name, _arguments(body.get("args"))))
        state.started[call_id] = row
