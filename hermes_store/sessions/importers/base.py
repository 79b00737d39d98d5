"""The importer interface and the helpers every transcript format shares.

An importer turns one file (or foreign database) into a stream of *events*:

* :class:`SessionRecord` -- create or update a session,
* :class:`MessageRecord` -- one message, in session order,
* :class:`Problem` -- a bad line or field, reported with its line number,
* :class:`Notice` -- the source is the format's but holds nothing to import (said once,
  not a problem: e.g. a Cline task folder holding only its metadata),
* :class:`Checkpoint` -- everything yielded so far is complete; the loader may
  commit here and resume from ``resume_at`` after a crash.

Importers never write to the store; :mod:`hermes_store.sessions.loader` does.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from hermes_store import timeutil
from hermes_store.redaction import cut_outside_secrets
from hermes_store.sessions.importers.compressed import CompressedUnreadable, open_source
from hermes_store.sessions.importers.head import MAX_LINE_BYTES, Head
from hermes_store.tooling import SURROGATES as _SURROGATE

MAX_CONTENT_CHARS = 1_048_576  # longer message contents are truncated (and reported)
_DECODER = json.JSONDecoder(strict=False)  # control characters inside strings are tolerated
_SCAN = _DECODER.scan_once
_JSON_SPACE = json.decoder.WHITESPACE.match


def decode_line(text: str) -> Any:
    """``text`` as one JSON value, exactly as ``_DECODER.decode`` reads it (same values, same
    errors), without its per-call overhead for the usual line: a value at offset 0 followed by
    nothing or a newline (anything else takes the full decoder)."""
    try:
        obj, end = _SCAN(text, 0)
    except StopIteration:  # leading whitespace, or no value: the decoder says which
        return _DECODER.decode(text)
    size = len(text)
    if end != size and not (end == size - 1 and text[end] == "\n") and _JSON_SPACE(text, end).end() != size:
        return _DECODER.decode(text)  # raises "Extra data" as the decoder does
    return obj
_ENCODER = json.JSONEncoder(ensure_ascii=False)
MAX_TITLE_CHARS = 300  # characters of a session title kept from any source (titles reach the model)


MAX_LABEL_CHARS = 300  # a session's model and source name (they reach the model too)
MAX_WORKSPACE_CHARS = 4096  # a session's working directory (PATH_MAX)
MAX_SNIPPET_CHARS = 1000  # a search snippet: one 50,000-letter "word" is no longer a 50 KB snippet


def cap_chars(value: Any, limit: int) -> Any:
    """``value`` cut to ``limit`` characters (ending in ``…``) when it is a longer string; a
    secret the cut would split goes whole (:func:`head_chars`), so redaction still knows it."""
    if isinstance(value, str) and len(value) > limit:
        return head_chars(value, limit - 1) + "\u2026"
    return value


def head_chars(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text`` at most, never ending inside a secret or a
    redaction marker (cut before it): every cut of text that is stored or shown goes here."""
    return text[:cut_outside_secrets(text, limit)] if len(text) > limit else text


def cap_title(title: Any) -> Any:
    """``title`` cut to :data:`MAX_TITLE_CHARS` (ending in ``…``); anything else unchanged.

    The one cap of a session title: importers, the live API (create, rename) and what a model
    is shown of a title stored before the cap (or written into the database by hand)."""
    return cap_chars(title, MAX_TITLE_CHARS)


@dataclass
class SessionRecord:
    """A session as read from a source; ``None`` fields leave stored values alone."""

    id: str
    source: str | None = None
    title: str | None = None
    model: str | None = None
    workspace: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    parent_session_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # a title reaches the model (session_search, recall): whatever the source, it is capped here
        self.title = cap_title(self.title)
        self.model, self.source = cap_chars(self.model, MAX_LABEL_CHARS), cap_chars(self.source, MAX_LABEL_CHARS)
        self.workspace = cap_chars(self.workspace, MAX_WORKSPACE_CHARS)


