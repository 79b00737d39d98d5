"""``claude-ai-export``: ``conversations.json`` from a Claude.ai data export (Settings > Privacy > Export data).

The export is a zip (extracted as ``data-YYYY-MM-DD-HH-MM-SS/``) holding ``users.json``,
``projects.json`` and ``conversations.json``: a JSON array of conversations ``{uuid, name,
summary, created_at, updated_at, account: {uuid}, chat_messages: [...]}``. A message is
``{uuid, text, content, sender: human | assistant, created_at, updated_at, attachments,
files}``; the conversation API behind claude.ai (and the tools that save a conversation
from it) adds ``parent_message_uuid`` to each message and ``current_leaf_message_uuid``,
``model``, ``project_uuid`` to the conversation. One session per conversation, titled by
its ``name`` (an empty name leaves it untitled). Variants:

* older exports have only ``text``; newer ones have ``content`` blocks (and an empty
  ``text``): ``text`` (citations dropped), ``thinking`` (its ``thinking``, else its last
  ``summaries[].summary``), ``tool_use`` (``id`` when the export has one, ``name``,
  ``input``; web search, artifacts, MCP tools), ``tool_result`` (``tool_use_id`` when
  present, ``name``, ``content`` blocks -- a web search's ``knowledge`` items kept as title,
  address and text --, ``is_error``), ``image`` / ``document``
  markers. The blocks are read in order: thinking becomes a ``reasoning`` row, text and
  the tool calls after it an assistant row, each result a ``tool`` row (linked by
  ``tool_use_id``, else to the latest unanswered call of the same name); ``text`` is the
  fallback when the blocks hold nothing;
* ``attachments`` (pasted text and uploaded documents: ``file_name`` -- empty for a large
  paste --, ``file_type``, ``extracted_content``) are kept in the message's text after an
  ``[attachment <name>]`` line, extracted text included (it is what the model read);
  ``files`` / ``files_v2`` (images, uploads without extracted text) as ``[file <name>]``
  (once per file, nameless ones left out);
* a conversation whose messages carry ``parent_message_uuid`` and that names its
  ``current_leaf_message_uuid`` is read along that branch (the other branches' messages
  are counted in ``meta.other_branch_messages``); a data export names no leaf, so when its
  messages fork (an edited prompt, a retried reply) the branch of the newest message is read;
  otherwise messages are read in order;
* a conversation with no messages is skipped; a missing ``content`` or ``sender``, a value of
  the wrong type: a problem naming the conversation index and field, the rest still read.

The array is streamed one conversation at a time (exports reach gigabytes). A changed
export replaces what the earlier one imported -- unless the new file is not a whole JSON
array of conversations (cut off, malformed): then nothing stored is dropped, and what it still holds is
read as a snapshot (messages already stored are not added twice). The zip itself is
not read: extract it (ChatGPT's export is read the same way).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
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
    flatten_content,
    opt_str,
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    dumps,
    iter_json_array,
    load_document,
    safe_rows,
    shape_guarded,
    tool_call,
    whole_json_array,
)

# a key of the document itself (a quote not escaped inside a string)
_CHAT_MESSAGES = re.compile(r'(?<!\\)"chat_messages"\s*:\s*\[')
_SENDER = re.compile(r'(?<!\\)"sender"\s*:\s*"(?:human|assistant)"')
ROLES = {"human": "user", "user": "user", "assistant": "assistant"}
SIBLINGS = ("users.json", "projects.json")  # the export's other files, read through conversations.json


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def is_conversation(value: Any) -> bool:
    """A Claude.ai conversation object: ``chat_messages`` a list, and no ChatGPT ``mapping``."""
    return isinstance(value, dict) and isinstance(value.get("chat_messages"), list) and "mapping" not in value


ROOT_PARENT = "00000000-0000-4000-8000-000000000000"  # the parent claude.ai gives a conversation's first message


def active_branch(messages: list[Any], leaf: Any) -> tuple[list[Any], int]:
    """The messages from the root to ``leaf`` along ``parent_message_uuid`` and how many were left
    on other branches; all messages in order when there is no usable tree. A data export names no
    leaf: when its messages fork (an edited prompt, a retried reply), the leaf is the newest
    message (the last in order), provided its chain reaches the root."""
    by_id = {m["uuid"]: m for m in messages if isinstance(m, dict) and isinstance(m.get("uuid"), str)}
    if not any("parent_message_uuid" in m for m in by_id.values()):
        return messages, 0
    given = isinstance(leaf, str) and leaf in by_id
    if not given:
        parents = [m.get("parent_message_uuid") for m in by_id.values()]
        if not all(isinstance(p, str) for p in parents) or len(parents) == len(set(parents)):
            return messages, 0  # no fork (or not every message placed): one line of messages, read in order
        leaf = next(m["uuid"] for m in reversed(messages) if isinstance(m, dict) and m.get("uuid") in by_id)
    path: list[Any] = []
    key: Any = leaf
    while isinstance(key, str) and key in by_id and len(path) < len(by_id):  # bounded: a loop stops
        path.append(by_id[key])
        key = by_id[key].get("parent_message_uuid")
    if not given and key not in (None, ROOT_PARENT):
        return messages, 0  # the chain breaks (a message missing): nothing is left out
    path.reverse()
    return path, len(messages) - len(path)


def attachment_text(message: dict[str, Any]) -> str:
    """``[attachment <name>]`` lines with their extracted text, then ``[file <name>]`` markers."""
    pieces: list[str] = []
    for item in message.get("attachments") or []:
        if isinstance(item, dict):
            name = opt_str(item.get("file_name"))
            extracted = item.get("extracted_content")
            header = f"[attachment {name}]" if name else "[attachment]"
            pieces.append(f"{header}\n{extracted}" if isinstance(extracted, str) and extracted else header)
    seen: set[str] = set()
    for item in [*(message.get("files") or []), *(message.get("files_v2") or [])]:
        if isinstance(item, dict):
            name = opt_str(item.get("file_name"))
            key = opt_str(item.get("file_uuid")) or name
            if name and key not in seen:  # a file without a name says nothing
                seen.add(key)
                pieces.append(f"[file {name}]")
    return "\n".join(pieces)


def result_text(content: Any) -> str:
    """Text of a ``tool_result``'s content: a web search's ``knowledge`` items as their title,
    address and text (``{type: "knowledge", title, url, metadata, text, is_citable}``), other
    blocks as their text."""
    if not isinstance(content, list):
        return flatten_content(content)
    pieces = []
    for item in content:
        if isinstance(item, dict) and item.get("type") == "knowledge":
            pieces.append("\n".join(str(item[k]).strip() for k in ("title", "url", "text")
                                    if isinstance(item.get(k), str) and item[k].strip()))
        else:
            pieces.append(flatten_content(item))
    return "\n\n".join(p for p in pieces if p)


class _Turn:
    """The rows of one message's content blocks, in order (see the module docstring)."""

    def __init__(self, session_id: str, role: str, stamp: float | None, message_id: str) -> None:
        self.session_id, self.role, self.stamp, self.message_id = session_id, role, stamp, message_id
        self.rows: list[MessageRecord] = []
        self.texts: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.unknown: set[str] = set()

    def flush(self) -> None:
        """The text and tool calls gathered so far as one row of the message's role."""
        text = "\n".join(t for t in self.texts if t)
        if text or self.calls:
            self.rows.append(MessageRecord(self.session_id, self.role, text, timestamp=self.stamp,
                                           tool_calls=dumps(self.calls) if self.calls else None))
        self.texts, self.calls = [], []

    def block(self, block: Any, open_calls: list[tuple[str, str]]) -> None:
        """Read one content block; ``open_calls`` are the conversation's unanswered ``(name, id)``."""
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            if self.calls:
                self.flush()
            self.texts.append(str(block.get("text") or ""))
        elif kind in ("thinking", "redacted_thinking"):
            self.flush()
            thought = block.get("thinking") if isinstance(block.get("thinking"), str) else ""
            summaries = [s.get("summary") for s in block.get("summaries") or [] if isinstance(s, dict)]
            if not thought.strip() and summaries and isinstance(summaries[-1], str):
                thought = summaries[-1]
            if thought.strip():
                self.rows.append(MessageRecord(self.session_id, "reasoning", thought, timestamp=self.stamp))
        elif kind in ("tool_use", "server_tool_use"):
            name = str(block.get("name") or "tool")
            call_id = opt_str(block.get("id")) or f"{self.message_id}:{len(self.rows)}:{len(self.calls)}"
            self.calls.append(tool_call(call_id, name, block.get("input") if block.get("input") is not None else {}))
            open_calls.append((name, call_id))
        elif kind in ("tool_result", "web_search_tool_result"):
            self.flush()
            name = opt_str(block.get("name"))
            call_id = opt_str(block.get("tool_use_id"))
            match = next((i for i in range(len(open_calls) - 1, -1, -1)
                          if open_calls[i][1] == call_id or (call_id is None and open_calls[i][0] == name)), None)
            if match is not None:
                name, call_id = name or open_calls[match][0], open_calls.pop(match)[1]
            text = result_text(block.get("content"))
            if block.get("is_error") is True:
                text = f"[error] {text}" if text else "[error]"
            self.rows.append(MessageRecord(self.session_id, "tool", text, tool_name=name, tool_call_id=call_id,
                                           timestamp=self.stamp))
        elif kind in ("image", "document"):
            self.texts.append(f"[{kind}]")
        else:
            self.unknown.add(str(kind))
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                self.texts.append(block["text"])


