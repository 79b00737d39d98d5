"""``copilot-cli``: GitHub Copilot CLI session event logs.

``~/.copilot/session-state/<sessionId>/events.jsonl`` (with ``workspace.yaml``:
``cwd``, ``summary``) and, in earlier versions, ``~/.copilot/session-state/<sessionId>.jsonl``.
One event per line: ``{type, data, id, parentId, timestamp}``:

* ``session.start`` (``data.sessionId``, ``context.cwd``, ``copilotVersion``,
  ``selectedModel``), ``session.model_change`` (``newModel``);
* ``user.message`` (``content``, ``attachments``);
* ``assistant.message`` (``content``, ``toolRequests: [{toolCallId, name,
  arguments}]``, ``reasoningText``), ``assistant.reasoning`` (``content``);
* ``tool.execution_complete`` (``toolCallId``, ``success``, ``result.content``,
  ``error.message``): the tool's result;
* ``session.error``, ``abort``, ``session.info``: kept as ``system`` rows;
* bookkeeping (turn start/end, deltas, hooks, usage, permissions,
  compaction): skipped; an unknown event type is reported once per file;
  events marked ``ephemeral`` (never persisted by Copilot, only seen in a saved
  ``--output-format json`` stream) are skipped. Such a saved run is ``copilot-stream``
  (:mod:`copilot_stream`, this reader with ``saved_stream`` set): no ``session.start``, and a
  closing ``result`` line (``sessionId``, ``exitCode``, ``usage``: kept in the session's meta).

A sub-agent's events share the parent's log: they carry an envelope-level
``agentId`` (older versions: ``data.parentToolCallId`` only). They go to the
child session ``<sessionId>:<id of the tool call that spawned it>`` (its
``agentId`` when no call is named), ``parent_session_id`` the session;
``subagent.started`` (``toolCallId``) titles it (``agentDisplayName``, ``model``).

The log is append-only: later runs resume at a byte offset. The tool calls requested and not
yet completed are kept in the source state (``open_calls``: call id -> tool name), so a run
resuming between a request and its ``tool.execution_start`` / ``tool.execution_complete``
still knows them (no second call row, the result keeps its tool's name).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers.base import (
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    flatten_content,
    opt_str,
    read_jsonl,
    safe_timestamp,
    said_if_empty,
)
from hermes_store.sessions.importers.doc_common import dumps, shape_guarded, tool_call
from hermes_store.sessions.importers.openai_common import ToolNames

_BOOKKEEPING = {
    "assistant.turn_start",
    "assistant.turn_end",
    "assistant.message_delta",
    "assistant.reasoning_delta",
    "assistant.intent",
    "assistant.usage",
    "tool.execution_progress",
    "tool.execution_partial_result",
    "tool.user_requested",
    "session.truncation",
    "session.compaction_start",
    "session.usage_info",
    "session.idle",
    "session.shutdown",
    "session.context_changed",
    "session.workspace_file_changed",
    "session.auto_mode_resolved",
    "hook.start",
    "hook.end",
    "hook.progress",
    "subagent.completed",
    "subagent.failed",
    "subagent.selected",
    "permission.requested",
    "permission.completed",
    "command.queued",
    "command.execute",
    "command.completed",
    "skill.context_delivered_ref",
    "skill.invoked_ref",
    "subagent.configured",
    "model.call_finished",
    "system.notification",
    "pending_messages.modified",
    "session.handoff",
    "session.snapshot_rewind",
}
# the rest of the session event names of github/copilot-sdk's generated session-events.ts: state
# changes, streaming and UI traffic with no conversation text of their own
_BOOKKEEPING |= {
    "assistant.idle",
    "assistant.message_start",
    "assistant.server_tool_progress",
    "assistant.streaming_delta",
    "assistant.tool_call_delta",
    "auto_mode_switch.completed",
    "auto_mode_switch.requested",
    "capabilities.changed",
    "commands.changed",
    "elicitation.completed",
    "elicitation.requested",
    "exit_plan_mode.completed",
    "exit_plan_mode.requested",
    "external_tool.completed",
    "external_tool.requested",
    "factory.run_settled",
    "factory.run_started",
    "factory.run_updated",
    "mcp.headers_refresh_completed",
    "mcp.headers_refresh_required",
    "mcp.oauth_completed",
    "mcp.oauth_required",
    "mcp.prompts.list_changed",
    "mcp.resources.list_changed",
    "mcp.tools.list_changed",
    "mcp_app.tool_call_complete",
    "sampling.completed",
    "sampling.requested",
    "session.autopilot_objective_changed",
    "session.background_tasks_changed",
    "session.binary_asset",
    "session.canvas.closed",
    "session.canvas.opened",
    "session.canvas.recorded",
    "session.canvas.registry_changed",
    "session.canvas.removed",
    "session.canvas.unavailable",
    "session.context_cleared",
    "session.custom_agents_updated",
    "session.custom_notification",
    "session.extensions.attachments_pushed",
    "session.extensions_loaded",
    "session.managed_settings_enforced",
    "session.managed_settings_resolved",
    "session.mcp_server_status_changed",
    "session.mcp_servers_loaded",
    "session.mode_changed",
    "session.permissions_changed",
    "session.plan_changed",
    "session.remote_steerable_changed",
    "session.schedule_cancelled",
    "session.schedule_created",
    "session.schedule_rearmed",
    "session.session_limits_changed",
    "session.skills_loaded",
    "session.todos_changed",
    "session.tools_updated",
    "session.usage_checkpoint",
    "session_limits_exhausted.completed",
    "session_limits_exhausted.requested",
    "subagent.deselected",
    "tool_search.activated",
    "ui.ephemeral_query",
    "user_input.completed",
    "user_input.requested",
    "system.message",  # the system prompt, the same in every session (as Kimi's _system_prompt)
}
# notices kept as ``system`` rows: event type -> (label, the data fields holding the text, first wins)
_NOTICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "session.error": ("error", ("message", "errorType")),
    "abort": ("aborted", ("reason",)),
    "session.warning": ("warning", ("message", "warningType")),
    "model.call_failure": ("error", ("errorMessage", "errorType", "failureKind")),
    "session.task_complete": ("task complete", ("summary", "reason", "outcome")),
    "session.compaction_complete": ("compaction", ("summaryContent",)),
    "skill.invoked": ("skill", ("content",)),  # the skill's instructions put before the model
    "session.fusion_route_failed": ("model route failed", ("reason",)),
    "assistant.fusion_phase_failed": ("model phase failed", ("reason",)),
}
_OPEN_CALLS_KEPT = 1_000  # open calls remembered across runs (an aborted turn's never complete)

_KNOWN = (
    _BOOKKEEPING
    | set(_NOTICES)
    | {
        "session.start",
        "session.resume",
        "session.model_change",
        "session.title_changed",
        "user.message",
        "assistant.message",
        "assistant.reasoning",
        "tool.execution_start",
        "tool.execution_complete",
        "session.info",
        "subagent.started",
        "result",
    }
)


def _read_yaml_map(path: Any) -> dict[str, str]:
    """``key: value`` lines of Copilot's flat ``workspace.yaml`` (no nesting)."""
    out: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                key, sep, value = line.partition(":")
                if sep and not line.startswith((" ", "#")):
                    out[key.strip()] = value.strip().strip("'\"")
    except OSError:
        return {}
    return out