@dataclass(slots=True)
class MessageRecord:
    """One message of ``session_id``; ``line`` is where it came from (1-based) for reports."""

    session_id: str
    role: str
    content: str
    tool_name: str | None = None
    tool_calls: str | None = None  # JSON text
    tool_call_id: str | None = None
    timestamp: float | None = None
    line: int | None = None
    message_uid: str | None = None  # the source's own stable id of the message (Hermes schema 31)
    # ``tool_calls`` decoded, when the importer encoded it from a decoded value: the loader's
    # tool-call text is derived from it instead of parsing ``tool_calls`` again
    tool_calls_value: Any = field(default=None, compare=False, repr=False)


@dataclass
class Problem:
    """A bad line or field; the rest of the input is still imported."""

    line: int | None
    error: str


@dataclass
class Notice:
    """The source belongs to the format but holds nothing to import: reported as one line,
    never counted as a problem or a failed input (detection lets the claim stand)."""

    line: int | None
    text: str


@dataclass
class Rewritten:
    """The source rewrote the history of an already imported session (Hermes' ``/rewind``
    deactivates rows it had): what was imported of it is dropped, and every message of it the
    source still holds follows from the start, so the index is the one a first import makes."""

    session_id: str


@dataclass(slots=True)
class Checkpoint:
    """All events before this one are complete; ``resume_at`` restarts right after them."""

    resume_at: str | int  # byte offset or native id
    lines: int = 0


Event = SessionRecord | MessageRecord | Problem | Notice | Rewritten | Checkpoint


@dataclass
class SourceState:
    """What the store remembers about a previously imported source."""

    resume_at: str | None = None
    content_hash: str | None = None
    lines: int = 0
    meta: dict[str, Any] = field(default_factory=dict)


