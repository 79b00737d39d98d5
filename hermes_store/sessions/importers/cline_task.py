"""The files of a Cline / Roo Code / Kilo Code task folder, and Roo Code's versioned history.

A task folder ``<globalStorage>/<extension>/tasks/<taskId>/`` holds, depending on the
extension and its version (Cline's ``GlobalFileNames`` in ``src/core/storage/disk.ts``,
Roo Code's in ``src/shared/globalFileNames.ts``):

* ``api_conversation_history.json``: the conversation; an Anthropic ``MessageParam[]``,
  or (Roo Code's ``RooMessage`` storage, ``ROO_MESSAGE_VERSION`` 2) ``{"version": 2,
  "messages": [...]}`` of AI SDK ``ModelMessage`` s: roles ``user`` / ``assistant`` /
  ``tool``, parts ``text``, ``image``, ``file``, ``reasoning``, ``tool-call``
  (``toolCallId``, ``toolName``, ``input``), ``tool-result`` (``toolCallId``,
  ``toolName``, ``output: {type: text | json | error-text | error-json | content, value}``),
  legacy ``tool_result`` blocks kept in user messages, and stand-alone reasoning items;
* ``ui_messages.json``: the panel's entries (:mod:`.cline_ui`);
* ``task_metadata.json`` (files in context, model usage), ``context_history.json``,
  ``settings.json`` and, in Roo Code's per-task history store, ``history_item.json``
  (the ``HistoryItem``: ``task``, ``workspace``, ``mode``, ``parentTaskId``, ...);
* beside the folders, Roo Code's ``tasks/_index.json`` (``{version, updatedAt, entries}``,
  a cache of every task's ``HistoryItem``).

The folder's *record* is the first of its files in :data:`RECORD_ORDER` that exists; the
other files are read through it (members). A folder without a conversation is said so
once (a :class:`~.base.Notice`), never reported as an unknown format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers.doc_common import dumps

HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
METADATA = ("task_metadata.json", "history_item.json", "context_history.json", "settings.json")
RECORD_ORDER = (HISTORY, UI, *METADATA)
INDEX = "_index.json"
ROO_MESSAGE_VERSION = 2
MAX_ITEM_BYTES = 4 * 1024 * 1024  # a history_item.json is a few hundred bytes


def in_task_folder(path: Path) -> bool:
    """True for a ``.json`` file directly inside ``tasks/<taskId>/``."""
    return path.suffix.lower() == ".json" and path.parent.parent.name == "tasks"


def task_record(folder: Path) -> Path | None:
    """The file a task folder is read from (see the module docstring); None when it has none."""
    for name in RECORD_ORDER:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def is_task_index(path: Path, doc: Any) -> bool:
    """Roo Code's ``tasks/_index.json``: ``{version, entries: [HistoryItem]}``."""
    return (path.name == INDEX and path.parent.name == "tasks" and isinstance(doc, dict)
            and isinstance(doc.get("entries"), list) and "version" in doc)


def history_messages(doc: Any) -> list[Any] | None:
    """The messages of an ``api_conversation_history.json`` document, either layout; None if neither."""
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and doc.get("version") == ROO_MESSAGE_VERSION and isinstance(doc.get("messages"), list):
        return doc["messages"]
    return None


def history_item(folder: Path) -> dict[str, Any]:
    """The task's ``history_item.json`` (Roo Code), or ``{}`` when absent or unreadable."""
    path = folder / "history_item.json"
    try:
        if path.stat().st_size > MAX_ITEM_BYTES:
            return {}
        value = json.loads(path.read_bytes().decode("utf-8", errors="replace"), strict=False)
    except (OSError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _output_text(output: Any) -> Any:
    """The text of an AI SDK tool-result ``output`` (``{type, value}``)."""
    if not isinstance(output, dict):
        return output
    value = output.get("value")
    if output.get("type") in ("json", "error-json"):
        return dumps(value)
    if output.get("type") == "content" and isinstance(value, list):
        return [{"type": "text", "text": part.get("text")} if part.get("type") == "text" else
                {"type": str(part.get("type") or "media")} for part in value if isinstance(part, dict)]
    return value


def _part(part: Any) -> Any:
    """One AI SDK content part as the Anthropic block :func:`~.anthropic_common.anthropic_rows` reads."""
    if not isinstance(part, dict):
        return part
    kind = part.get("type")
    if kind == "tool-call":
        return {"type": "tool_use", "id": part.get("toolCallId"), "name": part.get("toolName"),
                "input": part.get("input")}
    if kind == "tool-result":
        return {"type": "tool_result", "tool_use_id": part.get("toolCallId"), "content": _output_text(part.get("output"))}
    if kind == "file":
        return {"type": "document"}
    return part  # text, image, reasoning, Anthropic blocks kept from the legacy layout


def anthropic_shape(message: Any) -> Any:
    """A ``RooMessage`` as an Anthropic-style message (``tool`` messages become the user turn
    carrying their results, as the legacy layout stored them); anything else unchanged."""
    if not isinstance(message, dict) or "role" not in message:
        return message
    content = message.get("content")
    if isinstance(content, list):
        message = {**message, "content": [_part(part) for part in content]}
    if message.get("role") == "tool":
        message = {**message, "role": "user"}
    return message
