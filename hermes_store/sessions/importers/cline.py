"""``cline``: Cline, Roo Code and Kilo Code tasks in VS Code's ``globalStorage``.

Each task is a directory ``<globalStorage>/<extension id>/tasks/<taskId>/``
(``saoudrizwan.claude-dev`` for Cline, ``rooveterinaryinc.roo-cline`` for Roo
Code, ``kilocode.kilo-code`` for Kilo Code) holding

* ``api_conversation_history.json``: the conversation sent to the model, an
  Anthropic ``MessageParam[]`` (``{role, content}``; content a string or blocks
  ``text``, ``image``, ``tool_use``, ``tool_result``, ``thinking``; Roo Code adds
  ``ts`` (ms) to each message). Older versions wrote tool calls as XML inside
  the assistant's text (``<read_file><path>..</path></read_file>``) and their
  results as user text (``[read_file for 'x'] Result:``): kept as text;
* ``ui_messages.json``: what the panel showed, ``[{ts, type: "say" | "ask",
  say | ask, text}]``: the first ``task`` text is the session's title and its
  ``ts`` range the session's times.

The conversation file is the source; the UI file is read beside it. A task folder
with only ``ui_messages.json`` is read from the panel entries (:mod:`.cline_ui`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers.anthropic_common import anthropic_rows, is_reasoning_item
from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    Problem,
    SessionRecord,
    SourceState,
    parse_timestamp,
)
from hermes_store.sessions.importers.cline_ui import is_task_entry, is_ui_entry, ui_rows
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    load_document,
    safe_rows,
    shape_guarded,
)
from hermes_store.sessions.importers.openai_common import ToolNames

HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
MAX_UI_BYTES = 256 * 1024 * 1024
EXTENSIONS = {"saoudrizwan.claude-dev": "cline", "rooveterinaryinc.roo-cline": "roo-code",
              "kilocode.kilo-code": "kilo-code"}
_EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")


def _locations(base: str) -> tuple[str, ...]:
    return tuple(f"{base}/{editor}/User/globalStorage/{ext}/tasks/*/{HISTORY}"
                 for editor in _EDITORS for ext in EXTENSIONS)


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


class ClineImporter(ReplacedWhenChanged, Importer):
    """One Cline / Roo Code / Kilo Code task (``api_conversation_history.json`` + ``ui_messages.json``)."""

    name = "cline"
    agent = "Cline / Roo Code / Kilo Code"
    indexes = "the API conversation (native and XML-era tool calls), title and times from ui_messages.json"
    source: str | None = "cline"
    resumable_by_offset = False
    snapshot = True
    default_locations = {
        "linux": _locations("~/.config"),
        "darwin": _locations("~/Library/Application Support"),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """``api_conversation_history.json``: a list of ``{role, content}`` messages."""
        if head.is_sqlite:
            return 0.0
        if head.path.name != HISTORY:
            if cls.member_of(head) is not None:
                return 0.6  # the task's other files (ui_messages.json, ...) are read through it
            if head.path.name != UI:
                return 0.0
            doc = head.document()  # a task folder without its history: the panel is the record
            entries = doc[:8] if isinstance(doc, list) else []
            return 0.9 if entries and all(is_ui_entry(e) for e in entries) else 0.0
        doc = head.document()
        if isinstance(doc, list) and all(isinstance(m, dict) and ("role" in m and "content" in m
                                                                  or is_reasoning_item(m)) for m in doc[:8]):
            return 0.95
        return 0.6 if head.data.lstrip()[:1] == b"[" else 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """The task's ``api_conversation_history.json`` for its other ``.json`` files."""
        path = head.path
        if path.name == HISTORY or path.suffix.lower() != ".json" or path.parent.parent.name != "tasks":
            return None
        history = path.parent / HISTORY
        return history if history.is_file() else None

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        if self.path.name != HISTORY:
            if self.path.name == UI and not (self.path.parent / HISTORY).is_file():
                yield from self._read_ui_alone()
                return
            yield Checkpoint(str(self.path.stat().st_size), 0)  # a member of the task: nothing alone
            return
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if doc is None:
            return
        if not isinstance(doc, list):
            yield Problem(1, "expected a JSON list of messages")
            return
        task = self.path.parent
        extension = task.parent.parent.name if task.parent.name == "tasks" else ""
        source = EXTENSIONS.get(extension, self.source)
        title, started, ended, problems = self._ui(task)
        stamps = [_stamp(m.get("ts")) for m in doc if isinstance(m, dict)]
        known = [s for s in stamps if s is not None]
        yield SessionRecord(id=task.name, source=source, title=title,
                            started_at=min([*known, started] if started else known, default=None),
                            ended_at=max([*known, ended] if ended else known, default=None),
                            meta={"extension": extension} if extension else {})
        yield from problems
        problems = []
        tools = ToolNames()
        for index, message in enumerate(doc):
            if not isinstance(message, dict):
                yield Problem(None, f"[{index}]: expected a message object")
                continue
            yield from safe_rows(anthropic_rows, problems, None, f"[{index}]", message, task.name,
                                 _stamp(message.get("ts")), f"[{index}]", tools, problems)
            yield from problems
            problems = []
        yield Checkpoint(str(self.path.stat().st_size), 0)

    def _read_ui_alone(self) -> Iterator[Event]:
        """A task folder holding only ``ui_messages.json``: its panel entries are the conversation."""
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if doc is None:
            return
        if not isinstance(doc, list):
            yield Problem(1, "expected a JSON list of panel entries")
            return
        task = self.path.parent
        extension = task.parent.parent.name if task.parent.name == "tasks" else ""
        title, started, ended, problems = self._ui(task, doc)
        yield SessionRecord(id=task.name, source=EXTENSIONS.get(extension, self.source), title=title,
                            started_at=started, ended_at=ended,
                            meta={"extension": extension, "read_from": UI} if extension else {"read_from": UI})
        rows = ui_rows(doc, task.name, problems)
        yield from problems
        yield from rows
        yield Checkpoint(str(self.path.stat().st_size), 0)

    @staticmethod
    def _ui(task: Any, ui: Any = None) -> tuple[str | None, float | None, float | None, list[Problem]]:
        """(title, first ts, last ts, problems) from the task's ``ui_messages.json`` (``ui`` when read)."""
        path = task / UI
        problems: list[Problem] = []
        if ui is None:
            try:
                if path.stat().st_size > MAX_UI_BYTES:
                    return None, None, None, [Problem(None, f"{UI}: too large to read")]
                ui = json.loads(path.read_bytes().decode("utf-8", errors="replace"), strict=False)
            except FileNotFoundError:
                return None, None, None, problems
            except (OSError, ValueError, RecursionError) as exc:
                return None, None, None, [Problem(None, f"{UI}: unreadable ({exc})")]
        if not isinstance(ui, list):
            return None, None, None, [Problem(None, f"{UI}: expected a JSON list")]
        title = None
        stamps = []
        for index, entry in enumerate(ui):
            if not isinstance(entry, dict):
                continue
            stamp = _stamp(entry.get("ts"))
            if stamp is not None:
                stamps.append(stamp)
            if title is None and is_task_entry(ui, index) and isinstance(entry.get("text"), str):
                title = entry["text"].strip().splitlines()[0][:200] if entry["text"].strip() else None
        return title, min(stamps, default=None), max(stamps, default=None), problems
