"""``chatgpt-export``: ``conversations.json`` from a ChatGPT data export (Settings > Data controls).

The file is a JSON array of conversations ``{id | conversation_id, title,
create_time, update_time (epoch s), mapping, current_node, default_model_slug,
gizmo_id, is_archived, ...}``. ``mapping`` is a tree: ``node_id -> {id, parent,
children, message}``; editing a prompt or regenerating an answer adds a sibling
branch, and ``current_node`` is the leaf the user last saw. The conversation is
the path from the root to ``current_node`` (other branches are counted in the
session's ``meta``, not indexed). A message is ``{id, author: {role, name},
create_time, content: {content_type, parts | text | thoughts | ...}, recipient,
metadata: {model_slug, attachments, is_visually_hidden_from_conversation}}``.

* ``text`` / ``multimodal_text``: the parts (images, audio as ``[image]``/``[audio]``
  markers, audio transcriptions as text), plus ``[attachment <name>]`` markers;
* an assistant message whose ``recipient`` is not ``all`` (``python``,
  ``web.run``, ``dalle.text2im``, ``canmore.create_textdoc``, ...) is a tool call, its
  arguments the JSON object a ``code`` message holds (else the text); ``tool``-role messages
  are its results (``execution_output``, ``tether_browsing_display``, ``sonic_webpage``, ...;
  GPT-5's ``web.run`` result is an empty text part with the pages in
  ``metadata.search_result_groups``, whose titles, addresses and snippets are the result);
* ``thoughts`` and ``reasoning_recap`` are indexed as ``reasoning``;
* hidden messages (custom instructions, the empty system prompt) are counted
  in ``meta.hidden_messages``, not indexed.

The array is streamed one conversation at a time (exports reach gigabytes). Since early 2026 an
export splits it into ``conversations-000.json``, ``conversations-001.json``, ... (each an array,
each read alone); the files beside them that hold no conversation (``user.json``,
``message_feedback.json``, ``shared_conversations.json``, ...) are read through them.
"""

from __future__ import annotations

import json
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

_TEXT_TYPES = {"text", "multimodal_text"}
# keys of the document: a quote not escaped inside a JSON string
_KEY_MAPPING = re.compile(r'(?<!\\)"mapping"\s*:\s*\{')
_KEY_CONTENT_TYPE = re.compile(r'(?<!\\)"content_type"\s*:')
_KEY_AUTHOR = re.compile(r'(?<!\\)"author"\s*:\s*\{')
# the export's files beside its conversations that hold none (the account, feedback, shares, Sora, shopping)
SIBLINGS = ("user.json", "message_feedback.json", "model_comparisons.json", "shared_conversations.json",
            "shopping.json", "sora.json")
_TOOL_OUTPUT = {"execution_output", "tether_browsing_display", "tether_quote", "system_error",
                "computer_output", "sonic_webpage", "super_widget"}
_KNOWN = _TEXT_TYPES | _TOOL_OUTPUT | {"code", "thoughts", "reasoning_recap", "user_editable_context",
                                       "model_editable_context"}


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    kind = part.get("content_type")
    if kind == "audio_transcription":
        return str(part.get("text") or "")
    if kind == "image_asset_pointer":
        return "[image]"
    if kind in ("audio_asset_pointer", "real_time_user_audio_video_asset_pointer"):
        return "[audio]"
    if isinstance(part.get("text"), str):
        return part["text"]
    return f"[{kind}]" if kind else ""


