"""``codex-exec``: what ``codex exec --json`` prints, saved to a file.

Codex CLI's headless mode prints one JSON object per line (``codex-rs/exec/src/exec_events.rs``,
``ThreadEvent``, written by ``event_processor_with_jsonl_output.rs``):

* ``{"type": "thread.started", thread_id, timestamp?}``: the run's thread (the session id;
  ``codex exec resume`` prints it again, and the item ids ``item_<n>`` start over);
* ``turn.started``, ``turn.completed {usage}`` (bookkeeping: the last usage goes to the
  session's meta), ``turn.failed {error: {message}}`` (a ``system`` row);
* ``item.started`` / ``item.updated`` / ``item.completed`` ``{item: {id, type, ...}}``: an item
  is stored once, at the place it first appeared, in its completed state (the last state
  printed when the run ended before ``item.completed``). Item types:

  - ``agent_message {text}`` (``assistant``), ``reasoning {text}`` (``reasoning``),
    ``plan {text}`` (plan mode's proposal, ``assistant``);
  - ``command_execution {command, aggregated_output, exit_code, status}``: an assistant call
    ``shell`` ``{"command": ...}`` and a ``tool`` row with the output (a non-zero exit code, a
    declined command noted on its last line);
  - ``file_change {changes: [{path, kind, diff?}], status}``: a call ``apply_patch``
    ``{"changes": [...]}`` and a ``tool`` row listing ``<kind> <path>`` (a failed patch noted);
  - ``mcp_tool_call {server, tool, arguments, result: {content, structured_content}, error,
    status}``: a call named as Codex names MCP tools to the model, ``mcp__<server>__<tool>``,
    and a ``tool`` row with the result's text (or ``[error] <message>``);
  - ``collab_tool_call {tool, receiver_thread_ids, prompt, agents_states}``: a call named by
    ``tool`` (``spawn_agent``, ``send_input``, ...) and the agents' states as its result;
  - ``web_search {query, action?}``: a call ``web_search`` (the stream has no results);
  - ``todo_list {items: [{text, completed}]}``: an ``assistant`` row, one ``- [x]`` /
    ``- [ ]`` line per step (the agent's plan is the agent's words; Codex updates one list per
    turn, so only its final state is stored);
  - ``error {message}`` (a non-fatal warning): a ``system`` row;
* ``{"type": "error", message}``: a fatal error, a ``system`` row; ``item.plan.delta`` is
  bookkeeping; ``request_user_input {call_id, questions}`` a call of that name.

The stream does not carry the user's prompt. Its first versions (``--experimental-json``, then
``--json``) named the item type ``item_type`` and the agent's message ``assistant_message``, and
opened with ``session.created {session_id}`` before ``thread.started``: all read.

Earlier versions of ``codex exec --json`` printed Codex's protocol events themselves (the ``event_msg``
payloads of a rollout): a config summary object ``{workdir, model, provider, approval,
sandbox, ...}``, ``{"prompt": <the user's prompt>}``, then ``{"id", "msg": {"type", ...}}``
lines. Of these ``session_configured`` (id, model), ``user_message``, ``agent_message``,
``agent_reasoning``, ``exec_command_begin/_end``, ``patch_apply_begin/_end``,
``mcp_tool_call_begin/_end``, ``web_search_end``, ``plan_update``, ``turn_aborted``, ``error``
and ``stream_error`` are stored as above (see :mod:`codex_exec_legacy`); deltas, token counts
and the other UI events are bookkeeping.

Any other event, item or message type is reported once per type, with its line, and the rest
is read. The file is read whole (it is written once; a resumed run appended to it adds to its
thread).
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
    opt_str,
    safe_timestamp,
)
from hermes_store.sessions.importers.codex_exec_legacy import (
    LegacyRun,
    checklist,
    is_config_summary,
    is_legacy_line,
    mcp_result,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    dumps,
    json_objects,
    shape_guarded,
    tool_call,
)

ITEM_EVENTS = frozenset({"item.started", "item.updated", "item.completed"})
QUIET_EVENTS = frozenset({"turn.started", "item.plan.delta"})
EVENTS = frozenset({"thread.started", "session.created", "turn.completed", "turn.failed", "error",
                    "request_user_input", *ITEM_EVENTS, *QUIET_EVENTS})
ITEM_TYPES = frozenset({"agent_message", "assistant_message", "reasoning", "plan", "command_execution",
                        "file_change", "mcp_tool_call", "collab_tool_call", "web_search", "todo_list",
                        "error"})


def _is_stream_line(obj: dict[str, Any]) -> bool:
    """A line of the current stream: a dotted event name (or ``error``/``request_user_input``),
    never a rollout's ``{timestamp, type, payload}`` envelope."""
    kind = obj.get("type")
    return isinstance(kind, str) and "payload" not in obj and (
        kind in EVENTS or (kind.count(".") == 1 and kind.split(".")[0] in ("thread", "turn", "item")))


