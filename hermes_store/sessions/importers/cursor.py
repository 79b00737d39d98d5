"""``cursor``: Cursor's ``state.vscdb`` databases (opened read-only, never written).

Locations: ``~/.config/Cursor/User/{globalStorage,workspaceStorage/<id>}/state.vscdb``
(Linux), ``~/Library/Application Support/Cursor/User/...`` (macOS). Two
key/value tables, ``ItemTable`` and ``cursorDiskKV`` (``key TEXT, value BLOB``):

* ``cursorDiskKV`` ``composerData:<composerId>`` (global database): one
  composer (chat/agent) session: ``{_v, composerId, name, createdAt,
  lastUpdatedAt, modelConfig: {modelName}, unifiedMode, ...}`` with its bubbles
  either inline (``conversation: [...]``, early versions), in
  ``conversationMap``, or (current) as ``fullConversationHeadersOnly: [{bubbleId,
  type}]`` whose content is in ``bubbleId:<composerId>:<bubbleId>`` rows;
* ``ItemTable`` ``composer.composerHeaders`` (Cursor 3): ``{allComposers: [{composerId,
  name, createdAt, lastUpdatedAt, unifiedMode, ...}]}``, the composer index; Cursor 3's
  ``composerData`` (``_v`` 14) no longer carries the name and times, so they are taken
  from here (the model from the bubbles' ``modelInfo.modelName``), and so is the workspace (a
  header's ``workspaceIdentifier.uri.fsPath``: the global database has no ``workspace.json``);
* a composer lists the subagents it started in ``subagentComposerIds`` / ``subComposerIds``
  (each its own composer, stored as a child session);
* a bubble: ``{type: 1 (user) | 2 (assistant), text, createdAt (ISO), thinking:
  {text} (or ``allThinkingBlocks: [{text}]``), toolFormerData: {name, toolCallId, params | rawArgs (JSON text),
  result (JSON text), status}, codeBlocks, images, ...}``; a bubble row can be
  JSON ``null`` and a header can name a bubble that no longer exists (reported);
* ``ItemTable`` ``workbench.panel.aichat.view.aichat.chatdata`` (older chat
  panel): ``{tabs: [{tabId, chatTitle, lastSendTime, bubbles: [{type: "user" |
  "ai", text, modelType}]}]}``;
* ``ItemTable`` ``aiService.prompts`` (``[{text, commandType}]``, the prompts
  typed in a workspace) with ``aiService.generations`` (``[{unixMs,
  textDescription}]``) giving their times: one prompt-history session.

Only these keys are read (the same tables hold credentials, which are never
touched). A workspace database's folder comes from the sibling ``workspace.json``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from hermes_store.foreign_db import ForeignDB
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
    foreign_read,
    path_has_part,
    safe_rows,
    tool_call,
    workspace_database,
)

CHUNK = 200
CHAT_KEY = "workbench.panel.aichat.view.aichat.chatdata"
_ROLES = {1: "user", 2: "assistant", "user": "user", "ai": "assistant", "assistant": "assistant"}


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _json(value: Any) -> Any:
    if isinstance(value, (bytes, memoryview)):
        value = bytes(value).decode("utf-8", errors="replace")
    if not isinstance(value, str):
        return None
    try:
        return json.loads(value, strict=False)
    except (ValueError, RecursionError):
        return _BAD


_BAD = object()  # a value that is not JSON


def _arguments(data: dict[str, Any]) -> Any:
    for key in ("params", "rawArgs"):
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            parsed = _json(value)
            return parsed if parsed is not _BAD else value
        if isinstance(value, dict):
            return value
    return {}


def _thought(bubble: dict[str, Any]) -> str:
    """The bubble's thinking: ``thinking.text``, else its ``allThinkingBlocks`` (``[{text}]`` or strings)."""
    thinking = bubble.get("thinking")
    text = thinking.get("text") if isinstance(thinking, dict) else None
    if isinstance(text, str) and text.strip():
        return text
    blocks = bubble.get("allThinkingBlocks")
    texts = [b.get("text") if isinstance(b, dict) else b for b in blocks if isinstance(b, (dict, str))] \
        if isinstance(blocks, list) else []
    return "\n\n".join(t for t in texts if isinstance(t, str) and t.strip())


