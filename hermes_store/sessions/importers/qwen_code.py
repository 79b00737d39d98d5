"""``qwen-code``: Qwen Code (a Gemini CLI fork) session recordings.

Current versions write ``~/.qwen/projects/<sanitised cwd>/chats/<sessionId>.jsonl``:
one record per line, ``{uuid, parentUuid, sessionId, timestamp, type, subtype?,
cwd, version, gitBranch?, message?, model?, toolCallResult?, systemPayload?}``
where ``message`` is a Gemini ``Content`` (``{role: "user"|"model", parts}``,
never Claude's ``content`` blocks) and ``type`` is ``user``, ``assistant``,
``tool_result`` or ``system``. Records form a tree through ``parentUuid``: a
rewind starts a new branch from an earlier record, so the conversation is the
path from the last record back to the root (records on abandoned branches are
counted in the session's ``meta``, not indexed). ``system`` records carry
bookkeeping; ``custom_title`` sets the title, ``notification`` text is kept, and so
is a ``chat_compression``'s summary (the ``user`` entry opening its
``compressedHistory``, found nowhere else in the file) as a ``system`` row.
A ``user`` record's ``systemPayload.displayText`` is the prompt as typed (its
``message`` may add expanded ``@file`` text and hook context) and is preferred;
``user`` records of subtype ``notification`` / ``cron`` (a background task's or
scheduled prompt) are kept as ``system``; ``mid_turn_user_message`` (typed while
tools ran) is the user's. ``slash_command`` records keep what the user typed (the
``invocation``'s ``rawCommand``) and what the command showed (the ``result``'s
``outputHistoryItems`` texts, a ``system`` row); an ``at_command`` record's
``userText`` (the ``@file`` prompt as typed, with ``filesRead``) is the next user
record's text when that has no ``displayText`` (see ``_Commands``).

Versions before the rewrite kept Gemini CLI's layout under
``~/.qwen/tmp/<hash>/chats/session-*.json``; those are read like Gemini CLI's.
"""

from __future__ import annotations

from collections.abc import Iterator
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
    head_chars,
    opt_str,
    safe_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    dumps,
    iter_json_lines,
    path_has_part,
    safe_rows,
    shape_guarded,
)
from hermes_store.sessions.importers.gemini_cli import (
    GeminiCliImporter,
    GeminiLogsImporter,
    Parts,
)

_ROLES = {"user": "user", "assistant": "assistant", "tool_result": "tool"}
_BOOKKEEPING = {
    "session_notes", "ui_telemetry",
    "attribution_snapshot", "background_task_completed", "cron", "parent_session",
    "session_source", "session_execution_engine", "omni_recall", "session_model",
    "session_approval_mode", "rewind", "agent_bootstrap", "agent_launch_prompt", "agent_retry",
    "agent_session_ready", "file_history_snapshot", "user_text_elements", "session_artifact_event",
    "session_artifact_snapshot", "session_sources_snapshot", "branch_checkpoint", "goal_state",
    "goal_runtime", "goal_turn_end", "realtime_message", "turn_result", "managed_session_header_v1",
    "managed_session_event_v1", "managed_session_commit_v1", "custom_title", "notification",
    "mid_turn_user_message",
}
# ``type: "user"`` records the UI restores as notices (the model sees their ``message``)
_NOTICES = {"notification", "cron", "background_task_completed"}
MAX_RECORDS = 2_000_000  # records held to resolve the branch path (about one per message)


_COMMANDS = {"slash_command", "at_command"}  # what the user typed, kept (see _Commands)


def _compression_summary(payload: dict[str, Any]) -> str:
    """The summary a compression put in the model's place of the turns it replaced: the first
    entry of ``compressedHistory`` when it is a ``user`` entry (the model's acknowledgement and
    the kept turns after it are records of their own)."""
    history = payload.get("compressedHistory")
    first = history[0] if isinstance(history, list) and history else None
    if not isinstance(first, dict) or first.get("role") != "user":
        return ""
    return Parts(first.get("parts")).text.strip()


# system record subtype -> the text it is kept as (a ``system`` row); other subtypes are bookkeeping
_SYSTEM_TEXTS = {
    "notification": lambda payload: opt_str(payload.get("displayText")) or "",
    "chat_compression": _compression_summary,
}


def _is_qwen_record(obj: dict[str, Any]) -> bool:
    message = obj.get("message")
    if isinstance(message, dict) and isinstance(message.get("parts"), list):
        return True
    return obj.get("type") == "tool_result" or obj.get("subtype") in (_BOOKKEEPING | _COMMANDS | set(_SYSTEM_TEXTS)) \
        - {"rewind"}


