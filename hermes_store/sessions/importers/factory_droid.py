"""``factory-droid``: Factory's Droid CLI sessions ``~/.factory/sessions/<cwd slug>/<uuid>.jsonl``.

One entry per line: ``{"type": "session_start", id, title, sessionTitle?, owner, cwd,
timestamp?}`` first (``sessionTitle``, the title Droid generates, is preferred to ``title``),
then ``{"type": "message", id, timestamp, parentId?, message: {role, content, visibility?}}``
where ``content`` is a list of Anthropic blocks (``text``, ``thinking``,
``tool_use``; ``tool_result`` inside user messages), plus bookkeeping entries
such as ``todo_state``. A message with ``visibility: "llm_only"`` is context Droid gives the
model and never shows: its user text is a ``system`` row. The sibling
``<uuid>.settings.json`` names the model.
The workspace is ``session_start.cwd``, or the directory slug
(``-home-ana-app`` for ``/home/ana/app``) when that is missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers.anthropic_common import anthropic_rows
from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    Problem,
    SessionRecord,
    SourceState,
    opt_str,
    read_jsonl,
    safe_timestamp,
    said_if_empty,
)
from hermes_store.sessions.importers.doc_common import path_has_part, shape_guarded
from hermes_store.sessions.importers.openai_common import ToolNames

_BOOKKEEPING = {"todo_state", "session_end", "compaction", "summary", "settings"}
SETTINGS_SUFFIX = ".settings.json"  # <session id>.settings.json beside <session id>.jsonl
HIDDEN = "llm_only"  # message.visibility of what Droid gives the model without showing it


class FactoryDroidImporter(Importer):
    """One Droid session JSONL."""

    name = "factory-droid"
    agent = "Factory Droid"
    indexes = "Anthropic-style blocks: text, thinking, tool calls and results; model from settings.json"
    source: str | None = "factory-droid"
    reader = 2  # 2: sessionTitle and the start time; llm_only messages are not the user's words
    default_locations = {"linux": ("~/.factory/sessions/*/*.jsonl",),
                         "darwin": ("~/.factory/sessions/*/*.jsonl",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A ``session_start`` entry, or ``message`` entries wrapping ``{role, content}``; the
        session's ``<id>.settings.json`` is its member."""
        if head.is_sqlite:
            return 0.0
        if cls.member_of(head) is not None:
            return 0.6
        objects = head.objects()
        if not objects:
            return 0.0
        first = objects[0]
        if first.get("type") == "session_start" and "id" in first and ({"cwd", "owner", "title"} & set(first)):
            return 0.95
        entries = [o for o in objects if o.get("type") == "message"]
        if entries and path_has_part(head.path, ".factory") and all(
                isinstance(o.get("message"), dict) and o["message"].get("role") in ("user", "assistant")
                for o in entries):
            return 0.6  # a file whose session_start line is gone, in Droid's directory
        return 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """``<id>.settings.json`` (the session's model, autonomy, token use) is read through
        ``<id>.jsonl`` beside it (:meth:`_model`)."""
        name = head.path.name
        if not name.endswith(SETTINGS_SUFFIX):
            return None
        session = head.path.with_name(name[: -len(SETTINGS_SUFFIX)] + ".jsonl")
        return session if session.is_file() else None

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        if self.path.name.endswith(SETTINGS_SUFFIX) and self.member_of(Head.read(self.path)) is not None:
            yield Checkpoint(str(self.path.stat().st_size), 0)  # read through its session (member_of)
            return
        spoken = [False]  # a message entry was met (not only session_start and bookkeeping)
        yield from said_if_empty(self._read(state, spoken), state, "the session", lambda: not spoken[0])

    def _read(self, state: SourceState, spoken: list[bool]) -> Iterator[Event]:
        """The session's rows; ``spoken[0]`` set once a ``message`` entry is met."""
        tools = ToolNames(state.meta)
        session_id = self.path.stem
        slug = self.path.parent.name
        workspace = slug.replace("-", "/") if slug.startswith("-") else None
        if not state.resume_at:
            yield SessionRecord(id=session_id, source=self.source, workspace=workspace, model=self._model())

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            kind = obj.get("type")
            if kind == "session_start":
                issues: list[Problem] = []
                started = safe_timestamp(obj.get("timestamp"), line, issues) if obj.get("timestamp") else None
                yield from issues
                yield SessionRecord(id=session_id, source=self.source,
                                    title=opt_str(obj.get("sessionTitle")) or opt_str(obj.get("title")),
                                    workspace=opt_str(obj.get("cwd")) or workspace, started_at=started,
                                    meta={k: obj[k] for k in ("id", "owner") if obj.get(k)})
                return
            spoken[0] = spoken[0] or kind == "message"
            if kind != "message":
                if kind not in _BOOKKEEPING:
                    yield Problem(line, f"unknown entry type {kind!r} (skipped)")
                return
            problems: list[Problem] = []
            stamp = safe_timestamp(obj.get("timestamp"), line, problems)
            message = obj.get("message")
            if not isinstance(message, dict):
                yield Problem(line, "field 'message': missing or not an object")
                return
            hidden = message.get("visibility") == HIDDEN  # context for the model, never shown
            for record in anthropic_rows(message, session_id, stamp, f"line {line}", tools, problems):
                record.line = line
                if hidden and record.role == "user":
                    record.role = "system"
                yield record
            yield from problems

        yield from read_jsonl(self, state, handle)

    def _model(self) -> str | None:
        settings = self.path.with_name(self.path.stem + SETTINGS_SUFFIX)
        try:
            data = json.loads(settings.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return opt_str(data.get("model")) if isinstance(data, dict) else None
