"""``opencode-json``: OpenCode's JSON storage tree (before its SQLite database, v1.2).

``~/.local/share/opencode/storage/`` (``$XDG_DATA_HOME/opencode/storage``) holds

* ``session/<projectID>/<sessionID>.json``: ``{id: "ses_...", projectID, directory,
  parentID?, title, version, time: {created, updated} (ms)}``: the source file;
* ``message/<sessionID>/<messageID>.json``: a message's header ``{id: "msg_...",
  sessionID, role, time: {created, completed?}, modelID?, providerID?, ...}``;
* ``part/<messageID>/<partID>.json``: its content, one part per file, in part-id
  order: ``text`` (``synthetic`` for injected context), ``reasoning``, ``tool``
  (``{callID, tool, state: {status, input, output | error, time}}``), ``file``
  (attachments: ``{mime, filename, url}``), ``agent``, ``subtask``, and the
  bookkeeping parts ``step-start``, ``step-finish``, ``snapshot``, ``patch``,
  ``compaction``, ``retry``.

Early versions (mid 2025) kept ``session/info/<sessionID>.json`` and
``session/message/<sessionID>/<messageID>.json`` with the parts inline in the
message (``parts: [{type: "text"}, {type: "tool-invocation", toolInvocation}]``)
and the times under ``metadata``. Between the two (MessageV2, summer 2025) the
same ``session/`` directory held ``info/``, ``message/<sessionID>/<messageID>.json``
(headers only) and ``part/<sessionID>/<messageID>/<partID>.json``, per project
under ``~/.local/share/opencode/project/<project>/storage/`` (OpenCode's
``storage.ts`` migration copies exactly these globs into the flat tree). All three
layouts are read. A session file is one
source; the loader re-reads it whole (messages and parts change as a session
goes on), adding only the messages past those already stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    MessageRecord,
    Notice,
    Problem,
    SessionRecord,
    SourceState,
    flatten_content,
    opt_str,
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    dumps,
    load_document,
    safe_rows,
    shape_guarded,
    tool_call,
)

MAX_MEMBER_BYTES = 64 * 1024 * 1024  # one message or part file
MAX_MESSAGES = 100_000  # message headers held (and sorted) for one session
_BOOKKEEPING_PARTS = {"step-finish", "snapshot", "patch", "compaction", "retry"}
# OpenCode keeps its files in ``$XDG_DATA_HOME/<app>`` (``Global.Path.data``); an agent built on
# it writes the same files under its own app name: Kilo CLI 1.0+ and the Kilo Code extension
# built on it, ``kilo`` (Kilo-Org/kilocode ``packages/opencode/src/global/index.ts``, ``kilo.db``)
FAMILY_SOURCES = {"opencode": "opencode", "kilo": "kilo-code"}


def _ms(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _time(obj: dict[str, Any], key: str) -> float | None:
    time = obj.get("time")
    if not isinstance(time, dict):
        meta = obj.get("metadata")
        time = meta.get("time") if isinstance(meta, dict) else None
    return _ms(time.get(key)) if isinstance(time, dict) else None


def family_source(path: Path, default: str) -> str:
    """The ``sessions.source`` of an OpenCode-family file: the agent whose data directory holds it."""
    for parent in path.parents:
        if parent.name in FAMILY_SOURCES:
            return FAMILY_SOURCES[parent.name]
    return default


def session_record(info: dict[str, Any], source: str, meta_extra: dict[str, Any]) -> SessionRecord:
    """The SessionRecord of an OpenCode session object (JSON file or database row as dict)."""
    meta = {k: info[k] for k in ("projectID", "version", "slug") if info.get(k)}
    meta.update(meta_extra)
    return SessionRecord(
        id=str(info["id"]), source=source, title=opt_str(info.get("title")),
        workspace=opt_str(info.get("directory")), started_at=_time(info, "created"),
        ended_at=_time(info, "updated"), parent_session_id=opt_str(info.get("parentID")), meta=meta)


def model_of(info: dict[str, Any]) -> str | None:
    """``provider/model`` of a message header (assistant: ``modelID``; user: ``model``)."""
    meta = info.get("metadata") if isinstance(info.get("metadata"), dict) else {}
    assistant = meta.get("assistant") if isinstance(meta.get("assistant"), dict) else {}
    model, provider = info.get("modelID") or assistant.get("modelID"), info.get("providerID") or assistant.get("providerID")
    if not model:
        return None
    return f"{provider}/{model}" if provider else str(model)


def is_compaction_summary(info: dict[str, Any]) -> bool:
    """True for a compaction summary: an assistant message with ``summary: true`` (``mode:
    "compaction"``, written by ``session/compaction.ts``). Its text is OpenCode's summary of the
    conversation so far, not the model's reply to the user, so its rows are ``system`` rows."""
    return info.get("role") == "assistant" and info.get("summary") is True


