"""``cline``: Cline, Roo Code and Kilo Code tasks in VS Code's ``globalStorage``.

Each task is a directory ``<globalStorage>/<extension id>/tasks/<taskId>/``
(``saoudrizwan.claude-dev`` for Cline, ``rooveterinaryinc.roo-cline`` for Roo
Code, ``kilocode.kilo-code`` for Kilo Code) holding

* ``api_conversation_history.json``: the conversation sent to the model, an
  Anthropic ``MessageParam[]`` (``{role, content}``; content a string or blocks
  ``text``, ``image``, ``tool_use``, ``tool_result``, ``thinking``; Roo Code adds
  ``ts`` (ms) to each message). Older versions wrote tool calls as XML inside
  the assistant's text (``<read_file><path>..</path></read_file>``) and their
  results as user text (``[read_file for 'x'] Result:``): read as calls, results and
  thinking (:mod:`.cline_xml`);
* ``ui_messages.json``: what the panel showed, ``[{ts, type: "say" | "ask",
  say | ask, text}]``: the first ``task`` text is the session's title and its
  ``ts`` range the session's times.

The conversation file is the source; the UI file is read beside it. A task folder
with only ``ui_messages.json`` (or an empty history) is read from the panel entries
(:mod:`.cline_ui`); Roo Code's versioned history, its ``history_item.json`` (workspace,
parent task) and a folder holding only metadata are described in :mod:`.cline_task`.
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
    Notice,
    Problem,
    SessionRecord,
    SourceState,
    head_chars,
    opt_str,
    parse_timestamp,
)
from hermes_store.sessions.importers.cline_task import (
    HISTORY,
    METADATA,
    UI,
    anthropic_shape,
    history_item,
    history_messages,
    in_task_folder,
    is_task_index,
    task_record,
)
from hermes_store.sessions.importers.cline_ui import is_task_entry, is_ui_entry, ui_rows
from hermes_store.sessions.importers.cline_xml import XmlTurns
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    load_document,
    safe_rows,
    shape_guarded,
)
from hermes_store.sessions.importers.openai_common import ToolNames

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
    # 2: notices, task folders (2026-12-06); 3: MCP calls and responses of panel-only tasks; 4: the
    # editor state (<environment_details>) and <task>/<feedback>/<answer> tags out of the searched text
    # 5: XML-era tool calls, results and <thinking> read as calls, tool rows and reasoning
    reader = 5
    agent = "Cline / Roo Code / Kilo Code"
    indexes = "the API conversation (native and XML-era tool calls), title and times from ui_messages.json"
    source: str | None = "cline"
    resumable_by_offset = False
    snapshot = True
    # the extension's globalStorage in each editor, and ~/.cline/data (the Cline CLI and the JetBrains
    # plugin's standalone core keep the same task folders there)
    default_locations = {
        "linux": (*_locations("~/.config"), f"~/.cline/data/tasks/*/{HISTORY}"),
        "darwin": (*_locations("~/Library/Application Support"), f"~/.cline/data/tasks/*/{HISTORY}"),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """``api_conversation_history.json``: a list of ``{role, content}`` messages (or Roo Code's
        ``{version: 2, messages}``); a task folder's other files; Roo Code's ``tasks/_index.json``."""
        if head.is_sqlite:
            return 0.0
        path = head.path
        if path.name != HISTORY:
            if cls.member_of(head) is not None:
                return 0.6  # the task's other files (ui_messages.json, ...) are read through it
            if path.name == UI:
                doc = head.document()  # a task folder without its history: the panel is the record
                entries = doc[:8] if isinstance(doc, list) else []
                if entries and all(is_ui_entry(e) for e in entries):
                    return 0.9
                return 0.6 if doc == [] and in_task_folder(path) else 0.0
            if path.name in METADATA and in_task_folder(path) and task_record(path.parent) == path:
                return 0.6  # a folder holding only its metadata: said so when read
            return 0.6 if is_task_index(path, head.document()) else 0.0
        doc = head.document()
        messages = history_messages(doc)
        if messages is not None and all(isinstance(m, dict) and ("role" in m and "content" in m
                                                                 or is_reasoning_item(m)) for m in messages[:8]):
            return 0.95
        return 0.6 if head.data.lstrip()[:1] == b"[" else 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """The file a task folder is read from (its history, else its panel, else its first
        metadata file), for the folder's other ``.json`` files."""
        path = head.path
        if not in_task_folder(path):
            return None
        record = task_record(path.parent)
        return record if record is not None and record != path else None

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        task = self.path.parent
        name = self.path.name
        if not in_task_folder(self.path) or name == HISTORY:
            record = self.path  # a history (or any file outside a task folder) is its own record
        else:  # the panel too is read through the history when there is one (else it is the record)
            record = task_record(task) or self.path
        if record != self.path:
            yield Checkpoint(str(self.path.stat().st_size), 0)  # a member of the task: nothing alone
            return
        problems: list[Problem] = []
        if name == UI:
            yield from self._read_ui_alone()
            return
        doc = load_document(self, problems)
        yield from problems
        if name != HISTORY:
            if is_task_index(self.path, doc):
                yield Notice(None, "Roo Code's task index: each task is read from its own folder")
            elif not in_task_folder(self.path):
                yield Problem(None, f"not a file of a task folder (expected {HISTORY} or {UI})")
            elif doc is not None:
                yield Notice(None, f"task folder {task.name} holds no conversation (no {HISTORY} or {UI}, "
                                   f"only {', '.join(sorted(p.name for p in task.glob('*.json')))}); nothing to import")
            yield Checkpoint(str(self.path.stat().st_size), 0)
            return
        if doc is None:
            return
        messages = history_messages(doc)
        if messages is None:
            yield Problem(1, "expected a JSON list of messages (or Roo Code's {version: 2, messages})")
            return
        if not messages:
            if (task / UI).is_file():
                yield from self._read_ui_alone(task / UI)  # the history is empty: the panel is the record
            else:
                yield Notice(None, f"the task's {HISTORY} holds no messages and it has no {UI}; nothing to import")
            yield Checkpoint(str(self.path.stat().st_size), 0)
            return
        yield from self._history(task, messages)
        yield Checkpoint(str(self.path.stat().st_size), 0)

    def _session(self, task: Path, title: str | None, started: float | None, ended: float | None,
                 read_from: str | None = None) -> SessionRecord:
        """The task's session: source from its extension, workspace and parent from ``history_item.json``."""
        extension = task.parent.parent.name if task.parent.name == "tasks" else ""
        item = history_item(task)
        meta: dict[str, Any] = {"extension": extension} if extension else {}
        if read_from:
            meta["read_from"] = read_from
        if opt_str(item.get("mode")):
            meta["mode"] = str(item["mode"])
        task_text = item.get("task") if isinstance(item.get("task"), str) else ""
        return SessionRecord(id=task.name, source=EXTENSIONS.get(extension, self.source),
                             title=title or (head_chars(task_text.strip().splitlines()[0], 200) if task_text.strip() else None),
                             workspace=opt_str(item.get("workspace")), started_at=started, ended_at=ended,
                             parent_session_id=opt_str(item.get("parentTaskId")), meta=meta)

    def _history(self, task: Path, doc: list[Any]) -> Iterator[Event]:
        """The session and rows of the task's API conversation."""
        title, started, ended, problems = self._ui(task)
        stamps = [_stamp(m.get("ts")) for m in doc if isinstance(m, dict)]
        known = [s for s in stamps if s is not None]
        yield self._session(task, title, min([*known, started] if started else known, default=None),
                            max([*known, ended] if ended else known, default=None))
        yield from problems
        problems = []
        tools = ToolNames()
        xml = XmlTurns(task.name, tools)  # the XML-tool era's calls, results and thinking as native blocks
        for index, message in enumerate(doc):
            if not isinstance(message, dict):
                yield Problem(None, f"[{index}]: expected a message object")
                continue
            yield from safe_rows(anthropic_rows, problems, None, f"[{index}]", xml.shape(anthropic_shape(message)),
                                 task.name, _stamp(message.get("ts")), f"[{index}]", tools, problems)
            yield from problems
            problems = []

    def _read_ui_alone(self, path: Path | None = None) -> Iterator[Event]:
        """A task folder without an API conversation: its panel entries are the conversation
        (``path``: the task's ``ui_messages.json`` read beside an empty history)."""
        problems: list[Problem] = []
        if path is None:
            doc = load_document(self, problems)
        else:
            doc, problems = self._load_ui(path)
        yield from problems
        if doc is None:
            return
        if not isinstance(doc, list):
            yield Problem(1, "expected a JSON list of panel entries")
            return
        task = (path or self.path).parent
        if not doc:
            yield Notice(None, f"the task's {UI} holds no entries; nothing to import")
            yield Checkpoint(str(self.path.stat().st_size), 0)
            return
        title, started, ended, problems = self._ui(task, doc)
        yield self._session(task, title, started, ended, read_from=UI)
        rows = ui_rows(doc, task.name, problems)
        yield from problems
        yield from rows
        yield Checkpoint(str(self.path.stat().st_size), 0)

    @staticmethod
    def _load_ui(path: Path) -> tuple[Any, list[Problem]]:
        """The task's ``ui_messages.json`` parsed (bounded), or None (with a problem when unreadable)."""
        try:
            if path.stat().st_size > MAX_UI_BYTES:
                return None, [Problem(None, f"{UI}: too large to read")]
            return json.loads(path.read_bytes().decode("utf-8", errors="replace"), strict=False), []
        except FileNotFoundError:
            return None, []
        except (OSError, ValueError, RecursionError) as exc:
            return None, [Problem(None, f"{UI}: unreadable ({exc})")]

    @classmethod
    def _ui(cls, task: Path, ui: Any = None) -> tuple[str | None, float | None, float | None, list[Problem]]:
        """(title, first ts, last ts, problems) from the task's ``ui_messages.json`` (``ui`` when read)."""
        problems: list[Problem] = []
        if ui is None:
            ui, problems = cls._load_ui(task / UI)
            if ui is None:
                return None, None, None, problems
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
                title = head_chars(entry["text"].strip().splitlines()[0], 200) if entry["text"].strip() else None
        return title, min(stamps, default=None), max(stamps, default=None), problems
