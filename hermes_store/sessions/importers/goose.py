"""``goose-jsonl`` and ``goose-db``: Block's Goose agent sessions.

``~/.local/share/goose/sessions/`` holds

* ``sessions.db`` (Goose 1.10+, SQLite): ``sessions (id, name, description,
  session_type, working_dir, created_at, updated_at, ...)`` and ``messages (id,
  session_id, role, content_json, created_timestamp (s), metadata_json)``;
* ``<name>.jsonl`` (earlier versions, imported into the database on upgrade but
  left on disk): a metadata line ``{working_dir, description, message_count,
  total_tokens, ...}`` then one message per line ``{id?, role, created (s),
  content: [...], metadata?}``.

Message content is a list of parts: ``text``, ``toolRequest`` (``{id, toolCall:
{status, value: {name, arguments}}}``), ``toolResponse`` (``{id, toolResult:
{status, value: [parts] | {content: [parts], isError}}}``), ``thinking`` /
``redactedThinking``, ``image``, and notices (``contextLengthExceeded``,
``summarizationRequested``, ``conversationCompacted``, ``systemNotification``).
Goose before the ``thinking`` part wrote a model's thinking as ``{type: "reasoning", text}``
(today's Goose migrates it on load: ``deserialize_sanitized_content`` in
``crates/goose/src/conversation/message.rs``); it is a ``reasoning`` row too. An
``actionRequired`` part's ``data`` (tagged by ``actionType``) asking the user for input
(``elicitation``: ``message``) is a ``system`` row, the user's answer (``elicitationResponse``:
``user_data``) a ``user`` row of its fields; a ``toolConfirmation`` repeats the tool request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hermes_store.foreign_db import ForeignDB
from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    flatten_content,
    opt_str,
    parse_timestamp,
    read_jsonl,
    said_if_empty,
)
from hermes_store.sessions.importers.doc_common import (
    dumps,
    foreign_guarded,
    foreign_read,
    safe_rows,
    shape_guarded,
    tool_call,
)
from hermes_store.sessions.importers.openai_common import ToolNames

CHUNK = 2000
_PART_TYPES = {"text", "toolRequest", "toolResponse", "thinking", "reasoning", "redactedThinking", "image",
               "contextLengthExceeded", "summarizationRequested", "conversationCompacted",
               "systemNotification", "frontendToolRequest", "toolConfirmationRequest", "actionRequired"}
_META_KEYS = {"working_dir", "description", "message_count"}
_LOCATIONS = ("~/.local/share/goose/sessions",)


def _loads_object(value: Any) -> dict[str, Any]:
    """A JSON object column (``model_config_json``, ``metadata_json``) as a dict; anything else as ``{}``."""
    if not isinstance(value, str):
        return {}
    try:
        parsed = json.loads(value, strict=False)
    except (ValueError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _model_name(value: Any) -> str | None:
    """``sessions.model_config_json`` (schema v6+): ``{model_name, context_limit, ...}``."""
    return opt_str(_loads_object(value).get("model_name"))


def _metadata(value: Any) -> dict[str, Any]:
    """``messages.metadata_json`` (schema v3+): ``{userVisible, agentVisible}``."""
    return _loads_object(value)


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _for_the_model(items: Any) -> Any:
    """The content items of a tool result the model was given: Goose's own tools (the developer
    shell, screen capture, ...) answer with the output twice, one item annotated ``audience:
    ["assistant"]`` and one ``["user"]`` (shown in the UI, sometimes a short summary), and Goose hands
    the model only items whose audience is absent or names the assistant. Items for the user alone
    are left out, unless nothing else is there."""
    if not isinstance(items, list):
        return items

    def audience(item: Any) -> Any:
        notes = item.get("annotations") if isinstance(item, dict) else None
        return notes.get("audience") if isinstance(notes, dict) else None

    seen = [item for item in items if not isinstance(audience(item), list) or "assistant" in audience(item)]
    return seen or items


def _result_text(result: Any) -> str:
    if not isinstance(result, dict):
        return flatten_content(result)
    value = result.get("value")
    if isinstance(value, dict) and "content" in value:
        value = value["content"]
    text = flatten_content(_for_the_model(value))
    if not text and result.get("error"):
        text = str(result["error"])
    return text


def _fields_text(value: Any) -> str:
    """A user's structured answer as ``key: value`` lines (nested values as compact JSON)."""
    if isinstance(value, dict):
        return "\n".join(f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
                         for k, v in value.items())
    return flatten_content(value) if not isinstance(value, (int, float, bool)) else json.dumps(value)