class MessageBuilder:
    """Turns one message (header + parts) into rows, keeping the parts' order.

    Text and tool calls gather into one row until a step boundary, a reasoning
    part or text after a tool call; each tool part's result follows its row as
    a ``tool`` row. A compaction summary's text is a ``system`` row (:func:`is_compaction_summary`).
    """

    def __init__(self, session_id: str, info: dict[str, Any], where: str, problems: list[Problem]) -> None:
        self.session_id = session_id
        self.role = "system" if is_compaction_summary(info) else \
            "assistant" if info.get("role") == "assistant" else "user"
        if info.get("role") not in ("user", "assistant"):
            problems.append(Problem(None, f"{where}: unknown role {info.get('role')!r} (kept as user)"))
        self.stamp = _time(info, "created")
        self.where = where
        self.problems = problems
        self.texts: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.results: list[MessageRecord] = []
        self.out: list[MessageRecord] = []

    def flush(self) -> None:
        """Close the current row (text + tool calls) and its tool results."""
        text = "\n".join(t for t in self.texts if t)
        if text or self.calls:
            self.out.append(MessageRecord(self.session_id, self.role, text,
                                          tool_calls=dumps(self.calls) if self.calls else None,
                                          timestamp=self.stamp))
        self.out.extend(self.results)
        self.texts, self.calls, self.results = [], [], []

    def add(self, part: dict[str, Any], index: int) -> None:
        """Add one part (v2 part file or v1 inline part)."""
        kind = part.get("type")
        if kind == "text":
            if not part.get("ignored"):
                if self.calls:
                    self.flush()  # text after a tool call answers its result: a new row
                self.texts.append(str(part.get("text") or ""))
        elif kind == "reasoning":
            self.flush()
            text = opt_str(part.get("text"))
            if text:
                self.out.append(MessageRecord(self.session_id, "reasoning", text,
                                              timestamp=_time(part, "start") or self.stamp))
        elif kind == "tool":
            self._tool(part)
        elif kind == "tool-invocation":
            self._invocation(part.get("toolInvocation"))
        elif kind == "file":
            name = opt_str(part.get("filename")) or opt_str(part.get("url")) or ""
            mime = opt_str(part.get("mime")) or opt_str(part.get("mediaType")) or "file"
            self.texts.append(f"[{mime} {name}]" if name and not name.startswith("data:") else f"[{mime}]")
        elif kind == "agent":
            self.texts.append(f"@{part.get('name') or ''}")
        elif kind == "subtask":
            self.texts.append(f"[subtask {part.get('agent') or ''}: {part.get('description') or ''}]\n"
                              f"{part.get('prompt') or ''}")
        elif kind == "step-start":
            self.flush()
        elif kind not in _BOOKKEEPING_PARTS:
            self.problems.append(Problem(None, f"{self.where} part {index}: unknown part type {kind!r} (skipped)"))

    def _tool(self, part: dict[str, Any]) -> None:
        state = part.get("state") if isinstance(part.get("state"), dict) else {}
        call_id, name = opt_str(part.get("callID")), opt_str(part.get("tool"))
        self.calls.append(tool_call(call_id, name, state.get("input") or {}))
        status = opt_str(state.get("status"))
        if status == "completed":
            text = state.get("output")
            text = text if isinstance(text, str) else flatten_content(text)
            for attachment in state.get("attachments") or []:
                if isinstance(attachment, dict):
                    text += f"\n[{attachment.get('mime') or 'file'} {attachment.get('filename') or ''}]".rstrip()
        elif status == "error":
            text = str(state.get("error") or "")
        else:
            text = f"[{status or 'no result'}]"
        end = state.get("time", {}).get("end") if isinstance(state.get("time"), dict) else None
        self.results.append(MessageRecord(self.session_id, "tool", text, tool_name=name, tool_call_id=call_id,
                                          timestamp=_ms(end) or self.stamp))

    def _invocation(self, invocation: Any) -> None:
        if not isinstance(invocation, dict):
            self.problems.append(Problem(None, f"{self.where}: tool-invocation without toolInvocation"))
            return
        call_id, name = opt_str(invocation.get("toolCallId")), opt_str(invocation.get("toolName"))
        self.calls.append(tool_call(call_id, name, invocation.get("args") or {}))
        result = invocation.get("result")
        text = result if isinstance(result, str) else (dumps(result) if result is not None else
                                                       f"[{invocation.get('state') or 'no result'}]")
        self.results.append(MessageRecord(self.session_id, "tool", text, tool_name=name,
                                          tool_call_id=call_id, timestamp=self.stamp))

    def finish(self) -> list[MessageRecord]:
        """Every row of the message, in order."""
        self.flush()
        return self.out