class Importer(ABC):
    """Base class: one transcript format.

    Subclasses set ``name`` (the registry key and ``--format`` value), declare
    their traits as class attributes -- the loader reads these, never the
    name -- and implement :meth:`sniff` and :meth:`read`.

    * ``resumable_by_offset``: append-only JSONL, restarted at a byte offset
      whose prefix hash must still match (else the file is re-imported whole);
    * ``skip_when_unchanged``: an unchanged size and mtime mean nothing to do;
    * ``snapshot``: the file is rewritten whole, messages already stored for a
      session are skipped on re-import;
    * ``derives_end_time``: ``ended_at`` follows the last message time when the
      source has no end time of its own;
    * ``default_locations``: globs per platform (``"linux"``, ``"darwin"``),
      ``~`` is ``$HOME`` and ``{hermes_home}`` the Hermes home; only where the
      agent itself writes, never a wildcard over every folder under ``$HOME``
      (a repository cloned there must not become the user's past);
    * ``project_files``: what the agent writes inside each project (e.g.
      ``".crush/crush.db"``); such files are indexed only when the user names
      the path (``sessions sources`` says so);
    * ``walk_names``: file-name globs a directory walk picks up for this format
      beyond the usual ``*.jsonl``/``*.json``/``*.db``/``*.sqlite*`` (e.g.
      ``"state.vscdb"``, ``".aider.chat.history.md"``; dot-files only this way);
    * ``walk_skipped``: path globs (matched against a path's end, ``*`` spanning folders) of
      files the agent keeps beside its transcripts that hold none -- its settings, credentials,
      caches, indexes, installed packages (e.g. ``".codex/auth.json"``, ``".claude/todos/*.json"``):
      a directory walk leaves them out (named explicitly, they are still read);
    * ``reader``: the version of what the importer makes of a file, raised whenever a fix
      changes that for files already indexed (a message it dropped, a role it mistook): the
      next ``sessions index`` reads each such file again once, unchanged or not, so the fix
      reaches the store (a file indexed before versions were kept counts as version 1);
    * ``replaced_whole``: a changed file replaces everything it imported before (set by
      ``doc_common.ReplacedWhenChanged``); a snapshot format without it matches its stored
      messages by place, so it is never read again for a new ``reader`` alone.
    """

    name: ClassVar[str] = ""
    agent: ClassVar[str] = ""
    source: ClassVar[str | None] = None
    resumable_by_offset: ClassVar[bool] = True
    skip_when_unchanged: ClassVar[bool] = True
    snapshot: ClassVar[bool] = False
    derives_end_time: ClassVar[bool] = True
    default_locations: ClassVar[dict[str, tuple[str, ...]]] = {}
    walk_names: ClassVar[tuple[str, ...]] = ()
    walk_skipped: ClassVar[tuple[str, ...]] = ()
    project_files: ClassVar[tuple[str, ...]] = ()
    indexes: ClassVar[str] = ""  # what is indexed, one line (README table; docstring if empty)
    reader: ClassVar[int] = 1  # raised when a fix changes what an indexed file yields (re-read once)
    replaced_whole: ClassVar[bool] = False  # a changed file replaces all it imported (see above)

    @classmethod
    @abstractmethod
    def sniff(cls, head: Head) -> float:
        """Confidence 0.0..1.0 that ``head.path`` is this format (cheap; never raises)."""

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """The file ``head.path`` is read through, when it is only a member of another source.

        A claimed member (e.g. a Cline task's ``ui_messages.json`` beside its
        ``api_conversation_history.json``) yields nothing alone, so detection does not
        ask it for content. None (the default): the file is a source of its own.
        """
        return None

    @classmethod
    def source_label(cls) -> str:
        """The ``sessions.source`` label for what this importer imports."""
        return cls.source or cls.name

    def __init__(self, path: Path, options: dict[str, Any] | None = None) -> None:
        self.path = path
        self.options: dict[str, Any] = dict(options or {})  # what the user asked for (``--map``)
        self.hasher = hashlib.sha256()
        # the probe detection read (set by detection): a whole-document reader parses it once
        self.head: Head | None = None

    @abstractmethod
    def read(self, state: SourceState) -> Iterator[Event]:
        """Yield the events of ``self.path`` starting after ``state.resume_at``."""

    def whole(self) -> bool:
        """True when the file may replace what it imported before (read again whole after a change
        or by a newer reader). An export that can be cut off or malformed says False for such a file,
        which is then read as a snapshot: nothing already stored is dropped."""
        return True

    def is_rewritten(self, state: SourceState) -> bool:
        """True when the source no longer extends what was imported (re-import it whole).

        For append-only JSONL this compares the hash of the already imported
        prefix; on a match, ``self.hasher`` continues from that prefix.
        """
        if not state.resume_at or not self.resumable_by_offset:
            return False
        hasher = prefix_hasher(self.path, int(state.resume_at))
        if hasher is None or hasher.hexdigest() != state.content_hash:
            return True
        self.hasher = hasher
        return False

    def content_hash(self) -> str:
        """Hash of the input consumed so far (the prefix up to the last checkpoint)."""
        return self.hasher.hexdigest()

    def default_session_id(self) -> str:
        """The session id used when a line carries none: the file stem."""
        return self.path.stem


# --------------------------------------------------------------------------- JSONL reading


def prefix_hasher(path: Path, length: int) -> hashlib._Hash | None:
    """sha256 of the first ``length`` bytes of ``path``; None when the file is shorter."""
    hasher = hashlib.sha256()
    remaining = length
    with open(path, "rb") as handle:
        while remaining > 0:
            chunk = handle.read(min(remaining, 1 << 20))
            if not chunk:
                return None
            hasher.update(chunk)
            remaining -= len(chunk)
    return hasher


MAX_JSONL_LINE_BYTES = MAX_LINE_BYTES  # a longer line is skipped (reported), never held in memory
READ_BUFFER = 1 << 16  # transcript lines run to kilobytes: 8 KiB buffers cost readline a refill per line


