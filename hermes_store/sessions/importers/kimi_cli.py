"""``kimi-cli``: Moonshot's Kimi CLI conversation context files.

``~/.kimi/sessions/<md5 of the work dir>/<sessionId>/context.jsonl`` (and
``<sessionId>.jsonl`` directly under the work-dir directory in earlier
versions). One line per record: messages in the ``kosong`` shape ``{role:
"user" | "assistant" | "tool", content: text | [{type: "text", text} | {type:
"think", think} | {type: "image_url", image_url}], tool_calls: [{type:
"function", id, function: {name, arguments}}], tool_call_id}``, and Kimi's own
bookkeeping lines ``{"role": "_checkpoint", "id": N}``, ``{"role": "_usage",
"token_count": N}``, ``{"role": "_system_prompt", content}``. ``/clear`` and going
back to a checkpoint rotate the file: the whole of it is renamed ``context_<n>.jsonl``
(``<sessionId>_<n>.jsonl`` in the flat layout) and ``context.jsonl`` starts again (empty, or
with the lines before the checkpoint); the live file is then re-imported whole (its prefix
hash changed) and a rotated file is the session ``<sessionId>:rotated-<n>``, its parent the
session, so the turns cleared or reverted away stay indexed. Context files carry no times.

Kimi Code's record log (``~/.kimi-code/sessions/*/*/agents/*/wire.jsonl``: ``metadata``,
``turn.prompt``, ``context.append_message``, ``context.append_loop_event`` lines) is read
by the same importer through :mod:`~hermes_store.sessions.importers.kimi_wire`, and Kimi
CLI's own ``wire.jsonl`` beside ``context.jsonl`` (``{timestamp, message: {type, payload}}``
records) through :mod:`~hermes_store.sessions.importers.kimi_cli_wire`: read through the
context file (whose session it times), or alone when the context file is gone.
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
    json_text,
    opt_str,
    read_jsonl,
    said_if_empty,
)
from hermes_store.sessions.importers.doc_common import path_has_part, shape_guarded
from hermes_store.sessions.importers.kimi_cli_wire import CliWireReader, is_cli_wire_line, wire_span
from hermes_store.sessions.importers.kimi_wire import WireReader, content_parts, is_wire_record
from hermes_store.sessions.importers.openai_common import ToolNames

_PRIVATE = {"_checkpoint", "_usage", "_system_prompt"}
KIMI_CODE_STATE = "state.json"  # beside a Kimi Code session's agents/ folder (kimi_wire.session_state)
# a context file rotated away by /clear or a checkpoint revert (``kimi_cli.utils.path.next_available_rotation``)
_ROTATED = re.compile(r"^(.+)_(\d+)\.jsonl$")
ROLES = ("user", "assistant", "tool", "system")


def message_rows(obj: dict[str, Any], line: int, session_id: str, tools: ToolNames) -> Iterator[Event]:
    """The rows of one kosong message line ``{role, content, tool_calls, tool_call_id}``: its
    ``think`` parts as a ``reasoning`` row, then the message with its calls (a ``tool`` row named
    after its call). The same line in ``context.jsonl`` and in ``kimi --print --output-format
    stream-json`` output (:mod:`.kimi_print`)."""
    role = obj.get("role")
    if role not in ROLES:
        yield Problem(line, f"field 'role': unknown role {role!r} (skipped)")
        return
    text, thinking = content_parts(obj.get("content"))
    if thinking:
        yield MessageRecord(session_id, "reasoning", thinking, line=line)
    calls = obj.get("tool_calls") if isinstance(obj.get("tool_calls"), list) else None
    if calls:
        tools.remember(calls)
    call_id = opt_str(obj.get("tool_call_id"))
    if text or calls or role == "tool":
        yield MessageRecord(
            session_id,
            str(role),
            text,
            tool_name=tools.lookup(call_id) if role == "tool" else None,
            tool_calls=json_text(calls) if calls else None,
            tool_call_id=call_id,
            line=line,
        )


class KimiCliImporter(Importer):
    """One Kimi CLI ``context.jsonl``."""

    name = "kimi-cli"
    reader = 3  # 2: wire log beside context.jsonl; 3: rotated context_<n>.jsonl files (2026-12-07)
    agent = "Kimi CLI"
    indexes = (
        "messages, think parts, tool calls and results; bookkeeping lines skipped; Kimi Code's"
        " wire.jsonl record logs (prompts, loop events, subagents) with state.json titles; Kimi CLI's"
        " wire.jsonl (session times, or the conversation when context.jsonl is gone)"
    )
    source: str | None = "kimi-cli"
    default_locations = {
        "linux": (
            "~/.kimi/sessions/*/*/context.jsonl",
            "~/.kimi/sessions/*/*/context_*.jsonl",
            "~/.kimi/sessions/*/*.jsonl",
            "~/.kimi/sessions/*/*/wire.jsonl",
            "~/.kimi-code/sessions/*/*/agents/*/wire.jsonl",
        ),
        "darwin": (
            "~/.kimi/sessions/*/*/context.jsonl",
            "~/.kimi/sessions/*/*/context_*.jsonl",
            "~/.kimi/sessions/*/*.jsonl",
            "~/.kimi/sessions/*/*/wire.jsonl",
            "~/.kimi-code/sessions/*/*/agents/*/wire.jsonl",
        ),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Role lines with Kimi's private roles (``_checkpoint``, ``_usage``, ``_system_prompt``)."""
        if head.is_sqlite:
            return 0.0
        if head.path.name == KIMI_CODE_STATE and cls.member_of(head) is not None:
            return 0.6  # a Kimi Code session's state.json: read through its agent log
        objects = head.objects()
        if (
            objects
            and is_wire_record(objects[0])
            and any(o.get("type") != "metadata" for o in objects)
            and all(is_wire_record(o) or "." in str(o.get("type")) for o in objects)
        ):
            return 0.95  # Kimi Code's record log
        if (
            objects
            and len(objects) == 1
            and is_wire_record(objects[0])
            and head.path.name == "wire.jsonl"
        ):
            return 0.9  # only the header written so far
        if objects and all(is_cli_wire_line(o) for o in objects) and (
                any("message" in o for o in objects) or head.path.name == "wire.jsonl"):
            return 0.95 if head.path.name == "wire.jsonl" else 0.85  # Kimi CLI's own wire log
        if any(o.get("role") in _PRIVATE for o in objects):
            return 0.95
        if (
            objects
            and (head.path.name == "context.jsonl" or _ROTATED.match(head.path.name))
            and path_has_part(head.path, ".kimi")
            and all("role" in o for o in objects)
        ):
            return 0.9
        return 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """Kimi CLI's ``wire.jsonl`` beside its ``context.jsonl`` is read through the context; a
        Kimi Code session's ``state.json`` (its title, times, work dir) through the session's agent
        log ``agents/<agent>/wire.jsonl`` (the main agent's first)."""
        if head.path.name == KIMI_CODE_STATE:
            logs = sorted(head.path.parent.glob("agents/*/wire.jsonl"), key=lambda p: (p.parent.name != "main", p))
            return logs[0] if logs else None
        context = head.path.parent / "context.jsonl"
        if head.path.name != "wire.jsonl" or not context.is_file():
            return None
        objects = head.objects()
        return context if objects and is_cli_wire_line(objects[0]) else None

    def _rotated(self) -> tuple[str, str] | None:
        """``(session, n)`` for a context file Kimi CLI rotated away on ``/clear`` or a revert
        (``context_<n>.jsonl`` beside ``context.jsonl``; ``<sid>_<n>.jsonl`` beside a legacy
        ``<sid>.jsonl``), else None."""
        match = _ROTATED.match(self.path.name)
        if match is None:
            return None
        base = match.group(1)
        if base == "context":
            return self.path.parent.name, match.group(2)
        return (base, match.group(2)) if (self.path.parent / f"{base}.jsonl").is_file() else None

    def default_session_id(self) -> str:
        rotated = self._rotated()
        if rotated is not None:
            return f"{rotated[0]}:rotated-{rotated[1]}"
        if self.path.name == "wire.jsonl" and self._is_cli_wire():
            return self.path.parent.name
        if self.path.name == "wire.jsonl":
            return WireReader(self.path, self.source).session_id
        return self.path.parent.name if self.path.name == "context.jsonl" else self.path.stem

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        if self.path.name == KIMI_CODE_STATE:  # read through the session's agent log (member_of)
            yield Checkpoint(str(self.path.stat().st_size), 0)
            return
        if self._is_cli_wire():
            yield from self._read_cli_wire(state)
            return
        if self._is_wire():
            wire = WireReader(self.path, self.source)
            if not state.resume_at:
                yield wire.start()
            yield from read_jsonl(self, state, wire.handle)
            return
        spoken = [False]  # a line of the conversation was met (not only bookkeeping)
        yield from said_if_empty(self._read_context(state, spoken), state, "the context", lambda: not spoken[0])

    def _read_context(self, state: SourceState, spoken: list[bool]) -> Iterator[Event]:
        """A ``context.jsonl`` (or a rotated / flat-layout one): its messages; ``spoken[0]`` set once
        a line other than the bookkeeping ones is met."""
        tools = ToolNames(state.meta)
        session_id = self.default_session_id()
        wire = self.path.parent / "wire.jsonl"
        if self.path.name == "context.jsonl" and wire.is_file():
            started, ended = wire_span(wire)  # the context carries no times; its wire log does
            if started is not None:
                yield SessionRecord(id=session_id, source=self.source, started_at=started, ended_at=ended)
        rotated = self._rotated()
        if not state.resume_at:
            in_dir = self.path.name == "context.jsonl" or (rotated is not None and self.path.name.startswith("context_"))
            yield SessionRecord(
                id=session_id,
                source=self.source,
                parent_session_id=rotated[0] if rotated else None,
                meta={
                    "work_dir_hash": self.path.parent.parent.name if in_dir else self.path.parent.name,
                    **({"rotated_context": self.path.name} if rotated else {}),
                },
            )

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            role = obj.get("role")
            if role in ("_checkpoint", "_usage"):
                return
            if role == "_system_prompt":
                return  # the agent's system prompt, identical across sessions
            spoken[0] = True
            yield from message_rows(obj, line, session_id, tools)

        yield from read_jsonl(self, state, handle)

    def _read_cli_wire(self, state: SourceState) -> Iterator[Event]:
        """Kimi CLI's wire log: nothing beside its context file (read through it), else the conversation."""
        if (self.path.parent / "context.jsonl").is_file():
            yield Checkpoint(str(self.path.stat().st_size), 0)
            return
        session_id = self.default_session_id()
        if not state.resume_at:
            yield SessionRecord(id=session_id, source=self.source,
                                meta={"work_dir_hash": self.path.parent.parent.name, "read_from": "wire.jsonl"})
        yield from read_jsonl(self, state, CliWireReader(session_id, self.source).handle)

    def _first_object(self) -> dict[str, Any] | None:
        head = self.head
        if head is not None and head.path == self.path:
            objects = head.objects()
            return objects[0] if objects else None
        try:
            with open(self.path, "rb") as handle:
                first = handle.readline(1 << 20)
            obj = json.loads(first.decode("utf-8", errors="replace")) if first.strip() else None
        except (OSError, ValueError, RecursionError):
            return None
        return obj if isinstance(obj, dict) else None

    def _is_cli_wire(self) -> bool:
        """True for Kimi CLI's own wire log (``{timestamp, message}`` records, a header without ``created_at``)."""
        if self.path.name != "wire.jsonl":
            return False
        obj = self._first_object()
        return obj is not None and is_cli_wire_line(obj)

    def _is_wire(self) -> bool:
        """True when the file is a Kimi Code record log (its first object is a wire record)."""
        head = self.head
        if head is not None and head.path == self.path:
            objects = head.objects()
        else:
            objects = []
            try:
                with open(self.path, "rb") as handle:
                    first = handle.readline(1 << 20)
                obj = json.loads(first.decode("utf-8", errors="replace")) if first.strip() else None
                objects = [obj] if isinstance(obj, dict) else []
            except (OSError, ValueError, RecursionError):
                objects = []
        return bool(objects) and is_wire_record(objects[0])
