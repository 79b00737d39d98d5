"""``aider``: Aider's Markdown chat log ``.aider.chat.history.md`` (in each project's root).

Aider appends to one file per project, every run starting a new session:

* ``# aider chat started at 2025-03-02 14:05:11`` (local time, no zone) opens a session;
* the user's input: every line prefixed ``#### `` and ending in two spaces
  (``#### <blank>`` for an empty input); slash commands (``/add``, ``/run``) too;
* in architect mode the architect's reply goes to the editor model as its input
  (``editor_coder.run(with_message=...)`` logs it with ``user_input``): those
  ``####`` lines repeat the reply, so they are a ``system`` row saying so, not
  the user's words;
* aider's own output (files added, edits applied, commits, command output,
  warnings, confirmation questions and answers): lines ``> ...`` ending in two
  spaces, kept as ``system`` rows;
* everything else is the model's reply (Markdown, which may itself hold ``> ``
  quotes or ``#### `` headings: those never end in the two spaces aider adds).
  A reasoning model's thinking opens the reply inside a tag: aider's own
  ``<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>`` (``reasoning_tags.py``, the
  reasoning the API returned apart) or the model's ``<think>`` (a model setting's
  ``reasoning_tag``); it is a ``reasoning`` row before the reply (one cut off while
  thinking is all reasoning). Sessions a reader before this split stored keep their
  one row (the stored messages are matched by place): the file's lines then read are
  recorded in the read state and sessions opening in them are not split.

The file is re-read whole when it grows; messages past those already stored
are added. Times: the session start, and each input's time from the prompt
history aider keeps beside it.

``.aider.input.history`` (prompt_toolkit's ``FileHistory``, in the same
directory) holds every input typed, each as ``# 2025-03-02 14:05:20.123456``
(local time) followed by its lines prefixed ``+``. Beside a chat history it is
read through it: an input of the chat history takes the time of the next entry
of the prompt history with the same text (not before the session's start). A
prompt history alone is read as the prompts it holds, one session per file.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    head_chars,
)
from hermes_store.sessions.importers.doc_common import load_text, shape_guarded

INPUT_HISTORY = ".aider.input.history"
CHAT_HISTORY = ".aider.chat.history.md"
ENTRY = re.compile(r"^# (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)\s*$")
HEADER = re.compile(r"^# aider chat started at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s*$")
MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_LINE_CHARS = 4 * 1024 * 1024
_KIND_ROLE = {"user": "user", "aider": "system", "assistant": "assistant"}
# aider's tag for reasoning the API returned apart (reasoning_tags.REASONING_TAG), then the tags
# models write their thinking in (aider's model settings name ``think`` as ``reasoning_tag``)
THINKING_TAGS = ("thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b", "think", "thinking", "reasoning")
_BARE_THINK_END = re.compile(r"^</think>[ \t]*$", re.MULTILINE)
SPLIT_FROM = "thinking_from_line"
# architect mode: the editor model's prompt is the architect's reply, logged again as ``####`` input
HANDOFF = "[architect mode: the reply above was sent to the editor model as its instructions]"  # read state: sessions opening after this line have thinking split


def split_thinking(reply: str) -> tuple[str, str]:
    """``(thinking, reply)`` of an aider reply that opens with a reasoning tag, else ``("", reply)``.

    As aider's ``remove_reasoning_content``: the text between the tags is the thinking; a tag
    never closed (the reply interrupted while thinking) makes the whole reply thinking; a
    ``</think>`` line with no opening tag (providers that drop it) ends thinking that started
    with the reply."""
    body = reply.lstrip()
    for tag in THINKING_TAGS:
        opening, closing = f"<{tag}>", f"</{tag}>"
        if body.startswith(opening):
            inner, found, rest = body[len(opening):].partition(closing)
            return inner.strip(), rest.strip("\n") if found else ""
    match = _BARE_THINK_END.search(body)
    if match and "<think>" not in body[:match.start()]:
        return body[:match.start()].strip(), body[match.end():].strip("\n")
    return "", reply


def _kind(line: str) -> str:
    if line.endswith("  "):
        if line.startswith("#### ") or line.rstrip() == "####":
            return "user"
        if line.startswith(">"):
            return "aider"
    return "assistant"


def _strip(kind: str, line: str) -> str:
    body = line[:-2] if line.endswith("  ") else line
    if kind == "user":
        body = body[5:] if body.startswith("#### ") else ""
        return "" if body == "<blank>" else body
    if kind == "aider":
        return body[2:] if body.startswith("> ") else body[1:]
    return line


def input_entries(text: str) -> list[tuple[str, str, int]]:
    """``(local time, input, line)`` of every entry of a prompt_toolkit history file."""
    entries: list[tuple[str, str, int]] = []
    stamp, lines, start = None, [], 0
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        match = ENTRY.match(line)
        if match:
            if stamp is not None:
                entries.append((stamp, "\n".join(lines), start))
            stamp, lines, start = match.group(1), [], number
        elif line.startswith("+") and stamp is not None:
            lines.append(line[1:])
    if stamp is not None:
        entries.append((stamp, "\n".join(lines), start))
    return entries


class _InputTimes:
    """Gives a chat history's inputs the times of the same inputs in the prompt history."""

    def __init__(self, entries: list[tuple[str, str, int]]) -> None:
        self.entries = entries
        self.next = 0

    def time_of(self, text: str, not_before: str | None) -> float | None:
        wanted = text.strip()
        for index in range(self.next, len(self.entries)):
            stamp, entry, _ = self.entries[index]
            if not_before is not None and stamp[:19] < not_before:
                continue
            if entry.strip() == wanted:
                self.next = index + 1
                return _local(stamp)
        return None


