"""Kimi Code's agent record log (``wire.jsonl``), read by the ``kimi-cli`` importer.

Kimi Code (MoonshotAI/kimi-code, the TypeScript successor of Kimi CLI) keeps a
session in ``~/.kimi-code/sessions/<work-dir key>/<sessionId>/`` with
``state.json`` (``title``, ``createdAt``, ``updatedAt``, ``workDir``) and one
record log per agent, ``agents/main/wire.jsonl`` (subagents in
``agents/<agentId>/wire.jsonl``). Each line is ``{"type": ..., ..., "time": ms}``:

* ``metadata`` first (``protocol_version``, ``created_at`` in ms);
* ``context.append_message``: ``message`` ``{role, content: [parts], toolCalls,
  toolCallId, origin}`` -- the user's prompts (origin ``user``) and injected
  notices (other origins, kept as ``system`` rows);
* ``context.append_loop_event``: ``event`` of the model loop -- ``content.part``
  (a ``text`` or ``think`` part), ``tool.call`` (``toolCallId``, ``name``,
  ``args``), ``tool.result`` (``toolCallId``, ``result.output`` text or parts,
  ``result.isError``); ``step.begin``/``step.end`` are bookkeeping;
* ``turn.prompt``/``turn.steer`` repeat the prompt the context record carries
  (skipped); ``config.update`` and ``usage.record`` name the model; the rest
  (permissions, compaction, tool registry, request traces, goals) is bookkeeping.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers.base import (
    Event,
    MessageRecord,
    Problem,
    SessionRecord,
    flatten_content,
    opt_str,
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import dumps, tool_call
from hermes_store.sessions.importers.openai_common import ToolNames

WIRE_TYPES = frozenset(
    {
        "metadata",
        "forked",
        "turn.prompt",
        "turn.steer",
        "turn.cancel",
        "config.update",
        "profile.bind",
        "tools.reset_active_tools",
        "permission.set_mode",
        "permission.record_approval_result",
        "full_compaction.begin",
        "full_compaction.cancel",
        "full_compaction.complete",
        "micro_compaction.apply",
        "plan_mode.enter",
        "plan_mode.cancel",
        "plan_mode.exit",
        "swarm_mode.enter",
        "swarm_mode.exit",
        "tools.register_user_tool",
        "tools.unregister_user_tool",
        "tools.set_active_tools",
        "usage.record",
        "context.append_message",
        "context.append_loop_event",
        "context.update_token_count",
        "context.clear",
        "context.apply_compaction",
        "context.undo",
        "context.snapshot",
        "tools.update_store",
        "goal.create",
        "goal.update",
        "goal.clear",
        "llm.tools_snapshot",
        "llm.request",
        "mcp.tools_discovered",
        "request.header",
    }
)
# wire types only Kimi Code writes (a line of one of these is the format's own)
SIGNATURE = frozenset(
    {
        "turn.prompt",
        "context.append_message",
        "context.append_loop_event",
        "config.update",
        "usage.record",
        "llm.request",
    }
)
_USER_ORIGINS = {"user", "skill_activation", "plugin_command", "shell_command", "retry"}


def is_wire_record(obj: dict[str, Any]) -> bool:
    """A Kimi Code record line: a dotted wire ``type`` or the ``metadata`` header with ``created_at``."""
    kind = obj.get("type")
    if kind == "metadata":
        return "protocol_version" in obj and "created_at" in obj
    return kind in SIGNATURE


def _read_state(path: Path) -> dict[str, Any]:
    """``state.json`` of the session holding ``agents/<id>/wire.jsonl`` (empty when absent)."""
    if path.parent.parent.name != "agents":
        return {}
    try:
        state = json.loads((path.parent.parent.parent / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def content_parts(content: Any) -> tuple[str, str]:
    """(text, thinking) of a Kimi content value (kosong's parts: ``text``, ``think``, media
    parts), the same in Kimi CLI's ``context.jsonl`` and Kimi Code's wire log."""
    if isinstance(content, str):
        return content, ""
    texts: list[str] = []
    thoughts: list[str] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            texts.append(str(part.get("text") or ""))
        elif kind == "think":
            thoughts.append(str(part.get("think") or ""))
        elif kind in ("image_url", "audio_url", "video_url"):
            texts.append(f"[{kind.split('_')[0]}]")
    return "\n".join(t for t in texts if t), "\n".join(t for t in thoughts if t)


def _stamp(value: Any, line: int, problems: list[Problem]) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        problems.append(Problem(line, f"field 'time': not a time ({value!r})"))
        return None


class WireReader:
    """Turns the records of one ``wire.jsonl`` into session and message events."""

    def __init__(self, path: Path, source: str | None) -> None:
        self.path = path
        self.source = source
        agent_dir = path.parent
        self.session_dir = (
            agent_dir.parent.parent if agent_dir.parent.name == "agents" else agent_dir
        )
        self.agent = agent_dir.name if agent_dir.parent.name == "agents" else "main"
        base = self.session_dir.name
        self.session_id = base if self.agent == "main" else f"{base}:{self.agent}"
        self.parent = base if self.agent != "main" else None
        self.tools = ToolNames()
        self.reported: set[str] = set()

    def start(self) -> SessionRecord:
        """The session record from ``state.json`` (title, creation time, work dir)."""
        state = _read_state(self.path)
        problems: list[Problem] = []
        started = _stamp(state.get("createdAt"), 0, problems) if state.get("createdAt") else None
        title = opt_str(state.get("title")) if self.agent == "main" else None
        if title == "New Session" and not state.get("isCustomTitle"):
            title = None  # Kimi Code's placeholder before the first prompt names the session
        return SessionRecord(
            id=self.session_id,
            source=self.source,
            title=title,
            started_at=started,
            workspace=opt_str(state.get("workDir")),
            parent_session_id=self.parent,
            meta={"agent": self.agent} if self.agent != "main" else {},
        )

    def handle(self, obj: dict[str, Any], line: int) -> Iterator[Event]:
        """Events of one record line."""
        problems: list[Problem] = []
        kind = obj.get("type")
        stamp = _stamp(obj.get("time"), line, problems) if obj.get("time") is not None else None
        yield from problems
        if kind == "metadata":
            created = _stamp(obj.get("created_at"), line, [])
            yield SessionRecord(
                id=self.session_id,
                started_at=created,
                meta={"protocol_version": str(obj.get("protocol_version"))},
            )
        elif kind == "context.append_message":
            message = obj.get("message")
            if isinstance(message, dict):
                yield from self._message(message, stamp, line)
        elif kind == "context.append_loop_event":
            event = obj.get("event")
            if isinstance(event, dict):
                yield from self._loop_event(event, stamp, line)
        elif kind == "config.update" and opt_str(obj.get("modelAlias")):
            yield SessionRecord(id=self.session_id, model=str(obj["modelAlias"]))
        elif kind == "usage.record" and opt_str(obj.get("model")):
            yield SessionRecord(id=self.session_id, model=str(obj["model"]))
        elif kind not in WIRE_TYPES and str(kind) not in self.reported:
            self.reported.add(str(kind))
            yield Problem(line, f"unknown record type {kind!r} (skipped; reported once per file)")

    def _message(self, message: dict[str, Any], stamp: float | None, line: int) -> Iterator[Event]:
        role = message.get("role")
        text, thinking = content_parts(message.get("content"))
        origin = message.get("origin") if isinstance(message.get("origin"), dict) else {}
        origin_kind = str(origin.get("kind") or "user")
        if role == "user" and origin_kind not in _USER_ORIGINS:
            if text:
                yield MessageRecord(
                    self.session_id, "system", f"[{origin_kind}] {text}", timestamp=stamp, line=line
                )
            return
        if role not in ("user", "assistant", "tool", "system"):
            yield Problem(line, f"field 'message.role': unknown role {role!r} (skipped)")
            return
        if thinking:
            yield MessageRecord(self.session_id, "reasoning", thinking, timestamp=stamp, line=line)
        calls = [
            tool_call(c.get("id"), c.get("name"), c.get("arguments"))
            for c in message.get("toolCalls") or []
            if isinstance(c, dict)
        ]
        self.tools.remember(calls)
        call_id = opt_str(message.get("toolCallId"))
        if text or calls or role == "tool":
            yield MessageRecord(
                self.session_id,
                str(role),
                text,
                tool_name=self.tools.lookup(call_id) if role == "tool" else None,
                tool_calls=dumps(calls) if calls else None,
                tool_call_id=call_id,
                timestamp=stamp,
                line=line,
            )

    def _loop_event(self, event: dict[str, Any], stamp: float | None, line: int) -> Iterator[Event]:
        kind = event.get("type")
        if kind == "content.part":
            text, thinking = content_parts([event.get("part")])
            if thinking.strip():
                yield MessageRecord(
                    self.session_id, "reasoning", thinking, timestamp=stamp, line=line
                )
            if text:
                yield MessageRecord(self.session_id, "assistant", text, timestamp=stamp, line=line)
        elif kind == "tool.call":
            call = tool_call(event.get("toolCallId"), event.get("name"), event.get("args"))
            self.tools.remember([call])
            yield MessageRecord(
                self.session_id,
                "assistant",
                "",
                tool_calls=dumps([call]),
                timestamp=stamp,
                line=line,
            )
        elif kind == "tool.result":
            call_id = opt_str(event.get("toolCallId"))
            result = event.get("result") if isinstance(event.get("result"), dict) else {}
            output = result.get("output")
            text = content_parts(output)[0] if isinstance(output, list) else flatten_content(output)
            yield MessageRecord(
                self.session_id,
                "tool",
                text,
                tool_name=self.tools.lookup(call_id),
                tool_call_id=call_id,
                timestamp=stamp,
                line=line,
            )