def _is_item_event(obj: dict[str, Any]) -> bool:
    item = obj.get("item")
    return obj.get("type") in ITEM_EVENTS and isinstance(item, dict) and isinstance(item_type(item), str) \
        and "id" in item


def item_type(item: dict[str, Any]) -> Any:
    """An item's type: ``type``, or ``item_type`` in the first versions of the stream."""
    return item.get("type", item.get("item_type"))


@dataclass
class Session:
    """One thread of the file: its record and its rows in order."""

    record: SessionRecord
    rows: list[Any] = field(default_factory=list)  # MessageRecord, or an _Entry filled in later


@dataclass
class _Entry:
    """An item of the current stream: its latest state, where it came from, whether completed."""

    item: dict[str, Any]
    line: int
    run: int
    done: bool = False


class CodexExecImporter(ReplacedWhenChanged, Importer):
    """A saved ``codex exec --json`` run (the JSONL event stream, current and older shapes)."""

    name = "codex-exec"
    agent = "Codex (codex exec --json)"
    indexes = ("agent messages, reasoning, commands with their output and exit code, MCP calls and results, "
               "file changes, web searches, to-do lists, errors")
    source: str | None = "codex"
    resumable_by_offset = False
    snapshot = True
    derives_end_time = False  # the stream has no times

    @classmethod
    def sniff(cls, head: Head) -> float:
        """The current stream (opened by ``thread.started`` with a ``thread_id``, at least four
        lines in five a ``thread.*``/``turn.*``/``item.*``/``error`` event; or only such events,
        item events among them), or the
        older stream (a config summary, ``{"prompt"}``, ``{"id", "msg": {"type"}}`` lines)."""
        if head.is_sqlite:
            return 0.0
        objects = head.objects()
        if not objects:
            return 0.0
        known = sum(_is_stream_line(o) for o in objects)
        first = objects[0]
        opened = first.get("type") in ("thread.started", "session.created") and "payload" not in first \
            and isinstance(first.get("thread_id", first.get("session_id")), str)
        if opened and known * 5 >= len(objects) * 4:
            return 0.95  # a fifth of the lines may be of a type added since (read and reported)
        if known == len(objects):
            return 0.9 if any(_is_item_event(o) for o in objects) else 0.0
        legacy = [o for o in objects if is_legacy_line(o)]
        if legacy and all(is_legacy_line(o) or is_config_summary(o) or set(o) == {"prompt"} for o in objects):
            return 0.9 if len(legacy) >= 2 or is_config_summary(objects[0]) else 0.6
        return 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        sessions: dict[str, Session] = {}
        problems: list[Problem] = []
        reported: set[tuple[str, str]] = set()
        reader = _StreamReader(self, sessions, problems, reported)
        legacy: LegacyRun | None = None
        for line, obj in json_objects(self.path, self.hasher, problems):
            if is_legacy_line(obj) or is_config_summary(obj) or (set(obj) == {"prompt"}):
                if legacy is None:
                    legacy = LegacyRun(self.default_session_id(), self.source, reported, problems)
                legacy.handle(obj, line)
            else:
                reader.handle(obj, line)
        if legacy is not None:
            merged = sessions.setdefault(legacy.record.id, Session(legacy.record))
            if merged.record is not legacy.record:
                merged.record.meta.update(legacy.record.meta)
            merged.rows.extend(legacy.rows)
        for session in sessions.values():
            yield replace(session.record)  # built anew: the caps of SessionRecord apply
            for entry in session.rows:
                if isinstance(entry, MessageRecord):
                    yield entry
                else:
                    yield from item_rows(entry, session.record.id, problems, reported)
        yield from sorted(problems, key=lambda p: p.line or 0)
        yield Checkpoint(str(self.path.stat().st_size), 0)


