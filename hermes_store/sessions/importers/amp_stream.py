"""``amp-stream``: what ``amp --execute --stream-json`` prints, saved to a file.

Amp's stream JSON follows Claude Code's stream-json: one event per line, each naming
the thread as ``session_id`` (``T-<uuid>``):

* ``{"type": "system", "subtype": "init", cwd, session_id, tools, mcp_servers}``;
* ``{"type": "user" | "assistant", message: {role, content: [blocks]}, parent_tool_use_id,
  session_id}``: Anthropic blocks (``text``, ``tool_use`` ``{id, name, input}``, in user
  messages ``tool_result`` ``{tool_use_id, content, is_error}``, and ``thinking`` with
  ``--stream-json-thinking``); ``message.model`` when present names the model. A non-null
  ``parent_tool_use_id`` marks a subagent's message: it goes to a child session
  ``<thread>/<tool use id>`` of the thread;
* ``{"type": "result", subtype, duration_ms, is_error, num_turns, result | error, session_id}``:
  the end of a run (``result`` repeats the last reply, kept only when it differs; an error
  is kept as a ``system`` row). ``amp threads continue`` appends more runs of the thread.

The stream has no times; the file is read whole. The same events gathered in one JSON array
(``claude -p --output-format json --verbose``, Qwen Code's ``--output-format json``) are read
the same way by the readers built on this one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from hermes_store.sessions.importers.anthropic_common import anthropic_rows
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
    iter_json_array,
    json_objects,
    shape_guarded,
)
from hermes_store.sessions.importers.openai_common import ToolNames

_EVENTS = {"system", "user", "assistant", "result"}


def _is_thread(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("T-")


def stream_objects(head: Head) -> list[dict[str, Any]]:
    """The probed events: the first JSONL lines, or the first elements of a JSON array (what
    ``--output-format json --verbose`` / Qwen Code's ``--output-format json`` print: the same
    messages, gathered in one array)."""
    objects = head.objects()
    if objects or head.is_sqlite or head.data.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] != b"[":
        return objects
    doc = head.document()
    if isinstance(doc, list) and doc and all(isinstance(o, dict) for o in doc[:8]):
        return doc[:8]
    return []


@dataclass
class StreamRun:
    """What a stream reader has read so far: sessions, rows, problems, the current thread."""

    thread: str
    source: str | None
    records: dict[str, SessionRecord] = field(default_factory=dict)
    rows: list[MessageRecord] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    tools: ToolNames = field(default_factory=ToolNames)
    calls: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # id(row) -> calls added later

    def main(self) -> SessionRecord:
        """The session record of the current thread (created on first use)."""
        record = self.records.get(self.thread)
        if record is None:
            record = self.records[self.thread] = SessionRecord(id=self.thread, source=self.source)
        return record


class AmpStreamImporter(ReplacedWhenChanged, Importer):
    """A saved ``amp --execute --stream-json`` run (Claude Code compatible stream JSON)."""

    name = "amp-stream"
    agent = "Amp (amp --execute --stream-json)"
    indexes = "messages, thinking, tool_use calls and tool_result results, run results and errors; subagents as child sessions"
    source: str | None = "amp"
    resumable_by_offset = False
    snapshot = True
    derives_end_time = False  # the stream has no times
    quiet_events: ClassVar[frozenset[str]] = frozenset()  # event types skipped as bookkeeping
    quiet_system: ClassVar[frozenset[str]] = frozenset({"init"})  # system subtypes skipped so
    init_subtypes: ClassVar[frozenset[str]] = frozenset({"init"})  # system subtypes naming the model

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Stream-json events whose ``session_id`` is an Amp thread id (``T-...``)."""
        if head.is_sqlite:
            return 0.0
        objects = stream_objects(head)
        if not objects or not all(
            o.get("type") in _EVENTS and _is_thread(o.get("session_id")) for o in objects
        ):
            return 0.0
        first = objects[0]
        if first.get("type") == "system" and first.get("subtype") == "init":
            return 0.95
        if any(isinstance(o.get("message"), dict) and "parent_tool_use_id" in o for o in objects):
            return 0.85
        return 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        run = self.new_run()
        for line, obj in self.events(run):
            run.thread = opt_str(obj.get("session_id")) or run.thread
            self.event(run, obj, line)
        self.finish(run)
        for record in run.records.values():
            yield replace(record)  # built anew: the caps of SessionRecord apply
        for row in run.rows:
            calls = run.calls.get(id(row))
            if calls:
                row.tool_calls = dumps(calls)
        yield from run.rows
        yield from run.problems
        yield Checkpoint(str(self.path.stat().st_size), 0)

    def events(self, run: StreamRun) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(line, event)`` of the file: its JSONL lines, or the elements of a JSON array (the
        element's number given as its line); anything else is a problem in ``run``."""
        with open(self.path, "rb") as handle:
            start = handle.read(64).lstrip(b" \t\r\n\xef\xbb\xbf")[:1]
        if start != b"[":
            yield from json_objects(self.path, self.hasher, run.problems)
            return
        for index, obj, problem in iter_json_array(self.path, self.hasher):
            if problem is not None:
                run.problems.append(problem)
            elif not isinstance(obj, dict):
                run.problems.append(Problem(index + 1, "expected a JSON object"))
            else:
                yield index + 1, obj

    def new_run(self) -> StreamRun:
        """The state of one read (readers of similar streams keep more in a subclass)."""
        return StreamRun(self.path.stem, self.source)

    def event(self, run: StreamRun, obj: dict[str, Any], line: int) -> None:
        """Read one event of the stream into ``run`` (readers of similar streams extend it)."""
        main = run.main()
        kind = obj.get("type")
        if kind == "system":
            main.workspace = opt_str(obj.get("cwd")) or main.workspace
            if obj.get("subtype") in self.init_subtypes:
                main.model = opt_str(obj.get("model")) or main.model
            elif obj.get("subtype") is not None and obj.get("subtype") not in self.quiet_system:
                run.problems.append(Problem(line, f"system event {obj.get('subtype')!r} (skipped)"))
        elif kind in self.quiet_events:
            return
        elif kind in ("user", "assistant"):
            self.message_event(run, obj, line)
        elif kind == "result":
            main.meta.update({k: obj[k] for k in ("num_turns", "duration_ms", "subtype") if obj.get(k) is not None})
            run.rows.extend(self.result_rows(run, obj, line))
        else:
            self.other_event(run, obj, line)

    def message_event(self, run: StreamRun, obj: dict[str, Any], line: int) -> None:
        """A ``user`` or ``assistant`` event: its Anthropic message's rows (a subagent's in a child)."""
        if obj.get("isReplay") is True:
            return  # a resumed run repeating a user message it already printed
        message = obj.get("message")
        if not isinstance(message, dict):
            run.problems.append(Problem(line, "field 'message': missing or not an object"))
            return
        parent_use = opt_str(obj.get("parent_tool_use_id"))
        session_id = f"{run.thread}/{parent_use}" if parent_use else run.thread
        if parent_use and session_id not in run.records:
            run.records[session_id] = SessionRecord(
                id=session_id, source=self.source, parent_session_id=run.thread,
                meta={"parent_tool_use_id": parent_use})
        model = opt_str(message.get("model"))
        if obj.get("type") == "assistant" and model and not model.startswith("<"):
            run.records[session_id].model = model
        # a failed request: Claude Code writes this message in the model's place (an
        # ``SDKAssistantMessageError`` in ``error``, model ``<synthetic>``): not the model's words
        synthetic = obj.get("type") == "assistant" and (model == "<synthetic>" or bool(opt_str(obj.get("error"))))
        found: list[Problem] = []
        for row in anthropic_rows(message, session_id, None, f"line {line}", run.tools, found):
            row.line = line
            if synthetic and row.role == "assistant":
                row.role = "system"
            run.rows.append(row)
        run.problems.extend(Problem(line, p.error) for p in found)

    def result_rows(self, run: StreamRun, obj: dict[str, Any], line: int) -> list[MessageRecord]:
        """The rows a ``result`` event adds (see :func:`_result_rows`)."""
        return _result_rows(obj, run.thread, run.rows, line)

    def other_event(self, run: StreamRun, obj: dict[str, Any], line: int) -> None:
        """An event of a type this reader does not know: reported, the rest is read."""
        run.problems.append(Problem(line, f"unknown event type {obj.get('type')!r} (skipped)"))

    def finish(self, run: StreamRun) -> None:
        """Called once after the last line (a reader holding a half-built row completes it)."""


def _result_rows(
    obj: dict[str, Any], thread: str, rows: list[MessageRecord], line: int
) -> list[MessageRecord]:
    """The rows a ``result`` event adds: its error, or its text when no reply said it."""
    if obj.get("is_error") or str(obj.get("subtype") or "").startswith("error"):
        error = obj.get("error")
        if isinstance(error, dict):  # Qwen Code writes ``{"message": ...}``
            error = error.get("message")
        errors = obj.get("errors")  # Claude Code writes ``errors: [text, ...]``
        listed = "; ".join(e for e in errors if isinstance(e, str) and e.strip()) if isinstance(errors, list) else ""
        # no text: the subtype stays in meta
        text = opt_str(error) or opt_str(listed) or opt_str(obj.get("result"))
        return (
            [
                MessageRecord(
                    thread, "system", f"[{obj.get('subtype') or 'error'}] {text}", line=line
                )
            ]
            if text
            else []
        )
    text = opt_str(obj.get("result"))
    last = next(
        (
            r
            for r in reversed(rows)
            if r.session_id == thread and r.role == "assistant" and r.content
        ),
        None,
    )
    if text and (last is None or last.content.strip() != text.strip()):
        return [MessageRecord(thread, "assistant", text, line=line)]
    return []
