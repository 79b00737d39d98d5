"""``cursor-agent``: Cursor's agent transcripts (the CLI ``cursor-agent`` and the editor's agent).

Cursor writes one JSONL file per conversation under
``~/.cursor/projects/<project>/agent-transcripts/`` (``<id>.jsonl``, or
``<id>/<id>.jsonl`` for newer versions, where subagents' transcripts sit in
``<id>/subagents/``). Each line is ``{"role": "user" | "assistant", "message":
{"content": [blocks]}}`` with Anthropic-style blocks: ``text``, ``thinking``,
``tool_use`` (``name``, ``input``) and sometimes ``tool_result``. The lines carry
no times and no ids: the session id is the file stem (a subagent's parent is its
directory's owner). A user's words come wrapped in ``<user_query>...</user_query>``
(often after ``<user_info>``/``<attached_files>`` context): the wrapper is
unwrapped so the query is the message; any context around it is kept after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from hermes_store.sessions.importers.anthropic_common import anthropic_rows
from hermes_store.sessions.importers.base import (
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    read_jsonl,
)
from hermes_store.sessions.importers.openai_common import ToolNames

_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)
_ROLES = {"user", "assistant"}


def unwrap_user_query(text: str) -> str:
    """The words inside ``<user_query>`` first, then whatever context surrounded them."""
    found = _QUERY.search(text)
    if found is None:
        return text
    rest = (text[:found.start()] + text[found.end():]).strip()
    return found.group(1) + (f"\n\n{rest}" if rest else "")


def _is_line(obj: dict[str, Any]) -> bool:
    message = obj.get("message")
    return (obj.get("role") in _ROLES and isinstance(message, dict)
            and isinstance(message.get("content"), (list, str)) and "type" not in obj
            and "sessionId" not in obj and "uuid" not in obj)


class CursorAgentImporter(Importer):
    """Cursor agent transcripts (``agent-transcripts/*.jsonl``): role + message.content blocks."""

    name = "cursor-agent"
    agent = "Cursor agent (CLI and editor transcripts)"
    indexes = "every line's text (`<user_query>` unwrapped), thinking as reasoning, tool_use calls with inputs"
    source = "cursor"
    default_locations = {
        "linux": ("~/.cursor/projects/*/agent-transcripts/*.jsonl",
                  "~/.cursor/projects/*/agent-transcripts/*/*.jsonl",
                  "~/.cursor/projects/*/agent-transcripts/*/subagents/*.jsonl"),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """JSONL lines of ``{role, message: {content}}`` and nothing else."""
        objects = head.objects()
        if not objects or not all(_is_line(obj) for obj in objects):
            return 0.0
        return 0.95 if "agent-transcripts" in head.path.parts else 0.8

    def read(self, state: SourceState) -> Iterator[Event]:
        session_id = self.default_session_id()
        parent = None
        if self.path.parent.name == "subagents":
            parent = self.path.parent.parent.name
        tools = ToolNames(state.meta)
        started = [state.lines > 0]

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            if not started[0]:
                started[0] = True
                yield SessionRecord(id=session_id, parent_session_id=parent,
                                    meta={"subagent": True} if parent else {})
            if not _is_line(obj):
                yield Problem(line, "expected {role, message: {content}} (skipped)")
                return
            problems: list[Problem] = []
            rows = anthropic_rows({"role": obj["role"], "content": obj["message"]["content"]},
                                  session_id, None, f"line {line}", tools, problems)
            for row in rows:
                row.line = line
                if row.role == "user" and not row.tool_calls:
                    yield MessageRecord(row.session_id, row.role, unwrap_user_query(row.content),
                                        timestamp=row.timestamp, line=line)
                else:
                    yield row
            for problem in problems:
                yield Problem(line, problem.error)

        yield from read_jsonl(self, state, handle)
