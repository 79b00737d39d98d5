"""``copilot-cli-history``: GitHub Copilot CLI's legacy session history JSON.

Before the ``session-state`` event logs, Copilot CLI saved each session as one
pretty-printed document, ``~/.copilot/history-session-state/<sessionId>.json``:
``{"sessionId", "startTime", "chatMessages": [...], "timeline": [...]}``.

* ``timeline`` is what the terminal showed, with times: entries ``{id,
  timestamp, type}`` of type ``user`` / ``copilot`` (``text``),
  ``tool_call_requested`` and ``tool_call_completed`` (``callId``, ``name``,
  ``toolTitle``, ``intentionSummary``, ``arguments``, ``result: {type, log}``)
  and ``info`` (``text``). It is read when it holds any entry.
* ``chatMessages`` is the model's conversation in the OpenAI chat shape
  (``role``, ``content``, ``tool_calls``, ``tool_call_id``; no times); it is
  read only when the timeline is empty, its ``system`` prompt left out.

The file is rewritten whole while the session runs: a changed file is re-imported.
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
    Notice,
    Problem,
    SessionRecord,
    SourceState,
    flatten_content,
    opt_str,
    safe_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    NamedByDocument,
    ReplacedWhenChanged,
    dumps,
    load_document,
    shape_guarded,
    tool_call,
)
from hermes_store.sessions.importers.openai_common import ToolNames, openai_message

_TIMELINE_TYPES = {"user", "copilot", "tool_call_requested", "tool_call_completed", "info"}


def _is_history(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("sessionId"), str)
        and (isinstance(doc.get("chatMessages"), list) or isinstance(doc.get("timeline"), list))
        and "startTime" in doc
    )


class CopilotCliHistoryImporter(NamedByDocument, ReplacedWhenChanged, Importer):
    """One legacy ``history-session-state/<sessionId>.json`` document."""

    name = "copilot-cli-history"
    agent = "GitHub Copilot CLI (legacy history)"
    indexes = "the timeline (prompts, replies, tool calls with arguments and results, notices) or chatMessages"
    source: str | None = "copilot-cli"
    resumable_by_offset = False
    snapshot = True
    default_locations = {
        "linux": ("~/.copilot/history-session-state/*.json",),
        "darwin": ("~/.copilot/history-session-state/*.json",),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """One JSON object with ``sessionId``, ``startTime`` and a ``chatMessages`` or ``timeline`` list."""
        if head.is_sqlite or head.data.lstrip()[:1] != b"{":
            return 0.0
        return 0.9 if _is_history(head.document()) else 0.0


    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if not _is_history(doc):
            yield Problem(
                1,
                "expected an object with 'sessionId', 'startTime' and 'chatMessages' or 'timeline'",
            )
            return
        if not doc.get("timeline") and not doc.get("chatMessages"):  # saved before anything was said
            yield Notice(None, "the session holds no messages yet; nothing to import")
            return
        self.doc_id = opt_str(doc.get("sessionId"))
        session_id = self.default_session_id()
        times: list[Problem] = []
        started = safe_timestamp(doc.get("startTime"), None, times)
        yield from times
        yield SessionRecord(id=session_id, source=self.source, started_at=started)
        timeline = [e for e in doc.get("timeline") or [] if isinstance(e, dict)]
        if timeline:
            yield from self._timeline(session_id, timeline)
        else:
            tools = ToolNames()
            for index, message in enumerate(doc.get("chatMessages") or [], 1):
                if not isinstance(message, dict) or message.get("role") == "system":
                    continue
                found: list[Problem] = []
                record = openai_message(message, session_id, index, tools, found)
                yield from found
                if record is not None:
                    yield record
        yield Checkpoint("done")

    def _timeline(self, session_id: str, timeline: list[dict[str, Any]]) -> Iterator[Event]:
        tools = ToolNames()
        requested: set[str] = set()
        reported: set[str] = set()
        for index, entry in enumerate(timeline, 1):
            problems: list[Problem] = []
            stamp = safe_timestamp(entry.get("timestamp"), index, problems)
            yield from problems
            kind = entry.get("type")
            text = flatten_content(entry.get("text"))
            call_id = opt_str(entry.get("callId"))
            name = opt_str(entry.get("name")) or opt_str(entry.get("toolTitle"))
            if kind == "user":
                yield MessageRecord(session_id, "user", text, timestamp=stamp, line=index)
            elif kind == "copilot":
                yield MessageRecord(session_id, "assistant", text, timestamp=stamp, line=index)
            elif kind == "info":
                if text:
                    yield MessageRecord(
                        session_id, "system", f"[info] {text}", timestamp=stamp, line=index
                    )
            elif kind in ("tool_call_requested", "tool_call_completed"):
                if (
                    call_id not in requested
                ):  # a completion whose request the timeline lacks carries it too
                    requested.add(call_id or f"#{index}")
                    call = tool_call(call_id, name, entry.get("arguments"))
                    tools.remember([call])
                    summary = opt_str(entry.get("intentionSummary")) or ""
                    yield MessageRecord(
                        session_id,
                        "assistant",
                        summary,
                        tool_calls=dumps([call]),
                        timestamp=stamp,
                        line=index,
                    )
                if kind == "tool_call_completed":
                    result = entry.get("result")
                    log = (
                        flatten_content(result.get("log"))
                        if isinstance(result, dict)
                        else flatten_content(result)
                    )
                    yield MessageRecord(
                        session_id,
                        "tool",
                        log,
                        tool_name=tools.lookup(call_id) or name,
                        tool_call_id=call_id,
                        timestamp=stamp,
                        line=index,
                    )
            elif str(kind) not in reported:
                reported.add(str(kind))
                yield Problem(
                    index, f"unknown timeline entry type {kind!r} (skipped; reported once per file)"
                )
