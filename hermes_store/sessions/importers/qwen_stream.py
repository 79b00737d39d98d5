"""``qwen-stream``: what ``qwen -p --output-format stream-json`` prints, saved to a file.

Qwen Code's headless mode (``packages/cli/src/nonInteractive/``) prints Claude Code's
stream-json messages (its ``types.ts`` declares them "from Anthropic SDK"), so the file is read
by claude-stream's reader; only the agent differs:

* ``{"type": "system", "subtype": "init", uuid, session_id, cwd, tools, mcp_servers, model,
  permission_mode, slash_commands, qwen_code_version, agents}`` (``buildSystemMessage`` in
  ``packages/cli/src/utils/nonInteractiveHelpers.ts``; older versions wrote ``permissionMode``,
  ``apiKeySource: "none"``, ``output_style``, ``skills``): ``qwen_code_version`` (where Claude Code
  writes ``claude_code_version``) tells the agent; its documentation shows the subtype as
  ``session_start``, read the same way;
* ``{"type": "user" | "assistant", uuid, session_id, parent_tool_use_id, message}``: an assistant
  message holds one kind of block only (``text``, ``thinking`` or ``tool_use``), tool results
  come back as ``user`` messages of ``tool_result`` blocks; a non-null ``parent_tool_use_id``
  marks a subagent's message (a child session, as for Claude Code);
* ``{"type": "result", subtype, uuid, session_id, is_error, num_turns, result | error: {message},
  usage, permission_denials}`` (``result`` repeats the last reply);
* ``stream_event`` (``--include-partial-messages``) and the ``control_*`` lines of the SDK's
  stdio protocol are bookkeeping.

``qwen -p --output-format json`` prints the same messages gathered in one JSON array, read the
same way (amp-stream's reader takes either). Before this reader a stream-json file was read as
Claude Code's stream (``claude-stream``) and stored under the ``claude-code`` source, and the
JSON array was an ``unknown format``.
"""

from __future__ import annotations

from hermes_store.sessions.importers.amp_stream import stream_objects
from hermes_store.sessions.importers.base import Head
from hermes_store.sessions.importers.claude_stream import ClaudeStreamImporter, is_qwen_event


class QwenStreamImporter(ClaudeStreamImporter):
    """A saved ``qwen -p --output-format stream-json`` run (Claude Code compatible stream JSON)."""

    name = "qwen-stream"
    agent = "Qwen Code (qwen -p --output-format stream-json)"
    indexes = ("messages, thinking, tool_use calls and tool_result results, run results and errors; "
               "subagents as child sessions")
    source = "qwen-code"
    quiet_system = ClaudeStreamImporter.quiet_system | {"session_start"}
    init_subtypes = frozenset({"init", "session_start"})

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Claude Code's stream-json as claude-stream recognises it, with a Qwen Code init line."""
        objects = stream_objects(head)
        if not any(is_qwen_event(o) for o in objects):
            return 0.0
        return super().sniff_stream(head)