def read_jsonl(importer: Importer, state: SourceState, handle_obj) -> Iterator[Event]:
    """Read JSONL after the resume point, calling ``handle_obj(obj, line_no)`` per object.

    ``handle_obj`` returns a MessageRecord, an iterable of events, or None.
    Emits a :class:`Checkpoint` after every line so a crash loses nothing.
    Invalid UTF-8 is replaced with U+FFFD and reported; a byte order mark opening the file is
    skipped, as are NUL bytes opening a line (the zero-filled hole a crash mid-append leaves: the
    next line is written right after it). A final line without a
    newline is used only if it parses (a writer may still be appending it). A compressed file
    (``*.zst``, :mod:`.compressed`) is read as what it decompresses to.
    Updates ``importer.hasher`` with every consumed byte.
    """
    offset = int(state.resume_at or 0)
    line_no = state.lines
    decode = decode_line
    update = importer.hasher.update
    try:
        source = open_source(importer.path, READ_BUFFER)
    except CompressedUnreadable as exc:
        yield Problem(None, str(exc))
        return
    with source as handle:
        handle.seek(offset)
        while True:
            try:
                raw = handle.readline(MAX_JSONL_LINE_BYTES + 1)
            except CompressedUnreadable as exc:  # a damaged compressed file: what came before is kept
                yield Problem(line_no + 1, str(exc))
                return
            if not raw:
                return
            line_no += 1
            if len(raw) > MAX_JSONL_LINE_BYTES and not raw.endswith(b"\n"):
                # never hold more than the cap: drain the rest of the line in bounded chunks
                size = len(raw)
                update(raw)
                while raw and not raw.endswith(b"\n"):
                    raw = handle.readline(1 << 20)
                    size += len(raw)
                    update(raw)
                offset += size
                yield Problem(line_no, f"line of {size:,} bytes is longer than the {MAX_JSONL_LINE_BYTES:,}-byte "
                                       "limit; skipped")
                yield Checkpoint(offset, line_no)
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                text = raw.decode("utf-8", errors="replace")
                yield Problem(line_no, f"invalid UTF-8 at byte {exc.start} of the line (replaced with U+FFFD)")
            if offset == 0 and text.startswith("\ufeff"):  # a byte order mark opens the file
                text = text[1:]
            if text.startswith("\x00"):  # a crash's zero-filled hole, the next line written after it
                text = text.lstrip("\x00")
                if not text.strip():
                    yield Problem(line_no, "a run of NUL bytes (a hole a crash left in the file); skipped")
                    text = ""
            if text and not raw.isspace():
                try:
                    obj = decode(text)
                except RecursionError:
                    yield Problem(line_no, "malformed JSON: nested too deeply")
                    obj = None
                except ValueError as exc:
                    if not raw.endswith(b"\n"):
                        yield Problem(line_no, f"incomplete last line (no newline): {exc}")
                        return
                    yield Problem(line_no, f"malformed JSON: {exc}")
                    obj = None
                if obj.__class__ is dict:
                    try:
                        out = handle_obj(obj, line_no)
                        if out.__class__ is MessageRecord:
                            yield out
                        elif out is not None:
                            yield from out
                    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
                        yield Problem(line_no, f"unexpected record shape: {exc}")
                elif obj is not None:
                    yield Problem(line_no, f"expected a JSON object, got {type(obj).__name__}")
            offset += len(raw)
            update(raw)
            yield Checkpoint(offset, line_no)


def said_if_empty(events: Iterator[Event], state: SourceState, what: str,
                  wordless: Callable[[], bool] = lambda: True) -> Iterator[Event]:
    """``events`` passed through; a read from the start that gave no message and no problem (a
    file of the format's own records only: a session begun and left before its first prompt)
    ends with a :class:`Notice` saying ``what`` holds nothing to import, so it is claimed and
    said once rather than refused as ``unknown format``. ``wordless`` (asked at the end) says the
    file had no message records at all: a file whose messages were all empty is still refused."""
    messages = problems = 0
    held: list[Event] = []  # the session and resume points before the first message: no empty session
    for event in events:
        kind = event.__class__
        if not messages and not problems and (kind is SessionRecord or kind is Checkpoint):
            held.append(event)
            continue
        if kind is MessageRecord:
            messages += 1
        elif kind is Problem:
            problems += 1
        yield from held
        held.clear()
        yield event
    if not messages and not problems and not state.resume_at and wordless():
        # nothing stored, no resume point: once the agent writes a message the file is read whole
        yield Notice(None, f"{what} holds no messages yet; nothing to import")
    else:
        yield from held


# --------------------------------------------------------------------------- value helpers


EPOCH_RANGE = (-62135596800.0, 253402300799.0)  # 0001-01-01 to 9999-12-31 UTC: what a date can show