class _StreamReader:
    """Reads the lines of the current stream into ``sessions``."""

    def __init__(self, importer: Importer, sessions: dict[str, Session], problems: list[Problem],
                 reported: set[tuple[str, str]]) -> None:
        self.importer = importer
        self.sessions = sessions
        self.problems = problems
        self.reported = reported
        self.current: Session | None = None
        self.run = 0
        self.items: dict[tuple[int, str], _Entry] = {}

    def session(self) -> Session:
        """The thread lines are read into (the file's stem until a ``thread.started``)."""
        if self.current is None:
            self.current = self._open(self.importer.default_session_id())
        return self.current

    def _open(self, session_id: str) -> Session:
        found = self.sessions.get(session_id)
        if found is None:
            found = self.sessions[session_id] = Session(SessionRecord(id=session_id, source="codex"))
        return found

    def handle(self, obj: dict[str, Any], line: int) -> None:
        """One line of the stream."""
        kind = obj.get("type")
        if kind in ("thread.started", "session.created"):
            thread = opt_str(obj.get("thread_id")) or opt_str(obj.get("session_id"))
            self.run += 1
            self.current = self._open(thread) if thread else self.session()
            stamp = safe_timestamp(obj.get("timestamp"), line, self.problems)
            if stamp is not None and self.current.record.started_at is None:
                self.current.record.started_at = stamp
        elif kind in ITEM_EVENTS:
            self._item(obj, line)
        elif kind == "turn.completed":
            usage = obj.get("usage")
            if isinstance(usage, dict):
                self.session().record.meta["usage"] = usage
        elif kind in ("turn.failed", "error"):
            error = obj.get("error") if kind == "turn.failed" else obj
            message = opt_str(error.get("message")) if isinstance(error, dict) else opt_str(error)
            label = "turn failed" if kind == "turn.failed" else "error"
            if kind == "error" and not (message and message.strip()):
                return  # an error without words
            self.session().rows.append(MessageRecord(self.session().record.id, "system",
                                                     f"[{label}] {message or ''}".strip(), line=line))
        elif kind == "request_user_input":
            call = tool_call(opt_str(obj.get("call_id")), "request_user_input",
                             {"questions": obj.get("questions")})
            self.session().rows.append(MessageRecord(self.session().record.id, "assistant", "",
                                                     tool_calls=dumps([call]), line=line))
        elif kind in QUIET_EVENTS:
            return
        else:
            report(self.reported, self.problems, "event", str(kind), line)

    def _item(self, obj: dict[str, Any], line: int) -> None:
        item = obj.get("item")
        if not isinstance(item, dict):
            self.problems.append(Problem(line, f"{obj.get('type')}: field 'item' missing or not an object"))
            return
        item_id = opt_str(item.get("id"))
        key = (self.run, item_id) if item_id else None
        entry = self.items.get(key) if key else None
        completed = obj.get("type") == "item.completed"
        if entry is None:
            entry = _Entry(item, line, self.run, done=completed)
            self.session().rows.append(entry)
            if key:
                self.items[key] = entry
        elif not entry.done:  # its latest state (an item is completed once)
            entry.item, entry.line, entry.done = item, line, completed