def content_text(content: dict[str, Any]) -> str:
    """The text of a message ``content`` object, whatever its ``content_type``."""
    kind = content.get("content_type")
    if isinstance(content.get("parts"), list):
        return "\n".join(t for t in (_part_text(p) for p in content["parts"]) if t)
    if kind == "thoughts":
        pieces = []
        for thought in content.get("thoughts") or []:
            if isinstance(thought, dict):
                summary, body = opt_str(thought.get("summary")), opt_str(thought.get("content"))
                pieces.append(f"{summary}: {body}" if summary and body else summary or body or "")
        return "\n".join(p for p in pieces if p)
    if kind == "tether_quote":
        return "\n".join(str(content[k]) for k in ("title", "url", "text") if content.get(k))
    if kind == "tether_browsing_display":
        return "\n".join(str(content[k]) for k in ("summary", "result") if content.get(k))
    if kind == "sonic_webpage":  # a page web.search / web.run fetched: its title and address, then its text
        return "\n".join(str(content[k]) for k in ("title", "url", "text") if content.get(k))
    if kind == "user_editable_context":
        return "\n".join(str(content[k]) for k in ("user_profile", "user_instructions") if content.get(k))
    if kind == "model_editable_context":
        return str(content.get("model_set_context") or "")
    for key in ("text", "content", "result"):
        if isinstance(content.get(key), str):
            return content[key]
    return ""


_CITATION = re.compile("\ue200[^\ue201]*\ue201")  # GPT-5's inline citation markers (private-use characters)


def cited(text: str, meta: dict[str, Any]) -> str:
    """An answer's text with GPT-5's inline citation markers (``\\ue200cite\\ue202turn0search3\\ue201``)
    replaced by what ChatGPT shows for them, the ``alt`` of the ``metadata.content_references``
    entry whose ``matched_text`` is the marker (``([site](url))``), else removed."""
    if "\ue200" not in text:
        return text
    for ref in meta.get("content_references") or []:
        if isinstance(ref, dict) and isinstance(ref.get("matched_text"), str) \
                and ref["matched_text"].startswith("\ue200") and isinstance(ref.get("alt"), str):
            text = text.replace(ref["matched_text"], ref["alt"], 1)
    return _CITATION.sub("", text)


def search_results_text(meta: dict[str, Any]) -> str:
    """The pages a ``web.run`` / ``web.search`` result lists in ``metadata.search_result_groups``
    (its ``content`` is an empty text part then): each entry's title, address and snippet."""
    lines: list[str] = []
    for group in meta.get("search_result_groups") or []:
        entries = group.get("entries") if isinstance(group, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict):
                lines.append("\n".join(str(entry[k]).strip() for k in ("title", "url", "snippet")
                                       if isinstance(entry.get(k), str) and entry[k].strip()))
    return "\n\n".join(line for line in lines if line)


def call_arguments(kind: Any, text: str) -> Any:
    """A tool call's arguments: the JSON object a ``code`` message holds (``web.run``'s ``{open |
    search_query | click ...}``, Canvas's ``{name, type, content}`` / ``{updates}``), else the text
    (``{"code": ...}`` for a code message such as Python, ``{"input": ...}`` otherwise)."""
    if text.lstrip().startswith("{"):
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    return {"code": text} if kind == "code" else {"input": text}


