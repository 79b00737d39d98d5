"""The older shape of ``codex exec --json`` (read by :mod:`codex_exec`).

Before the ``thread.*``/``item.*`` stream, ``codex exec --json`` printed Codex's protocol
events as they were (``codex-rs/exec/src/event_processor_with_json_output.rs`` of that time):

* first a config summary object of strings (``create_config_summary_entries``: ``workdir``,
  ``model``, ``provider``, ``approval``, ``sandbox``, ``reasoning effort``, ...), then
  ``{"prompt": <the user's prompt>}`` (the earliest version printed neither);
* then every ``Event`` but the streaming deltas: ``{"id": <submission id>, "msg": {"type",
  ...}}``, ``msg`` an ``EventMsg`` of ``codex-rs/core/src/protocol.rs`` (the ``event_msg``
  payloads of a rollout).

The conversation is rebuilt from the messages as :mod:`codex_exec` stores the current
stream's items: ``agent_message`` / ``agent_reasoning`` / ``user_message`` (a repeat of the
prompt line is skipped), a command as ``exec_command_begin`` (a ``shell`` call) and
``exec_command_end`` (its output, a non-zero exit code noted), a patch as ``patch_apply_begin``
(``apply_patch`` with the paths and kinds) and ``patch_apply_end``, an MCP call as
``mcp_tool_call_begin`` / ``_end`` (``result`` is ``{"Ok": CallToolResult}`` or
``{"Err": message}``), ``web_search_end`` as a ``web_search`` call, ``plan_update`` as a
checklist, ``error`` / ``stream_error`` / ``turn_aborted`` as ``system`` rows.
"""

from __future__ import annotations

import shlex
from typing import Any

from hermes_store.sessions.importers.base import (
    MessageRecord,
    Problem,
    SessionRecord,
    flatten_content,
    opt_str,
)
from hermes_store.sessions.importers.doc_common import dumps, tool_call

CONFIG_KEYS = frozenset({"workdir", "model", "provider", "approval", "sandbox"})
QUIET = frozenset({
    "task_started", "task_complete", "token_count", "agent_message_delta", "agent_reasoning_delta",
    "agent_reasoning_raw_content", "agent_reasoning_raw_content_delta", "agent_reasoning_section_break",
    "exec_command_output_delta", "background_event", "turn_diff", "get_history_entry_response",
    "mcp_list_tools_response", "list_custom_prompts_response", "shutdown_complete", "conversation_history",
    "conversation_path", "exec_approval_request", "apply_patch_approval_request", "web_search_begin",
    "entered_review_mode", "exited_review_mode", "session_configured",
})


def is_legacy_line(obj: dict[str, Any]) -> bool:
    """``{"id": <str>, "msg": {"type": <str>, ...}}``: one protocol event."""
    msg = obj.get("msg")
    return isinstance(obj.get("id"), str) and isinstance(msg, dict) and isinstance(msg.get("type"), str) \
        and set(obj) <= {"id", "msg"}


def is_config_summary(obj: dict[str, Any]) -> bool:
    """The config summary object printed first: string values keyed ``workdir``, ``model``, ..."""
    return CONFIG_KEYS <= set(obj) and all(isinstance(v, str) for v in obj.values()) and "type" not in obj