class QwenCodeImporter(ReplacedWhenChanged, Importer):
    """Qwen Code ``chats/<sessionId>.jsonl`` (uuid tree of Gemini ``Content`` records)."""

    name = "qwen-code"
    # 2: model-facing text, notices, slash and @ commands; 3: command output items without text (2026-12-07);
    # 4: a compression's summary (the first entry of its compressedHistory) as a system row
    reader = 4
    agent = "Qwen Code"
    indexes = "the active branch of the uuid tree, thoughts, tool calls and results, slash and @ commands as typed, custom titles, notifications"
    source: str | None = "qwen-code"
    resumable_by_offset = False  # a rewind changes which records form the conversation
    snapshot = True
    walk_skipped = (".qwen/settings.json", ".qwen/oauth_creds.json", ".qwen/extensions/*")  # settings, credentials
    default_locations = {
        "linux": ("~/.qwen/projects/*/chats/*.jsonl",),
        "darwin": ("~/.qwen/projects/*/chats/*.jsonl",),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """uuid/parentUuid/sessionId records whose ``message`` holds Gemini ``parts``."""
        if head.is_sqlite:
            return 0.0
        objects = head.objects()
        records = [o for o in objects if "uuid" in o and "sessionId" in o and "parentUuid" in o]
        if not records:
            return 0.0
        if any(_is_qwen_record(o) for o in records):
            return 0.95
        return 0.6 if path_has_part(head.path, ".qwen") else 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        records: dict[str, tuple[int, dict[str, Any]]] = {}
        last: str | None = None
        for line, obj, problem in iter_json_lines(self.path, self.hasher):
            if problem is not None:
                yield problem
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get("uuid"), str):
                yield Problem(line, "expected a record with a 'uuid'")
                continue
            if len(records) >= MAX_RECORDS:
                yield Problem(line, f"more than {MAX_RECORDS} records: the rest is not imported")
                break
            records[obj["uuid"]] = (line, obj)
            last = obj["uuid"]
        if last is None:
            return
        if not any(obj.get("type") in _ROLES or obj.get("subtype") in _COMMANDS or obj.get("type") == "user"
                   for _, obj in records.values()):
            # only the recorder's own system records: a session begun and left before its first prompt
            yield Notice(None, "the session holds no messages yet; nothing to import")
            return
        path = _active_path(records, last)
        on_path = set(path)
        abandoned = sum(1 for key, (_, obj) in records.items()
                        if key not in on_path and isinstance(obj.get("type"), str) and obj["type"] in _ROLES)
        first = records[path[0]][1]
        session_id = opt_str(first.get("sessionId")) or self.path.stem
        problems: list[Problem] = []
        meta: dict[str, Any] = {k: first[k] for k in ("version", "gitBranch") if first.get(k)}
        if abandoned:
            meta["abandoned_branch_records"] = abandoned
        title = parent = model = None
        for _, obj in records.values():
            payload = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
            if obj.get("subtype") == "custom_title" and opt_str(payload.get("customTitle")):
                title = head_chars(str(payload["customTitle"]), 200)
            elif obj.get("subtype") == "parent_session" and opt_str(payload.get("parentSessionId")):
                parent = str(payload["parentSessionId"])
            if obj.get("type") == "assistant" and opt_str(obj.get("model")):
                model = str(obj["model"])
        stamps = [safe_timestamp(records[k][1].get("timestamp"), records[k][0], problems) for k in path]
        known = [s for s in stamps if s is not None]
        yield SessionRecord(
            id=session_id, source=self.source, title=title, model=model,
            workspace=opt_str(first.get("cwd")), started_at=min(known) if known else None,
            parent_session_id=parent, meta=meta)
        yield from problems
        commands = _Commands([records[k][1] for k in path])
        for key, stamp in zip(path, stamps, strict=True):
            line, obj = records[key]
            problems = []
            if obj.get("type") in ("assistant", "tool_result"):
                yield from commands.unanswered(session_id)  # an @ read that sent nothing
            if obj.get("subtype") in _COMMANDS or commands.pending_for(obj):
                yield from commands.rows(obj, session_id, stamp, line)
                if obj.get("subtype") in _COMMANDS:
                    continue
            yield from safe_rows(_record_events, problems, line, f"line {line}", obj, session_id, stamp, line, problems)
            yield from problems
        yield from commands.unanswered(session_id)
        yield Checkpoint(str(self.path.stat().st_size), 0)


def _active_path(records: dict[str, tuple[int, dict[str, Any]]], leaf: str) -> list[str]:
    """uuids from the root to ``leaf`` following ``parentUuid`` (stops at a missing parent or loop)."""
    path: list[str] = []
    seen: set[str] = set()
    key: str | None = leaf
    while key is not None and key in records and key not in seen:
        seen.add(key)
        path.append(key)
        parent = records[key][1].get("parentUuid")
        key = parent if isinstance(parent, str) else None
    path.reverse()
    if len(path) < len(records) and key is not None and key not in records:
        # a broken chain (parent not in this file): keep every record, in file order
        return list(records)
    return path


