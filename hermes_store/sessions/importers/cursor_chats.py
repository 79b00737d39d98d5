"""``cursor-chats``: the Cursor Agent CLI's chat stores ``~/.cursor/chats/<md5 of workspace>/<chat id>/store.db``.

``cursor-agent`` keeps each chat (the one ``cursor-agent --resume <chat id>`` continues) in an
SQLite file of two tables:

* ``meta``: key ``"0"``, value the hex of a JSON object ``{agentId, latestRootBlobId, name,
  mode, createdAt (ms), lastUsedModel}``;
* ``blobs``: ``id`` (the SHA-256 of ``data``, hex) and ``data``: a message as JSON, or a
  linking blob, protobuf-style fields ``0x0A 0x20 <32-byte child id>`` (field 1, 32 bytes)
  in order, possibly followed by an embedded JSON message.

The chat is the tree under ``latestRootBlobId`` read depth first (the ids of older roots stay
in the table after a rewind; they are not read). Messages are the AI SDK shapes: ``user``
(``content`` text, the query wrapped in ``<user_query>``: unwrapped as in the agent
transcripts, context kept after it), ``assistant`` (``content`` blocks ``text``,
``reasoning``, ``tool-call`` {``toolCallId``, ``toolName``, ``args``}), ``tool``
(``tool-result`` blocks {``toolCallId``, ``toolName``, ``result`` text or blocks,
``isError``}); ``system`` (the agent's system prompt, the same in every chat) is not
indexed. The store keeps no per-message times: the chat starts at ``createdAt``. Titled by
``name``, the model ``lastUsedModel``; the workspace is the ``Workspace Path:`` the
``<user_info>`` of a prompt names (the directory name is only its MD5). Opened read-only; a blob that is missing or not a
message is reported and the rest read.
"""

from __future__ import annotations

import json
import re
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
)
from hermes_store.sessions.importers.cursor_agent import user_query
from hermes_store.sessions.importers.doc_common import (
    dumps,
    foreign_read,
    tool_call,
)

_REQUIRED = {"meta", "blobs"}
_WORKSPACE = re.compile(r"^Workspace Path: (\S.*?)\s*$", re.M)  # in the <user_info> cursor-agent sends
MAX_DEPTH = 64  # linking blobs nested in linking blobs


def _meta(value: Any) -> dict[str, Any] | None:
    """The chat's metadata: hex of JSON (as cursor-agent writes it), or JSON itself."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        if not text.startswith("{"):
            text = bytes.fromhex(text).decode("utf-8", errors="replace")
        meta = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return meta if isinstance(meta, dict) else None


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while at < len(data) and shift < 64:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
    raise ValueError("truncated varint")


def linked(data: bytes) -> tuple[list[str], bytes | None]:
    """A linking blob's child ids (field 1, 32 bytes each, in order) and the JSON embedded in it."""
    children: list[str] = []
    at = 0
    try:
        while at < len(data):
            if data[at:at + 1] == b"{":
                return children, data[at:]
            key, at = _varint(data, at)
            wire = key & 7
            if wire == 2:
                size, at = _varint(data, at)
                chunk = data[at:at + size]
                at += size
                if key >> 3 == 1 and size == 32:
                    children.append(chunk.hex())
                elif chunk[:1] == b"{":
                    return children, chunk
            elif wire == 0:
                _, at = _varint(data, at)
            elif wire in (1, 5):
                at += 8 if wire == 1 else 4
            else:
                break
    except ValueError:
        pass
    start = data.find(b"{", at)
    return children, data[start:] if start >= 0 else None


def _text_of(result: Any) -> str:
    """A tool result as text (a string, or content blocks)."""
    return result if isinstance(result, str) else flatten_content(result) if result is not None else ""