def _action_rows(data: dict[str, Any], session_id: str, stamp: float | None,
                 line: int | None) -> list[MessageRecord]:
    """An ``actionRequired`` part: an elicitation's question (``system``) or the user's answer."""
    action = data.get("actionType")
    if action == "elicitation" and opt_str(data.get("message")):
        return [MessageRecord(session_id, "system", f"[elicitation] {data['message']}", timestamp=stamp, line=line)]
    if action == "elicitationResponse":
        text = _fields_text(data.get("user_data"))
        return [MessageRecord(session_id, "user", text, timestamp=stamp, line=line)] if text.strip() else []
    return []  # toolConfirmation: the tool request it asks about is stored already


def goose_rows(message: dict[str, Any], session_id: str, line: int | None, tools: ToolNames,
               problems: list[Problem], stamp: float | None = None) -> list[MessageRecord]:
    """Rows of one Goose message (``role`` + content parts)."""
    role = message.get("role")
    if role not in ("user", "assistant"):
        problems.append(Problem(line, f"unknown role {role!r} (skipped)"))
        return []
    if stamp is None:
        stamp = _stamp(message.get("created"))
    content = message.get("content")
    if isinstance(content, str):
        return [MessageRecord(session_id, role, content, timestamp=stamp, line=line)]
    rows: list[MessageRecord] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[MessageRecord] = []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(str(part.get("text") or ""))
        elif kind in ("toolRequest", "frontendToolRequest"):
            call = part.get("toolCall") if isinstance(part.get("toolCall"), dict) else {}
            value = call.get("value") if isinstance(call.get("value"), dict) else {}
            calls.append(tool_call(part.get("id"), value.get("name") or "tool", value.get("arguments") or {}))
        elif kind == "toolResponse":
            call_id = opt_str(part.get("id"))
            results.append(MessageRecord(session_id, "tool", _result_text(part.get("toolResult")),
                                         tool_name=tools.lookup(call_id), tool_call_id=call_id,
                                         timestamp=stamp, line=line))
        elif kind in ("thinking", "reasoning"):  # reasoning: {text}, what Goose wrote before thinking parts
            thought = opt_str(part.get("thinking" if kind == "thinking" else "text"))
            if thought and thought.strip():
                rows.append(MessageRecord(session_id, "reasoning", thought, timestamp=stamp, line=line))
        elif kind == "image":
            texts.append(f"[{part.get('mimeType') or 'image'}]")
        elif kind == "actionRequired" and isinstance(part.get("data"), dict):
            rows.extend(_action_rows(part["data"], session_id, stamp, line))
        elif kind in ("contextLengthExceeded", "summarizationRequested", "conversationCompacted",
                      "systemNotification", "actionRequired"):
            notice = opt_str(part.get("msg")) or opt_str(part.get("message"))
            if notice:
                rows.append(MessageRecord(session_id, "system", notice, timestamp=stamp, line=line))
        elif kind not in ("redactedThinking", "toolConfirmationRequest"):
            problems.append(Problem(line, f"unknown content part {kind!r} (skipped)"))
    if calls:
        tools.remember(calls)
    rows.extend(results)
    text = "\n".join(t for t in texts if t)
    if text or calls:
        rows.append(MessageRecord(session_id, role, text, tool_calls=dumps(calls) if calls else None,
                                  timestamp=stamp, line=line))
    return rows


def is_goose_message(obj: dict[str, Any]) -> bool:
    """True for a Goose message: a user or assistant role and a non-empty list of Goose content parts."""
    content = obj.get("content")
    return obj.get("role") in ("user", "assistant") and isinstance(content, list) and bool(content) and all(
        isinstance(p, dict) and p.get("type") in _PART_TYPES for p in content)


