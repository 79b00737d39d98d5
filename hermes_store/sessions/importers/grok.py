"""``grok-cli``: xAI's Grok CLI ("Grok Build") sessions, ``~/.grok/sessions/<url-encoded cwd>/<id>/``.

Each session folder holds ``chat_history.jsonl`` (the conversation, one record a line, no
times), ``summary.json`` (``session_summary`` / ``generated_title``, ``info.cwd``,
``current_model_id``, ``created_at``, ``updated_at`` / ``last_active_at``, ``session_kind``,
``num_chat_messages``) and ``updates.jsonl`` (the client updates the UI was sent; the same
conversation again). Records of ``chat_history.jsonl``:

* ``system``: the system prompt (not indexed);
* ``user``: ``content`` text or blocks (``text``, ``image`` with a data URL: ``[image]``); one
  with ``synthetic_reason`` is context the CLI injected (a reminder), a ``system`` row;
* ``assistant``: ``content`` text, ``tool_calls`` ``[{id, name, arguments}]`` (or an OpenAI
  ``function``), ``model_id``;
* ``reasoning``: ``summary``, text or ``summary_text`` blocks (encrypted-only ones hold none);
* ``tool_result``: ``tool_call_id``, ``content`` (text or blocks; empty kept), ``is_error``.

The session is the folder's id; its workspace, title, model and times come from
``summary.json`` (the folder name, URL-decoded, when it names no cwd); ``summary.json`` and
``updates.jsonl`` are members read through the history. Read from two independent readers of
real sessions found by the reference search (a session importer's ``grok`` source, with the
two generations of ``reasoning.summary``, and a JSONL converter's ``grokRecordsToEvents``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

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
from hermes_store.sessions.importers.doc_common import dumps, tool_call

HISTORY = "chat_history.jsonl"
MEMBERS = ("summary.json", "updates.jsonl")
_TYPES = {"system", "user", "assistant", "reasoning", "tool_result"}


def _text(content: Any) -> str:
    """A record's content: text, or blocks (an image block as ``[image]``)."""
    if isinstance(content, list):
        return "\n".join("[image]" if isinstance(b, dict) and b.get("type") == "image" and not b.get("text")
                         else flatten_content(b) for b in content if b not in (None, ""))
    return flatten_content(content)


def _reasoning(summary: Any) -> str:
    """``reasoning.summary``: a string (older), or ``summary_text`` blocks (newer)."""
    if isinstance(summary, str):
        return summary.strip()
    pieces = []
    for item in summary if isinstance(summary, list) else []:
        text = item if isinstance(item, str) else item.get("text", item.get("summary_text")) if isinstance(item, dict) else None
        if isinstance(text, str) and text.strip():
            pieces.append(text.strip())
    return "\n".join(pieces)


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value) if value not in (None, "") else None
    except ValueError:
        return None


