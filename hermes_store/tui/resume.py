"""The command that resumes a session in the agent that wrote it (a registry, by import format).

Only agents whose command line takes the session id we store are listed (checked against each
agent's documentation): Claude Code ``claude --resume ID``, Codex ``codex resume ID``, Gemini CLI
``gemini --resume UUID``, Qwen Code ``qwen --resume ID`` (its ``chats/<sessionId>.jsonl``; the
``resume`` option of ``packages/cli/src/config/config.ts``), and Hermes ``hermes --resume ID``
(``-r/--resume <id|prefix|title>``). A saved headless run names the same session the agent keeps
(``claude -p``'s ``session_id``, ``codex exec``'s ``thread_id``, ``gemini -p``'s and ``qwen -p``'s
``session_id``, and ``cursor-agent -p``'s, the chat ``cursor-agent --resume <chat-id>`` takes), so
it resumes the same way, as does a chat read from the CLI's own store (``~/.cursor/chats/<md5>/<chat
id>/store.db``, the chat ``--resume`` reopens); a subagent's child session (``<session>/<tool use id>``) is no session
of the agent's and has none. Cursor's agent transcripts have none: the editor's agent writes
them too, and its chats are not the CLI's.
Other formats have no resume command here; the TUI says so instead of guessing.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

# origin_format (the importer's name) -> builds the shell command from the session id
RESUME_COMMANDS: dict[str, Callable[[str], str]] = {
    "claude-code": lambda sid: f"claude --resume {shlex.quote(sid)}",
    "claude-stream": lambda sid: f"claude --resume {shlex.quote(sid)}",
    "codex": lambda sid: f"codex resume {shlex.quote(sid)}",
    "codex-exec": lambda sid: f"codex resume {shlex.quote(sid)}",
    "gemini-cli": lambda sid: f"gemini --resume {shlex.quote(sid)}",
    "gemini-stream": lambda sid: f"gemini --resume {shlex.quote(sid)}",
    "qwen-code": lambda sid: f"qwen --resume {shlex.quote(sid)}",
    "qwen-stream": lambda sid: f"qwen --resume {shlex.quote(sid)}",
    "cursor-stream": lambda sid: f"cursor-agent --resume {shlex.quote(sid)}",
    "cursor-chats": lambda sid: f"cursor-agent --resume {shlex.quote(sid)}",
    "hermes-db": lambda sid: f"hermes --resume {shlex.quote(sid)}",
    "hermes-json": lambda sid: f"hermes --resume {shlex.quote(sid)}",
    "hermes-jsonl": lambda sid: f"hermes --resume {shlex.quote(sid)}",
}


def resume_command(origin_format: str | None, session_id: str) -> str | None:
    """The shell command resuming ``session_id`` in its agent, or None when the agent has none."""
    build = RESUME_COMMANDS.get(origin_format or "")
    if build is None or (origin_format or "").endswith(("-stream", "-exec")) and "/" in session_id:
        return None  # a headless run's subagent: a child session of ours, not one of the agent's
    return build(session_id)
