"""``claude-stream``: what ``claude -p --output-format stream-json`` prints, saved to a file.

Claude Code's headless mode (and the Claude Agent SDK, whose messages are the same objects)
prints one JSON object per line, each naming the session as ``session_id`` (snake case, where
the transcripts under ``~/.claude/projects`` write ``sessionId``):

* ``{"type": "system", "subtype": "init", session_id, cwd, model, tools, ...}``; other system
  subtypes are bookkeeping (``status``, ``compact_boundary``, ``hook_started`` /
  ``hook_progress`` / ``hook_response``, ``task_started`` / ``task_progress`` /
  ``task_notification``, ``files_persisted``, ``api_retry``);
* ``{"type": "user" | "assistant", message: {role, content}, parent_tool_use_id,
  session_id, uuid}``: Anthropic messages, read as Amp's stream (the same shape, which Amp
  copied); ``isReplay`` user messages repeat earlier ones on a resumed run and are skipped;
* ``{"type": "result", subtype, result | errors, num_turns, total_cost_usd, ...}``;
* bookkeeping with nothing to search: ``stream_event`` (the partial deltas of
  ``--include-partial-messages``: the whole message follows as an ``assistant`` line),
  ``tool_progress``, ``tool_use_summary``, ``auth_status``, ``rate_limit_event``,
  ``prompt_suggestion``, ``command_lifecycle``, ``conversation_reset``, ``keep_alive`` and the
  ``control_*`` lines of the stdio protocol.

Before this reader such a file was read as a Claude Code transcript: the session was named
after the file, not its ``session_id``, and every bookkeeping type was reported as a problem.
Types from the Claude Agent SDK's ``SDKMessage`` union (``@anthropic-ai/claude-agent-sdk``) and
the stream parsers of third-party supervisors.
"""

from __future__ import annotations

from typing import Any

from hermes_store.sessions.importers.amp_stream import AmpStreamImporter, stream_objects
from hermes_store.sessions.importers.base import Head
from hermes_store.sessions.importers.cursor_stream import is_cursor_event

_QUIET = frozenset({
    "stream_event", "tool_progress", "tool_use_summary", "auth_status", "rate_limit_event",
    "prompt_suggestion", "command_lifecycle", "conversation_reset", "keep_alive",
    "control_request", "control_response", "control_cancel_request",
})
_EVENTS = {"system", "user", "assistant", "result", *_QUIET}


def is_qwen_event(obj: dict[str, Any]) -> bool:
    """A line that names Qwen Code, whose headless stream copies this one: its init's
    ``qwen_code_version`` (where Claude Code writes ``claude_code_version``): qwen-stream."""
    return obj.get("type") == "system" and "qwen_code_version" in obj


def _is_session_line(obj: dict[str, Any]) -> bool:
    session = obj.get("session_id")
    return isinstance(obj.get("type"), str) and isinstance(session, str) and bool(session) \
        and not session.startswith("T-")  # an Amp thread: amp-stream


class ClaudeStreamImporter(AmpStreamImporter):
    """A saved ``claude -p --output-format stream-json`` run (or Agent SDK messages)."""

    name = "claude-stream"
    # 2: server tool results (the advisor's advice, fetched pages) as tool rows (2026-12-07);
    # 3: a model-fallback block a system notice, connector_text blocks the assistant's words
    reader = 3
    agent = "Claude Code (claude -p --output-format stream-json)"
    indexes = ("messages, thinking, tool_use calls and tool_result results, run results and errors; "
               "subagents as child sessions")
    source = "claude-code"
    quiet_events = _QUIET
    quiet_system = frozenset({"init", "status", "compact_boundary", "hook_started", "hook_progress",
                              "hook_response", "task_started", "task_progress", "task_notification",
                              "files_persisted", "api_retry"})

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Stream-json events naming a Claude session as ``session_id`` (not an Amp thread),
        with Anthropic ``message`` objects in ``user``/``assistant`` lines (Factory Droid's stream
        opens the same way, then writes ``message`` lines of its own): opened by
        ``system``/``init``, or (a stream cut from a longer one) a message carrying
        ``parent_tool_use_id``. At most a fifth of the lines may be of a type added since (read
        and reported, not a reason to give the file to another reader). A line only Cursor's
        stream has, or a Qwen Code init line, gives the file to cursor-stream / qwen-stream."""
        if any(is_cursor_event(o) or is_qwen_event(o) for o in stream_objects(head)):
            return 0.0
        return cls.sniff_stream(head)

    @classmethod
    def sniff_stream(cls, head: Head) -> float:
        """The shape test of :meth:`sniff`, whichever agent wrote the stream."""
        if head.is_sqlite:
            return 0.0
        objects = stream_objects(head)
        if not objects or not all(_is_session_line(o) for o in objects):
            return 0.0
        messages = [o for o in objects if o["type"] in ("user", "assistant") and isinstance(o.get("message"), dict)]
        known = sum(o["type"] in _EVENTS for o in objects)
        if not messages or known * 5 < len(objects) * 4:
            return 0.0
        first = objects[0]
        if first.get("type") == "system" and first.get("subtype") == "init":
            return 0.97
        return 0.9 if any("parent_tool_use_id" in o for o in messages) else 0.0
