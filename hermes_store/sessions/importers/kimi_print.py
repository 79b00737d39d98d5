"""``kimi-print``: what ``kimi --print --output-format stream-json`` prints, saved to a file.

Kimi CLI's print mode (MoonshotAI/kimi-cli ``src/kimi_cli/ui/print/visualize.py``,
``JsonPrinter``) prints one JSON object per line:

* the messages of the run in kosong's ``Message`` shape, the same lines Kimi CLI writes to
  ``context.jsonl`` (read by :func:`~hermes_store.sessions.importers.kimi_cli.message_rows`):
  ``{"role": "assistant", "content": text | [{type: "think", think, encrypted} | {type:
  "text", text}], "tool_calls": [{type: "function", id, function: {name, arguments}}]}`` once
  per step (parts merged), and ``{"role": "tool", "content": ..., "tool_call_id"}`` per tool
  result (``<system>...</system>`` wrapping the tool's message, ``ERROR: ...`` for a failure);
* a ``Notification`` (``id``, ``category``, ``type``, ``source_kind``, ``source_id``, ``title``,
  ``body``, ``severity``, ``created_at``, ``payload``): a ``system`` row, as in the wire log;
* a ``PlanDisplay`` (``content``, ``file_path``): the plan shown for approval, a ``system``
  row ``[plan <file>]`` followed by the plan.

``--final-message-only`` prints only the last ``{"role": "assistant", "content": text}``. The
prompt is not printed (it is the command line's, or stdin's with ``--input-format
stream-json``), and neither is the session id (``kimi -r <id>`` goes to stderr): the session
is named after the file. The stream has no times but a notification's; the file is read
whole when it changes. Before this reader such a file was refused as ``unknown format``.
"""

from __future__ import annotations

from collections.abc import Iterator
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
    safe_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    json_objects,
    shape_guarded,
)
from hermes_store.sessions.importers.kimi_cli import ROLES, KimiCliImporter, message_rows
from hermes_store.sessions.importers.kimi_cli_wire import notification_text
from hermes_store.sessions.importers.openai_common import ToolNames

_MESSAGE_KEYS = frozenset({"role", "name", "content", "tool_calls", "tool_call_id", "partial"})
_NOTIFICATION_KEYS = frozenset({"id", "category", "type", "source_kind", "source_id", "severity", "created_at"})


def _is_message(obj: dict[str, Any]) -> bool:
    return obj.get("role") in ROLES and "content" in obj and obj.keys() <= _MESSAGE_KEYS


def _is_notification(obj: dict[str, Any]) -> bool:
    return _NOTIFICATION_KEYS <= obj.keys() and "role" not in obj


def _is_plan(obj: dict[str, Any]) -> bool:
    return obj.keys() == {"content", "file_path"}


def _is_kimi_only(obj: dict[str, Any]) -> bool:
    """A line no other agent's message JSONL writes: a notification, a plan, a kosong ``think``
    part, or a tool result wrapped in Kimi's ``<system>`` tag."""
    if _is_notification(obj) or _is_plan(obj):
        return True
    content = obj.get("content")
    parts = content if isinstance(content, list) else []
    if any(isinstance(p, dict) and p.get("type") == "think" and "think" in p for p in parts):
        return True
    if obj.get("role") != "tool":
        return False
    first = content if isinstance(content, str) else parts[0].get("text") if parts and isinstance(parts[0], dict) \
        else None
    return isinstance(first, str) and first.startswith("<system>")


class KimiPrintImporter(ReplacedWhenChanged, Importer):
    """A saved ``kimi --print --output-format stream-json`` run."""

    name = "kimi-print"
    agent = "Kimi CLI (kimi --print --output-format stream-json)"
    indexes = "the run's replies, think parts, tool calls and results, notifications and plans shown"
    source: str | None = KimiCliImporter.source
    resumable_by_offset = False
    snapshot = True
    derives_end_time = False  # only notifications carry a time

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Lines that are kosong messages (no ``user`` line: print mode never prints the prompt;
        no private ``_checkpoint`` roles: a ``context.jsonl``), notifications or plans, at least
        one of a kind only Kimi CLI writes (see :func:`_is_kimi_only`); at most a fifth of the
        lines of a kind added since (read and reported)."""
        if head.is_sqlite:
            return 0.0
        objects = head.objects()
        if not objects or any(o.get("role") == "user" or str(o.get("role", "")).startswith("_") for o in objects):
            return 0.0
        known = sum(_is_message(o) or _is_notification(o) or _is_plan(o) for o in objects)
        if known * 5 < len(objects) * 4:
            return 0.0
        return 0.9 if any(_is_kimi_only(o) for o in objects) else 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        session_id = self.default_session_id()
        record = SessionRecord(id=session_id, source=self.source, meta={"output": "stream-json"})
        rows: list[Event] = []
        problems: list[Problem] = []
        tools = ToolNames()
        for line, obj in json_objects(self.path, self.hasher, problems):
            if _is_message(obj):
                rows.extend(message_rows(obj, line, session_id, tools))
            elif _is_notification(obj):
                stamp = safe_timestamp(obj.get("created_at"), line, problems)
                if stamp is not None:
                    record.started_at = min(record.started_at or stamp, stamp)
                    record.ended_at = max(record.ended_at or stamp, stamp)
                text = notification_text(obj)
                if text:
                    rows.append(MessageRecord(session_id, "system", text, timestamp=stamp, line=line))
            elif _is_plan(obj):
                where = opt_str(obj.get("file_path"))
                plan = str(obj.get("content") or "")
                rows.append(MessageRecord(session_id, "system", f"[plan {where}]\n{plan}" if where else
                                          f"[plan]\n{plan}", line=line))
            else:
                keys = ", ".join(sorted(obj)[:6])
                problems.append(Problem(line, f"unknown line (keys {keys}; not a message, notification or "
                                              "plan; skipped)"))
        yield record
        yield from rows
        yield from problems
        yield Checkpoint(str(self.path.stat().st_size), 0)
