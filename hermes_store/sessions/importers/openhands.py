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
* ``ACPToolCallEvent`` (a tool run by an ACP agent server: ``title``, ``tool_kind``,
  ``raw_input``, ``raw_output``, ``content`` blocks, ``status``, ``is_error``): the
  call and its result in one event;
* ``ConversationErrorEvent`` (``code``, ``detail``): a ``system`` row;
* ``SystemPromptEvent``, condensation, state-update, pause, interrupt, hook and
  token events: skipped.

Thinking is ``reasoning_content`` or, for models that answer with thinking blocks,
``thinking_blocks`` (``{type: "thinking", thinking}``). Since July 2026 (SDK
``conversation history tree``) events carry a ``parent_id`` (``"__root__"`` for a
root) and ``base_state.json`` the ``leaf_event_id`` HEAD: navigating back and
continuing starts a branch, and the conversation is the path from the HEAD to the
root (events of abandoned branches are counted in ``meta``). Events without
``parent_id`` (earlier conversations) follow the one before them. Event files are
ordered by their number (``event-<n>-<id>.json``, at least five digits).
"""

from __future__ import annotations

import json
import re
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
         "ConversationStateUpdateEvent", "PauseEvent", "TokenEvent", "InterruptEvent",
         "HookExecutionEvent", "LLMCompletionLogEvent", "StreamingDeltaEvent"}
# events a newer writer may leave after the HEAD: not nodes of the conversation tree
_ARTIFACTS = {"ConversationStateUpdateEvent", "ConversationErrorEvent"}
ROOT_PARENT = "__root__"
_EVENT_NUMBER = re.compile(r"^event-(\d+)-")


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _thinking(owner: dict[str, Any]) -> str | None:
    """``reasoning_content``, else the text of ``thinking_blocks`` (redacted blocks have none)."""
    text = opt_str(owner.get("reasoning_content"))
    if text:
        return text
    blocks = owner.get("thinking_blocks")
    thoughts = [str(b.get("thinking")) for b in blocks if isinstance(b, dict) and opt_str(b.get("thinking"))] \
        if isinstance(blocks, list) else []
    return "\n".join(thoughts) or None


def _acp_output(event: dict[str, Any]) -> str:
    """What an ACP tool run gave: ``raw_output``, else its ``content`` blocks (text, diffs)."""
    output = event.get("raw_output")
    if output not in (None, "", [], {}):
        return output if isinstance(output, str) else flatten_content(output) or dumps(output)
    texts = []
    for block in event.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "diff":
            new = block.get("new_text", block.get("newText"))
            texts.append(f"[diff] {block.get('path') or ''}\n{new or ''}".rstrip())
        elif block.get("type") == "terminal":
            texts.append(f"[terminal {block.get('terminal_id') or block.get('terminalId') or ''}]")
        else:
            texts.append(flatten_content(block.get("content", block)))
    return "\n".join(t for t in texts if t) or f"[{event.get('status') or 'no result'}]"


def event_rows(event: dict[str, Any], session_id: str, where: str, problems: list[Problem]) -> list[MessageRecord]:
    """Rows of one OpenHands SDK event."""
    kind = event.get("kind")
    stamp = _stamp(event.get("timestamp"))
    if kind == "MessageEvent":
        message = event.get("llm_message") if isinstance(event.get("llm_message"), dict) else {}
        role = message.get("role") if message.get("role") in ("user", "assistant", "system") else (
            "user" if event.get("source") == "user" else "assistant")
        rows = []
        reasoning = _thinking(message)
        if reasoning:
            rows.append(MessageRecord(session_id, "reasoning", reasoning, timestamp=stamp))
        text = flatten_content(message.get("content"))
        if text:
            rows.append(MessageRecord(session_id, role, text, timestamp=stamp))
        return rows
    if kind == "ActionEvent":
        rows = []
        reasoning = _thinking(event)
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
            reason = str(event.get("rejection_reason") or "")
            text = f"Action rejected: {reason}" if reason else ""  # no words: an empty result row
        else:
            text = str(event.get("error") or "")
        return [MessageRecord(session_id, "tool", text, tool_name=opt_str(event.get("tool_name")),
                              tool_call_id=opt_str(event.get("tool_call_id")), timestamp=stamp)]
    if kind == "ACPToolCallEvent":
        call_id = opt_str(event.get("tool_call_id"))
        name = opt_str(event.get("tool_kind")) or opt_str(event.get("title")) or "tool"
        arguments = event.get("raw_input")
        arguments = arguments if isinstance(arguments, dict) else ({"input": arguments} if arguments else {})
        if opt_str(event.get("title")):
            arguments = {"title": event["title"], **arguments}  # what the UI shows for the run
        text = _acp_output(event)
        return [MessageRecord(session_id, "assistant", "", tool_calls=dumps([tool_call(call_id, name, arguments)]),
                              timestamp=stamp),
                MessageRecord(session_id, "tool", f"[error] {text}" if event.get("is_error") else text,
                              tool_name=name, tool_call_id=call_id, timestamp=stamp)]
    if kind == "ConversationErrorEvent":
        detail = opt_str(event.get("detail"))
        return [MessageRecord(session_id, "system", f"[{event.get('code') or 'error'}] {detail}",
                              timestamp=stamp)] if detail else []
    if kind not in _SKIP:
        problems.append(Problem(None, f"{where}: unknown event kind {kind!r} (skipped)"))
    return []


class OpenHandsImporter(Importer):
    """One OpenHands conversation (``base_state.json`` and its ``events/``)."""

    name = "openhands"
    agent = "OpenHands"
    indexes = "the active branch: messages, actions (tool calls, reasoning), observations, ACP tool runs, rejections, errors"
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
        files = sorted((self.path.parent / "events").glob("*.json"), key=_event_order)
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
        active = _active_branch(events, doc)
        meta: dict[str, Any] = {"agent_kind": agent["kind"]} if agent.get("kind") else {}
        if len(active) < len(events):
            meta["abandoned_branch_events"] = sum(
                1 for _, e in events if e.get("kind") not in _SKIP) - sum(
                1 for _, e in active if e.get("kind") not in _SKIP)
        yield SessionRecord(id=session_id, source=self.source, title=opt_str(doc.get("title")),
                            model=opt_str(llm.get("model")), workspace=opt_str(workspace.get("working_dir")),
                            started_at=min(stamps, default=None), meta=meta)
        yield from problems
        for name, event in active:
            problems = []
            where = f"events/{name}"
            yield from safe_rows(event_rows, problems, None, where, event, session_id, where, problems)
            yield from problems
        yield Checkpoint(str(len(events)), 0)


def _event_order(path: Path) -> tuple[int, str]:
    """``event-<n>-<id>.json`` by ``n`` (the writer pads to five digits, not more)."""
    match = _EVENT_NUMBER.match(path.name)
    return (int(match.group(1)) if match else -1, path.name)


def _active_branch(events: list[tuple[str, dict[str, Any]]], state: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The events from the root to the conversation's HEAD (all of them in order when the
    conversation has no tree, its HEAD is unknown or a parent is missing)."""
    if not any(isinstance(e.get("parent_id"), str) for _, e in events):
        return events  # written before the history tree: one linear chain
    by_id: dict[str, int] = {}
    parents: list[str | None] = []
    for index, (_, event) in enumerate(events):
        parent = event.get("parent_id")
        if parent == ROOT_PARENT:
            parent = None
        elif not isinstance(parent, str):  # a legacy event: the one before it
            parent = opt_str(events[index - 1][1].get("id")) if index else None
        parents.append(parent)
        if opt_str(event.get("id")):
            by_id[str(event["id"])] = index
    last = next((opt_str(e.get("id")) for _, e in reversed(events) if e.get("kind") not in _ARTIFACTS), None)
    tail = _walk(last, by_id, parents)
    leaf = opt_str(state.get("leaf_event_id"))
    if tail is None:
        return events  # a missing ancestor or a cycle: keep everything
    if leaf is not None and leaf not in {opt_str(events[i][1].get("id")) for i in tail}:
        # HEAD moved back to another branch (a HEAD on the last event's own path is a
        # state file saved before the newest events: the last event is the HEAD then)
        head = _walk(leaf, by_id, parents)
        tail = head if head is not None else tail
    return [events[i] for i in tail]


def _walk(leaf: str | None, by_id: dict[str, int], parents: list[str | None]) -> list[int] | None:
    """Indexes from the root to ``leaf`` (None on a missing ancestor or a cycle)."""
    path: list[int] = []
    seen: set[int] = set()
    key = leaf
    while key is not None:
        index = by_id.get(key)
        if index is None or index in seen:
            return None
        seen.add(index)
        path.append(index)
        key = parents[index]
    path.reverse()
    return path