def message_rows(
    session_id: str, info: dict[str, Any], parts: Iterable[dict[str, Any]], where: str, problems: list[Problem]
) -> list[MessageRecord]:
    """The rows of one OpenCode message from its header and parts."""
    builder = MessageBuilder(session_id, info, where, problems)
    for index, part in enumerate(parts):
        if isinstance(part, dict):
            builder.add(part, index)
        else:
            problems.append(Problem(None, f"{where} part {index}: expected an object"))
    if info.get("role") == "assistant":
        error = info.get("error") if isinstance(info.get("error"), dict) else None
        if error is None and isinstance(info.get("metadata"), dict):
            error = info["metadata"].get("error") if isinstance(info["metadata"].get("error"), dict) else None
        if error:
            data = error.get("data") if isinstance(error.get("data"), dict) else {}
            builder.flush()
            builder.out.append(MessageRecord(session_id, "system",
                                             f"[{error.get('name') or 'error'}] {data.get('message') or ''}".strip(),
                                             timestamp=_time(info, "completed") or builder.stamp))
    return builder.finish()


def _read_member(path: Path, problems: list[Problem]) -> dict[str, Any] | None:
    try:
        size = path.stat().st_size
        if size > MAX_MEMBER_BYTES:
            problems.append(Problem(None, f"{path.name}: {size} bytes, larger than {MAX_MEMBER_BYTES} (skipped)"))
            return None
        obj = json.loads(path.read_bytes().decode("utf-8", errors="replace"), strict=False)
    except (OSError, ValueError, RecursionError) as exc:
        problems.append(Problem(None, f"{path.parent.name}/{path.name}: unreadable ({exc})"))
        return None
    if not isinstance(obj, dict):
        problems.append(Problem(None, f"{path.parent.name}/{path.name}: expected a JSON object"))
        return None
    return obj


_MEMBER_DIRS = {"message", "part", "project", "session_diff", "todo"}
_MEMBER_PREFIXES = {"message": "msg", "part": "prt"}


def _member(path: Path, doc: Any) -> bool:
    """True for a message, part, project, diff or todo file of an OpenCode storage tree."""
    parents = path.parents
    if len(parents) > 3 and parents[2].name == "part" and parents[3].name == "session":
        # the MessageV2 layout's ``session/part/<sessionID>/<messageID>/<partID>.json``
        return path.stem.startswith("prt") if doc is None else (
            isinstance(doc, dict) and str(doc.get("id", path.stem)).startswith("prt"))
    for depth in (0, 1):
        if len(parents) > depth and parents[depth].name in _MEMBER_DIRS \
                and parents[depth].parent.name in ("storage", "session"):
            kind = parents[depth].name
            if doc is None:
                return path.stem.startswith(_MEMBER_PREFIXES.get(kind, "")) or kind not in _MEMBER_PREFIXES
            prefix = _MEMBER_PREFIXES.get(kind)
            return isinstance(doc, (dict, list)) and (prefix is None or str(
                doc.get("id", path.stem) if isinstance(doc, dict) else path.stem).startswith(prefix))
    return False


