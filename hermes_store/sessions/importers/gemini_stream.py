"""``gemini-stream``: what Gemini CLI's headless mode prints, saved to a file.

``gemini -p "..." --output-format stream-json`` prints one event per line (JSONL), each with
an ISO ``timestamp`` (google-gemini/gemini-cli ``packages/core/src/output/types.ts``):

* ``{"type": "init", session_id, model}``: the session (its id is the one Gemini CLI records
  the run under in ``~/.gemini/tmp``) and the model asked for (possibly an ``auto-*`` alias);
* ``{"type": "message", role: "user" | "assistant", content, delta?}``: the prompt as typed,
  then the model's reply as many ``delta: true`` chunks, joined here into one message per turn
  (the time the first chunk's);
* ``{"type": "tool_use", tool_name, tool_id, parameters}``: a call of the turn, stored on its
  assistant message as ``gemini-cli`` stores calls;
* ``{"type": "tool_result", tool_id, status, output?, error?: {type, message}}``: a ``tool``
  row (a failed call keeps its error text);
* ``{"type": "error", severity: "warning" | "error", message}``: a ``system`` row;
* ``{"type": "result", status, error?, stats?}``: the end of the run, its stats in the
  session's meta (a fatal error as a ``system`` row).

``gemini -p "..." --output-format json`` prints one pretty-printed document instead:
``{session_id?, response?, stats?, error?: {type, message, code?}, warnings?}`` (``session_id``
since December 2025). It carries no prompt and no times: the reply is an ``assistant`` row,
warnings and the error ``system`` rows, the stats (Gemini CLI's ``SessionMetrics``) in meta.

The session is the ``session_id``, else the file's name. A run resumed with ``--resume`` and
appended to the same file adds to its session. The file is read whole when it changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
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
    flatten_content,
    opt_str,
    safe_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    dumps,
    json_objects,
    load_document,
    shape_guarded,
    tool_call,
)

_EVENTS = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})
_DOC_KEYS = frozenset({"session_id", "response", "stats", "error", "warnings"})


def _is_gemini_event(obj: dict[str, Any]) -> bool:
    """An event of the shape only Gemini CLI's stream writes (Factory Droid's ``message`` has
    ``text``, Goose's wraps a ``message``, Claude Code's and Amp's are ``user``/``assistant``)."""
    kind = obj.get("type")
    if kind == "init":
        return isinstance(obj.get("session_id"), str) and "model" in obj
    if kind == "message":
        return (obj.get("role") in ("user", "assistant") and isinstance(obj.get("content"), str)
                and "message" not in obj and "text" not in obj)
    if kind == "tool_use":
        return "tool_name" in obj and "tool_id" in obj and "parameters" in obj
    if kind == "tool_result":
        return "tool_id" in obj and obj.get("status") in ("success", "error")
    if kind == "error":
        return obj.get("severity") in ("warning", "error") and "message" in obj
    if kind == "result":
        return obj.get("status") in ("success", "error")
    return False


def is_headless_document(doc: Any) -> bool:
    """A ``--output-format json`` document: a reply with Gemini CLI's ``SessionMetrics`` stats,
    or a session's error alone."""
    if not isinstance(doc, dict) or not doc or not set(doc) <= _DOC_KEYS:
        return False
    stats, error = doc.get("stats"), doc.get("error")
    if isinstance(stats, dict) and isinstance(stats.get("models"), dict) and isinstance(stats.get("tools"), dict):
        return isinstance(doc.get("response"), str) or isinstance(error, dict)
    return (isinstance(doc.get("session_id"), str) and isinstance(error, dict)
            and "type" in error and "message" in error)


def _is_document(head: Head) -> bool:
    """The file is one document (the ``json`` output), not a stream of events."""
    doc = head.document()
    if isinstance(doc, dict):
        return "type" not in doc  # a stream of a single line is one event
    first = head.data.lstrip().split(b"\n", 1)[0].strip()
    return first == b"{"  # pretty-printed, too large for the probe to parse


def _model_tokens(entry: Any) -> int:
    """A model's total tokens: ``total_tokens`` in the stream's stats, ``tokens.total`` in
    ``SessionMetrics``."""
    if not isinstance(entry, dict):
        return 0
    value = entry.get("total_tokens")
    if value is None and isinstance(entry.get("tokens"), dict):
        value = entry["tokens"].get("total")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _busiest_model(models: Any) -> str | None:
    """The model that did the run's work: the one with the ``main`` role, else the most tokens."""
    if not isinstance(models, dict) or not models:
        return None
    for name, entry in models.items():
        if isinstance(entry, dict) and isinstance(entry.get("roles"), dict) and "main" in entry["roles"]:
            return str(name)
    return str(max(models, key=lambda name: _model_tokens(models[name])))