def _shown(obj: dict[str, Any]) -> str:
    """What a ``user`` record shows: ``displayText``, else its text parts."""
    payload = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
    message = obj.get("message") if isinstance(obj.get("message"), dict) else {}
    return (opt_str(payload.get("displayText")) or Parts(message.get("parts")).text).strip()


class _Commands:
    """``slash_command`` and ``at_command`` records along the active path.

    A slash command's ``invocation`` (``rawCommand``, unless ``hiddenInvocation``) is the
    ``user`` row the UI restores, kept once when a ``user`` record beside it says the same;
    its ``result`` (``outputHistoryItems`` with ``text``) is a ``system`` row ``[<command>]
    text``. An ``at_command`` (``userText``, ``filesRead``, ``status``, ``message``) gives the
    next ``user`` record its typed text (when it has no ``displayText``) and the files read;
    a failed one (``status: "error"``), or one no ``user`` record follows, is kept as the
    user's row (and its error as a ``system`` row).
    """

    def __init__(self, path: list[dict[str, Any]]) -> None:
        self.pending: list[tuple[dict[str, Any], float | None, int]] = []
        self.users: set[int] = set()  # records that answer an at_command
        self.duplicate: set[int] = set()  # invocations a user record beside them repeats
        for index, obj in enumerate(path):
            payload = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
            if obj.get("subtype") != "slash_command" or payload.get("phase") != "invocation":
                continue
            raw = str(payload.get("rawCommand") or "").strip()
            for step in (-1, 1):
                near = index + step
                while 0 <= near < len(path) and path[near].get("type") == "system":
                    near += step
                if 0 <= near < len(path) and path[near].get("type") == "user" and _shown(path[near]) == raw:
                    self.duplicate.add(id(obj))

    def pending_for(self, obj: dict[str, Any]) -> bool:
        """True when ``obj`` is the user record a pending ``at_command`` was typed for."""
        return bool(self.pending) and obj.get("type") == "user" and obj.get("subtype") not in (
            *_NOTICES, "mid_turn_user_message")

    def rows(self, obj: dict[str, Any], session_id: str, stamp: float | None, line: int) -> Iterator[MessageRecord]:
        """Rows of a command record; for the user record of an ``at_command``, none (it marks it)."""
        payload = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
        if obj.get("subtype") == "at_command":
            self.pending.append((payload, stamp, line))
            if payload.get("status") == "error":  # the read failed: nothing was sent with it
                yield from self.unanswered(session_id)
            return
        if obj.get("subtype") == "slash_command":
            raw = str(payload.get("rawCommand") or "").strip()
            if payload.get("phase") == "invocation":
                if raw and not payload.get("hiddenInvocation") and id(obj) not in self.duplicate:
                    yield MessageRecord(session_id, "user", raw, timestamp=stamp, line=line)
            elif payload.get("phase") == "result":
                items = payload.get("outputHistoryItems")
                texts = [t for t in (_item_text(i) for i in items) if t] if isinstance(items, list) else []
                if texts:
                    yield MessageRecord(session_id, "system", f"[{raw or 'command'}] " + "\n".join(texts),
                                        timestamp=stamp, line=line)
            return
        payload_at, _, _ = self.pending.pop(0)
        typed = opt_str(payload_at.get("userText"))
        own = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
        if typed and not opt_str(own.get("displayText")):
            obj["systemPayload"] = {**own, "displayText": _with_files(typed, payload_at)}

    def unanswered(self, session_id: str) -> Iterator[MessageRecord]:
        """``at_command`` records no user record followed (the read failed; nothing was sent)."""
        for payload, stamp, line in self.pending:
            typed = opt_str(payload.get("userText"))
            if typed:
                yield MessageRecord(session_id, "user", _with_files(typed, payload), timestamp=stamp, line=line)
            if payload.get("status") == "error" and opt_str(payload.get("message")):
                yield MessageRecord(session_id, "system", f"[@ error] {payload['message']}", timestamp=stamp, line=line)
        self.pending = []


def _item_text(item: Any) -> str:
    """What one history item a command showed says: its ``text``, else (an ``about`` box, a
    ``/goal`` status, stats) its type and its scalar fields, ``type: key value, ...``."""
    if not isinstance(item, dict):
        return ""
    if opt_str(item.get("text")):
        return str(item["text"])
    fields = ", ".join(f"{key} {value}" for key, value in item.items()
                       if key not in ("type", "id") and isinstance(value, (str, int, float)) and not isinstance(value, bool)
                       and str(value).strip())
    kind = opt_str(item.get("type")) or "item"
    return f"{kind}: {fields}" if fields else ""