def report(reported: set[tuple[str, str]], problems: list[Problem], what: str, kind: str, line: int) -> None:
    """Report an unknown ``what`` type ``kind`` once, at its first line."""
    if (what, kind) not in reported:
        reported.add((what, kind))
        problems.append(Problem(line, f"unknown {what} type {kind!r} (skipped; later ones not reported)"))


def item_rows(entry: _Entry, session_id: str, problems: list[Problem],
              reported: set[tuple[str, str]]) -> list[MessageRecord]:
    """The rows one item of the current stream is stored as."""
    item, line = entry.item, entry.line
    kind = str(item_type(item))
    raw_id = opt_str(item.get("id"))
    # ``item_<n>`` starts over with every run of a resumed thread: the run keeps call ids apart
    call_id = raw_id if entry.run <= 1 or raw_id is None else f"{raw_id}@{entry.run}"

    def text_row(role: str, text: Any) -> list[MessageRecord]:
        text = opt_str(text)
        return [MessageRecord(session_id, role, text, line=line)] if text and text.strip() else []

    if kind in ("agent_message", "assistant_message", "plan"):
        return text_row("assistant", item.get("text"))
    if kind == "reasoning":
        return text_row("reasoning", item.get("text"))
    if kind == "error":
        message = opt_str(item.get("message"))
        return text_row("system", f"[error] {message}") if message and message.strip() else []
    if kind == "todo_list":
        return text_row("assistant", checklist(item.get("items")))
    if kind == "command_execution":
        output = opt_str(item.get("aggregated_output")) or ""
        note = _command_note(item.get("exit_code"), item.get("status"))
        result = "\n".join(t for t in (output.rstrip("\n"), note) if t)
        keep = entry.done or output or note
        return call_rows(session_id, call_id, "shell", {"command": item.get("command")}, result if keep else None,
                         line)
    if kind == "file_change":
        changes = item.get("changes") if isinstance(item.get("changes"), list) else []
        lines = [f"{c.get('kind')} {c.get('path')}" for c in changes if isinstance(c, dict)]
        status = opt_str(item.get("status"))
        if status == "failed":
            lines.append("[patch failed]")
        return call_rows(session_id, call_id, "apply_patch", {"changes": changes}, "\n".join(lines), line)
    if kind == "mcp_tool_call":
        name = f"mcp__{item.get('server')}__{item.get('tool')}"
        return call_rows(session_id, call_id, name, item.get("arguments"), mcp_result(item.get("result"),
                         item.get("error")), line)
    if kind == "collab_tool_call":
        arguments = {k: item[k] for k in ("receiver_thread_ids", "prompt") if item.get(k)}
        states = item.get("agents_states")
        return call_rows(session_id, call_id, str(item.get("tool") or "collab"), arguments,
                         dumps(states) if states else "", line)
    if kind == "web_search":
        arguments = {k: item[k] for k in ("query", "action") if item.get(k)}
        return call_rows(session_id, call_id, "web_search", arguments, None, line)
    report(reported, problems, "item", kind, line)
    return []


def call_rows(session_id: str, call_id: str | None, name: str, arguments: Any, result: str | None,
              line: int) -> list[MessageRecord]:
    """An assistant row calling ``name`` and, unless ``result`` is None, the ``tool`` row answering it."""
    call = tool_call(call_id, name, arguments)
    rows = [MessageRecord(session_id, "assistant", "", tool_calls=dumps([call]), line=line, tool_calls_value=[call])]
    if result is not None:
        rows.append(MessageRecord(session_id, "tool", result, tool_name=name, tool_call_id=call_id, line=line))
    return rows


def _command_note(exit_code: Any, status: Any) -> str:
    if status == "declined":
        return "[declined]"
    if isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0:
        return f"[exit code {exit_code}]"
    return ""