class GooseJsonlImporter(Importer):
    """An earlier Goose ``sessions/<name>.jsonl``."""

    name = "goose-jsonl"
    reader = 3  # 2: legacy reasoning parts and elicitations read; 3: user-only result items left out (2026-12-07)
    agent = "Goose (JSONL sessions)"
    indexes = "messages, tool requests and responses, thinking, notices"
    source: str | None = "goose"
    default_locations = {"linux": tuple(f"{d}/*.jsonl" for d in _LOCATIONS),
                         "darwin": tuple(f"{d}/*.jsonl" for d in _LOCATIONS)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A ``working_dir``/``description`` metadata line, or messages with Goose's content parts."""
        if head.is_sqlite:
            return 0.0
        objects = head.objects()
        if not objects:
            return 0.0
        if _META_KEYS & set(objects[0]) and "working_dir" in objects[0] and "role" not in objects[0]:
            return 0.95
        messages = [o for o in objects if "role" in o]
        if not messages or not all(is_goose_message(o) for o in messages):
            return 0.0
        camel = any(p.get("type") in ("toolRequest", "toolResponse") for o in messages for p in o["content"])
        return 0.7 if camel or "created" in messages[0] else 0.0

    @shape_guarded
    @foreign_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        spoken = [False]  # a message line was met (not only the metadata line)
        yield from said_if_empty(self._read(state, spoken), state, "the session", lambda: not spoken[0])

    def _read(self, state: SourceState, spoken: list[bool]) -> Iterator[Event]:
        """The session's rows; ``spoken[0]`` set once a line other than the metadata line is met."""
        tools = ToolNames(state.meta)
        session_id = self.path.stem
        if not state.resume_at:
            yield SessionRecord(id=session_id, source=self.source)

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            spoken[0] = spoken[0] or "role" in obj or "working_dir" not in obj
            if "role" not in obj and "working_dir" in obj:
                yield SessionRecord(id=session_id, source=self.source, title=opt_str(obj.get("description")),
                                    workspace=opt_str(obj.get("working_dir")),
                                    meta={k: obj[k] for k in ("schedule_id", "total_tokens") if obj.get(k)})
                return
            problems: list[Problem] = []
            yield from goose_rows(obj, session_id, line, tools, problems)
            yield from problems

        yield from read_jsonl(self, state, handle)


class GooseDbImporter(Importer):
    """Goose's ``sessions.db`` (every session; opened read-only)."""

    name = "goose-db"
    reader = 2  # 2: tool-result items for the user alone left out (Goose's audience annotations, 2026-12-07)
    agent = "Goose (sessions.db)"
    indexes = "every session of sessions.db: messages, tool requests and responses, thinking (read-only)"
    source: str | None = "goose"
    resumable_by_offset = False
    skip_when_unchanged = False  # WAL writes do not touch the main file's mtime
    snapshot = True  # Goose rewrites a conversation (new row ids) when it compacts or edits it
    default_locations = {"linux": tuple(f"{d}/sessions.db" for d in _LOCATIONS),
                         "darwin": tuple(f"{d}/sessions.db" for d in _LOCATIONS)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """``sessions`` + ``messages`` tables with Goose's ``content_json`` column (via table names and path)."""
        if not head.is_sqlite:
            return 0.0
        tables = head.sqlite_tables()
        if not {"sessions", "messages"} <= tables:
            return 0.0
        if "schema_version" in tables and head.path.name == "sessions.db":
            return 0.9
        return 0.0

    @foreign_read
    def read(self, db: ForeignDB, state: SourceState) -> Iterator[Event]:
        columns = set(db.columns("messages"))
        if "content_json" not in columns:
            yield Problem(None, "not a Goose sessions.db (messages has no content_json column)")
            return
        for row in db.query("SELECT * FROM sessions ORDER BY created_at, id"):
            name = opt_str(row.get("name")) or opt_str(row.get("description"))
            yield SessionRecord(
                id=str(row["id"]), source=self.source, title=name, workspace=opt_str(row.get("working_dir")),
                started_at=_stamp(row.get("created_at")), ended_at=_stamp(row.get("updated_at")),
                model=_model_name(row.get("model_config_json")),
                meta={k: row[k] for k in ("session_type", "schedule_id", "accumulated_total_tokens", "provider_name")
                      if row.get(k) not in (None, "", "user")})
        last = 0
        tools = ToolNames()
        # metadata_json (schema v3+): {userVisible, agentVisible}; a compaction summary is hidden from the user
        metadata = "metadata_json" if "metadata_json" in columns else "NULL AS metadata_json"
        while True:
            rows = db.query(f"SELECT id, session_id, role, content_json, created_timestamp, {metadata} FROM messages"
                            " WHERE id > ? ORDER BY id LIMIT ?", (last, CHUNK))
            if not rows:
                break
            for row in rows:
                last = int(row["id"])
                problems: list[Problem] = []
                try:
                    content = json.loads(row["content_json"], strict=False)
                except (TypeError, ValueError) as exc:
                    yield Problem(last, f"message {last}: bad content_json ({exc})")
                    continue
                message = {"role": row["role"], "content": content, "metadata": _metadata(row.get("metadata_json"))}
                yield from visible_rows(message, safe_rows(
                    goose_rows, problems, last, f"message {last}", message, str(row["session_id"]),
                    last, tools, problems, _stamp(row.get("created_timestamp"))))
                yield from problems
        yield Checkpoint("done")


def visible_rows(message: dict[str, Any], rows: list[MessageRecord]) -> Iterator[MessageRecord]:
    """A user message the user never saw (``userVisible: false``) is Goose's, not the user's."""
    metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    hidden = metadata.get("userVisible") is False
    for row in rows:
        if hidden and row.role == "user":
            row.role = "system"
        yield row