def _with_files(typed: str, payload: dict[str, Any]) -> str:
    files = [str(f) for f in payload.get("filesRead") or [] if f]
    return f"{typed}\n[files read: {', '.join(files)}]" if files else typed


def _record_events(
    obj: dict[str, Any], session_id: str, stamp: float | None, line: int, problems: list[Problem]
) -> Iterator[MessageRecord]:
    kind = obj.get("type")
    if kind == "system":
        subtype = obj.get("subtype")
        payload = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
        if subtype in _SYSTEM_TEXTS:
            text = _SYSTEM_TEXTS[subtype](payload)
            if text:
                yield MessageRecord(session_id, "system", text, timestamp=stamp, line=line)
        elif subtype not in _BOOKKEEPING:
            problems.append(Problem(line, f"unknown system record subtype {subtype!r} (skipped)"))
        return
    role = _ROLES.get(kind) if isinstance(kind, str) else None
    if role is None:
        problems.append(Problem(line, f"unknown record type {kind!r} (skipped)"))
        return
    payload = obj.get("systemPayload") if isinstance(obj.get("systemPayload"), dict) else {}
    shown = opt_str(payload.get("displayText"))
    if role == "user" and obj.get("subtype") in _NOTICES:
        role = "system"  # a background task's or cron job's prompt, shown as a notice, not typed
    message = obj.get("message")
    if not isinstance(message, dict):
        if role != "tool":
            problems.append(Problem(line, "field 'message': missing or not an object"))
            return
        message = {}
    parts = Parts(message.get("parts"))
    if parts.thoughts:
        yield MessageRecord(session_id, "reasoning", "\n".join(parts.thoughts), timestamp=stamp, line=line)
    if role == "tool":
        result = obj.get("toolCallResult") if isinstance(obj.get("toolCallResult"), dict) else {}
        responses = parts.responses or [(opt_str(result.get("callId")), None, "")]
        for call_id, name, text in responses:
            if not text:
                display = result.get("resultDisplay")
                text = display if isinstance(display, str) else opt_str(result.get("error")) or ""
            yield MessageRecord(session_id, "tool", text, tool_name=name,
                                tool_call_id=call_id or opt_str(result.get("callId")),
                                timestamp=stamp, line=line)
        if parts.text:
            yield MessageRecord(session_id, "user", parts.text, timestamp=stamp, line=line)
        return
    text = parts.text
    if role == "user" and shown and shown.strip():
        text = "\n".join([shown, *parts.attachments])  # as typed: no expanded @file text or hook context
    elif role == "system" and shown and shown.strip() and shown.strip() not in text:
        text = f"{shown}\n{text}" if text else shown  # the notice as shown, then what the model was told
    if text or parts.calls:
        yield MessageRecord(session_id, role, text,
                            tool_calls=dumps(parts.calls) if parts.calls else None,
                            timestamp=stamp, line=line)
    for call_id, name, text in parts.responses:
        yield MessageRecord(session_id, "tool", text, tool_name=name, tool_call_id=call_id,
                            timestamp=stamp, line=line)


class QwenLegacyImporter(GeminiCliImporter):
    """Qwen Code before its own format: Gemini CLI's ``session-*.json`` under ``~/.qwen/tmp``."""

    name = "qwen-code-legacy"
    agent = "Qwen Code (Gemini CLI layout)"
    indexes = "Gemini CLI's session JSON as Qwen Code wrote it before its own format"
    fork_dirs = ()
    source: str | None = "qwen-code"
    default_locations = {"linux": ("~/.qwen/tmp/*/chats/session-*.json",),
                         "darwin": ("~/.qwen/tmp/*/chats/session-*.json",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Gemini CLI's conversation structure, under a ``.qwen`` directory."""
        if not path_has_part(head.path, ".qwen"):
            return 0.0
        return super().sniff(head)


class QwenLogsImporter(GeminiLogsImporter):
    """Qwen Code's ``~/.qwen/tmp/<hash>/logs.json`` prompt log (Gemini CLI's structure)."""

    name = "qwen-code-logs"
    agent = "Qwen Code (prompt log)"
    indexes = "the user's prompts from Qwen Code's logs.json"
    fork_dirs = ()
    source: str | None = "qwen-code"
    default_locations = {"linux": ("~/.qwen/tmp/*/logs.json",), "darwin": ("~/.qwen/tmp/*/logs.json",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Gemini CLI's prompt-log structure, under a ``.qwen`` directory."""
        if not path_has_part(head.path, ".qwen"):
            return 0.0
        return super().sniff(head)