def bubble_rows(bubble: dict[str, Any], session_id: str, fallback: float | None, where: str,
                problems: list[Problem]) -> list[MessageRecord]:
    """The rows of one Cursor bubble (any version): reasoning, message, tool call and result."""
    role = _ROLES.get(bubble.get("type"))
    if role is None:
        problems.append(Problem(None, f"{where}: unknown bubble type {bubble.get('type')!r} (skipped)"))
        return []
    timing = bubble.get("timingInfo") if isinstance(bubble.get("timingInfo"), dict) else {}
    stamp = _stamp(bubble.get("createdAt")) or _stamp(bubble.get("timestamp")) \
        or _stamp(timing.get("clientRpcSendTime")) or fallback
    rows: list[MessageRecord] = []
    thought = _thought(bubble)
    if thought:
        rows.append(MessageRecord(session_id, "reasoning", thought, timestamp=stamp))
    text = bubble.get("text") if isinstance(bubble.get("text"), str) else ""
    if not text.strip() and isinstance(bubble.get("rawText"), str):
        text = bubble["rawText"]
    if not text.strip():
        blocks = [b.get("content") for b in bubble.get("codeBlocks") or []
                  if isinstance(b, dict) and isinstance(b.get("content"), str)]
        text = "\n".join(blocks)
    for image in bubble.get("images") or []:
        if isinstance(image, dict):
            text += ("\n" if text else "") + "[image]"
    calls: list[dict[str, Any]] = []
    data = bubble.get("toolFormerData")
    result_row = None
    if isinstance(data, dict) and (data.get("name") or data.get("tool") is not None):
        name = opt_str(data.get("name")) or f"tool {data.get('tool')}"
        call_id = opt_str(data.get("toolCallId")) or opt_str(bubble.get("bubbleId"))
        calls.append(tool_call(call_id, name, _arguments(data)))
        result = data.get("result")
        if isinstance(result, str) and result.strip():
            output = result
        elif result not in (None, ""):
            output = dumps(result)
        else:
            output = f"[{data.get('status') or 'no result'}]"
        result_row = MessageRecord(session_id, "tool", output, tool_name=name, tool_call_id=call_id,
                                   timestamp=stamp)
    if text.strip() or calls:
        rows.append(MessageRecord(session_id, role, text, tool_calls=dumps(calls) if calls else None,
                                  timestamp=stamp))
    if result_row is not None:
        rows.append(result_row)
    return rows


def _folder(identifier: Any) -> str | None:
    """The folder a Cursor 3 composer header's ``workspaceIdentifier`` names (``{id, uri: {fsPath,
    path, external: "file:///..."}}``), so a composer of the global database has its workspace."""
    uri = identifier.get("uri") if isinstance(identifier, dict) else None
    if not isinstance(uri, dict):
        return None
    for key in ("fsPath", "path"):
        if isinstance(uri.get(key), str) and uri[key].strip():
            return uri[key]
    external = uri.get("external")
    if isinstance(external, str) and external.startswith("file:"):
        return unquote(urlparse(external).path) or None
    return None


