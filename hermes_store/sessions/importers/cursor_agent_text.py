"""``cursor-agent-txt``: Cursor's plain-text agent transcripts (``agent-transcripts/<id>.txt``).

Before its JSONL transcripts (:mod:`.cursor_agent`), Cursor (the CLI ``cursor-agent``
and the editor's agent) wrote each conversation as text under
``~/.cursor/projects/<project>/agent-transcripts/<id>.txt``:

* a line ``user:`` or ``assistant:`` opens a turn (some copies put the first words
  on the marker's line);
* the user's words come wrapped in ``<user_query>...</user_query>`` (after context
  such as ``<user_info>``, ``<attached_files>``, ``<cursor_commands>``): unwrapped as
  in the JSONL transcripts;
* in an assistant turn, ``[Thinking] <text>`` is the model's thinking (up to a blank
  line or the next marker), ``[Tool call] <name>`` is a call whose arguments follow
  as indented ``key: value`` lines (a line indented deeper, or without a key,
  continues the previous value), ``[Tool result] <name>`` is the output of the oldest
  unanswered call of that name (every line up to the next marker or turn); any other
  line is the reply.

The file has no times and no ids: the session id is the file stem (a subagent's parent
is its directory's owner), calls get ids ``<session>:call-<n>``. The file is re-read
whole when it changes; messages past those already stored are added.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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
)
from hermes_store.sessions.importers.cursor_agent import user_query
from hermes_store.sessions.importers.doc_common import dumps, load_text, shape_guarded, tool_call

MAX_FILE_BYTES = 256 * 1024 * 1024
_TURN = re.compile(r"^(user|assistant):(?:\s+(.*))?$")
_MARK = re.compile(r"^\[(Thinking|Tool call|Tool result)\]\s?(.*)$")
_ARG = re.compile(r"^  ([A-Za-z_][\w.-]*): ?(.*)$")


def _turn(lines: list[str], index: int) -> re.Match[str] | None:
    """A turn marker: ``user:``/``assistant:`` at the start of the file or after a blank line."""
    match = _TURN.match(lines[index])
    if match is None or (index > 0 and lines[index - 1].strip()):
        return None
    return match


class _Turns:
    """Builds the rows of one transcript, line by line."""

    def __init__(self, session_id: str) -> None:
        self.session = session_id
        self.rows: list[MessageRecord] = []
        self.role: str | None = None
        self.text: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.start = 0
        self.pending: list[tuple[str, str]] = []  # (name, call id) not yet answered
        self.count = 0

    def flush(self) -> None:
        body = "\n".join(self.text).strip("\n")
        if self.role == "user":
            if body.strip():
                words, stamp = user_query(body.strip())
                self.rows.append(MessageRecord(self.session, "user", words, timestamp=stamp, line=self.start))
        elif self.role == "assistant" and (body.strip() or self.calls):
            self.rows.append(MessageRecord(self.session, "assistant", body.strip(),
                                           tool_calls=dumps(self.calls) if self.calls else None, line=self.start))
        self.text, self.calls = [], []

    def call(self, name: str, arguments: dict[str, Any], line: int) -> None:
        self.count += 1
        call_id = f"{self.session}:call-{self.count}"
        if not self.text and not self.calls:
            self.start = line
        self.calls.append(tool_call(call_id, name, arguments))
        self.pending.append((name, call_id))

    def result(self, name: str, output: str, line: int) -> None:
        self.flush()
        call_id = None
        for index, (pending, ident) in enumerate(self.pending):
            if pending == name:
                call_id = ident
                del self.pending[index]
                break
        self.rows.append(MessageRecord(self.session, "tool", output, tool_name=name or None,
                                       tool_call_id=call_id, line=line))


def transcript_rows(text: str, session_id: str) -> list[MessageRecord]:
    """The rows of a Cursor text transcript (see the module docstring)."""
    turns = _Turns(session_id)
    lines = [line.rstrip("\r") for line in text.split("\n")]
    index = 0
    while index < len(lines):
        line = lines[index]
        number = index + 1
        turn = _turn(lines, index)
        if turn is not None:
            turns.flush()
            turns.role, turns.start = turn.group(1), number
            if turn.group(2):
                turns.text.append(turn.group(2))
            index += 1
            continue
        mark = _MARK.match(line) if turns.role == "assistant" else None
        if mark is None:
            if turns.role is not None:
                if not turns.text and not turns.calls and line.strip():
                    turns.start = number
                turns.text.append(line)
            index += 1
            continue
        kind, rest = mark.group(1), mark.group(2).strip()
        end = index + 1
        if kind == "Thinking":
            thought = [rest] if rest else []
            while end < len(lines) and lines[end].strip() and not _MARK.match(lines[end]) \
                    and _turn(lines, end) is None:
                thought.append(lines[end])
                end += 1
            turns.flush()
            if "\n".join(thought).strip():
                turns.rows.append(MessageRecord(session_id, "reasoning", "\n".join(thought).strip(), line=number))
        elif kind == "Tool call":
            arguments: dict[str, Any] = {}
            last = None
            while end < len(lines) and lines[end].startswith("  "):
                found = _ARG.match(lines[end])
                if found:
                    last = found.group(1)
                    arguments[last] = found.group(2)
                elif last is not None:
                    arguments[last] += "\n" + lines[end].strip()
                end += 1
            turns.call(rest, arguments, number)
        else:
            output = []
            while end < len(lines) and not _MARK.match(lines[end]) and _turn(lines, end) is None:
                output.append(lines[end])
                end += 1
            turns.result(rest, "\n".join(output).strip("\n"), number)
        index = end
    turns.flush()
    return turns.rows


class CursorAgentTextImporter(Importer):
    """Cursor agent transcripts in their plain-text form (``agent-transcripts/*.txt``)."""

    name = "cursor-agent-txt"
    agent = "Cursor agent (text transcripts)"
    indexes = "user queries (unwrapped), replies, [Thinking] as reasoning, [Tool call] arguments and [Tool result] output"
    source = "cursor"
    resumable_by_offset = False
    snapshot = True
    walk_names = ("????????-????-????-????-????????????.txt",)  # Cursor names them by conversation id
    default_locations = {
        "linux": ("~/.cursor/projects/*/agent-transcripts/*.txt",),
        "darwin": ("~/.cursor/projects/*/agent-transcripts/*.txt",),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A ``.txt`` file opening with a ``user:`` turn (``<user_query>`` or Cursor's markers in it)."""
        if head.is_sqlite or head.path.suffix.lower() != ".txt":
            return 0.0
        text = head.text()
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines or _TURN.match(lines[0]) is None or not lines[0].startswith("user:"):
            return 0.0
        if "agent-transcripts" in head.path.parts:
            return 0.95
        return 0.8 if "<user_query>" in text or "[Tool call]" in text else 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        loaded = load_text(self, problems, MAX_FILE_BYTES, "file")
        yield from problems
        if loaded is None:
            return
        text, size = loaded
        session_id = self.default_session_id()
        parent = self.path.parent.parent.name if self.path.parent.name == "subagents" else None
        yield SessionRecord(id=session_id, source=self.source, parent_session_id=parent,
                            meta={"subagent": True} if parent else {})
        yield from transcript_rows(text, session_id)
        yield Checkpoint(str(size), text.count("\n"))
