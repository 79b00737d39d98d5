"""``openhands``: OpenHands (agent SDK / CLI) conversations ``~/.openhands/conversations/<id>/``.

A conversation directory holds ``base_state.json`` (the conversation's state:
``id``, ``agent`` with its ``llm.model``, ``workspace.working_dir``, ...; the
source file) and ``events/event-<nnnnn>-<uuid>.json``, one event per file in
order: ``{kind, id, timestamp, source: "user" | "agent" | "environment", ...}``:

* ``MessageEvent``: ``llm_message`` ``{role, content: [{type: "text", text}]}``;
* ``ActionEvent``: the agent's tool call: ``thought`` (text parts),
  ``reasoning_content``, ``tool_name``, ``tool_call_id``, ``tool_call: {id, name,
  arguments}``;
* ``ObservationEvent`` (``observation.content``), ``UserRejectObservation``
  (``rejection_reason``), ``AgentErrorEvent`` (``error``): tool results;
* ``SystemPromptEvent``, condensation, state-update and pause events: skipped.
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
    flatten_content,
    opt_str,
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    dumps,
    load_document,
    safe_rows,
    shape_guarded,
    tool_call,
)

MAX_EVENT_BYTES = 64 * 1024 * 1024
MAX_EVENTS = 200_000
_SKIP = {"SystemPromptEvent", "Condensation", "CondensationRequest", "CondensationSummaryEvent",
         "ConversationStateUpdateEvent", "PauseEvent", "TokenEvent", "ConversationErrorEvent"}


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def event_rows(event: dict[str, Any], session_id: str, where: str, problems: list[Problem]) -> list[MessageRecord]:
    """Rows of one OpenHands SDK event."""
    kind = event.get("kind")
    stamp = _stamp(event.get("timestamp"))
    if kind == "MessageEvent":
        message = event.get("llm_message") if isinstance(event.get("llm_message"), dict) else {}
        role = message.get("role") if message.get("role") in ("user", "assistant", "system") else (
            "user" if event.get("source") == "user" else "assistant")
        rows = []
        reasoning = opt_str(message.get("reasoning_content"))
        if reasoning:
            rows.append(MessageRecord(session_id, "reasoning", reasoning, timestamp=stamp))
        text = flatten_content(message.get("content"))
        if text:
            rows.append(MessageRecord(session_id, role, text, timestamp=stamp))
        return rows
    if kind == "ActionEvent":
        rows = []
        reasoning = opt_str(event.get("reasoning_content"))
        if reasoning:
            rows.append(MessageRecord(session_id, "reasoning", reasoning, timestamp=stamp))
        call = event.get("tool_call") if isinstance(event.get("tool_call"), dict) else {}
        arguments = call.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass
        name = opt_str(event.get("tool_name")) or opt_str(call.get("name"))
        call_id = opt_str(event.get("tool_call_id")) or opt_str(call.get("id"))
        rows.append(MessageRecord(session_id, "assistant", flatten_content(event.get("thought")),
                                  tool_calls=dumps([tool_call(call_id, name, arguments)]), timestamp=stamp))
        return rows
    if kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
        if kind == "ObservationEvent":
            observation = event.get("observation") if isinstance(event.get("observation"), dict) else {}
            text = flatten_content(observation.get("content")) or str(observation.get("output") or "")
        elif kind == "UserRejectObservation":
            text = f"Action rejected: {event.get('rejection_reason') or ''}".strip()
        else:
            text = str(event.get("error") or "")
        return [MessageRecord(session_id, "tool", text, tool_name=opt_str(event.get("tool_name")),
                              tool_call_id=opt_str(event.get("tool_call_id")), timestamp=stamp)]
    if kind not in _SKIP:
        problems.append(Problem(None, f"{where}: unknown event kind {kind!r} (skipped)"))
    return []


class OpenHandsImporter(Importer):
    """One OpenHands conversation (``base_state.json`` and its ``events/``)."""

    name = "openhands"
    agent = "OpenHands"
    indexes = "messages, actions (tool calls, reasoning), observations, rejections"
    source: str | None = "openhands"
    resumable_by_offset = False
    skip_when_unchanged = False  # new events are new files; base_state.json may not change
    snapshot = True
    default_locations = {"linux": ("~/.openhands/conversations/*/base_state.json",),
                         "darwin": ("~/.openhands/conversations/*/base_state.json",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """``base_state.json`` beside an ``events`` directory, holding an ``agent`` object."""
        if head.is_sqlite:
            return 0.0
        if head.path.name != "base_state.json":
            # one event file: read through the conversation's base_state.json
            return 0.6 if head.suffix == ".json" and head.path.parent.name == "events" \
                and (head.path.parent.parent / "base_state.json").is_file() else 0.0
        doc = head.document()
        if isinstance(doc, dict) and ("agent" in doc or (head.path.parent / "events").is_dir()):
            return 0.95
        return 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """An event file: read through its conversation's ``base_state.json``."""
        base = head.path.parent.parent / "base_state.json"
        if head.path.name != "base_state.json" and head.path.parent.name == "events" and base.is_file():
            return base
        return None

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        if self.path.name != "base_state.json":
            yield Checkpoint(str(self.path.stat().st_size), 0)  # an event file: nothing alone
            return
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if not isinstance(doc, dict):
            if doc is not None:
                yield Problem(1, "expected a conversation state object")
            return
        session_id = opt_str(doc.get("id")) or self.path.parent.name
        agent = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
        llm = agent.get("llm") if isinstance(agent.get("llm"), dict) else {}
        workspace = doc.get("workspace") if isinstance(doc.get("workspace"), dict) else {}
        files = sorted((self.path.parent / "events").glob("*.json"))
        stamps = []
        events: list[tuple[str, dict[str, Any]]] = []
        problems = []
        for path in files[:MAX_EVENTS]:
            try:
                if path.stat().st_size > MAX_EVENT_BYTES:
                    problems.append(Problem(None, f"events/{path.name}: too large (skipped)"))
                    continue
                event = json.loads(path.read_bytes().decode("utf-8", errors="replace"), strict=False)
            except (OSError, ValueError, RecursionError) as exc:
                problems.append(Problem(None, f"events/{path.name}: unreadable ({exc})"))
                continue
            if not isinstance(event, dict):
                problems.append(Problem(None, f"events/{path.name}: expected a JSON object"))
                continue
            events.append((path.name, event))
            stamp = _stamp(event.get("timestamp"))
            if stamp is not None:
                stamps.append(stamp)
        if len(files) > MAX_EVENTS:
            problems.append(Problem(None, f"more than {MAX_EVENTS} events: the rest is not imported"))
        yield SessionRecord(id=session_id, source=self.source, title=opt_str(doc.get("title")),
                            model=opt_str(llm.get("model")), workspace=opt_str(workspace.get("working_dir")),
                            started_at=min(stamps, default=None), meta={"agent_kind": agent["kind"]}
                            if agent.get("kind") else {})
        yield from problems
        for name, event in events:
            problems = []
            where = f"events/{name}"
            yield from safe_rows(event_rows, problems, None, where, event, session_id, where, problems)
            yield from problems
        yield Checkpoint(str(len(events)), 0)
