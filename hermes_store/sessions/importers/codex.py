"""``codex``: OpenAI Codex CLI / Desktop rollouts ``~/.codex/sessions/**/rollout-*.jsonl``.

Current files wrap every record as ``{"timestamp", "type", "payload"}``:

* ``session_meta`` (id, cwd, originator, cli_version, git, source -- a
  subagent thread names its parent thread in ``source`` or, in newer files, in
  ``parent_thread_id`` beside ``session_id`` (the id its whole tree shares),
  kept as lineage; 0.144 wrote a root thread's id as ``session_id`` only);
* ``turn_context`` (cwd, model);
* ``response_item``: every item of codex-rs ``protocol::models::ResponseItem``
  -- ``message`` (``developer`` stored as ``system``), ``agent_message``
  (between agents), ``reasoning`` (summary and raw text, role ``reasoning``;
  encrypted-only items have no text), ``function_call`` / ``_output``,
  ``custom_tool_call`` / ``_output``, ``local_shell_call``,
  ``tool_search_call`` / ``tool_search_output``, ``web_search_call``,
  ``image_generation_call`` (the prompt, never the image bytes), and the
  bookkeeping items ``ghost_snapshot``, ``compaction``,
  ``compaction_trigger``, ``context_compaction``, ``additional_tools``;
* ``event_msg``: UI events duplicating the items (skipped), except
  ``thread_name_updated``, which sets the title (newer versions keep renames
  in ``<codex home>/session_index.jsonl`` instead, read too: :mod:`.codex_names`),
  and the ``*_end`` events of
  calls no item records (a patch, MCP call, web search or image generation
  a code-mode ``exec`` script made: :mod:`.codex_events`);
* ``compacted`` (a compaction summary, stored as a ``system`` message);
* ``inter_agent_communication`` (0.15x+: a message between agents of one tree,
  ``author`` / ``recipient`` agent paths and ``content``): the thread's own
  agent's message is ``assistant``, another agent's is ``user``, as for
  ``agent_message`` items; one delivery written both ways (same ``id``) is
  stored once; encrypted-only ones hold no text;
* ``token_usage_record``, ``world_state``, ``retained_context``,
  ``security_risk_score``, ``inter_agent_communication_metadata``: no
  conversation, skipped.

A fork's rollout copies its ancestor's records after its own header, the
ancestor's ``session_meta`` among them: only the first header (the file's own
thread) sets the session's id, start, workspace and lineage.

``thread/revert`` (paginated threads, 0.149+) keeps the thread id but starts a
new rollout file, ``rollout-<time>-<thread id>_<rollout id>.jsonl``, beside the
original. codex-rs does not copy the kept prefix into it: its ``session_meta``
names the prefix by reference, ``history_base = {thread_id: <the predecessor's
rollout id>, end_ordinal_exclusive, end_byte_offset}`` ("retained by
history_base rather than rewritten"; a leading ``rollout_reference`` record in
some versions), and the file holds only what was said after the revert. So the
file is a session of its own, ``<thread id>_<rollout id>``, whose parent is the
rollout it continues (the original thread, or an earlier revert's session):
merging it under the thread id would either drop its messages (the thread is
already indexed from the original file) or store the prefix twice, and the
original keeps the turns the revert abandoned, which stay searchable there.
``realtime_item`` records (voice sessions, paginated threads) store their
``transcript_segment`` text (``role`` user / assistant, at the top of the
payload or under ``data``); session start/close and ``bem_item_promoted``
(a pointer to an agent item already stored) carry no text.

A rotated thread's live rollout begins with a ``rollout_reference`` to the immutable segment
holding its earlier records: the read follows it (:mod:`.codex_segments`), and a segment
met on its own is read through its live rollout.

Any other record or item type is reported as a problem with its line. Older
files put the items at the top level after a first ``{"id", "timestamp",
"instructions"}`` line.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator
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
    head_chars,
    json_text,
    opt_str,
    read_jsonl,
    safe_timestamp,
    said_if_empty,
)
from hermes_store.sessions.importers.codex_events import END_EVENTS, end_event_rows
from hermes_store.sessions.importers.codex_names import thread_name
from hermes_store.sessions.importers.codex_segments import (
    MAX_SEGMENTS,
    active_twin,
    referenced_segment,
    same_thread_reference,
    segment_lines,
)
from hermes_store.sessions.importers.compressed import is_compressed, plain_path
from hermes_store.sessions.importers.openai_common import ToolNames

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_UUID_TAIL = re.compile(rf"({_UUID})$", re.I)
# a reverted thread's rollout: ``rollout-<time>-<thread id>_<rollout id>``
_REVERT_TAIL = re.compile(rf"({_UUID})_({_UUID})$", re.I)
ENVELOPE_TYPES = {"session_meta", "response_item", "turn_context", "event_msg", "compacted",
                  "inter_agent_communication", "realtime_item", "rollout_reference"}
REALTIME_SILENT = {"realtime_session_started", "realtime_session_closed", "bem_item_promoted"}
# records of newer rollouts that hold no conversation (usage, environment snapshots, guardian context)
SILENT_RECORDS = {"token_usage_record", "world_state", "inter_agent_communication_metadata",
                  "retained_context", "security_risk_score"}
CALL_TYPES = {"function_call", "custom_tool_call", "local_shell_call", "tool_search_call",
              "web_search_call", "image_generation_call"}
OUTPUT_TYPES = {"function_call_output", "custom_tool_call_output", "tool_search_output",
                "mcp_tool_call_output"}
SILENT_TYPES = {"ghost_snapshot", "compaction", "compaction_summary", "compaction_trigger",
                "additional_tools", "configuration_update", "other"}
ITEM_TYPES = {"message", "agent_message", "reasoning", "context_compaction",
              *CALL_TYPES, *OUTPUT_TYPES, *SILENT_TYPES}
DEFAULT_CALL_NAMES = {"local_shell_call": "local_shell", "tool_search_call": "tool_search",
                      "web_search_call": "web_search", "image_generation_call": "image_generation"}
ROLES = {"developer": "system"}


class CodexImporter(Importer):
    """Codex rollout JSONL (current envelope format and the older flat format)."""

    name = "codex"
    # 2: inter-agent messages, revert rollouts, fork headers; 3: rotated segments followed (2026-12-07);
    # 4: encrypted inter-agent payload parts add no "[encrypted_content]" marker; inter-agent
    # envelopes serialized into assistant messages read as the message they carry; 5: calls kept only
    # as ``*_end`` events (nested in a code-mode ``exec`` script) stored as calls with their results,
    # MCP results serialized as JSON content blocks read as their text
    reader = 5
    agent = "OpenAI Codex CLI / Desktop"
    indexes = ("every response_item: messages, agent messages, reasoning summaries (role reasoning), "
               "function/custom/local-shell/tool-search/web-search/image-generation calls and outputs, "
               "the patches, MCP calls and searches of code-mode scripts (from their end events), "
               "compaction summaries, inter-agent messages; title from thread_name_updated; subagent lineage")
    walk_skipped = (".codex/auth.json", ".codex/version.json", ".codex/models_cache.json", ".codex/config.json",
                    ".codex/internal_storage.json", ".codex/history.jsonl", ".codex/session_index.jsonl",
                    ".codex/state_*.sqlite", ".codex/logs_*.sqlite")  # credentials, caches, indexes, state
    default_locations = {"linux": ("~/.codex/sessions/**/rollout-*.jsonl",
                                   "~/.codex/archived_sessions/**/rollout-*.jsonl",
                                   "~/.codex/sessions/**/rollout-*.jsonl.zst",
                                   "~/.codex/archived_sessions/**/rollout-*.jsonl.zst"),
                         "darwin": ("~/.codex/sessions/**/rollout-*.jsonl",
                                    "~/.codex/archived_sessions/**/rollout-*.jsonl",
                                    "~/.codex/sessions/**/rollout-*.jsonl.zst",
                                    "~/.codex/archived_sessions/**/rollout-*.jsonl.zst")}
    walk_names = ("rollout-*.jsonl.zst",)  # cold rollouts Codex compressed (see :mod:`.compressed`)

    @classmethod
    def sniff(cls, head: Head) -> float:
        """``{"timestamp", "type", "payload"}`` envelopes, or the older flat rollout first line."""
        objects = head.objects()
        if not objects:
            # a compressed rollout that cannot be decompressed here: claimed, so its read says why
            return 0.9 if is_compressed(head.path) and head.path.name.startswith("rollout-") else 0.0
        for obj in objects:
            if obj.get("type") in ENVELOPE_TYPES and isinstance(obj.get("payload"), dict):
                return 0.95
        first = objects[0]
        if "id" in first and "instructions" in first and "timestamp" in first:
            return 0.9 if head.path.name.startswith("rollout-") else 0.7
        if head.path.name.startswith("rollout-") and first.get("record_type"):
            return 0.8
        return 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """A rotated segment of a thread whose live rollout is on disk: read through that rollout
        (:mod:`.codex_segments`); a compressed rollout whose plain copy is beside it (a resume
        decompressed it and went on there): read as that copy."""
        return _plain_twin(head.path) or active_twin(head.path)

    def default_session_id(self) -> str:
        stem = plain_path(self.path).stem  # a compressed rollout is named for its plain file
        revert = _REVERT_TAIL.search(stem)
        if revert and revert.group(1).lower() != revert.group(2).lower():
            return f"{revert.group(1)}_{revert.group(2)}"
        match = _UUID_TAIL.search(stem)
        return match.group(1) if match else stem

    def _rollout_id(self) -> str | None:
        """The rollout id of a ``thread/revert`` file (``…-<thread id>_<rollout id>``), else None."""
        revert = _REVERT_TAIL.search(plain_path(self.path).stem)
        if revert and revert.group(1).lower() != revert.group(2).lower():
            return revert.group(2)
        return None

    def read(self, state: SourceState) -> Iterator[Event]:
        if active_twin(self.path) is not None or _plain_twin(self.path) is not None:
            # a rotated segment (its live rollout reads it), or a compressed copy of a plain rollout
            yield Checkpoint(self.path.stat().st_size, 0)
            return
        tools = ToolNames(state.meta)  # also the calls stored from ``*_end`` events
        session_id = state.meta.get("session_id") or self.default_session_id()
        rollout_id = self._rollout_id()
        context: dict[str, Any] = {"session_id": session_id, "announced": bool(state.resume_at),
                                   "thread": state.meta.get("thread") or state.meta.get("session_id"),
                                   "agent_path": state.meta.get("agent_path")}
        unknown: set[tuple[str, str]] = set()
        followed: set[Path] = set()  # rotated segments already read (a reference cycle stops there)
        delivered: set[str] = set()  # ids of inter-agent messages already stored (item or record)

        def announce(**fields: Any) -> SessionRecord:
            context["announced"] = True
            return SessionRecord(id=context["session_id"], **fields)

        def report(kind: str, what: str, line: int) -> Iterator[Problem]:
            if (what, kind) not in unknown:
                unknown.add((what, kind))
                yield Problem(line, f"unknown {what} type {kind!r} (skipped; later ones not reported)")

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            problems: list[Problem] = []
            timestamp = safe_timestamp(obj.get("timestamp"), line, problems)
            kind = obj.get("type")
            payload = obj.get("payload") if isinstance(obj.get("payload"), dict) else None
            if kind == "session_meta" or (line == 1 and "id" in obj and kind is None):
                meta = payload if payload is not None else obj
                # the thread's id: ``id`` (0.145+ beside the ``session_id`` its whole tree shares);
                # 0.144 wrote a root thread's id as ``session_id`` only
                native = opt_str(meta.get("id")) or opt_str(meta.get("thread_id")) or opt_str(meta.get("session_id"))
                if context["thread"] and native and native != context["thread"]:
                    return  # an ancestor's header copied into a fork: the file's own thread is known
                if native and not context["announced"]:
                    # a reverted thread's rollout is a session of its own (see the module docstring)
                    context["session_id"] = f"{native}_{rollout_id}" if rollout_id else native
                    state.meta["session_id"] = context["session_id"]
                if native:
                    context["thread"] = state.meta["thread"] = native
                path = opt_str(meta.get("agent_path")) or _agent_path(meta.get("source"))
                if path and not context["agent_path"]:
                    context["agent_path"] = state.meta["agent_path"] = path
                extra = {k: meta[k] for k in ("originator", "cli_version", "git", "thread_source", "agent_nickname",
                                              "agent_role", "agent_path", "forked_from_id") if meta.get(k)}
                if meta.get("source"):
                    extra["codex_source"] = meta["source"]
                # a subagent names its parent in ``source.subagent.thread_spawn`` or, newer, at the top
                parent = _parent_thread(meta.get("source")) or opt_str(meta.get("parent_thread_id"))
                base = meta.get("history_base") if isinstance(meta.get("history_base"), dict) else None
                if rollout_id and native:
                    extra["rollout_id"] = rollout_id
                    if base is not None:
                        extra["history_base"] = base
                        parent = _rollout_session(native, opt_str(base.get("thread_id"))) or parent
                    else:
                        parent = parent or native  # reverted without a readable base: still the thread's
                yield announce(
                    source="codex",
                    workspace=opt_str(meta.get("cwd")),
                    started_at=safe_timestamp(meta.get("timestamp"), line, problems) or timestamp,
                    parent_session_id=parent if parent != context["session_id"] else None,
                    meta=extra,
                )
            elif kind == "turn_context" and payload is not None:
                yield announce(model=opt_str(payload.get("model")),
                               workspace=opt_str(payload.get("cwd")))
            elif (kind == "response_item" and payload is not None) or (kind in ITEM_TYPES and payload is None):
                item = payload if payload is not None else obj
                if not context["announced"]:
                    yield announce(source="codex")
                item = _enveloped(item)
                if item.get("type") == "agent_message":
                    if _delivered(item, delivered):
                        return
                    item = {**item, "role": _agent_role(item.get("author"), context["agent_path"])}
                item_kind = str(item.get("type"))
                if "type" not in item and isinstance(item.get("role"), str):
                    item = {**item, "type": "message"}  # an early writer left the message type out
                    item_kind = "message"
                if item_kind in CALL_TYPES and tools.lookup(opt_str(item.get("call_id")) or opt_str(item.get("id"))):
                    return  # stored already from its ``*_end`` event (:mod:`.codex_events`)
                if item_kind in ITEM_TYPES:
                    yield from item_events(item, context["session_id"], timestamp, line, tools)
                else:
                    yield from report(item_kind, "response_item", line)
            elif kind == "event_msg" and payload is not None:
                if payload.get("type") in END_EVENTS:  # a call nested in a code-mode script, or a repeat
                    yield from end_event_rows(payload, context["session_id"], timestamp, line, tools)
                elif payload.get("type") == "thread_name_updated":
                    name = opt_str(payload.get("thread_name")) or opt_str(payload.get("name"))
                    if name:
                        yield announce(title=head_chars(" ".join(name.split()), 200))
            elif kind == "compacted" and payload is not None:
                text = opt_str(payload.get("message"))
                if text:
                    yield MessageRecord(context["session_id"], "system", text,
                                        timestamp=timestamp, line=line)
            elif kind == "inter_agent_communication" and payload is not None:
                # a message between agents of one tree (author/recipient agent paths), newer rollouts
                text = opt_str(payload.get("content"))
                if not context["announced"]:
                    yield announce(source="codex")
                if text and not _delivered(payload, delivered):
                    yield MessageRecord(context["session_id"], _agent_role(payload.get("author"), context["agent_path"]),
                                        text, timestamp=timestamp, line=line)
            elif kind == "realtime_item" and payload is not None:
                yield from _realtime_events(payload, context["session_id"], timestamp, line, report)
            elif kind == "rollout_reference" and payload is not None:
                # an older revert's (or a rotated segment's) pointer to the records it continues
                target = opt_str(payload.get("thread_id"))
                if not rollout_id and same_thread_reference(payload, context["thread"]):
                    yield from follow(payload, line)
                elif rollout_id and target == context["thread"]:
                    yield announce(parent_session_id=_rollout_session(target, opt_str(payload.get("rollout_id")))
                                   or target, meta={"rollout_reference": {
                                       k: payload[k] for k in ("rollout_id", "thread_id", "nth_user_message")
                                       if payload.get(k) is not None}})
            elif kind in SILENT_RECORDS:
                pass  # usage, world state, guardian context: no conversation
            elif "record_type" in obj:
                pass  # the older format's state lines
            elif kind is not None and kind not in ENVELOPE_TYPES:
                yield from report(str(kind), "record", line)
            elif line > 1 or kind is not None:
                problems.append(Problem(line, "record without a type or payload (skipped)"))
            yield from problems

        def follow(payload: dict[str, Any], line: int) -> Iterator[Event]:
            """The records of the rotated segment a same-thread reference names, in place of the
            reference (problems name the segment's file and line; messages carry no line of this file)."""
            segment = referenced_segment(self.path, payload)
            if segment is None:
                where = opt_str(payload.get("rollout_path")) or opt_str(payload.get("segment_id")) or "?"
                yield Problem(line, f"the thread's earlier records are in the rotated segment {where}, which was "
                                    "not found: only the records after this line are read")
                return
            if segment.resolve() in followed or len(followed) >= MAX_SEGMENTS:
                yield Problem(line, f"rotated segment {segment} already read (a reference cycle or over "
                                    f"{MAX_SEGMENTS} segments): not read again")
                return
            followed.add(segment.resolve())
            for number, obj, why in segment_lines(segment):
                events = handle(obj, number) if obj is not None else [Problem(number, why)]
                for event in events:
                    if isinstance(event, Problem):
                        yield Problem(line, f"{segment}:{event.line}: {event.error}" if event.line else
                                      f"{segment}: {event.error}")
                    else:
                        if isinstance(event, MessageRecord):
                            event.line = None
                        yield event

        def named() -> Iterator[Event]:
            """The title ``session_index.jsonl`` gives the thread (a rename), once the file is read."""
            name = thread_name(self.path, context["thread"] or self.default_session_id())
            if name:
                yield SessionRecord(id=context["session_id"], title=name)

        yield from said_if_empty(itertools.chain(read_jsonl(self, state, handle), named()), state, "the rollout")


def _plain_twin(path: Path) -> Path | None:
    """The plain rollout beside a compressed one (Codex reads that one first: it is newer)."""
    plain = plain_path(path)
    return plain if plain != path and plain.is_file() else None


def _rollout_session(thread: str, rollout: str | None) -> str | None:
    """The session a rollout of ``thread`` was stored as: the thread's own id for its original
    rollout, ``<thread>_<rollout>`` for a reverted one."""
    if not rollout:
        return None
    return thread if rollout.lower() == thread.lower() else f"{thread}_{rollout}"


def _realtime_events(payload: dict[str, Any], session_id: str, timestamp: float | None, line: int,
                     report: Callable[[str, str, int], Iterator[Problem]]) -> Iterator[Event]:
    """A voice session's ``realtime_item``: a ``transcript_segment`` is what was said (fields at the
    top of the payload, or under ``data`` in the adjacently tagged shape); the others carry no text."""
    kind = opt_str(payload.get("type"))
    body = payload.get("data") if isinstance(payload.get("data"), dict) else payload
    if kind == "transcript_segment":
        role = opt_str(body.get("role"))
        text = opt_str(body.get("text"))
        if role not in ("user", "assistant"):
            yield Problem(line, f"realtime_item transcript_segment: field 'role' is {role!r}, not user/assistant "
                                "(skipped)")
        elif text:
            yield MessageRecord(session_id, role, text, timestamp=timestamp, line=line)
    elif kind not in REALTIME_SILENT:
        yield from report(str(kind), "realtime_item", line)


def _parent_thread(source: Any) -> str | None:
    """The parent thread id of a subagent rollout (``source.subagent.thread_spawn``)."""
    stack, seen = [source], 0
    while stack and seen < 50:
        value = stack.pop()
        seen += 1
        if isinstance(value, dict):
            parent = opt_str(value.get("parent_thread_id"))
            if parent:
                return parent
            stack.extend(value.values())
    return None


def _agent_path(source: Any) -> str | None:
    """A subagent's own agent path (``source.subagent.thread_spawn.agent_path``)."""
    spawn = source.get("subagent") if isinstance(source, dict) else None
    spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
    return opt_str(spawn.get("agent_path")) if isinstance(spawn, dict) else None


_ENVELOPE_KEYS = {"author", "recipient", "content"}


def _enveloped(item: dict[str, Any]) -> dict[str, Any]:
    """An assistant ``message`` whose only text is a serialized ``InterAgentCommunication``
    (``{"author", "recipient", "other_recipients", "content", "trigger_turn"}``: how Codex wrote a
    message between the agents of one tree into the model's history before it had an item of its
    own) read as the ``agent_message`` it is; any other item unchanged."""
    content = item.get("content")
    if item.get("type") != "message" or item.get("role") != "assistant" or not isinstance(content, list) \
            or len(content) != 1 or not isinstance(content[0], dict):
        return item
    text = content[0].get("text")
    if not isinstance(text, str) or not text.startswith("{") or '"recipient"' not in text:
        return item
    try:
        envelope = json.loads(text)
    except (ValueError, RecursionError):
        return item
    if not isinstance(envelope, dict) or not _ENVELOPE_KEYS <= set(envelope) \
            or not isinstance(envelope.get("content"), str):
        return item
    return {"type": "agent_message", "id": item.get("id"), "author": envelope.get("author"),
            "recipient": envelope.get("recipient"), "content": envelope["content"]}


def _agent_role(author: Any, own_path: str | None) -> str:
    """An inter-agent message this thread's agent wrote is its own (``assistant``); any other agent's
    message is input to it (``user``). A root thread's path is ``/root``."""
    return "assistant" if opt_str(author) and opt_str(author) == (own_path or "/root") else "user"


def _delivered(message: dict[str, Any], seen: set[str]) -> bool:
    """True when an inter-agent message with this ``id`` was stored already (Codex writes one
    delivery both as an ``agent_message`` item and as an ``inter_agent_communication`` record)."""
    message_id = opt_str(message.get("id"))
    if message_id is None:
        return False
    if message_id in seen:
        return True
    seen.add(message_id)
    return False


def item_events(item: dict[str, Any], session_id: str, timestamp: float | None,
                line: int, tools: ToolNames) -> Iterator[Event]:
    """The rows of one Responses API item of a rollout (``response_item`` payloads, the TypeScript
    CLI's ``items``): messages, reasoning, calls with their arguments, outputs as ``tool`` rows."""
    kind = item.get("type")
    content = item.get("content")
    if kind == "message" and isinstance(content, list) and any(
            isinstance(part, dict) and part.get("type") in CALL_TYPES | OUTPUT_TYPES for part in content):
        # an early shape: calls and their outputs as parts of a message -- each read as its own item
        text_parts = [p for p in content if not (isinstance(p, dict) and p.get("type") in CALL_TYPES | OUTPUT_TYPES)]
        if text_parts:
            yield from item_events({**item, "content": text_parts}, session_id, timestamp, line, tools)
        for part in content:
            if isinstance(part, dict) and part.get("type") in CALL_TYPES | OUTPUT_TYPES:
                yield from item_events(part, session_id, timestamp, line, tools)
        return
    if kind in ("message", "agent_message"):
        role = opt_str(item.get("role")) or "user"
        text = flatten_content(item.get("content"))
        if text or kind == "message":
            yield MessageRecord(session_id, ROLES.get(role, role), text, timestamp=timestamp, line=line)
    elif kind == "reasoning":
        text = "\n".join(t for t in (flatten_content(item.get("summary")),
                                     flatten_content(item.get("content"))) if t)
        if text.strip():
            yield MessageRecord(session_id, "reasoning", text, timestamp=timestamp, line=line)
    elif kind in CALL_TYPES:
        call_id = opt_str(item.get("call_id")) or opt_str(item.get("id"))
        name = opt_str(item.get("name")) or DEFAULT_CALL_NAMES.get(str(kind), str(kind))
        call = {"id": call_id, "type": "function",
                "function": {"name": name, "arguments": json_text(_arguments(item)) or ""}}
        tools.remember([call])
        yield MessageRecord(session_id, "assistant", "",
                            tool_calls=json.dumps([call], ensure_ascii=False),
                            timestamp=timestamp, line=line)
    elif kind in OUTPUT_TYPES:
        call_id = opt_str(item.get("call_id"))
        output = item.get("tools") if kind == "tool_search_output" else item.get("output", item.get("result"))
        yield MessageRecord(session_id, "tool", _output_text(output),
                            tool_name=tools.lookup(call_id), tool_call_id=call_id,
                            timestamp=timestamp, line=line)
    elif kind == "context_compaction":
        text = flatten_content(item.get("summary") or item.get("message"))
        if text:
            yield MessageRecord(session_id, "system", text, timestamp=timestamp, line=line)
    # SILENT_TYPES: snapshots, encrypted compactions and tool lists carry no conversation


def _arguments(item: dict[str, Any]) -> Any:
    """What a call item was called with, by item type (never an image's bytes)."""
    kind = item.get("type")
    if kind == "image_generation_call":
        return {k: item[k] for k in ("revised_prompt", "prompt", "size") if item.get(k)}
    for key in ("arguments", "input", "action"):
        if key in item:
            return item[key]
    if kind == "web_search_call":  # a search whose query was never written: what is known of it
        return {k: item[k] for k in ("status", "id") if item.get(k)} or None
    return None


_MCP_BLOCK_TYPES = {"text", "image", "audio", "resource", "resource_link"}


def _mcp_blocks(value: Any) -> bool:
    """A non-empty list of MCP content blocks (``{"type": "text", "text"}``, images, resources)."""
    return isinstance(value, list) and bool(value) and all(
        isinstance(item, dict) and item.get("type") in _MCP_BLOCK_TYPES for item in value)


def _output_text(output: Any) -> str:
    """Codex stores tool output as text, content items, ``{"content", "success"}`` objects,
    or JSON text ``{"output": ..., "metadata": ...}``; tool search outputs as tool specs."""
    if isinstance(output, str):
        stripped = output.lstrip()
        if stripped.startswith(("{", "[")):
            try:
                decoded = json.loads(stripped)
            except (ValueError, RecursionError):
                return output
            if isinstance(decoded, dict) and "output" in decoded:
                return flatten_content(decoded["output"])
            if _mcp_blocks(decoded):
                # an MCP result's content blocks as codex-rs serializes them into the output
                # (``serde_json::to_string(&content)`` in ``as_function_call_output_payload``)
                return flatten_content(decoded)
        return output
    if isinstance(output, list) and output and all(isinstance(t, dict) and "name" in t for t in output):
        return ", ".join(str(t["name"]) for t in output)  # tool search: the tools it loaded
    return flatten_content(output)
