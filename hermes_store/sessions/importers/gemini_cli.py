"""``gemini-cli``: Google Gemini CLI chat recordings, prompt logs and ``/chat save`` checkpoints.

Layout under ``~/.gemini/tmp/<project>/`` (``<project>`` is a SHA-256 of the
project root in older versions, a short project slug in newer ones):

* ``chats/session-<time>-<id8>.json`` (until late 2025): one ConversationRecord
  ``{sessionId, projectHash, startTime, lastUpdated, summary?, messages: [...]}``;
* ``chats/session-<time>-<id8>.jsonl`` (current): a metadata line
  ``{sessionId, projectHash, startTime, ...}``, then one line per message
  record (a later line with the same ``id`` replaces the earlier one, e.g. when
  tool calls or token counts are added), ``{"$set": {...}}`` metadata updates
  (``summary``, ``lastUpdated``, or a whole new ``messages`` list: the history after a
  compression or masking, whose new turns are added while the turns it summarised are
  kept) and ``{"$rewindTo": id}`` lines that drop that message and everything after it;
  a pre-2026 ``session-*.json`` that was resumed goes on in ``session-*.jsonl`` and is
  read through it;
* ``chats/<parentSessionId>/<sessionId>.jsonl``: a subagent's recording
  (``kind: "subagent"``), imported as a child session of the parent;
* ``logs.json``: a JSON array of the user's prompts ``{sessionId, messageId,
  timestamp, type: "user", message}`` for every session of the project;
* ``checkpoint-<tag>.json``: a ``/chat save`` checkpoint, the model history as
  ``Content[]`` (``{role: "user"|"model", parts: [...]}``) or
  ``{history: Content[], authType}``.

Message ``type`` is ``user``, ``gemini`` (the model), or the UI notes ``info``,
``warning``, ``error`` (kept as ``system``). ``gemini`` messages carry
``thoughts`` (``{subject, description}``, indexed as ``reasoning``),
``toolCalls`` (``{id, name, args, result: Part[], status, resultDisplay}``;
results become ``tool`` rows) and ``model`` (the session's model is the last
one named). Newer recordings add ``displayContent`` (the prompt as typed and
shown, preferred over ``content``, which may carry expanded ``@file`` text),
user records of injected ``<session_context>`` / ``<hook_context>`` and a
compression's ``<state_snapshot>`` (kept as ``system``: nobody typed them); a tool
result recorded both in the call and as a ``functionResponse`` user record is kept once, a ``resultDisplay`` object (a ``fileDiff``) and
a ``memoryScratchpad`` metadata update (its ``workflowSummary`` kept in meta).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from hermes_store.sessions.importers.base import (
    MAX_LINE_BYTES,
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
    safe_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    dumps,
    iter_json_lines,
    load_document,
    path_has_part,
    safe_rows,
    shape_guarded,
    tool_call,
)

_TYPE_ROLES = {"user": "user", "gemini": "assistant", "model": "assistant", "info": "system",
               "warning": "system", "error": "system"}
# injected context, hidden in the UI; ``<state_snapshot>`` is the summary a compression put in the user's place
_CONTEXT_PREFIXES = ("<session_context>", "<hook_context>", "<state_snapshot>")
_FORK_DIRS = (".qwen",)  # Qwen Code keeps the same structure under ~/.qwen (its own importer)


# --------------------------------------------------------------------------- Gemini parts


class Parts:
    """The text, thoughts, function calls and responses of a Gemini ``PartListUnion``."""

    def __init__(self, value: Any) -> None:
        self.texts: list[str] = []
        self.thoughts: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.responses: list[tuple[str | None, str | None, str]] = []  # (call id, name, text)
        self.attachments: list[str] = []  # the markers of inline and file data (also in ``texts``)
        self._add(value)

    def _add(self, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, str):
            self.texts.append(value)
        elif isinstance(value, list):
            for item in value:
                self._add(item)
        elif isinstance(value, dict):
            self._part(value)
        else:
            self.texts.append(str(value))

    def _part(self, part: dict[str, Any]) -> None:
        if isinstance(part.get("text"), str):
            (self.thoughts if part.get("thought") is True else self.texts).append(part["text"])
        elif isinstance(part.get("functionCall"), dict):
            call = part["functionCall"]
            self.calls.append(tool_call(call.get("id"), call.get("name"), call.get("args")))
        elif isinstance(part.get("functionResponse"), dict):
            response = part["functionResponse"]
            text = response_text(response.get("response"))
            nested = Parts(response.get("parts")).attachments  # Gemini 3: a read image inside the response
            self.responses.append((opt_str(response.get("id")), opt_str(response.get("name")),
                                   "\n".join(t for t in (text, *nested) if t)))
        elif isinstance(part.get("inlineData"), dict):
            self.attachments.append(f"[{part['inlineData'].get('mimeType') or 'inline data'}]")
            self.texts.append(self.attachments[-1])
        elif isinstance(part.get("fileData"), dict):
            data = part["fileData"]
            self.attachments.append(f"[file {data.get('fileUri') or ''}]".replace(" ]", "]"))
            self.texts.append(self.attachments[-1])
        elif isinstance(part.get("executableCode"), dict):
            self.texts.append(str(part["executableCode"].get("code") or ""))
        elif isinstance(part.get("codeExecutionResult"), dict):
            self.texts.append(str(part["codeExecutionResult"].get("output") or ""))

    @property
    def text(self) -> str:
        """The visible text, parts joined by newlines."""
        return "\n".join(t for t in self.texts if t)


def response_text(response: Any) -> str:
    """Text of a ``functionResponse.response`` (``{output}``, ``{error}`` or anything else)."""
    if isinstance(response, dict):
        for key in ("output", "error", "content", "result"):
            if response.get(key) not in (None, ""):
                value = response[key]
                return value if isinstance(value, str) else flatten_content(value) or dumps(value)
        if any(response.get(key) == "" for key in ("output", "error", "content", "result")):
            return ""  # an empty output is an empty result, not the JSON of its envelope
        return dumps(response) if response else ""
    return flatten_content(response)


# --------------------------------------------------------------------------- chat recordings


def message_events(
    msg: dict[str, Any], session_id: str, line: int | None, where: str, problems: list[Problem],
    answered: set[str] | None = None,
) -> Iterator[MessageRecord]:
    """The rows of one chat-recording message record (Gemini CLI and Qwen Code's old format).

    ``answered`` collects the ids of the tool calls whose result was already yielded: since
    mid-2026 a tool's ``functionResponse`` is recorded twice, in the call's ``result`` and as a
    ``user`` record of its own, and is indexed once.
    """
    answered = set() if answered is None else answered
    kind = msg.get("type")
    role = _TYPE_ROLES.get(kind) if isinstance(kind, str) else None
    if role is None:
        problems.append(Problem(line, f"{where}: unknown message type {kind!r} (skipped)"))
        return
    stamp = safe_timestamp(msg.get("timestamp"), line, problems)
    parts = Parts(msg.get("content"))
    shown = Parts(msg.get("displayContent")).text if msg.get("displayContent") else ""
    thoughts = list(parts.thoughts)
    for thought in msg.get("thoughts") or []:
        if isinstance(thought, dict):
            subject, text = opt_str(thought.get("subject")), opt_str(thought.get("description"))
            thoughts.append(f"{subject}: {text}" if subject and text else subject or text or "")
    if thoughts and any(thoughts):
        yield MessageRecord(session_id, "reasoning", "\n".join(t for t in thoughts if t),
                            timestamp=stamp, line=line)
    calls = list(parts.calls)
    results: list[MessageRecord] = []
    for index, call in enumerate(msg.get("toolCalls") or []):
        if not isinstance(call, dict):
            problems.append(Problem(line, f"{where}.toolCalls[{index}]: expected an object"))
            continue
        call_id, name = opt_str(call.get("id")), opt_str(call.get("name"))
        if call_id is None or all(c["id"] != call_id for c in calls):  # also a functionCall part
            calls.append(tool_call(call_id, name, call.get("args")))
        result = Parts(call.get("result"))
        text = "\n".join(r[2] for r in result.responses if r[2])
        extra = result.text
        if extra:
            text = f"{text}\n{extra}" if text else extra
        if not text:
            text = _display_text(call.get("resultDisplay"))
        status = opt_str(call.get("status"))
        if not text and status:
            text = f"[{status}]"
        if call_id is not None:
            answered.add(call_id)
        results.append(MessageRecord(
            session_id, "tool", text, tool_name=name, tool_call_id=call_id,
            timestamp=safe_timestamp(call.get("timestamp"), line, problems) or stamp, line=line))
    text = "\n".join([shown, *parts.attachments]) if shown else parts.text
    if role == "user" and text.lstrip().startswith(_CONTEXT_PREFIXES):
        role = "system"
    if text or calls:
        yield MessageRecord(session_id, role, text, tool_calls=dumps(calls) if calls else None,
                            timestamp=stamp, line=line)
    for call_id, name, response in parts.responses:
        if call_id is not None and call_id in answered:
            continue  # the call's ``result`` already gave it
        if call_id is not None:
            answered.add(call_id)
        yield MessageRecord(session_id, "tool", response, tool_name=name, tool_call_id=call_id,
                            timestamp=stamp, line=line)
    yield from results


def _display_text(display: Any) -> str:
    """Text of a tool call's ``resultDisplay``: a string, or a ``fileDiff`` object."""
    if isinstance(display, str):
        return display
    if isinstance(display, dict):
        for key in ("fileDiff", "output", "content"):
            if isinstance(display.get(key), str) and display[key]:
                return display[key]
    return ""


def _last_model(messages: list[tuple[int | None, Any]]) -> str | None:
    models = [m.get("model") for _, m in messages if isinstance(m, dict) and m.get("type") == "gemini"]
    named = [m for m in models if isinstance(m, str) and m]
    return named[-1] if named else None


def _session_record(
    meta: dict[str, Any], session_id: str, source: str, parent: str | None, problems: list[Problem],
    model: str | None = None,
) -> SessionRecord:
    directories = meta.get("directories")
    workspace = directories[0] if isinstance(directories, list) and directories else None
    extra = {k: meta[k] for k in ("projectHash", "kind") if meta.get(k)}
    scratchpad = meta.get("memoryScratchpad")
    if isinstance(scratchpad, dict) and opt_str(scratchpad.get("workflowSummary")):
        extra["workflowSummary"] = scratchpad["workflowSummary"]
    return SessionRecord(
        id=session_id, source=source, title=opt_str(meta.get("summary")), model=model,
        workspace=opt_str(workspace),
        started_at=safe_timestamp(meta.get("startTime"), None, problems),
        ended_at=safe_timestamp(meta.get("lastUpdated"), None, problems),
        parent_session_id=parent, meta=extra)


class GeminiCliImporter(ReplacedWhenChanged, Importer):
    """Gemini CLI ``chats/session-*.json`` and ``.jsonl`` recordings (and subagent files)."""

    name = "gemini-cli"
    reader = 3  # 2: compression $set kept earlier turns, tool results once; 3: images nested in results (2026-12-07)
    agent = "Gemini CLI"
    indexes = "recordings (JSON and JSONL with $set/$rewindTo applied, compressed turns kept), thoughts, tool calls and results, notes; subagents as child sessions"
    resumable_by_offset = False  # JSONL records replace and rewind earlier ones
    snapshot = True
    walk_skipped = (".gemini/settings.json", ".gemini/oauth_creds.json", ".gemini/google_accounts.json",
                    ".gemini/projects.json", ".gemini/trustedFolders.json", ".gemini/extensions/*")
    default_locations = {
        "linux": ("~/.gemini/tmp/*/chats/session-*.json", "~/.gemini/tmp/*/chats/session-*.jsonl",
                  "~/.gemini/tmp/*/chats/*/*.jsonl"),
        "darwin": ("~/.gemini/tmp/*/chats/session-*.json", "~/.gemini/tmp/*/chats/session-*.jsonl",
                   "~/.gemini/tmp/*/chats/*/*.jsonl"),
    }
    fork_dirs: tuple[str, ...] = _FORK_DIRS
    source: str | None = "gemini-cli"

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A document or first line with ``sessionId`` + ``projectHash`` (not under a fork's home)."""
        if head.is_sqlite or path_has_part(head.path, *cls.fork_dirs):
            return 0.0
        doc = head.document() if head.path.suffix.lower() == ".json" else None
        if isinstance(doc, dict):
            if "sessionId" in doc and "projectHash" in doc and isinstance(doc.get("messages"), list):
                return 0.95
            return 0.0
        objects = head.objects()
        if objects and "sessionId" in objects[0] and "projectHash" in objects[0] \
                and "uuid" not in objects[0]:
            return 0.95
        return 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """The ``.jsonl`` a resumed legacy ``.json`` recording continues in (it holds the same start)."""
        if head.path.suffix.lower() != ".json":
            return None
        doc = head.document()
        return legacy_twin(head.path, doc.get("sessionId")) if isinstance(doc, dict) else None

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        if self.path.suffix.lower() == ".json":
            doc = load_document(self, problems)
            yield from problems
            if doc is None:
                return
            if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
                yield Problem(1, "expected a conversation object with a 'messages' list")
                return
            if legacy_twin(self.path, doc.get("sessionId")) is not None:
                yield Checkpoint(str(self.path.stat().st_size), 0)  # read through its .jsonl continuation
                return
            meta, messages = doc, [(None, m) for m in doc["messages"]]
        else:
            meta, messages = self._replay(problems)
            yield from problems
            problems = []
        if not messages and not problems:  # a session recorded before its first message: no empty session
            yield Notice(None, "the session holds no messages yet; nothing to import")
            return
        session_id = opt_str(meta.get("sessionId")) or self.path.stem
        parent = None
        if meta.get("kind") == "subagent" and self.path.parent.name != "chats":
            parent = self.path.parent.name
        yield _session_record(meta, session_id, self.source, parent, problems, _last_model(messages))
        answered: set[str] = set()
        for index, (line, msg) in enumerate(messages):
            where = f"messages[{index}]" if line is None else f"line {line}"
            if not isinstance(msg, dict):
                problems.append(Problem(line, f"{where}: expected an object"))
                continue
            yield from safe_rows(message_events, problems, line, where, msg, session_id, line, where, problems,
                                 answered)
            yield from problems
            problems = []
        yield Checkpoint(str(self.path.stat().st_size), 0)

    def _replay(self, problems: list[Problem]) -> tuple[dict[str, Any], list[tuple[int | None, Any]]]:
        """Apply the JSONL records in order: metadata, message upserts, ``$set`` and ``$rewindTo``."""
        meta: dict[str, Any] = {}
        messages: dict[str, tuple[int | None, Any]] = {}
        for line, obj, problem in iter_json_lines(self.path, self.hasher):
            if problem is not None:
                problems.append(problem)
                continue
            if not isinstance(obj, dict):
                problems.append(Problem(line, "expected a JSON object"))
            elif isinstance(obj.get("$rewindTo"), str):
                target = obj["$rewindTo"]
                if target in messages:
                    keys = list(messages)
                    for key in keys[keys.index(target):]:
                        del messages[key]
                else:
                    messages.clear()
            elif isinstance(obj.get("$set"), dict):
                update = obj["$set"]
                if isinstance(update.get("messages"), list):
                    _merge_history(messages, update["messages"], line)
                meta.update({k: v for k, v in update.items() if k != "messages"})
            elif isinstance(obj.get("id"), str):
                messages[obj["id"]] = (line, obj)  # a re-recorded message keeps its first position
            elif "sessionId" in obj:
                if isinstance(obj.get("messages"), list):  # a whole legacy record on one line
                    _merge_history(messages, obj["messages"], line)
                meta.update({k: v for k, v in obj.items() if k != "messages"})
            else:
                problems.append(Problem(line, "unknown record (no id, $set, $rewindTo or sessionId)"))
        return meta, list(messages.values())


def _merge_history(messages: dict[str, tuple[int | None, Any]], history: list[Any], line: int) -> None:
    """Apply a ``$set: {messages}`` checkpoint: the model's history after a compression or masking.

    The writer replaces its list with it, but the turns a compression summarised away were
    said and shown: they are kept, each with its first (unmasked) record; turns new to the
    file (the ``<state_snapshot>`` summary and the model's acknowledgement) follow them.
    """
    for index, msg in enumerate(history):
        key = str(msg.get("id", f"{line}:{index}")) if isinstance(msg, dict) else f"{line}:{index}"
        if key not in messages:
            messages[key] = (line, msg)


def legacy_twin(path: Path, session_id: Any) -> Path | None:
    """The ``.jsonl`` a resumed legacy ``session-*.json`` was migrated to (same name plus ``l``).

    Resuming an old session copies its record into that file and goes on there; the ``.json``
    is left behind, a stale copy of the twin's first messages.
    """
    if path.suffix.lower() != ".json" or not isinstance(session_id, str):
        return None
    twin = path.with_name(path.name + "l")
    try:
        with twin.open("rb") as handle:
            first = json.loads(handle.readline(MAX_LINE_BYTES) or b"null")
    except (OSError, ValueError):
        return None
    return twin if isinstance(first, dict) and first.get("sessionId") == session_id else None


# --------------------------------------------------------------------------- logs.json


class GeminiLogsImporter(ReplacedWhenChanged, Importer):
    """``logs.json``: the user's prompts of every session of one project.

    Each session's prompts become one ``<sessionId>:prompts`` session (a prompt
    history, kept apart from the chat recording that also holds them).
    """

    name = "gemini-cli-logs"
    agent = "Gemini CLI (prompt log)"
    indexes = "the user's prompts, one '<session>:prompts' session per session"
    resumable_by_offset = False
    snapshot = True
    default_locations = {"linux": ("~/.gemini/tmp/*/logs.json",),
                         "darwin": ("~/.gemini/tmp/*/logs.json",)}
    fork_dirs: tuple[str, ...] = _FORK_DIRS
    source: str | None = "gemini-cli"

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A JSON array of ``{sessionId, messageId, type, message}`` entries."""
        if head.is_sqlite or path_has_part(head.path, *cls.fork_dirs) \
                or not head.data.lstrip().startswith(b"["):
            return 0.0
        doc = head.document()
        if not isinstance(doc, list):
            return 0.0
        if not doc:
            return 0.6 if head.path.name == "logs.json" else 0.0
        first = doc[0]
        if isinstance(first, dict) and {"sessionId", "messageId", "message"} <= set(first):
            return 0.95
        return 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if doc is None:
            return
        if not isinstance(doc, list):
            yield Problem(1, "expected a JSON array of log entries")
            return
        by_session: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        for index, entry in enumerate(doc):
            if not isinstance(entry, dict) or not opt_str(entry.get("sessionId")):
                yield Problem(None, f"[{index}]: expected an entry with a 'sessionId'")
                continue
            by_session.setdefault(str(entry["sessionId"]), []).append((index, entry))
        project = self.path.parent.name
        for session_id, entries in by_session.items():
            sid = f"{session_id}:prompts"
            yield SessionRecord(id=sid, source=self.source,
                                title=f"prompt log of {session_id}",
                                meta={"prompt_log_of": session_id, "project": project})
            entries.sort(key=lambda item: (_int(item[1].get("messageId")), item[0]))
            for index, entry in entries:
                problems = []
                stamp = safe_timestamp(entry.get("timestamp"), None, problems)
                kind = opt_str(entry.get("type")) or "user"
                role = "user" if kind == "user" else _TYPE_ROLES.get(kind, "system")
                message = entry.get("message")
                yield MessageRecord(sid, role, message if isinstance(message, str) else flatten_content(message),
                                    timestamp=stamp, line=index)
                for problem in problems:
                    problem.error = f"[{index}]: {problem.error}"
                yield from problems
        yield Checkpoint(str(self.path.stat().st_size), 0)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# --------------------------------------------------------------------------- checkpoints


def history_of(doc: Any) -> list[Any] | None:
    """The ``Content[]`` of a checkpoint: the document itself or its ``history``."""
    if isinstance(doc, dict):
        doc = doc.get("history")
    return doc if isinstance(doc, list) else None


def content_events(history: list[Any], session_id: str, problems: list[Problem]) -> Iterator[MessageRecord]:
    """Rows of a Gemini ``Content[]`` history (``role`` user/model, ``parts``)."""
    for index, content in enumerate(history):
        if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
            problems.append(Problem(None, f"history[{index}]: expected {{role, parts}}"))
            continue
        role = "assistant" if content.get("role") == "model" else "user"
        parts = Parts(content["parts"])
        if parts.thoughts:
            yield MessageRecord(session_id, "reasoning", "\n".join(parts.thoughts), line=index)
        if parts.text or parts.calls:
            yield MessageRecord(session_id, role, parts.text,
                                tool_calls=dumps(parts.calls) if parts.calls else None, line=index)
        for call_id, name, text in parts.responses:
            yield MessageRecord(session_id, "tool", text, tool_name=name, tool_call_id=call_id, line=index)


def _is_content_list(history: list[Any] | None) -> bool:
    return bool(history) and all(
        isinstance(c, dict) and isinstance(c.get("parts"), list) and c.get("role") in ("user", "model")
        for c in history[:8])


class GeminiCheckpointImporter(ReplacedWhenChanged, Importer):
    """``checkpoint-<tag>.json`` written by ``/chat save <tag>``."""

    name = "gemini-cli-checkpoint"
    agent = "Gemini CLI (/chat save)"
    indexes = "the saved Content[] history of a /chat save checkpoint"
    resumable_by_offset = False
    snapshot = True
    derives_end_time = True
    default_locations = {"linux": ("~/.gemini/tmp/*/checkpoint-*.json",),
                         "darwin": ("~/.gemini/tmp/*/checkpoint-*.json",)}
    fork_dirs: tuple[str, ...] = _FORK_DIRS
    source: str | None = "gemini-cli"

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Gemini ``Content[]`` (role user/model + parts), surest for a ``checkpoint-`` file."""
        if head.is_sqlite or path_has_part(head.path, *cls.fork_dirs) \
                or head.path.suffix.lower() != ".json":
            return 0.0
        if not _is_content_list(history_of(head.document())):
            return 0.0
        return 0.9 if head.path.name.startswith("checkpoint-") else 0.6

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        history = history_of(doc)
        if history is None:
            if doc is not None:
                yield Problem(1, "expected a Content[] history or {history: [...]}")
            return
        tag = self.path.stem[len("checkpoint-"):] if self.path.stem.startswith("checkpoint-") else self.path.stem
        tag = unquote(tag)
        project = self.path.parent.name
        session_id = f"gemini-checkpoint:{project}:{tag}"
        meta: dict[str, Any] = {"checkpoint_tag": tag, "project": project}
        if isinstance(doc, dict) and doc.get("authType"):
            meta["authType"] = doc["authType"]
        mtime = self.path.stat().st_mtime
        yield SessionRecord(id=session_id, source=self.source,
                            title=f"checkpoint {tag}", started_at=mtime, ended_at=mtime, meta=meta)
        problems = []
        yield from safe_rows(content_events, problems, None, "history", history, session_id, problems)
        yield from problems
        yield Checkpoint(str(self.path.stat().st_size), 0)