def parse_timestamp(value: Any) -> float | None:
    """Epoch seconds from an epoch number (s or ms) or an ISO-8601 string; None if absent.

    Raises ValueError for anything else, and for a moment outside the years 1 to 9999 (NaN,
    infinity, ``1e300``): stored, such a time made every reader that shows it as a date fail
    (``sessions show``: "timestamp out of range for platform time_t", ``recall``'s sessions).
    """
    kind = value.__class__
    if kind is float:  # the usual epoch numbers, without the text round trip
        return epoch_in_range(value / 1000.0 if value > 1e11 else value, value)
    if kind is int and -(1 << 53) < value < (1 << 53):
        return epoch_in_range(value / 1000.0 if value > 1e11 else float(value), value)
    if value is None or value == "" or isinstance(value, bool):
        return None
    text = str(value).strip()
    try:
        number = float(value) if isinstance(value, (int, float)) else float(text)
    except ValueError:
        moment = timeutil.parse_timestamp(text)
        if moment is None:
            raise ValueError(f"bad timestamp {value!r}") from None
        return moment.timestamp()
    return epoch_in_range(number / 1000.0 if number > 1e11 else number, value)


def epoch_in_range(seconds: float, value: Any) -> float:
    """``seconds`` when a date can show it (the years 1 to 9999); else ValueError naming ``value``."""
    if not EPOCH_RANGE[0] <= seconds <= EPOCH_RANGE[1]:  # NaN fails both comparisons too
        raise ValueError(f"timestamp {value!r} is outside the years 1 to 9999")
    return seconds


def safe_timestamp(value: Any, line: int | None, problems: list[Problem]) -> float | None:
    """:func:`parse_timestamp` that records a Problem instead of raising."""
    try:
        return parse_timestamp(value)
    except ValueError as exc:
        problems.append(Problem(line, f"field 'timestamp': {exc}"))
        return None


def flatten_content(content: Any) -> str:
    """Text of a message content: a string, or multimodal parts flattened to their text.

    Handles OpenAI parts (``{"type": "text", "text": ...}``, ``input_text``,
    ``output_text``, a ``refusal`` part's words, an audio part's ``transcript``), Anthropic
    blocks and Hermes' ``"\\x00json:"`` encoding.
    Non-text parts (images, audio) become a short ``[image]`` style marker; an
    ``encrypted_content`` part holds nothing readable and adds nothing.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        if content.startswith("\x00json:"):
            try:
                return flatten_content(json.loads(content[6:]))
            except (ValueError, RecursionError):
                return content[6:]
        return content
    if isinstance(content, dict):
        for key in ("text", "content", "output", "thinking", "refusal", "transcript"):
            if key in content and content[key] is not None:
                return flatten_content(content[key])
        kind = content.get("type")
        if kind == "encrypted_content":  # an opaque part (Codex's inter-agent payloads): nothing readable
            return ""
        return f"[{kind}]" if kind else ""
    if isinstance(content, list):
        parts = [flatten_content(part) for part in content]
        return "\n".join(part for part in parts if part)
    return str(content)


def json_text(value: Any) -> str | None:
    """JSON text of a structured value (strings kept as they are); None for empty values."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str):
        return value
    return _ENCODER.encode(value)


def clean_text(text: str, line: int | None, field_name: str, problems: list[Problem]) -> str:
    """Make ``text`` storable: drop NUL bytes, replace lone surrogates, cap the length.

    Every change is reported as a :class:`Problem` naming the field.
    """
    if "\x00" in text:
        problems.append(Problem(line, f"field '{field_name}': NUL bytes removed"))
        text = text.replace("\x00", "")
    if _SURROGATE.search(text):
        problems.append(Problem(line, f"field '{field_name}': lone UTF-16 surrogates replaced with U+FFFD"))
        text = _SURROGATE.sub("\ufffd", text)
    if len(text) > MAX_CONTENT_CHARS:
        problems.append(Problem(
            line, f"field '{field_name}': {len(text)} characters truncated to {MAX_CONTENT_CHARS}"))
        text = head_chars(text, MAX_CONTENT_CHARS)
    return text


def opt_str(value: Any) -> str | None:
    """``str(value)`` or None for missing/empty values."""
    if value is None or value == "":
        return None
    return str(value)
