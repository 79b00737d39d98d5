"""``continue``: Continue's sessions (the VS Code / JetBrains extension and the ``cn`` CLI).

Continue (continuedev/continue) saves each session whole, ``~/.continue/sessions/<sessionId>.json``
(``core/util/history.ts`` ``HistoryManager.save``; the CLI's ``extensions/cli/src/session.ts``
writes the same file), beside ``sessions.json``, the list the history panel shows
(``{sessionId, title, dateCreated, workspaceDirectory}``: a member, nothing to import alone).
A session (``core/index.d.ts`` ``Session``) is ``{sessionId, title, workspaceDirectory, history,
mode?, chatModelTitle?, usage?}``; each ``history`` item is ``{message, contextItems,
toolCallStates?, reasoning?, conversationSummary?, ...}`` whose ``message`` is a ``ChatMessage``:

* ``user``: ``content`` text or parts (``text``, ``imageUrl``: ``[image]``); the item's
  ``contextItems`` (files, terminal output, ... attached with ``@``) are the prompt's context, kept
  after the typed words;
* ``thinking``: ``content`` (a ``redactedThinking`` alone holds no words): a ``reasoning`` row;
* ``assistant``: ``content`` and ``toolCalls`` (``{id, function: {name, arguments}}``); the
  item's ``reasoning.text`` (thinking streamed inside the reply) a ``reasoning`` row before it;
  its ``toolCallStates`` (``toolCallState``, one, in the versions of late 2024) hold each call
  and its ``output`` (context items) and ``status``;
* ``tool``: ``content``, ``toolCallId``: the result the GUI sends back. The CLI writes no such
  message: a call's result is then its state's output (``[canceled]`` / ``[error]`` when it
  has none);
* ``system``: the agent's system prompt (the CLI keeps it first in the history): not indexed.

An item's ``conversationSummary`` (a compaction: the model sees only it and what follows) is a
``system`` row after the item. Items carry no times: the session's start is the panel list's
``dateCreated`` (milliseconds, or ISO in the CLI's list). The file is re-read whole when it
changes. The first format (the Python server's ``{session_id, history: {timeline}}``, which
Continue itself has filtered out since 2024) is not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

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
    NamedByDocument,
    ReplacedWhenChanged,
    dumps,
    load_document,
    shape_guarded,
    tool_call,
)

INDEX = "sessions.json"
ROLES = {"user", "assistant", "thinking", "system", "tool"}
_STATUS_TEXT = {"canceled": "[canceled]", "errored": "[error]"}
_DRIVE = re.compile(r"^/[A-Za-z]:/")


def is_continue_session(doc: Any) -> bool:
    """True for a ``Session`` document: a ``history`` list of ``{message: {role}}`` items and
    the session's own fields (or the items' ``contextItems``)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
        return False
    items = [item for item in doc["history"][:20] if isinstance(item, dict)]
    if not all(isinstance(item.get("message"), dict) and item["message"].get("role") in ROLES for item in items):
        return False
    if not items:
        return "sessionId" in doc and "workspaceDirectory" in doc
    return "sessionId" in doc or "workspaceDirectory" in doc or all("contextItems" in item for item in items)


def is_session_index(path: Path, doc: Any) -> bool:
    """True for the panel's ``sessions.json``: a list of ``{sessionId, title, dateCreated}``."""
    return (path.name == INDEX and isinstance(doc, list)
            and all(isinstance(e, dict) and "sessionId" in e and "dateCreated" in e for e in doc[:20]))


def _text(content: Any) -> str:
    """A message's ``content``: text, or parts (an ``imageUrl`` part as ``[image]``)."""
    if isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "imageUrl":
                pieces.append("[image]")
            elif part not in (None, ""):
                pieces.append(flatten_content(part))
        return "\n".join(p for p in pieces if p)
    return flatten_content(content)


def _context(items: Any) -> str:
    """The text of context items (attached files, a tool's output), one after another."""
    pieces = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            text = item.get("content")
            if isinstance(text, str) and text.strip():
                pieces.append(text.strip())
    return "\n\n".join(pieces)


def _workspace(value: Any) -> str | None:
    """``workspaceDirectory``: a path, or (newer versions) a ``file://`` URI."""
    text = opt_str(value)
    if text and text.startswith("file://"):
        text = unquote(urlparse(text).path)
        if _DRIVE.match(text):  # file:///c%3A/Users/...: a Windows path
            text = text[1:]
    return text or None