class CursorImporter(Importer):
    """Every chat of one Cursor ``state.vscdb`` (composers, old chat tabs, prompt history)."""

    name = "cursor"
    agent = "Cursor"
    indexes = "composers (composerData + bubbleId rows), thinking, tool calls, old chat tabs, aiService.prompts (read-only)"
    source: str | None = "cursor"
    resumable_by_offset = False
    skip_when_unchanged = False  # WAL writes do not touch the main file's mtime
    snapshot = True
    reader = 2  # 2: the workspace from composer headers' workspaceIdentifier (2026-12-07)
    walk_names = ("state.vscdb",)
    default_locations = {
        "linux": ("~/.config/Cursor/User/globalStorage/state.vscdb",
                  "~/.config/Cursor/User/workspaceStorage/*/state.vscdb"),
        "darwin": ("~/Library/Application Support/Cursor/User/globalStorage/state.vscdb",
                   "~/Library/Application Support/Cursor/User/workspaceStorage/*/state.vscdb"),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """``ItemTable`` + ``cursorDiskKV`` (Cursor's own table), or ItemTable under a Cursor directory;
        a Cursor window's ``workspace.json`` beside its database is read through it."""
        if cls.member_of(head) is not None:
            return 0.6
        if not head.is_sqlite:
            return 0.0
        tables = head.sqlite_tables()
        if "ItemTable" not in tables:
            return 0.0
        if "cursorDiskKV" in tables:
            return 0.95
        return 0.9 if path_has_part(head.path, "Cursor") else 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """A Cursor ``workspaceStorage/<hash>/workspace.json``: read through the ``state.vscdb``
        beside it (it names the folder of that database's composers)."""
        return workspace_database(head) if path_has_part(head.path, "Cursor") else None

    def read(self, state: SourceState) -> Iterator[Event]:
        """The database's composers, chat tabs and prompts; nothing for a ``workspace.json``."""
        if self.path.name == "workspace.json" and self.member_of(self.head or Head.read(self.path)) is not None:
            return iter(())
        return self._read_database(state)

    @foreign_read
    def _read_database(self, db: ForeignDB, state: SourceState) -> Iterator[Event]:
        workspace = self._workspace()
        read = 0
        if db.table_exists("cursorDiskKV"):
            self._headers = self._composer_headers(db) if db.table_exists("ItemTable") else {}
            for event in self._composers(db, workspace):
                read += 1
                yield event
        if db.table_exists("ItemTable"):
            for event in itertools.chain(self._chat_tabs(db, workspace), self._prompts(db, workspace)):
                read += 1
                yield event
            if not read and db.has_rows("ItemTable"):
                # a window that never chatted keeps its layout here: Cursor's file, nothing to import
                yield Notice(None, "no composer, chat tab or prompt in it: a Cursor window that never"
                                   " chatted; nothing to import here")
        yield Checkpoint("done")

    def _workspace(self) -> str | None:
        meta = self.path.parent / "workspace.json"
        try:
            folder = json.loads(meta.read_text(encoding="utf-8")).get("folder")
        except (OSError, ValueError, AttributeError):
            return None
        if not isinstance(folder, str):
            return None
        parsed = urlparse(folder)
        return unquote(parsed.path) if parsed.scheme == "file" else folder

    @staticmethod
    def _item(db: ForeignDB, key: str) -> Any:
        row = db.query_one("SELECT value FROM ItemTable WHERE key=?", (key,))
        return None if row is None else _json(row["value"])

    # -- composers ---------------------------------------------------------------

    def _composer_headers(self, db: ForeignDB) -> dict[str, dict[str, Any]]:
        """Cursor 3's composer index (``composer.composerHeaders``), by composer id."""
        index = self._item(db, "composer.composerHeaders")
        found = index.get("allComposers") if isinstance(index, dict) else None
        return {str(h["composerId"]): h for h in found or []
                if isinstance(h, dict) and isinstance(h.get("composerId"), str)}

    def _composers(self, db: ForeignDB, workspace: str | None) -> Iterator[Event]:
        self._stored: set[str] = set()  # composers stored as sessions
        self._parents: dict[str, str] = {}  # subagent composer -> the composer that started it
        last = "composerData:"
        while True:
            rows = db.query("SELECT key, value FROM cursorDiskKV WHERE key > ? AND key < 'composerData;'"
                            " ORDER BY key LIMIT ?", (last, CHUNK))
            if not rows:
                # a parent names its subagents (it may come after them in key order): link them now
                for child, parent in sorted(self._parents.items()):
                    if child in self._stored and parent in self._stored and child != parent:
                        yield SessionRecord(id=child, parent_session_id=parent)
                return
            for row in rows:
                last = row["key"]
                composer_id = last[len("composerData:"):]
                data = _json(row["value"])
                if data is _BAD or (data is not None and not isinstance(data, dict)):
                    yield Problem(None, f"{last}: value is not a JSON object")
                    continue
                if data:
                    yield from self._composer(db, composer_id, data, workspace)

    def _composer(self, db: ForeignDB, composer_id: str, data: dict[str, Any],
                  workspace: str | None) -> Iterator[Event]:
        problems: list[Problem] = []
        for key in ("subagentComposerIds", "subComposerIds"):
            children = data.get(key)
            for child in children if isinstance(children, list) else []:
                if isinstance(child, str) and child:
                    self._parents.setdefault(child, composer_id)
        bubbles = list(self._bubbles(db, composer_id, data, problems))
        if not bubbles:
            yield from problems
            return  # opened and closed without a message: Cursor keeps these, nothing to index
        header = getattr(self, "_headers", {}).get(composer_id, {})
        data = {**{k: v for k, v in header.items() if k != "type"}, **{k: v for k, v in data.items()
                                                                        if v not in (None, "")}}
        model = data.get("modelConfig", {}).get("modelName") if isinstance(data.get("modelConfig"), dict) else None
        if not model or model == "default":
            infos = [b.get("modelInfo") for b in bubbles if isinstance(b.get("modelInfo"), dict)]
            names = [i["modelName"] for i in infos if isinstance(i.get("modelName"), str) and i["modelName"]]
            model = names[-1] if names else model
        meta = {k: data[k] for k in ("unifiedMode", "forceMode", "status", "_v") if data.get(k) not in (None, "")}
        self._stored.add(composer_id)
        yield SessionRecord(
            id=composer_id, source=self.source, title=opt_str(data.get("name")),
            model=opt_str(model) if model != "default" else None,
            workspace=_folder(data.get("workspaceIdentifier")) or workspace,
            started_at=_stamp(data.get("createdAt")), ended_at=_stamp(data.get("lastUpdatedAt")), meta=meta)
        fallback = _stamp(data.get("createdAt"))
        for index, bubble in enumerate(bubbles):
            where = f"composer {composer_id} bubble {index}"
            for record in safe_rows(bubble_rows, problems, None, where, bubble, composer_id, fallback, where,
                                    problems):
                fallback = record.timestamp or fallback
                yield record
        yield from problems

    def _bubbles(self, db: ForeignDB, composer_id: str, data: dict[str, Any],
                 problems: list[Problem]) -> Iterator[dict[str, Any]]:
        headers = data.get("fullConversationHeadersOnly")
        if isinstance(headers, list) and headers:
            missing = 0
            for header in headers:
                bubble_id = header.get("bubbleId") if isinstance(header, dict) else None
                if not isinstance(bubble_id, str):
                    continue
                row = db.query_one("SELECT value FROM cursorDiskKV WHERE key=?",
                                   (f"bubbleId:{composer_id}:{bubble_id}",))
                bubble = _json(row["value"]) if row is not None else None
                if isinstance(bubble, dict):
                    yield bubble
                elif row is None or bubble is _BAD:
                    missing += 1
            if missing:
                problems.append(Problem(None, f"composer {composer_id}: {missing} bubble(s) missing or unreadable"))
            return
        inline = data.get("conversation")
        if isinstance(inline, list):
            yield from (b for b in inline if isinstance(b, dict))
            return
        mapping = data.get("conversationMap")
        if isinstance(mapping, dict):
            yield from (b for b in mapping.values() if isinstance(b, dict))

    # -- the older chat panel --------------------------------------------------------

    def _chat_tabs(self, db: ForeignDB, workspace: str | None) -> Iterator[Event]:
        data = self._item(db, CHAT_KEY)
        if data is None:
            return
        tabs = data.get("tabs") if isinstance(data, dict) else None
        if not isinstance(tabs, list):
            yield Problem(None, f"{CHAT_KEY}: expected an object with a 'tabs' list")
            return
        for index, tab in enumerate(tabs):
            if not isinstance(tab, dict) or not isinstance(tab.get("bubbles"), list) or not tab["bubbles"]:
                continue
            session_id = f"cursor-chat:{tab.get('tabId') or index}"
            problems: list[Problem] = []
            stamp = _stamp(tab.get("lastSendTime"))
            models = [b.get("modelType") for b in tab["bubbles"] if isinstance(b, dict) and b.get("modelType")]
            yield SessionRecord(id=session_id, source=self.source, title=opt_str(tab.get("chatTitle")),
                                model=opt_str(models[-1]) if models else None, workspace=workspace,
                                ended_at=stamp, meta={"cursor_store": "aichat.chatdata"})
            for number, bubble in enumerate(tab["bubbles"]):
                if isinstance(bubble, dict):
                    where = f"chat tab {index} bubble {number}"
                    yield from safe_rows(bubble_rows, problems, None, where, bubble, session_id, None, where, problems)
            yield from problems

    def _prompts(self, db: ForeignDB, workspace: str | None) -> Iterator[Event]:
        prompts = self._item(db, "aiService.prompts")
        if prompts is None:
            return
        if not isinstance(prompts, list):
            yield Problem(None, "aiService.prompts: expected a JSON list")
            return
        generations = self._item(db, "aiService.generations")
        times: dict[str, list[float]] = {}
        for gen in generations if isinstance(generations, list) else []:
            if isinstance(gen, dict) and isinstance(gen.get("textDescription"), str):
                stamp = _stamp(gen.get("unixMs"))
                if stamp is not None:
                    times.setdefault(gen["textDescription"], []).append(stamp)
        entries = [p for p in prompts if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"]]
        if not entries:
            return
        session_id = f"cursor-prompts:{self.path.parent.name}"
        yield SessionRecord(id=session_id, source=self.source, title="Cursor prompt history",
                            workspace=workspace, meta={"cursor_store": "aiService.prompts"})
        for entry in entries:
            known = times.get(entry["text"])
            yield MessageRecord(session_id, "user", flatten_content(entry["text"]),
                                timestamp=known.pop(0) if known else None)