class GrokCliImporter(Importer):
    """One Grok CLI session's ``chat_history.jsonl`` (with its ``summary.json``)."""

    name = "grok-cli"
    agent = "Grok CLI (xAI Grok Build)"
    indexes = "prompts, replies, reasoning summaries, tool calls with arguments and results; title, cwd, model from summary.json"
    source: str | None = "grok"
    walk_names = (HISTORY,)
    summarised = False  # summary.json named the model (set per read)
    default_locations = {"linux": (f"~/.grok/sessions/*/*/{HISTORY}",), "darwin": (f"~/.grok/sessions/*/*/{HISTORY}",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """``chat_history.jsonl`` whose records are mostly of Grok's types (or such records only,
        one of a kind only Grok writes, under ``.grok``); the session's ``summary.json`` /
        ``updates.jsonl`` beside one are its members."""
        if head.is_sqlite:
            return 0.0
        if cls.member_of(head) is not None:
            return 0.6
        objects = head.objects()
        known = sum(o.get("type") in _TYPES for o in objects)
        if objects and known == len(objects) and head.path.name == HISTORY and path_in_grok(head.path):
            return 0.95  # the session's history, perhaps only its system prompt so far
        if not objects or not any(o.get("type") in ("user", "assistant") for o in objects):
            return 0.0
        if head.path.name == HISTORY and known * 2 >= len(objects):
            return 0.95  # a type added since is read as a problem, the rest imported
        grok_only = any("synthetic_reason" in o or "model_id" in o or (o.get("type") == "tool_result" and "tool_call_id" in o)
                        or (o.get("type") == "reasoning" and "summary" in o) for o in objects)
        return 0.8 if grok_only and known == len(objects) and path_in_grok(head.path) else 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        history = head.path.parent / HISTORY
        return history if head.path.name in MEMBERS and history.is_file() else None

    def default_session_id(self) -> str:
        return self.path.parent.name if self.path.name == HISTORY else self.path.stem

    def read(self, state: SourceState) -> Iterator[Event]:
        if self.path.name in MEMBERS and (self.path.parent / HISTORY).is_file():  # read through the history
            if self.path.suffix == ".jsonl":
                yield from read_jsonl(self, state, lambda obj, line: None)
            else:
                yield Checkpoint(str(self.path.stat().st_size), 0)
            return
        spoken = [False]  # a record other than the system prompt was met
        yield from said_if_empty(self._read(state, spoken), state, "the session", lambda: not spoken[0])

    def _read(self, state: SourceState, spoken: list[bool]) -> Iterator[Event]:
        """The history's rows; ``spoken[0]`` set once a record other than ``system`` is met."""
        session_id = self.default_session_id()
        yield self._session(session_id)
        names: dict[str, str] = {}

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            kind = obj.get("type")
            spoken[0] = spoken[0] or kind != "system"
            if kind == "system":
                return  # the system prompt
            if kind == "user":
                text = _text(obj.get("content"))
                if text.strip():
                    role = "system" if obj.get("synthetic_reason") else "user"
                    yield MessageRecord(session_id, role, text, line=line)
            elif kind == "assistant":
                if opt_str(obj.get("model_id")) and not self.summarised:
                    yield SessionRecord(id=session_id, model=str(obj["model_id"]))
                calls = []
                for call in obj.get("tool_calls") or []:
                    if isinstance(call, dict):
                        body = call.get("function") if isinstance(call.get("function"), dict) else call
                        calls.append(tool_call(call.get("id"), body.get("name") or "tool", body.get("arguments") or {}))
                        if opt_str(call.get("id")) and opt_str(body.get("name")):
                            names[str(call["id"])] = str(body["name"])
                text = _text(obj.get("content"))
                if text.strip() or calls:
                    yield MessageRecord(session_id, "assistant", text, tool_calls=dumps(calls) if calls else None,
                                        line=line)
            elif kind == "reasoning":
                text = _reasoning(obj.get("summary"))
                if text:
                    yield MessageRecord(session_id, "reasoning", text, line=line)
            elif kind == "tool_result":
                call_id = opt_str(obj.get("tool_call_id"))
                text = _text(obj.get("content"))
                if obj.get("is_error") is True and not text.strip():
                    text = "[error]"
                yield MessageRecord(session_id, "tool", text, tool_name=names.get(call_id or ""), tool_call_id=call_id,
                                    line=line)
            else:
                yield Problem(line, f"unknown record type {kind!r} (skipped)")

        yield from read_jsonl(self, state, handle)

    def _session(self, session_id: str) -> SessionRecord:
        """The session, described by ``summary.json`` when it is there."""
        record = SessionRecord(id=session_id, source=self.source)
        self.summarised = False
        folder = unquote(self.path.parent.parent.name)
        if folder.startswith("/") or (len(folder) > 2 and folder[1] == ":"):
            record.workspace = folder
        try:
            summary = json.loads((self.path.parent / "summary.json").read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            summary = None
        if isinstance(summary, dict):
            self.summarised = bool(opt_str(summary.get("current_model_id")))
            info = summary.get("info") if isinstance(summary.get("info"), dict) else {}
            record.workspace = opt_str(info.get("cwd")) or record.workspace
            record.title = opt_str(summary.get("session_summary")) or opt_str(summary.get("generated_title"))
            record.model = opt_str(summary.get("current_model_id"))
            record.started_at = _stamp(summary.get("created_at"))
            record.ended_at = _stamp(summary.get("updated_at") or summary.get("last_active_at"))
            if opt_str(summary.get("session_kind")):
                record.meta["session_kind"] = summary["session_kind"]
        return record


def path_in_grok(path: Path) -> bool:
    """True when ``path`` lies under a ``.grok`` folder."""
    return ".grok" in path.parts
