"""``openhands-events`` and ``openhands-trajectory``: OpenHands before the agent SDK (V0).

The V0 web app / CLI (``openhands/`` of OpenHands/OpenHands, formerly OpenDevin) keeps a
conversation in its file store (``~/.openhands`` by default) as
``sessions/<sid>/events/<n>.json`` (``users/<uid>/conversations/<sid>/`` with a user),
one event per file numbered from 0, beside ``metadata.json`` (``conversation_id``,
``title``, ``created_at``, ``llm_model``, ``selected_repository``) and
``event_cache/<start>-<end>.json`` pages repeating 25 events each. An event is
``{id, timestamp, source: "user" | "agent" | "environment", message, cause?,
tool_call_metadata?: {function_name, tool_call_id}}`` plus either

* ``action`` with ``args``: ``message`` (``content``, ``image_urls`` / older
  ``images_urls``, ``file_urls``): the user's or the agent's words; ``run``,
  ``run_ipython``, ``read``, ``write``, ``edit``, ``browse``,
  ``browse_interactive``, ``call_tool_mcp``, ``delegate``, ``task_tracking``: a
  tool call (``args.thought`` is what the agent said with it); ``think``: the
  agent's thinking (``reasoning``); ``finish`` (``final_thought``, ``thought``) and
  ``reject`` (``outputs.reason``): its last words; ``system`` (the system prompt),
  ``recall``, ``change_agent_state``, ``condensation`` and the like: not indexed;
* or ``observation`` with ``content`` and ``extras``: the result of the call it
  answers (``tool_call_metadata.tool_call_id``, else the action its ``cause``
  names); ``error`` without a call is a ``system`` row, ``user_rejected`` says
  so; ``agent_state_changed``, ``recall`` (injected workspace context),
  ``condense``, ``think`` (``"Your thought has been logged."``), ``null``: not
  indexed.

The lowest-numbered event file is the session's source; the other event files,
``metadata.json`` and the cache pages are read through it. A *trajectory* is the
same events in one file: the JSON array the UI's "export trajectory" downloads
(``trajectory-<id>.json``) and ``save_trajectory_path`` writes, ``{"trajectory":
[...]}`` as the API returns it, an evaluation record ``{instance_id, history,
metadata}`` (early OpenDevin ``history`` holds ``[action, observation]`` pairs),
or JSONL of events (headless runs) or of evaluation records (one session each).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
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
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    dumps,
    iter_json_lines,
    load_document,
    safe_rows,
    shape_guarded,
    tool_call,
)

MAX_EVENT_BYTES = 64 * 1024 * 1024
MAX_EVENTS = 200_000
_QUIET_ACTIONS = {"system", "recall", "change_agent_state", "null", "condensation", "condensation_request",
                  "pause", "resume", "stop", "start", "loop_recovery", "push", "send_pr"}
_QUIET_OBSERVATIONS = {"agent_state_changed", "null", "recall", "condense", "think"}
_BOOKKEEPING_ARGS = {"thought", "security_risk", "is_confirmed", "confirmation_state", "keep_prompt",
                     "blocking", "hidden", "wait_for_response", "impl_source"}


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def is_v0_event(obj: Any) -> bool:
    """An OpenHands V0 event: ``action`` + ``args`` or ``observation`` + ``content``."""
    if not isinstance(obj, dict) or "kind" in obj:
        return False
    if isinstance(obj.get("action"), str):
        return isinstance(obj.get("args"), dict) or "source" in obj
    return isinstance(obj.get("observation"), str) and ("content" in obj or "extras" in obj)


def _flat_history(items: list[Any]) -> list[Any]:
    """Events of a ``history``: early OpenDevin pairs ``[action, observation]`` flattened."""
    flat: list[Any] = []
    for item in items:
        if isinstance(item, list):
            flat.extend(item)
        else:
            flat.append(item)
    return flat


class EventRows:
    """Rows of one conversation's V0 events, linking each observation to its call."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.calls: dict[Any, tuple[str, str]] = {}  # action id -> (tool name, call id)
        self.last: tuple[str, str] | None = None  # the latest call not answered yet

    def rows(self, event: dict[str, Any], where: str, problems: list[Problem]) -> list[MessageRecord]:
        """The rows of one event (none for bookkeeping)."""
        stamp = _stamp(event.get("timestamp"))
        if isinstance(event.get("action"), str):
            return self._action(event, stamp, where, problems)
        if isinstance(event.get("observation"), str):
            return self._observation(event, stamp)
        problems.append(Problem(None, f"{where}: neither 'action' nor 'observation' (skipped)"))
        return []

    def _action(self, event: dict[str, Any], stamp: float | None, where: str,
                problems: list[Problem]) -> list[MessageRecord]:
        kind = event["action"]
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        role = "user" if event.get("source") == "user" else "assistant"
        sid = self.session_id
        if kind == "message":
            text = str(args.get("content") or event.get("content") or event.get("message") or "")
            images = args.get("image_urls") or args.get("images_urls") or []
            files = args.get("file_urls") or []
            marks = ["[image]" for _ in images if isinstance(images, list)]
            marks += [f"[file {Path(str(f)).name}]" for f in files if isinstance(files, list)]
            text = "\n".join(t for t in [text, *marks] if t)
            return [MessageRecord(sid, role, text, timestamp=stamp)] if text else []
        if kind in _QUIET_ACTIONS:
            return []
        thought = str(args.get("thought") or "")
        if kind == "think":
            return [MessageRecord(sid, "reasoning", thought, timestamp=stamp)] if thought.strip() else []
        if kind == "finish":
            final = str(args.get("final_thought") or "")
            text = "\n".join(t for t in (thought, final) if t) or _outputs_text(args.get("outputs"))
            return [MessageRecord(sid, "assistant", text, timestamp=stamp)] if text else []
        if kind == "reject":
            reason = _outputs_text(args.get("outputs"))
            text = "\n".join(t for t in (thought, f"[rejected] {reason}".strip()) if t)
            return [MessageRecord(sid, "assistant", text, timestamp=stamp)]
        meta = event.get("tool_call_metadata") if isinstance(event.get("tool_call_metadata"), dict) else {}
        name = opt_str(meta.get("function_name")) or kind
        call_id = opt_str(meta.get("tool_call_id")) or f"{sid}:event-{event.get('id', len(self.calls))}"
        if event.get("id") is not None:
            self.calls[event["id"]] = (name, call_id)
        self.last = (name, call_id)
        arguments = {k: v for k, v in args.items() if k not in _BOOKKEEPING_ARGS and v not in (None, "")}
        if kind not in ("run", "run_ipython", "read", "write", "edit", "browse", "browse_interactive",
                        "call_tool_mcp", "delegate", "task_tracking"):
            problems.append(Problem(None, f"{where}: unknown action {kind!r} (kept as a tool call)"))
        return [MessageRecord(sid, "assistant", thought, tool_calls=dumps([tool_call(call_id, name, arguments)]),
                              timestamp=stamp)]

    def _observation(self, event: dict[str, Any], stamp: float | None) -> list[MessageRecord]:
        kind = event["observation"]
        if kind in _QUIET_OBSERVATIONS:
            return []
        content = event.get("content")
        text = content if isinstance(content, str) else (dumps(content) if content is not None else "")
        sid = self.session_id
        if kind in ("message", "chat"):  # early OpenDevin: the user's words as an observation
            role = "user" if event.get("source") == "user" else "assistant"
            return [MessageRecord(sid, role, text, timestamp=stamp)] if text else []
        meta = event.get("tool_call_metadata") if isinstance(event.get("tool_call_metadata"), dict) else {}
        linked = self.calls.get(event.get("cause"))
        if linked is None and event.get("cause") is None and not meta:
            linked = self.last  # early files: no ids; an observation answers the call before it
        if linked is not None and linked == self.last:
            self.last = None
        call_id = opt_str(meta.get("tool_call_id")) or (linked[1] if linked else None)
        name = opt_str(meta.get("function_name")) or (linked[0] if linked else kind)
        if kind == "user_rejected" and text:
            text = f"Action rejected: {text}"
        if kind in ("error", "loop_detection") and call_id is None:
            return [MessageRecord(sid, "system", f"[{kind}] {text}".strip(), timestamp=stamp)]
        return [MessageRecord(sid, "tool", text, tool_name=name, tool_call_id=call_id, timestamp=stamp)]