def _states(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The item's tool call states (a list since 2025; one ``toolCallState`` before)."""
    states = item.get("toolCallStates")
    if not isinstance(states, list):
        states = [item["toolCallState"]] if isinstance(item.get("toolCallState"), dict) else []
    return [s for s in states if isinstance(s, dict)]


class ContinueImporter(NamedByDocument, ReplacedWhenChanged, Importer):
    """One Continue session file (``~/.continue/sessions/<id>.json``)."""

    name = "continue"
    agent = "Continue (VS Code / JetBrains extension, cn CLI)"
    indexes = ("prompts with their attached context, replies, thinking, tool calls with arguments and results, "
               "compaction summaries; title, workspace, model")
    source: str | None = "continue"
    resumable_by_offset = False
    snapshot = True
    default_locations = {"linux": ("~/.continue/sessions/*.json",), "darwin": ("~/.continue/sessions/*.json",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A ``Session`` document (0.95 under ``.continue/sessions``); the panel's
        ``sessions.json`` there is claimed too (it holds nothing to import)."""
        if head.is_sqlite or head.data.lstrip()[:1] not in (b"{", b"["):
            return 0.0
        doc = head.document()
        if is_session_index(head.path, doc):
            return 0.6
        if not is_continue_session(doc):
            return 0.0
        return 0.95 if head.path.parent.name == "sessions" and head.path.parent.parent.name == ".continue" else 0.85

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if is_session_index(self.path, doc):
            yield Notice(None, f"Continue's session list ({len(doc)} sessions); each session is its own "
                               "<sessionId>.json beside it; nothing to import")
            return
        if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
            yield Problem(1, "expected a Continue session: an object with a 'history' list")
            return
        if not doc["history"]:  # a new chat saved before its first message
            yield Notice(None, "the Continue session holds no messages yet; nothing to import")
            return
        self.doc_id = opt_str(doc.get("sessionId"))
        session_id = self.default_session_id()
        listed = self._listed(session_id)
        yield SessionRecord(
            id=session_id, source=self.source,
            title=opt_str(doc.get("title")) or opt_str(listed.get("title")),
            workspace=_workspace(doc.get("workspaceDirectory")) or _workspace(listed.get("workspaceDirectory")),
            started_at=_stamp(listed.get("dateCreated")),
            model=opt_str(doc.get("chatModelTitle")),
            meta={"mode": doc["mode"]} if opt_str(doc.get("mode")) else {})
        history = doc["history"]
        answered = {str(item["message"]["toolCallId"]) for item in history
                    if isinstance(item, dict) and isinstance(item.get("message"), dict)
                    and item["message"].get("role") == "tool" and opt_str(item["message"].get("toolCallId"))}
        names: dict[str, str] = {}
        for index, item in enumerate(history, 1):
            if not isinstance(item, dict) or not isinstance(item.get("message"), dict):
                yield Problem(index, f"history[{index - 1}]: expected an item with a 'message' object (skipped)")
                continue
            yield from self._item(item, session_id, index, answered, names)
            summary = item.get("conversationSummary")
            if isinstance(summary, str) and summary.strip():
                yield MessageRecord(session_id, "system", summary, line=index)
        yield Checkpoint("done")

    def _item(self, item: dict[str, Any], session_id: str, index: int, answered: set[str],
              names: dict[str, str]) -> Iterator[Event]:
        """The rows of one history item (``index`` is its place, reported as the line)."""
        message = item["message"]
        role = message.get("role")
        text = _text(message.get("content"))
        if role == "user":
            context = _context(item.get("contextItems"))
            text = f"{text}\n\n{context}" if text.strip() and context else text or context
            yield MessageRecord(session_id, "user", text, line=index)
        elif role == "thinking":
            if text.strip():
                yield MessageRecord(session_id, "reasoning", text, line=index)
        elif role == "assistant":
            yield from self._assistant(item, message, text, session_id, index, answered, names)
        elif role == "tool":
            call_id = opt_str(message.get("toolCallId"))
            if not text.strip():
                text = _context(item.get("contextItems"))
            yield MessageRecord(session_id, "tool", text, tool_name=names.get(call_id or ""), tool_call_id=call_id,
                                line=index)
        elif role != "system":  # the system prompt is not indexed
            yield Problem(index, f"history[{index - 1}]: unknown message role {role!r} (skipped)")

    def _assistant(self, item: dict[str, Any], message: dict[str, Any], text: str, session_id: str, index: int,
                   answered: set[str], names: dict[str, str]) -> Iterator[Event]:
        reasoning = item.get("reasoning")
        thought = reasoning.get("text") if isinstance(reasoning, dict) else None
        if isinstance(thought, str) and thought.strip():
            yield MessageRecord(session_id, "reasoning", thought, line=index)
        states = _states(item)
        raw_calls = message.get("toolCalls")
        if not isinstance(raw_calls, list) or not raw_calls:
            raw_calls = [s.get("toolCall") for s in states]
        calls = []
        for call in raw_calls:
            if not isinstance(call, dict):
                continue
            function = call.get("function") if isinstance(call.get("function"), dict) else {}
            name = opt_str(function.get("name"))
            if name is None:  # a delta the stream never completed: no call was made
                continue
            calls.append(tool_call(call.get("id"), name, function.get("arguments") or {}))
            if opt_str(call.get("id")):
                names[str(call["id"])] = name
        if text.strip() or calls:
            yield MessageRecord(session_id, "assistant", text, tool_calls=dumps(calls) if calls else None, line=index)
        for state in states:  # results no tool message carries (the CLI writes none)
            call_id = opt_str(state.get("toolCallId"))
            if not call_id or call_id in answered or state.get("status") in ("generating", "generated", "calling"):
                continue
            output = _context(state.get("output")) or _STATUS_TEXT.get(str(state.get("status")), "")
            yield MessageRecord(session_id, "tool", output, tool_name=names.get(call_id), tool_call_id=call_id,
                                line=index)

    def _listed(self, session_id: str) -> dict[str, Any]:
        """This session's entry in ``sessions.json`` beside the file (empty when none)."""
        try:
            entries = json.loads((self.path.parent / INDEX).read_bytes().decode("utf-8-sig", errors="replace"))
        except (OSError, ValueError, RecursionError):
            return {}
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and entry.get("sessionId") == session_id:
                return entry
        return {}


def _stamp(value: Any) -> float | None:
    """``dateCreated``: epoch milliseconds as text (the extension) or ISO (the CLI)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    try:
        return parse_timestamp(value) if value not in (None, "") else None
    except ValueError:
        return None