def active_path(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """Nodes from the root to ``current`` (the last-seen leaf); a loop or a missing node stops the walk."""
    if not isinstance(current, str) or current not in mapping:
        # no current node: follow the last child from the root(s)
        roots = [n for n in mapping.values() if isinstance(n, dict) and not n.get("parent")]
        node = roots[0] if roots else None
        path = []
        seen: set[str] = set()
        while isinstance(node, dict) and node.get("id") not in seen:
            seen.add(str(node.get("id")))
            path.append(node)
            children = node.get("children") or []
            node = mapping.get(children[-1]) if children else None
        return path
    path, seen, key = [], set(), current
    while isinstance(key, str) and key in mapping and key not in seen:
        seen.add(key)
        node = mapping[key]
        if not isinstance(node, dict):
            break
        path.append(node)
        key = node.get("parent")
    path.reverse()
    return path


class ChatGptExportImporter(ReplacedWhenChanged, Importer):
    """Every conversation of a ChatGPT export's ``conversations.json`` (current branch only)."""

    name = "chatgpt-export"
    agent = "ChatGPT (data export)"
    indexes = "each conversation's current branch, tool calls to python/web/DALL-E and their output, thoughts"
    source: str | None = "chatgpt"
    resumable_by_offset = False
    snapshot = True
    reader = 2  # 2: web.run results, JSON tool-call arguments, citation markers (2026-12-07)
    default_locations = {
        "linux": ("~/Downloads/*/conversations.json", "~/Downloads/*/conversations-*.json"),
        "darwin": ("~/Downloads/*/conversations.json", "~/Downloads/*/conversations-*.json"),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A JSON array whose first object has a ``mapping`` tree of ``author``/``content_type`` messages
        (or one such conversation object, as in an export's per-conversation files)."""
        start = head.data.lstrip()[:1]
        if head.is_sqlite or start not in (b"[", b"{"):
            return 0.0
        if cls.member_of(head) is not None:
            return 0.6
        if start == b"{":
            doc = head.document()
            if not isinstance(doc, dict) or not isinstance(doc.get("mapping"), dict):
                return 0.0
            if "current_node" in doc:
                return 0.9
            # a single conversation saved by another tool (no current_node): nodes with authored messages
            nodes = [n for n in list(doc["mapping"].values())[:16] if isinstance(n, dict)]
            authored = [n for n in nodes if isinstance(n.get("message"), dict)
                        and isinstance(n["message"].get("author"), dict)]
            return 0.85 if authored and all("children" in n or "parent" in n for n in nodes) else 0.0
        text = head.text()
        if not (_KEY_MAPPING.search(text) and _KEY_CONTENT_TYPE.search(text) and _KEY_AUTHOR.search(text)):
            return 0.0  # keys of the document, not words quoted inside a message (Claude's export too)
        return 0.95 if head.path.name == "conversations.json" or '"current_node"' in text else 0.8

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """The export's conversations file (``conversations.json``, or the first of the
        ``conversations-000.json`` ... files exports are split into since early 2026) for the files
        beside it that hold no conversation (:data:`SIBLINGS`: nothing of them is indexed)."""
        if head.path.name not in SIBLINGS:
            return None
        found = sorted(head.path.parent.glob("conversations-*.json"))
        for sibling in [head.path.parent / "conversations.json", *found]:
            try:
                with open(sibling, "rb") as handle:
                    probe = handle.read(1 << 16).decode("utf-8", errors="replace")
            except OSError:
                continue
            if _KEY_MAPPING.search(probe):
                return sibling
        return None

    def whole(self) -> bool:
        """An export replaces the earlier one only when it is a whole JSON array of conversations
        (each with its ``mapping``): a cut-off download or a damaged file is read as a snapshot, so the
        conversations it lost stay stored."""
        with open(self.path, "rb") as handle:
            if handle.read(4096).lstrip()[:1] == b"{":  # one conversation per file
                doc = Head.read(self.path).document()
                return isinstance(doc, dict) and isinstance(doc.get("mapping"), dict)
        return whole_json_array(self.path, lambda value: isinstance(value, dict)
                                and isinstance(value.get("mapping"), dict))

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        if self.path.name in SIBLINGS and self.member_of(Head.read(self.path)) is not None:
            yield Checkpoint("done")  # read through the export's conversations: nothing alone
            return
        with open(self.path, "rb") as handle:
            single = handle.read(4096).lstrip()[:1] == b"{"
        if single:  # one conversation per file
            problems: list[Problem] = []
            doc = load_document(self, problems)
            yield from problems
            if not isinstance(doc, dict) or not isinstance(doc.get("mapping"), dict):
                yield Problem(1, "expected a conversation with a 'mapping'")
                return
            yield from self._conversation(0, doc)
            yield Checkpoint("done")
            return
        for index, conversation, problem in iter_json_array(self.path, self.hasher):
            if problem is not None:
                yield problem
                continue
            if not isinstance(conversation, dict) or not isinstance(conversation.get("mapping"), dict):
                yield Problem(None, f"[{index}]: expected a conversation with a 'mapping'")
                continue
            problems: list[Problem] = []
            yield from safe_rows(self._conversation, problems, None, f"[{index}]", index, conversation)
            yield from problems
            yield Checkpoint(str(index))
        yield Checkpoint("done")

    def _conversation(self, index: int, conv: dict[str, Any]) -> Iterator[Event]:
        session_id = opt_str(conv.get("conversation_id")) or opt_str(conv.get("id")) or f"chatgpt-{index}"
        mapping = conv["mapping"]
        path = active_path(mapping, conv.get("current_node"))
        problems: list[Problem] = []
        rows: list[MessageRecord] = []
        hidden = 0
        model = opt_str(conv.get("default_model_slug"))
        last_call: tuple[str, str] | None = None  # (recipient, call id) of the latest tool call
        fallback = _stamp(conv.get("create_time"))
        for node in path:
            message = node.get("message")
            if not isinstance(message, dict):
                continue  # the synthetic root
            content = message.get("content") if isinstance(message.get("content"), dict) else {}
            meta = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
            author = message.get("author") if isinstance(message.get("author"), dict) else {}
            role = opt_str(author.get("role")) or "user"
            kind = content.get("content_type")
            text = content_text(content)
            if meta.get("is_visually_hidden_from_conversation"):
                hidden += 1
                continue
            if kind not in _KNOWN:
                problems.append(Problem(None, f"[{index}] message {message.get('id')}: unknown content_type"
                                              f" {kind!r} (text kept)"))
            for attachment in meta.get("attachments") or []:
                if isinstance(attachment, dict):
                    text += ("\n" if text else "") + f"[attachment {attachment.get('name') or attachment.get('id')}]"
            stamp = _stamp(message.get("create_time")) or fallback
            fallback = stamp or fallback
            if meta.get("model_slug"):
                model = str(meta["model_slug"])
            recipient = opt_str(message.get("recipient")) or "all"
            message_id = opt_str(message.get("id"))
            if kind in ("thoughts", "reasoning_recap"):
                if text:
                    rows.append(MessageRecord(session_id, "reasoning", text, timestamp=stamp))
            elif role == "assistant" and recipient != "all":
                rows.append(MessageRecord(session_id, "assistant", "",
                                          tool_calls=dumps([tool_call(message_id, recipient,
                                                                      call_arguments(kind, text))]),
                                          timestamp=stamp))
                last_call = (recipient, message_id or "")
            elif role == "tool":
                if not text.strip():
                    text = search_results_text(meta) or text
                name = opt_str(author.get("name"))
                call_id = last_call[1] if last_call and name and last_call[0].split(".")[0] == name.split(".")[0] \
                    else None
                rows.append(MessageRecord(session_id, "tool", text, tool_name=name, tool_call_id=call_id,
                                          timestamp=stamp))
            elif text:
                if role == "assistant":
                    text = cited(text, meta)
                rows.append(MessageRecord(session_id, role if role in ("user", "assistant", "system") else "user",
                                          text, timestamp=stamp))
        on_path = {str(n.get("id")) for n in path}
        other = sum(1 for key, node in mapping.items()
                    if key not in on_path and isinstance(node, dict) and isinstance(node.get("message"), dict))
        meta_out: dict[str, Any] = {k: conv[k] for k in ("gizmo_id", "is_archived") if conv.get(k)}
        if other:
            meta_out["other_branch_messages"] = other
        if hidden:
            meta_out["hidden_messages"] = hidden
        if not rows:
            yield from problems
            return
        yield SessionRecord(id=session_id, source=self.source, title=opt_str(conv.get("title")), model=model,
                            started_at=_stamp(conv.get("create_time")), ended_at=_stamp(conv.get("update_time")),
                            meta=meta_out)
        yield from rows
        yield from problems