class OpenCodeJsonImporter(Importer):
    """An OpenCode session file and the message/part files that belong to it."""

    name = "opencode-json"
    agent = "OpenCode (JSON storage)"
    indexes = "message and part files (and the early inline-parts layout): text, reasoning, tool states, attachments, errors, subagents"
    source: str | None = "opencode"
    resumable_by_offset = False
    skip_when_unchanged = False  # messages and parts change without the session file changing
    snapshot = True
    default_locations = {
        "linux": ("~/.local/share/opencode/storage/session/*/*.json",
                  "~/.local/share/opencode/project/*/storage/session/info/*.json",
                  "~/.local/share/kilo/storage/session/*/*.json"),
        "darwin": ("~/.local/share/opencode/storage/session/*/*.json",
                   "~/.local/share/opencode/project/*/storage/session/info/*.json",
                   "~/.local/share/kilo/storage/session/*/*.json"),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A ``ses_`` object with ``projectID`` or ``time`` under a ``session/`` directory
        (a message or part file of the tree is claimed as a member: see :meth:`read`)."""
        if head.is_sqlite or head.path.suffix.lower() != ".json":
            return 0.0
        if _member(head.path, head.document()):
            return 0.6
        if head.path.parent.parent.name != "session":
            return 0.0
        doc = head.document()
        if not isinstance(doc, dict) or not str(doc.get("id", "")).startswith("ses"):
            return 0.0
        if "projectID" in doc and isinstance(doc.get("time"), dict):
            return 0.95
        return 0.7 if head.path.parent.name == "info" and isinstance(doc.get("time"), dict) else 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """A message, part or project file: read through its session file (the storage tree)."""
        if head.path.parent.parent.name != "session" and _member(head.path, None):
            parents = head.path.parents
            return parents[2] if len(parents) > 3 and parents[2].name == "part" else parents[1]
        return None

    def _layout(self, session_id: str) -> tuple[Path, Path | None]:
        """(message directory root, directory holding a ``<messageID>/`` folder of parts per
        message, or None when the parts are inline)."""
        session_dir = self.path.parent.parent
        if self.path.parent.name == "info" and (session_dir / "message").is_dir():
            # early layouts: storage/session/{info,message} with inline parts, or (MessageV2)
            # with the parts in storage/session/part/<sessionID>/<messageID>/
            parts = session_dir / "part" / session_id
            return session_dir / "message", parts if parts.is_dir() else None
        storage = session_dir.parent
        return storage / "message", storage / "part"

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        if self.path.parent.parent.name != "session" and _member(self.path, None):
            # a message/part/project file: read through its session file, nothing to do alone
            yield Checkpoint(str(self.path.stat().st_size), 0)
            return
        problems: list[Problem] = []
        info = load_document(self, problems)
        yield from problems
        if info is None:
            return
        if not isinstance(info, dict) or not opt_str(info.get("id")):
            yield Problem(1, "expected a session object with an 'id'")
            return
        session_id = str(info["id"])
        message_root, part_root = self._layout(session_id)
        headers: list[tuple[float, str, dict[str, Any]]] = []
        problems = []
        message_dir = message_root / session_id
        for path in sorted(message_dir.glob("*.json")) if message_dir.is_dir() else []:
            if len(headers) >= MAX_MESSAGES:
                problems.append(Problem(None, f"more than {MAX_MESSAGES} messages: the rest is not imported"))
                break
            header = _read_member(path, problems)
            if header is not None:
                headers.append((_time(header, "created") or 0.0, str(header.get("id") or path.stem), header))
        if not headers and not problems and not (info.get("messages") or info.get("parts")):
            # a session OpenCode opened (the TUI makes one at start) with no message written yet
            yield Notice(None, "the session holds no messages yet; nothing to import")
            return
        headers.sort(key=lambda item: (item[0], item[1]))
        model = next((m for m in (model_of(h) for _, _, h in reversed(headers)) if m), None)
        record = session_record(info, family_source(self.path, self.source or self.name), {})
        record.model = model
        yield record
        yield from problems
        for _, message_id, header in headers:
            problems = []
            where = f"message {message_id}"
            if isinstance(header.get("parts"), list):
                parts: Iterable[dict[str, Any]] = header["parts"]
            elif part_root is not None:
                parts = self._parts(part_root / message_id, problems)
            else:
                parts = []
            yield from safe_rows(message_rows, problems, None, where, session_id, header, parts, where, problems)
            yield from problems
        yield Checkpoint(str(self.path.stat().st_size), 0)

    @staticmethod
    def _parts(directory: Path, problems: list[Problem]) -> Iterator[dict[str, Any]]:
        if not directory.is_dir():
            return
        for path in sorted(directory.glob("*.json")):  # part ids sort in creation order
            part = _read_member(path, problems)
            if part is not None:
                yield part