class LegacyRun:
    """The rows of one run of the older shape, in order."""

    def __init__(self, session_id: str, source: str | None, reported: set[tuple[str, str]],
                 problems: list[Problem]) -> None:
        self.record = SessionRecord(id=session_id, source=source)
        self.rows: list[MessageRecord] = []
        self.reported = reported
        self.problems = problems
        self.calls: dict[str, str] = {}  # call id -> tool name
        self.prompts: list[str] = []  # prompt lines not yet repeated by a user_message

    def _row(self, role: str, text: str | None, line: int, **extra: Any) -> None:
        if (text and text.strip()) or extra:
            self.rows.append(MessageRecord(self.record.id, role, text or "", line=line, **extra))

    def _call(self, call_id: str | None, name: str, arguments: Any, line: int) -> None:
        call = tool_call(call_id, name, arguments)
        if call_id:
            self.calls[call_id] = name
        self._row("assistant", "", line, tool_calls=dumps([call]), tool_calls_value=[call])

    def _result(self, call_id: str | None, text: str, line: int, default: str) -> None:
        name = self.calls.get(call_id or "", default)
        self.rows.append(MessageRecord(self.record.id, "tool", text, tool_name=name, tool_call_id=call_id,
                                       line=line))

    def handle(self, obj: dict[str, Any], line: int) -> None:
        """One line of the run: the config summary, the prompt, or an event."""
        if is_config_summary(obj):
            self.record.workspace = opt_str(obj.get("workdir")) or self.record.workspace
            self.record.model = opt_str(obj.get("model")) or self.record.model
            self.record.meta.update({k: obj[k] for k in ("provider", "approval", "sandbox") if obj.get(k)})
            return
        if set(obj) == {"prompt"}:
            prompt = opt_str(obj.get("prompt"))
            if prompt:
                self.prompts.append(prompt.strip())
            self._row("user", prompt, line)
            return
        msg = obj["msg"]
        kind = msg["type"]
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(msg, line)
        elif kind not in QUIET:
            if ("message", kind) not in self.reported:
                self.reported.add(("message", kind))
                self.problems.append(Problem(line, f"unknown message type {kind!r} (skipped; later ones not reported)"))
        if kind == "session_configured":
            session_id = opt_str(msg.get("session_id"))
            if session_id:
                self.record.id = session_id
                for row in self.rows:
                    row.session_id = session_id
            self.record.model = opt_str(msg.get("model")) or self.record.model

    def _on_agent_message(self, msg: dict[str, Any], line: int) -> None:
        self._row("assistant", opt_str(msg.get("message")), line)

    def _on_agent_reasoning(self, msg: dict[str, Any], line: int) -> None:
        self._row("reasoning", opt_str(msg.get("text")), line)

    def _on_user_message(self, msg: dict[str, Any], line: int) -> None:
        text = opt_str(msg.get("message"))
        if text and text.strip() in self.prompts:
            self.prompts.remove(text.strip())  # the prompt line said it already
            return
        self._row("user", text, line)

    def _on_exec_command_begin(self, msg: dict[str, Any], line: int) -> None:
        command = msg.get("command")
        if isinstance(command, list):
            command = shlex.join(str(part) for part in command)
        arguments = {"command": command}
        if opt_str(msg.get("cwd")):
            arguments["workdir"] = msg["cwd"]
        self._call(opt_str(msg.get("call_id")), "shell", arguments, line)

    def _on_exec_command_end(self, msg: dict[str, Any], line: int) -> None:
        output = opt_str(msg.get("aggregated_output"))
        if output is None:
            output = "\n".join(t for t in (opt_str(msg.get("stdout")), opt_str(msg.get("stderr"))) if t)
        code = msg.get("exit_code")
        note = f"[exit code {code}]" if isinstance(code, int) and not isinstance(code, bool) and code else ""
        self._result(opt_str(msg.get("call_id")), "\n".join(t for t in (output.rstrip("\n"), note) if t), line,
                     "shell")

    def _on_patch_apply_begin(self, msg: dict[str, Any], line: int) -> None:
        changes = msg.get("changes") if isinstance(msg.get("changes"), dict) else {}
        listed = [{"path": path, "kind": change_kind(change)} for path, change in changes.items()]
        self._call(opt_str(msg.get("call_id")), "apply_patch", {"changes": listed}, line)

    def _on_patch_apply_end(self, msg: dict[str, Any], line: int) -> None:
        text = "\n".join(t for t in (opt_str(msg.get("stdout")), opt_str(msg.get("stderr"))) if t)
        if msg.get("success") is False:
            text = "\n".join(t for t in (text, "[patch failed]") if t)
        self._result(opt_str(msg.get("call_id")), text, line, "apply_patch")

    def _on_mcp_tool_call_begin(self, msg: dict[str, Any], line: int) -> None:
        invocation = msg.get("invocation") if isinstance(msg.get("invocation"), dict) else {}
        name = f"mcp__{invocation.get('server')}__{invocation.get('tool')}"
        self._call(opt_str(msg.get("call_id")), name, invocation.get("arguments"), line)

    def _on_mcp_tool_call_end(self, msg: dict[str, Any], line: int) -> None:
        result = msg.get("result")
        if isinstance(result, dict) and ("Ok" in result or "Err" in result):
            text = mcp_result(result.get("Ok"), result.get("Err"))
        else:
            text = mcp_result(result, None)
        self._result(opt_str(msg.get("call_id")), text, line, "mcp")

    def _on_web_search_end(self, msg: dict[str, Any], line: int) -> None:
        self._call(opt_str(msg.get("call_id")), "web_search", {"query": msg.get("query")}, line)

    def _on_plan_update(self, msg: dict[str, Any], line: int) -> None:
        text = "\n".join(t for t in (opt_str(msg.get("explanation")), checklist(msg.get("plan"))) if t)
        self._row("assistant", text, line)

    def _on_error(self, msg: dict[str, Any], line: int) -> None:
        if opt_str(msg.get("message")):
            self._row("system", f"[error] {msg['message']}", line)

    def _on_stream_error(self, msg: dict[str, Any], line: int) -> None:
        if opt_str(msg.get("message")):
            self._row("system", f"[stream error] {msg['message']}", line)

    def _on_turn_aborted(self, msg: dict[str, Any], line: int) -> None:
        self._row("system", f"[turn aborted: {msg.get('reason') or 'unknown'}]", line)


def change_kind(change: Any) -> str:
    """``add`` / ``delete`` / ``update`` of a ``FileChange`` (externally tagged, ``{"add": {...}}``
    or ``"delete"``; some versions tag it internally, ``{"type": "add", ...}``)."""
    if isinstance(change, str):
        return change
    if isinstance(change, dict):
        if isinstance(change.get("type"), str):
            return change["type"]
        if len(change) == 1:
            return str(next(iter(change)))
    return "update"


def mcp_result(result: Any, error: Any) -> str:
    """The text of an MCP call's result (content blocks, else the structured content) or error."""
    if isinstance(error, dict) and opt_str(error.get("message")):
        return f"[error] {error['message']}"
    if isinstance(error, str) and error:
        return f"[error] {error}"
    if not isinstance(result, dict):
        return flatten_content(result) if result is not None else ""
    text = flatten_content(result.get("content"))
    # ``structuredContent`` as MCP's ``CallToolResult`` serializes it (rollouts' ``mcp_tool_call_end``),
    # ``structured_content`` in ``codex exec --json``'s item
    structured = result.get("structured_content", result.get("structuredContent"))
    if not text and structured is not None:
        text = dumps(structured)
    if result.get("is_error") or result.get("isError"):
        text = f"[error] {text}"
    return text


def checklist(items: Any) -> str:
    """A to-do list as ``- [x] step`` / ``- [ ] step`` lines (``{text, completed}`` or a plan's
    ``{step, status}``)."""
    lines = []
    for entry in items if isinstance(items, list) else []:
        if not isinstance(entry, dict):
            continue
        text = (opt_str(entry.get("text")) or opt_str(entry.get("step")) or "").strip()
        if not text:
            continue  # a step without words is no step
        done = entry.get("completed") is True or entry.get("status") == "completed"
        lines.append(f"- [{'x' if done else ' '}] {text}")
    return "\n".join(lines)