def _error_row(error: Any) -> str | None:
    """``[<type>] <message>`` of a run's ``error`` (``{type, message, code?}``, or a bare string)."""
    if isinstance(error, dict):
        message = opt_str(error.get("message"))
        return f"[{opt_str(error.get('type')) or 'error'}] {message}" if message else None
    message = opt_str(error) if isinstance(error, str) else None
    return f"[error] {message}" if message else None


def _tool_text(obj: dict[str, Any]) -> str:
    """A ``tool_result``'s text: its output, or for a failed call the error (with the output
    when that says more)."""
    output = obj.get("output")
    if output is not None and not isinstance(output, str):
        output = flatten_content(output) or dumps(output)
    error = obj.get("error")
    message = opt_str(error.get("message")) if isinstance(error, dict) else opt_str(error)
    if message:
        shown = (output or "").strip()
        if shown and shown.rstrip(".") not in message:
            return f"{message}\n{shown}"
        return message
    if output:
        return output
    status = opt_str(obj.get("status"))
    return f"[{status}]" if status else ""


@dataclass
class _Run:
    """What the stream says about one session, its rows, and the assistant turn being read."""

    record: SessionRecord
    rows: list[MessageRecord] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # tool id -> tool name
    turn: MessageRecord | None = None  # the open assistant turn
    pieces: list[str] = field(default_factory=list)  # its text chunks
    calls: list[dict[str, Any]] = field(default_factory=list)  # its tool calls

    def close(self) -> None:
        """End the open assistant turn: its chunks joined, its calls stored."""
        if self.turn is not None:
            self.turn.content = "".join(self.pieces)
            if self.calls:
                self.turn.tool_calls = dumps(self.calls)
            self.turn, self.pieces, self.calls = None, [], []

    def open(self, stamp: float | None, line: int) -> MessageRecord:
        """The open assistant turn, started when there is none."""
        if self.turn is None:
            self.turn = MessageRecord(self.record.id, "assistant", "", timestamp=stamp, line=line)
            self.rows.append(self.turn)
        return self.turn