def run_result(obj: dict[str, Any]) -> bool:
    """The last line of a ``copilot -p --output-format json`` run: ``{type: "result", sessionId,
    exitCode, usage}`` (no ``data``: not a session event)."""
    return obj.get("type") == "result" and isinstance(obj.get("sessionId"), str) and "exitCode" in obj


def _last_line(path: Path, size: int = 8192) -> dict[str, Any] | None:
    """The file's last non-blank line as a JSON object (None when it is not one)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - size))
            lines = handle.read().splitlines()
    except OSError:
        return None
    for raw in reversed(lines):
        if raw.strip():
            try:
                obj = json.loads(raw.decode("utf-8", errors="replace"))
            except ValueError:
                return None
            return obj if isinstance(obj, dict) else None
    return None


def is_saved_stream(head: Head) -> bool:
    """Copilot's events as ``copilot -p --output-format json`` prints them, saved to a file: closed
    by the run's ``result`` line, or (a run cut short) with events marked ``ephemeral`` (never
    written to the log) and no ``session.start`` (the log on disk opens with it, the run prints
    none). A file named ``events.jsonl`` is a session log."""
    if head.is_sqlite or head.path.name == "events.jsonl":
        return False
    objects = head.objects()
    if any(run_result(o) for o in objects):
        return True
    if not any(isinstance(o.get("data"), dict) and isinstance(o.get("type"), str) for o in objects):
        return False
    last = _last_line(head.path)
    if last is not None and run_result(last):
        return True
    return any(o.get("ephemeral") is True for o in objects) \
        and not any(o.get("type") == "session.start" for o in objects)


class CopilotCliImporter(Importer):
    """One Copilot CLI session's ``events.jsonl``."""

    name = "copilot-cli"
    # 2: sub-agent events, resumed tool starts (2026-12-06); 3: a saved ``--output-format json`` run
    # read before copilot-stream existed is detected again; 4: a skill's instructions (skill.invoked)
    reader = 4
    agent = "GitHub Copilot CLI"
    indexes = "user and assistant messages, tool requests and results, reasoning, aborts and errors"
    source: str | None = "copilot-cli"
    # the installed CLI's own packages and schemas (``pkg/<platform>/<version>/``), settings, plugins, logs
    walk_skipped = (".copilot/pkg/*", ".copilot/config.json", ".copilot/mcp-config.json", ".copilot/plugins/*",
                    ".copilot/logs/*")
    default_locations = {
        "linux": ("~/.copilot/session-state/*/events.jsonl", "~/.copilot/session-state/*.jsonl"),
        "darwin": ("~/.copilot/session-state/*/events.jsonl", "~/.copilot/session-state/*.jsonl"),
    }

    saved_stream = False  # copilot-stream: what ``copilot -p --output-format json`` printed

    @classmethod
    def sniff(cls, head: Head) -> float:
        """``{type, data, id, timestamp}`` events with Copilot's dotted types (``session.start``, ...),
        a session log, not a saved ``--output-format json`` run (:func:`is_saved_stream`)."""
        if head.is_sqlite or is_saved_stream(head) != cls.saved_stream:
            return 0.0
        events = [
            o
            for o in head.objects()
            if isinstance(o.get("type"), str)
            and isinstance(o.get("data"), dict)
            and "timestamp" in o
        ]
        if not events:
            return 0.0
        if any(e["type"] in ("session.start", "user.message", "assistant.message") for e in events):
            return 0.95
        return 0.6 if all(e["type"] in _KNOWN for e in events) else 0.0

    def default_session_id(self) -> str:
        return self.path.parent.name if self.path.name == "events.jsonl" else self.path.stem

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        spoken = [False]  # an event other than the session's own (start, resume, info...) was met
        yield from said_if_empty(self._read(state, spoken), state, "the session's event log", lambda: not spoken[0])

    def _read(self, state: SourceState, spoken: list[bool]) -> Iterator[Event]:
        """The event log's rows; ``spoken[0]`` set once an event other than ``session.*`` is met."""
        tools = ToolNames(state.meta)
        # requested and not yet completed: kept in the state for a later run resuming mid-turn
        open_calls: dict[str, str] = {
            str(k): str(v) for k, v in dict(state.meta.get("open_calls") or {}).items() if k and v
        }
        tools.remember([{"id": k, "name": v} for k, v in open_calls.items()])

        def opened(calls: list[dict[str, Any]]) -> None:
            tools.remember(calls)
            for call in calls:
                name = call.get("function", {}).get("name")
                if call.get("id") and name:
                    open_calls[str(call["id"])] = str(name)
            while len(open_calls) > _OPEN_CALLS_KEPT:
                del open_calls[next(iter(open_calls))]
            kept()

        def kept() -> None:
            if open_calls:
                state.meta["open_calls"] = open_calls
            else:
                state.meta.pop("open_calls", None)
        session_id = self.default_session_id()
        reported: set[str] = set()
        workspace = (
            _read_yaml_map(self.path.parent / "workspace.yaml")
            if self.path.name == "events.jsonl"
            else {}
        )
        if not state.resume_at:
            yield SessionRecord(
                id=session_id,
                source=self.source,
                title=opt_str(workspace.get("summary")),
                workspace=opt_str(workspace.get("cwd")),
            )

        main_id = session_id
        children: set[str] = set()
        spawned_by: dict[str, str] = dict(state.meta.get("spawned_by") or {})  # agentId -> its tool call

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            nonlocal session_id
            if obj.get("ephemeral") is True:
                return  # transient: Copilot never writes it to the log, a saved stream repeats it
            if not str(obj.get("type") or "").startswith("session."):
                spoken[0] = True
            data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
            agent_id = opt_str(obj.get("agentId"))
            # the child is named by the tool call that spawned it (subagent.started's toolCallId, the
            # deprecated data.parentToolCallId), else by its agentId
            call = opt_str(data.get("toolCallId" if obj.get("type") == "subagent.started" else "parentToolCallId"))
            if call and agent_id and agent_id not in spawned_by:
                spawned_by[agent_id] = call
                state.meta["spawned_by"] = spawned_by  # kept for a later run resuming mid-log
            key = call or (spawned_by.get(agent_id, agent_id) if agent_id else None)
            session_id = f"{main_id}:{key}" if key else main_id
            if key and session_id not in children:
                children.add(session_id)
                yield SessionRecord(id=session_id, source=self.source, parent_session_id=main_id,
                                    workspace=opt_str(workspace.get("cwd")),
                                    meta={"agentId": agent_id} if agent_id else {})
            yield from _event(obj, data, line)

        def _event(obj: dict[str, Any], data: dict[str, Any], line: int) -> Iterator[Event]:
            problems: list[Problem] = []
            kind = obj.get("type")
            stamp = safe_timestamp(obj.get("timestamp"), line, problems)
            yield from problems
            if kind == "subagent.started":
                yield SessionRecord(id=session_id, started_at=stamp, model=opt_str(data.get("model")),
                                    title=opt_str(data.get("agentDisplayName")) or opt_str(data.get("agentName")),
                                    meta={k: data[k] for k in ("agentName", "agentDescription", "toolCallId")
                                          if data.get(k)})
            elif kind == "session.start":
                context = data.get("context") if isinstance(data.get("context"), dict) else {}
                yield SessionRecord(
                    id=session_id,
                    source=self.source,
                    started_at=stamp,
                    workspace=opt_str(context.get("cwd")) or opt_str(workspace.get("cwd")),
                    model=opt_str(data.get("selectedModel")),
                    meta={k: data[k] for k in ("copilotVersion", "producer") if data.get(k)},
                )
            elif kind == "result":  # the end of a ``copilot -p --output-format json`` run
                yield SessionRecord(id=main_id, meta={k: obj[k] for k in ("exitCode", "usage") if k in obj})
            elif kind == "session.model_change" and opt_str(data.get("newModel")):
                yield SessionRecord(id=session_id, model=str(data["newModel"]))
            elif kind == "session.resume" and opt_str(data.get("selectedModel")):
                yield SessionRecord(id=session_id, model=str(data["selectedModel"]))
            elif kind == "session.title_changed" and opt_str(data.get("title")):
                yield SessionRecord(id=session_id, title=str(data["title"]))
            elif kind == "user.message":
                text = flatten_content(data.get("content"))
                for attachment in data.get("attachments") or []:
                    if isinstance(attachment, dict):
                        label = (
                            attachment.get("displayName")
                            or attachment.get("path")
                            or attachment.get("type")
                        )
                        text += ("\n" if text else "") + f"[attachment {label}]"
                yield MessageRecord(session_id, "user", text, timestamp=stamp, line=line)
            elif kind == "assistant.message":
                reasoning = opt_str(data.get("reasoningText"))
                if reasoning:
                    yield MessageRecord(
                        session_id, "reasoning", reasoning, timestamp=stamp, line=line
                    )
                calls = [
                    tool_call(r.get("toolCallId"), r.get("name"), r.get("arguments"))
                    for r in data.get("toolRequests") or []
                    if isinstance(r, dict)
                ]
                opened(calls)
                text = flatten_content(data.get("content"))
                if text or calls:
                    yield MessageRecord(
                        session_id,
                        "assistant",
                        text,
                        tool_calls=dumps(calls) if calls else None,
                        timestamp=stamp,
                        line=line,
                    )
            elif kind == "assistant.reasoning":
                text = flatten_content(data.get("content"))
                if text.strip():
                    yield MessageRecord(session_id, "reasoning", text, timestamp=stamp, line=line)
            elif kind == "tool.execution_start":
                call_id = opt_str(data.get("toolCallId"))
                if (
                    call_id and tools.lookup(call_id) is None
                ):  # started with no assistant request (user's)
                    call = tool_call(call_id, data.get("toolName"), data.get("arguments"))
                    opened([call])
                    yield MessageRecord(
                        session_id,
                        "assistant",
                        "",
                        tool_calls=dumps([call]),
                        timestamp=stamp,
                        line=line,
                    )
            elif kind == "tool.execution_complete":
                call_id = opt_str(data.get("toolCallId"))
                result = data.get("result")
                error = data.get("error")
                if isinstance(result, dict):
                    text = flatten_content(result.get("content"))
                elif result is not None:
                    text = flatten_content(result)
                else:
                    text = ""
                if not text and isinstance(error, dict):
                    text = str(error.get("message") or "")
                name = tools.lookup(call_id) or opt_str(data.get("toolName"))
                if call_id and open_calls.pop(call_id, None) is not None:
                    kept()
                yield MessageRecord(
                    session_id,
                    "tool",
                    text,
                    tool_name=name,
                    tool_call_id=call_id,
                    timestamp=stamp,
                    line=line,
                )
            elif kind in _NOTICES or kind == "session.info":
                label, fields = _NOTICES.get(
                    str(kind), (str(data.get("infoType") or "info"), ("message",))
                )
                text = next((str(data[f]) for f in fields if opt_str(data.get(f))), None)
                if text:
                    yield MessageRecord(
                        session_id, "system", f"[{label}] {text}", timestamp=stamp, line=line
                    )
            elif kind not in _BOOKKEEPING and str(kind) not in reported:
                reported.add(str(kind))
                yield Problem(
                    line, f"unknown event type {kind!r} (skipped; reported once per file)"
                )

        yield from read_jsonl(self, state, handle)