def message_rows(message: dict[str, Any], session_id: str, where: str) -> Iterator[Event]:
    """The rows of one stored message (see the module docstring)."""
    role = message.get("role")
    content = message.get("content")
    if role == "system":
        return  # the agent's system prompt
    if role == "user":
        text = content if isinstance(content, str) else flatten_content(content)
        workspace = _WORKSPACE.search(text)
        if workspace:
            yield SessionRecord(id=session_id, workspace=workspace.group(1))
        if text.strip():
            words, stamp = user_query(text.strip())
            yield MessageRecord(session_id, "user", words, timestamp=stamp)
        return
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if role not in ("assistant", "tool") or not isinstance(blocks, list):
        yield Problem(None, f"{where}: a message of role {role!r} with content {type(content).__name__} (skipped)")
        return
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "reasoning":
            if str(block.get("text") or "").strip():
                yield MessageRecord(session_id, "reasoning", str(block["text"]))
        elif kind == "tool-call":
            args = block.get("args", block.get("input"))
            if args is None:
                options = block.get("providerOptions") if isinstance(block.get("providerOptions"), dict) else {}
                raw = options.get("cursor") if isinstance(options.get("cursor"), dict) else {}
                args = raw.get("rawToolCallArgs")
            calls.append(tool_call(block.get("toolCallId"), block.get("toolName"), args))
        elif kind == "tool-result":
            text = _text_of(block.get("result", block.get("output")))
            if block.get("isError") and not text.strip():
                text = "[error]"
            yield MessageRecord(session_id, "tool", text, tool_name=opt_str(block.get("toolName")),
                                tool_call_id=opt_str(block.get("toolCallId")))
        elif kind in ("image", "file"):
            texts.append(f"[{kind}]")
        else:
            yield Problem(None, f"{where}: unknown content block {kind!r} (skipped)")
    text = "".join(texts).strip()
    if role == "assistant" and (text or calls):
        yield MessageRecord(session_id, "assistant", text, tool_calls=dumps(calls) if calls else None)
    elif role == "tool" and text:
        yield MessageRecord(session_id, "tool", text)


class CursorChatsImporter(Importer):
    """One Cursor Agent CLI chat store (``~/.cursor/chats/*/*/store.db``)."""

    name = "cursor-chats"
    agent = "Cursor Agent CLI (chat stores)"
    indexes = "the chat under its latest root: prompts (<user_query> unwrapped), replies, reasoning, tool calls and results"
    source: str | None = "cursor"
    resumable_by_offset = False
    skip_when_unchanged = False  # WAL writes do not touch the main file's mtime
    snapshot = True
    walk_names = ("store.db",)
    default_locations = {"linux": ("~/.cursor/chats/*/*/store.db",), "darwin": ("~/.cursor/chats/*/*/store.db",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """An SQLite file of exactly cursor-agent's ``meta`` and ``blobs`` tables."""
        if not head.is_sqlite or not _REQUIRED <= head.sqlite_tables():
            return 0.0
        return 0.95 if head.path.name == "store.db" else 0.8

    @foreign_read
    def read(self, db: ForeignDB, state: SourceState) -> Iterator[Event]:
        if not all(db.table_exists(t) for t in _REQUIRED):
            yield Problem(None, "not a cursor-agent chat store (no meta/blobs tables)")
            return
        row = db.query_one("SELECT value FROM meta WHERE key = '0'")
        meta = _meta(row["value"]) if row else None
        if meta is None:
            yield Problem(None, "meta row '0': missing, or not hex-encoded JSON")
            return
        session_id = opt_str(meta.get("agentId")) or self.path.parent.name
        created = meta.get("createdAt")
        yield SessionRecord(id=session_id, source=self.source, title=opt_str(meta.get("name")),
                            model=opt_str(meta.get("lastUsedModel")),
                            started_at=created / 1000 if isinstance(created, (int, float)) else None,
                            meta={k: v for k, v in (("mode", meta.get("mode")),
                                                    ("workspace_hash", self.path.parent.parent.name)) if v})
        root = opt_str(meta.get("latestRootBlobId"))
        if root is None:
            return
        blobs = {str(r["id"]).lower(): r["data"] for r in db.query("SELECT id, data FROM blobs")}
        yield from self._walk(blobs, root.lower(), session_id, set(), 0)
        yield Checkpoint("done")

    def _walk(self, blobs: dict[str, Any], blob_id: str, session_id: str, seen: set[str],
              depth: int) -> Iterator[Event]:
        """The messages under ``blob_id`` in order: a linking blob's children, then its embedded message."""
        data = blobs.get(blob_id)
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not isinstance(data, bytes) or blob_id in seen or depth > MAX_DEPTH:
            why = "missing" if not isinstance(data, bytes) else "read already" if blob_id in seen else "too deep"
            yield Problem(None, f"blob {blob_id[:16]}: {why} (skipped)")
            return
        seen.add(blob_id)
        children, embedded = ([], data) if data[:1] == b"{" else linked(data)
        for child in children:
            yield from self._walk(blobs, child, session_id, seen, depth + 1)
        if embedded is None:
            return
        try:
            message = json.loads(embedded.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError) as exc:
            yield Problem(None, f"blob {blob_id[:16]}: not JSON ({exc}; skipped)")
            return
        if isinstance(message, dict) and "role" in message:
            yield from message_rows(message, session_id, f"blob {blob_id[:16]}")
        elif not children:
            yield Problem(None, f"blob {blob_id[:16]}: not a message (skipped)")