class GeminiStreamImporter(ReplacedWhenChanged, Importer):
    """A saved ``gemini -p --output-format stream-json`` run (or ``--output-format json``)."""

    name = "gemini-stream"
    agent = "Gemini CLI (gemini -p --output-format stream-json)"
    indexes = ("prompts, replies joined from their deltas, tool calls and results (errors too), warnings "
               "and errors, run stats; the --output-format json document's reply")
    source: str | None = "gemini-cli"
    resumable_by_offset = False
    snapshot = True

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Stream events, each timed, of Gemini CLI's shapes: opened by its ``init`` (at most half
        the probed lines of types added since), or (a stream cut from a longer one, at most a fifth
        of other types) holding a call, result or reply chunk of that shape; or one
        ``--output-format json`` document."""
        if head.is_sqlite:
            return 0.0
        if _is_document(head):
            return 0.9 if is_headless_document(head.document()) else 0.0
        objects = head.objects()
        if not objects or not all(isinstance(o.get("type"), str) and isinstance(o.get("timestamp"), str)
                                  for o in objects):
            return 0.0
        known = [o for o in objects if _is_gemini_event(o)]
        if objects[0]["type"] == "init" and _is_gemini_event(objects[0]):
            return 0.95 if len(known) * 2 >= len(objects) else 0.0
        if len(known) * 5 < len(objects) * 4:
            return 0.0
        telling = any(o["type"] in ("tool_use", "tool_result") or o.get("delta") is True for o in known)
        return 0.85 if telling else 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        head = self.head if self.head is not None and self.head.path == self.path else Head.read(self.path)
        self.head = head
        if _is_document(head):
            yield from self._read_document()
        else:
            yield from self._read_stream()
        yield Checkpoint(str(self.path.stat().st_size), 0)

    def _read_stream(self) -> Iterator[Event]:
        runs: dict[str, _Run] = {}
        problems: list[Problem] = []
        reported: set[str] = set()
        current = self.path.stem
        for line, obj in json_objects(self.path, self.hasher, problems):
            kind = obj.get("type")
            if kind == "init":
                current = opt_str(obj.get("session_id")) or current
            run = runs.get(current)
            if run is None:
                run = runs[current] = _Run(SessionRecord(id=current, source=self.source,
                                                         meta={"output_format": "stream-json"}))
            stamp = safe_timestamp(obj.get("timestamp"), line, problems)
            if stamp is not None and run.record.started_at is None:
                run.record.started_at = stamp
            handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
            if handler is None:
                if str(kind) not in reported:
                    reported.add(str(kind))
                    problems.append(Problem(line, f"unknown event type {kind!r} (skipped; reported once per file)"))
                continue
            handler(run, obj, stamp, line, problems)
        for run in runs.values():
            run.close()
            yield replace(run.record)  # built anew: the caps of SessionRecord apply
            yield from (r for r in run.rows if r.content or r.tool_calls or r.role == "tool")
        yield from problems

    def _read_document(self) -> Iterator[Event]:
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if doc is None:
            return
        if not isinstance(doc, dict):
            yield Problem(1, "expected the --output-format json object")
            return
        session_id = opt_str(doc.get("session_id")) or self.path.stem
        stats = doc.get("stats")
        meta: dict[str, Any] = {"output_format": "json"}
        if isinstance(stats, dict):
            meta["stats"] = stats
        yield SessionRecord(id=session_id, source=self.source,
                            model=_busiest_model(stats.get("models")) if isinstance(stats, dict) else None,
                            meta=meta)
        response = doc.get("response")
        if isinstance(response, str) and response:
            yield MessageRecord(session_id, "assistant", response, line=1)
        warnings = doc.get("warnings")
        for warning in warnings if isinstance(warnings, list) else []:
            if opt_str(warning):
                yield MessageRecord(session_id, "system", f"[warning] {warning}", line=1)
        error = _error_row(doc.get("error"))
        if error:
            yield MessageRecord(session_id, "system", error, line=1)


def _init(run: _Run, obj: dict[str, Any], stamp: float | None, line: int, problems: list[Problem]) -> None:
    run.close()
    run.record.model = opt_str(obj.get("model")) or run.record.model


def _message(run: _Run, obj: dict[str, Any], stamp: float | None, line: int, problems: list[Problem]) -> None:
    role = obj.get("role")
    content = obj.get("content")
    text = content if isinstance(content, str) else flatten_content(content)
    if role == "assistant":
        if obj.get("delta") is not True:
            run.close()  # a whole message: its own turn (its calls may follow)
        run.open(stamp, line)
        run.pieces.append(text)
    elif role == "user":
        run.close()
        if text:
            run.rows.append(MessageRecord(run.record.id, "user", text, timestamp=stamp, line=line))
    else:
        problems.append(Problem(line, f"message of unknown role {role!r} (skipped)"))


def _tool_use(run: _Run, obj: dict[str, Any], stamp: float | None, line: int, problems: list[Problem]) -> None:
    run.open(stamp, line)
    call_id = opt_str(obj.get("tool_id"))
    name = opt_str(obj.get("tool_name")) or ""
    run.calls.append(tool_call(call_id, name, obj.get("parameters")))
    if call_id:
        run.names[call_id] = name


def _tool_result(run: _Run, obj: dict[str, Any], stamp: float | None, line: int, problems: list[Problem]) -> None:
    run.close()
    call_id = opt_str(obj.get("tool_id"))
    run.rows.append(MessageRecord(run.record.id, "tool", _tool_text(obj), tool_name=run.names.get(call_id or ""),
                                  tool_call_id=call_id, timestamp=stamp, line=line))


def _error(run: _Run, obj: dict[str, Any], stamp: float | None, line: int, problems: list[Problem]) -> None:
    text = opt_str(obj.get("message"))
    if text:  # a warning mid-reply follows the reply (the open turn's row is already placed)
        severity = opt_str(obj.get("severity")) or "error"
        run.rows.append(MessageRecord(run.record.id, "system", f"[{severity}] {text}", timestamp=stamp, line=line))


def _result(run: _Run, obj: dict[str, Any], stamp: float | None, line: int, problems: list[Problem]) -> None:
    run.close()
    record = run.record
    record.ended_at = stamp or record.ended_at
    if opt_str(obj.get("status")):
        record.meta["status"] = obj["status"]
    stats = obj.get("stats")
    if isinstance(stats, dict):
        record.meta["stats"] = stats
        if (record.model or "").startswith("auto"):  # an alias (auto-gemini-2.5): the model that answered
            record.meta["requested_model"] = record.model
            record.model = _busiest_model(stats.get("models")) or record.model
    error = _error_row(obj.get("error"))
    if error:
        run.rows.append(MessageRecord(record.id, "system", error, timestamp=stamp, line=line))


_HANDLERS = {
    "init": _init,
    "message": _message,
    "tool_use": _tool_use,
    "tool_result": _tool_result,
    "error": _error,
    "result": _result,
}