class AiderImporter(Importer):
    """Every session in one ``.aider.chat.history.md``."""

    name = "aider"
    agent = "Aider"
    indexes = ("sessions per header, user input (timed from .aider.input.history), model replies, aider's own"
               " output as system rows; a prompt history alone as its prompts")
    source: str | None = "aider"
    resumable_by_offset = False
    snapshot = True
    walk_names = (".aider.chat.history.md", INPUT_HISTORY)
    # Aider writes its history in the project it runs in: only a run in $HOME itself has a
    # fixed location; project files are indexed when the user names them.
    default_locations = {"linux": ("~/.aider.chat.history.md", f"~/{INPUT_HISTORY}"),
                         "darwin": ("~/.aider.chat.history.md", f"~/{INPUT_HISTORY}")}
    project_files = (".aider.chat.history.md", INPUT_HISTORY)

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Aider's file name, or an ``# aider chat started at`` header line in Markdown; Aider's
        prompt history (``+`` lines under ``# <time>`` lines)."""
        if head.path.name == INPUT_HISTORY and not head.is_sqlite:
            lines = [line for line in head.text().splitlines() if line.strip()][:2]
            if not lines:
                return 0.9
            return 0.95 if ENTRY.match(lines[0]) and (len(lines) == 1 or lines[1].startswith("+")) else 0.0
        if head.is_sqlite or (head.data.lstrip()[:1] in (b"{", b"[") and (head.objects() or head.document())):
            return 0.0
        text = head.text()
        has_header = any(HEADER.match(line) for line in text.splitlines())
        if head.path.name == ".aider.chat.history.md":
            return 0.95 if has_header or not text.strip() else 0.7
        return 0.8 if has_header and head.suffix == ".md" else 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """A prompt history beside a chat history is read through it (it times the inputs)."""
        chat = head.path.parent / CHAT_HISTORY
        return chat if head.path.name == INPUT_HISTORY and chat.is_file() else None

    def _input_times(self) -> _InputTimes:
        path = self.path.parent / INPUT_HISTORY
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                return _InputTimes([])
            return _InputTimes(input_entries(path.read_bytes().decode("utf-8", errors="replace")))
        except OSError:
            return _InputTimes([])

    def _read_inputs(self, text: str, digest: str) -> Iterator[Event]:
        """A prompt history with no chat history beside it: its prompts, timed."""
        session = f"aider:{digest}:input-history"
        entries = input_entries(text)
        if not entries:
            return
        yield SessionRecord(id=session, source=self.source, workspace=str(self.path.parent),
                            started_at=_local(entries[0][0]), meta={"history_file": self.path.name})
        for stamp, text, line in entries:
            if text.strip():
                yield MessageRecord(session, "user", text, timestamp=_local(stamp), line=line)

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        loaded = load_text(self, problems, MAX_FILE_BYTES, "file")
        yield from problems
        if loaded is None:
            return
        text, size = loaded
        digest = hashlib.sha1(str(self.path.parent.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:10]
        if self.path.name == INPUT_HISTORY:
            if (self.path.parent / CHAT_HISTORY).is_file():
                yield Checkpoint(str(size), 0)  # read through the chat history beside it
                return
            yield from self._read_inputs(text, digest)
            yield Checkpoint(str(size), 0)
            return
        times = self._input_times()
        started: str | None = None
        session: str | None = None
        block: list[str] = []
        kind = ""
        start_line = 0

        # a file indexed before thinking was split: its sessions then read keep their one row
        split_from = state.meta.setdefault(SPLIT_FROM, state.lines if state.resume_at is not None else 0)
        session_line = 0

        reply = ""  # the last reply as written: architect mode hands it to the editor model as input

        def flush() -> Iterator[MessageRecord]:
            nonlocal block, reply
            body = "\n".join(block).strip("\n")
            if session is not None and body.strip():
                if kind == "user" and reply and body.strip() == reply:
                    reply, block = "", []
                    yield MessageRecord(session, "system", HANDOFF, line=start_line)
                    return
                stamp = times.time_of(body, started) if kind == "user" else None
                reply = body.strip() if kind == "assistant" else "" if kind == "user" else reply
                if kind == "assistant" and session_line > split_from:
                    thinking, body = split_thinking(body)
                    if thinking:
                        yield MessageRecord(session, "reasoning", thinking, line=start_line)
                if body.strip():
                    yield MessageRecord(session, _KIND_ROLE[kind], body, timestamp=stamp, line=start_line)
            block = []

        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for number, line in enumerate(lines, 1):
            if len(line) > MAX_LINE_CHARS:
                yield Problem(number, f"line longer than {MAX_LINE_CHARS} characters truncated")
                line = head_chars(line, MAX_LINE_CHARS)
            line = line.rstrip("\r")
            match = HEADER.match(line)
            if match:
                yield from flush()
                session = f"aider:{digest}:{match.group(1).replace(' ', 'T')}"
                started, session_line, reply = match.group(1), number, ""
                yield SessionRecord(id=session, source=self.source, workspace=str(self.path.parent),
                                    started_at=_local(match.group(1)), meta={"history_file": self.path.name})
                kind = ""
                continue
            if session is None:
                if not line.strip():
                    continue
                # text before the first header (a history trimmed or pasted into): its own session
                session, session_line = f"aider:{digest}:before-first-header", number
                yield SessionRecord(id=session, source=self.source, workspace=str(self.path.parent),
                                    meta={"history_file": self.path.name, "before_first_header": True})
                yield Problem(number, "text before the first '# aider chat started at' line: read into "
                                      f"session {session!r} (no start time)")
            if not line.strip():
                if kind == "assistant":
                    block.append("")  # a paragraph break inside the reply
                else:
                    yield from flush()  # one input (or one run of aider output) ends at a blank line
                    kind = ""
                continue
            this = _kind(line)
            if this != kind:
                yield from flush()
                kind, start_line = this, number
            block.append(_strip(this, line))
        yield from flush()
        yield Checkpoint(str(size), len(lines))


def _local(text: str) -> float | None:
    """Epoch seconds of aider's local-time header (the zone of the machine reading it)."""
    try:
        return datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f" if "." in text else "%Y-%m-%d %H:%M:%S").timestamp()
    except ValueError:
        return None