class ClaudeAiExportImporter(ReplacedWhenChanged, Importer):
    """Every conversation of a Claude.ai export's ``conversations.json``."""

    name = "claude-ai-export"
    agent = "Claude.ai (data export)"
    indexes = ("each conversation: messages (text, or content blocks), thinking, tool calls and results, "
               "attachments' extracted text; title from its name")
    source: str | None = "claude-ai"
    reader = 2  # 2: web search results keep their titles and addresses, an export's forks (2026-12-07)
    resumable_by_offset = False
    snapshot = True
    default_locations = {
        "linux": ("~/Downloads/data-*/conversations.json",),
        "darwin": ("~/Downloads/data-*/conversations.json",),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A JSON array of conversations with ``chat_messages`` (``sender`` human/assistant), or one
        such conversation object; never a ChatGPT ``mapping`` tree."""
        start = head.data.lstrip()[:1]
        if head.is_sqlite or start not in (b"[", b"{"):
            return 0.0
        if cls.member_of(head) is not None:
            return 0.6
        doc = head.document()
        if start == b"{":
            return 0.9 if is_conversation(doc) else 0.0
        if isinstance(doc, list):  # parsed whole (files up to 64 MiB): the first conversation decides
            first = next((c for c in doc if isinstance(c, dict)), None)
            if not is_conversation(first):
                return 0.0
        else:
            text = head.text()
            if not _CHAT_MESSAGES.search(text) or not (_SENDER.search(text) or '"chat_messages": []' in text):
                return 0.0
        return 0.95 if head.path.name == "conversations.json" else 0.85

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """The export's ``conversations.json`` for its ``users.json`` and ``projects.json`` (nothing
        of them is indexed: the account's name and e-mail, the projects' settings)."""
        sibling = head.path.parent / "conversations.json"
        if head.path.name not in SIBLINGS or not sibling.is_file():
            return None
        try:
            with open(sibling, "rb") as handle:
                probe = handle.read(1 << 16).decode("utf-8", errors="replace")
        except OSError:
            return None
        return sibling if _CHAT_MESSAGES.search(probe) else None

    def whole(self) -> bool:
        """An export replaces the earlier one only when it is a whole JSON array of conversations: a
        cut-off or malformed file (or one holding something else) is read as a snapshot instead, so
        nothing already stored is dropped."""
        with open(self.path, "rb") as handle:
            if handle.read(4096).lstrip()[:1] == b"{":  # one conversation (a saved file is small)
                return is_conversation(Head.read(self.path).document())
        return whole_json_array(self.path, is_conversation)

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        if self.path.name in SIBLINGS and self.member_of(Head.read(self.path)) is not None:
            yield Checkpoint("done")  # read through the export's conversations.json: nothing alone
            return
        with open(self.path, "rb") as handle:
            single = handle.read(4096).lstrip()[:1] == b"{"
        if single:  # one conversation saved from the conversation API
            problems: list[Problem] = []
            doc = load_document(self, problems)
            yield from problems
            if not is_conversation(doc):
                yield Problem(1, "expected a conversation object with a 'chat_messages' list")
                return
            yield from self._guarded(0, doc)
            yield Checkpoint("done")
            return
        for index, conversation, problem in iter_json_array(self.path, self.hasher):
            if problem is not None:
                yield problem
                continue
            if not is_conversation(conversation):
                yield Problem(None, f"[{index}]: expected a conversation with a 'chat_messages' list (skipped)")
                continue
            yield from self._guarded(index, conversation)
            yield Checkpoint(str(index))
        yield Checkpoint("done")

    def _guarded(self, index: int, conversation: dict[str, Any]) -> Iterator[Event]:
        problems: list[Problem] = []
        yield from safe_rows(self._conversation, problems, None, f"[{index}]", index, conversation)
        yield from problems

    def _conversation(self, index: int, conv: dict[str, Any]) -> Iterator[Event]:
        session_id = opt_str(conv.get("uuid")) or f"claude-ai-{index}"
        messages, other = active_branch(conv["chat_messages"], conv.get("current_leaf_message_uuid"))
        problems: list[Problem] = []
        rows: list[MessageRecord] = []
        open_calls: list[tuple[str, str]] = []
        unknown: set[str] = set()
        for number, message in enumerate(messages):
            where = f"[{index}].chat_messages[{number}]"
            if not isinstance(message, dict):
                problems.append(Problem(None, f"{where}: expected a message object (skipped)"))
                continue
            role = ROLES.get(str(message.get("sender")))
            if role is None:
                problems.append(Problem(None, f"{where}.sender: unknown sender {message.get('sender')!r} (skipped)"))
                continue
            turn = _Turn(session_id, role, _stamp(message.get("created_at")),
                         opt_str(message.get("uuid")) or f"{session_id}:{number}")
            content = message.get("content")
            if content is not None and not isinstance(content, list):
                problems.append(Problem(None, f"{where}.content: expected a list of blocks (its text is read)"))
            for block in content if isinstance(content, list) else []:
                turn.block(block, open_calls)
            if not turn.rows and not turn.texts and not turn.calls and isinstance(message.get("text"), str):
                turn.texts.append(message["text"])  # older exports: the text alone
            extra = attachment_text(message)
            if extra:
                if turn.calls:
                    turn.flush()
                turn.texts.append(extra)
            turn.flush()
            unknown |= turn.unknown
            rows.extend(turn.rows)
        if unknown:
            problems.append(Problem(None, f"[{index}]: unknown content block types {sorted(unknown)} (their text kept)"))
        if not rows:
            yield from problems
            return
        meta: dict[str, Any] = {k: conv[k] for k in ("project_uuid", "is_starred") if conv.get(k)}
        if isinstance(conv.get("summary"), str) and conv["summary"].strip():
            meta["summary"] = conv["summary"]
        if other:
            meta["other_branch_messages"] = other
        name = conv.get("name")
        yield SessionRecord(id=session_id, source=self.source, model=opt_str(conv.get("model")),
                            title=" ".join(name.split()) or None if isinstance(name, str) else None,
                            started_at=_stamp(conv.get("created_at")), ended_at=_stamp(conv.get("updated_at")),
                            meta=meta)
        yield from rows
        yield from problems