def _outputs_text(outputs: Any) -> str:
    if isinstance(outputs, dict):
        for key in ("reason", "content", "message", "answer"):
            if opt_str(outputs.get(key)):
                return str(outputs[key])
        return dumps(outputs) if outputs else ""
    return str(outputs or "")


def _event_files(events_dir: Path) -> list[Path]:
    """``<n>.json`` event files in number order."""
    files = [p for p in events_dir.glob("*.json") if p.stem.isdigit()]
    return sorted(files, key=lambda p: int(p.stem))


class OpenHandsEventsImporter(Importer):
    """One V0 conversation: ``sessions/<sid>/events/<n>.json`` and its ``metadata.json``."""

    name = "openhands-events"
    agent = "OpenHands (V0 event store)"
    indexes = "messages, actions (tool calls with the agent's thought), observations, thinking, errors, rejections"
    source: str | None = "openhands"
    resumable_by_offset = False
    skip_when_unchanged = False  # new events are new files; the first one does not change
    snapshot = True
    default_locations = {"linux": ("~/.openhands/sessions/*/events/0.json",),
                         "darwin": ("~/.openhands/sessions/*/events/0.json",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A numbered event file (``events/<n>.json``), or ``metadata.json`` / a cache page beside one."""
        if head.is_sqlite or head.suffix != ".json":
            return 0.0
        if cls.member_of(head) is not None:
            return 0.6
        if head.path.parent.name == "events" and head.path.stem.isdigit() and is_v0_event(head.document()):
            return 0.9
        return 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """Another event file, ``metadata.json`` or an ``event_cache`` page: read through the first event."""
        path = head.path
        folder = path.parent.parent if path.parent.name in ("events", "event_cache") else path.parent
        if path.parent.name == "events" and not path.stem.isdigit():
            return None
        if path.parent.name not in ("events", "event_cache") and path.name != "metadata.json":
            return None
        if (folder / "base_state.json").is_file():
            return None  # the agent SDK's layout: the ``openhands`` importer
        files = _event_files(folder / "events") if (folder / "events").is_dir() else []
        if not files or files[0] == path:
            return None
        return files[0]

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        folder = self.path.parent.parent
        files = _event_files(self.path.parent)
        if self.path.parent.name != "events" or not files or files[0] != self.path:
            yield Checkpoint(str(self.path.stat().st_size), 0)  # a member: nothing alone
            return
        meta_doc = _read_json(folder / "metadata.json", [])
        meta_doc = meta_doc if isinstance(meta_doc, dict) else {}
        session_id = opt_str(meta_doc.get("conversation_id")) or folder.name
        problems: list[Problem] = []
        events: list[tuple[str, dict[str, Any]]] = []
        for path in files[:MAX_EVENTS]:
            event = _read_json(path, problems)
            if isinstance(event, dict):
                events.append((path.name, event))
            elif event is not None:
                problems.append(Problem(None, f"events/{path.name}: expected a JSON object"))
        if len(files) > MAX_EVENTS:
            problems.append(Problem(None, f"more than {MAX_EVENTS} events: the rest is not imported"))
        stamps = [s for s in (_stamp(e.get("timestamp")) for _, e in events) if s is not None]
        meta = {k: meta_doc[k] for k in ("selected_repository", "selected_branch", "trigger")
                if meta_doc.get(k)}
        yield SessionRecord(id=session_id, source=self.source, title=opt_str(meta_doc.get("title")),
                            model=opt_str(meta_doc.get("llm_model")),
                            started_at=_stamp(meta_doc.get("created_at")) or min(stamps, default=None),
                            meta=meta)
        yield from problems
        builder = EventRows(session_id)
        for name, event in events:
            found: list[Problem] = []
            where = f"events/{name}"
            yield from safe_rows(builder.rows, found, None, where, event, where, found)
            yield from found
        yield Checkpoint(str(len(events)), 0)


def _read_json(path: Path, problems: list[Problem]) -> Any | None:
    """One member file parsed (None, with a Problem naming it, when unreadable or missing)."""
    try:
        if path.stat().st_size > MAX_EVENT_BYTES:
            problems.append(Problem(None, f"{path.parent.name}/{path.name}: too large (skipped)"))
            return None
        return json.loads(path.read_bytes().decode("utf-8", errors="replace"), strict=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        problems.append(Problem(None, f"{path.parent.name}/{path.name}: unreadable ({exc})"))
        return None


def _trajectory_events(doc: Any) -> list[Any] | None:
    """The event list of a trajectory document (array, ``trajectory`` or ``history``), else None."""
    if isinstance(doc, dict):
        doc = doc.get("trajectory", doc.get("history"))
    if not isinstance(doc, list):
        return None
    events = _flat_history(doc)
    return events if events and any(is_v0_event(e) for e in events[:20]) else None


class OpenHandsTrajectoryImporter(ReplacedWhenChanged, Importer):
    """An OpenHands V0 trajectory (exported events in one JSON or JSONL file)."""

    name = "openhands-trajectory"
    agent = "OpenHands (V0 trajectory export)"
    indexes = "exported events: messages, tool calls, observations, thinking; evaluation records per instance"
    source: str | None = "openhands"
    resumable_by_offset = False
    snapshot = True

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A JSON array of V0 events (or ``{trajectory | history}``), or JSONL of them."""
        if head.is_sqlite or head.path.parent.name in ("events", "event_cache"):
            return 0.0
        objects = head.objects()
        if len(objects) > 1:
            if all(is_v0_event(o) for o in objects):
                return 0.85
            if all(_trajectory_events(o) is not None for o in objects):
                return 0.85
            return 0.0
        return 0.85 if _trajectory_events(head.document()) is not None else 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        stem = self.path.stem
        base_id = stem.removeprefix("trajectory-") or stem
        lines = list(_lines(self.path, self.hasher)) if self.path.suffix.lower() == ".jsonl" else None
        if lines is None:
            problems: list[Problem] = []
            doc = load_document(self, problems)
            yield from problems
            if doc is None:
                return
            events = _trajectory_events(doc)
            if events is None:
                yield Problem(1, "expected a list of OpenHands events (or {trajectory} / {history})")
                return
            yield from _session(base_id, doc if isinstance(doc, dict) else {}, events, self.source)
        else:
            plain = [(n, o) for n, o, _ in lines if is_v0_event(o)]
            for line, obj, problem in lines:
                if problem is not None:
                    yield problem
                elif not is_v0_event(obj) and _trajectory_events(obj) is None:
                    yield Problem(line, "expected an OpenHands event or evaluation record (skipped)")
            if plain:
                yield from _session(base_id, {}, [o for _, o in plain], self.source)
            for line, obj, _ in lines:
                events = _trajectory_events(obj) if isinstance(obj, dict) and not is_v0_event(obj) else None
                if events is not None:
                    record_id = opt_str(obj.get("instance_id")) or f"{base_id}:line-{line}"
                    yield from _session(record_id, obj, events, self.source)
        yield Checkpoint(str(self.path.stat().st_size), 0)


def _lines(path: Path, hasher: Any) -> Iterator[tuple[int, Any, Problem | None]]:
    yield from iter_json_lines(path, hasher)


def _session(session_id: str, record: dict[str, Any], events: list[Any], source: str | None) -> Iterator[Event]:
    """The session and rows of one trajectory's events."""
    stamps = [s for s in (_stamp(e.get("timestamp")) for e in events if isinstance(e, dict)) if s is not None]
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    llm = metadata.get("llm_config") if isinstance(metadata.get("llm_config"), dict) else {}
    meta = {k: metadata[k] for k in ("agent_class", "max_iterations") if metadata.get(k) is not None}
    yield SessionRecord(id=session_id, source=source, model=opt_str(llm.get("model")),
                        started_at=min(stamps, default=None), meta=meta)
    builder = EventRows(session_id)
    for index, event in enumerate(events):
        where = f"{session_id} event {index}"
        if not isinstance(event, dict):
            yield Problem(None, f"{where}: expected an object")
            continue
        found: list[Problem] = []
        yield from safe_rows(builder.rows, found, None, where, event, where, found)
        yield from found
