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
Newer versions (2026) put the time the prompt was sent before it, ``<timestamp>Thursday,
Jul 23, 2026, 4:00 PM (UTC+8)</timestamp>``: the user row's time (the element is left out of
its text), and close the turn with a ``{"type": "turn_ended"}`` line (bookkeeping, as a
``{"type": "metadata"}`` line is).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
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
_TIMESTAMP = re.compile(r"<timestamp>\s*(?:[A-Za-z]+,\s*)?(?P<when>[A-Za-z]{3} \d{1,2}, \d{4}, \d{1,2}:\d{2} [AP]M)"
                        r"\s*\(UTC(?:(?P<sign>[+-])(?P<hours>\d{1,2})(?::?(?P<minutes>\d{2}))?)?\)\s*</timestamp>\s*")
_ROLES = {"user", "assistant"}
_MARKERS = {"turn_ended", "metadata"}  # a transcript's bookkeeping lines (``{"type": ...}``): no message


def user_query(text: str) -> tuple[str, float | None]:
    """The words inside ``<user_query>`` first, then whatever context surrounded them; and the time
    a ``<timestamp>Thursday, Jul 23, 2026, 4:00 PM (UTC+8)</timestamp>`` element gives (the
    element left out), else None."""
    stamp = None
    found = _TIMESTAMP.search(text)
    if found is not None:
        try:
            when = datetime.strptime(found.group("when"), "%b %d, %Y, %I:%M %p")
        except ValueError:
            when = None
        if when is not None:
            offset = timedelta(hours=int(found.group("hours") or 0), minutes=int(found.group("minutes") or 0))
            zone = timezone(-offset if found.group("sign") == "-" else offset)
            stamp = when.replace(tzinfo=zone).timestamp()
            text = text[:found.start()] + text[found.end():]
    query = _QUERY.search(text)
    if query is None:
        return text.strip() if stamp is not None else text, stamp
    rest = (text[:query.start()] + text[query.end():]).strip()
    return query.group(1) + (f"\n\n{rest}" if rest else ""), stamp


def _is_marker(obj: dict[str, Any]) -> bool:
    return obj.get("type") in _MARKERS and "message" not in obj and "role" not in obj


def _is_line(obj: dict[str, Any]) -> bool:
    message = obj.get("message")
    return (obj.get("role") in _ROLES and isinstance(message, dict)
            and isinstance(message.get("content"), (list, str)) and "type" not in obj
            and "sessionId" not in obj and "uuid" not in obj and "recordType" not in obj)


class CursorAgentImporter(Importer):
    """Cursor agent transcripts (``agent-transcripts/*.jsonl``): role + message.content blocks."""

    name = "cursor-agent"
    agent = "Cursor agent (CLI and editor transcripts)"
    indexes = "every line's text (`<user_query>` unwrapped), thinking as reasoning, tool_use calls with inputs"
    source = "cursor"
    reader = 2  # 2: <timestamp> as the prompt's time (2026-12-07)
    default_locations = {
        "linux": ("~/.cursor/projects/*/agent-transcripts/*.jsonl",
                  "~/.cursor/projects/*/agent-transcripts/*/*.jsonl",
                  "~/.cursor/projects/*/agent-transcripts/*/subagents/*.jsonl"),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """JSONL lines of ``{role, message: {content}}`` and nothing else (but the ``turn_ended`` /
        ``metadata`` markers)."""
        objects = head.objects()
        if not any(_is_line(obj) for obj in objects) or not all(_is_line(obj) or _is_marker(obj)
                                                                 for obj in objects):
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
            if _is_marker(obj):
                return  # a turn's end or the transcript's metadata: no message
            if not _is_line(obj):
                yield Problem(line, "expected {role, message: {content}} (skipped)")
                return
            problems: list[Problem] = []
            rows = anthropic_rows({"role": obj["role"], "content": obj["message"]["content"]},
                                  session_id, None, f"line {line}", tools, problems)
            for row in rows:
                row.line = line
                if row.role == "user" and not row.tool_calls:
                    text, stamp = user_query(row.content)
                    yield MessageRecord(row.session_id, row.role, text, timestamp=stamp or row.timestamp, line=line)
                else:
                    yield row
            for problem in problems:
                yield Problem(line, problem.error)

        yield from read_jsonl(self, state, handle)
