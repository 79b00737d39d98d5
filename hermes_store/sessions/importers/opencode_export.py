"""``opencode-jsonl``: OpenCode messages exported one per line.

What ``opencode export`` and the SDK's ``session.messages()`` give, written as
JSONL: each line ``{"info": {id: "msg_...", sessionID: "ses_...", role,
time: {created, completed?} (ms), modelID?, providerID?}, "parts": [...]}`` with
the same parts as the storage tree (:mod:`.opencode_json`: ``text``,
``reasoning``, ``tool`` with ``state.input``/``output``, ``file``, ...). A line
whose ``info`` is a session (``{id: "ses_...", title, directory, parentID?,
time}``, no ``role``) names the session. The session id and times come from the
lines, never from the file name.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_store.sessions.importers.base import (
    Event,
    Head,
    Importer,
    Problem,
    SessionRecord,
    SourceState,
    opt_str,
    read_jsonl,
)
from hermes_store.sessions.importers.opencode_json import (
    _time,
    message_rows,
    model_of,
    session_record,
)


def _is_message(obj: dict[str, Any]) -> bool:
    info = obj.get("info")
    return (isinstance(info, dict) and isinstance(obj.get("parts"), list)
            and isinstance(info.get("sessionID"), str) and info.get("role") in ("user", "assistant"))


def _is_session(obj: dict[str, Any]) -> bool:
    info = obj.get("info")
    return (isinstance(info, dict) and "role" not in info and str(info.get("id", "")).startswith("ses_")
            and "parts" not in obj)


class OpenCodeJsonlImporter(Importer):
    """OpenCode messages as JSONL (``{info, parts}`` per line, as ``opencode export`` gives them)."""

    name = "opencode-jsonl"
    agent = "OpenCode (exported messages, JSONL)"
    indexes = "every message's parts (text, reasoning, tool calls with input and output), session id, title, times"
    source = "opencode"

    @classmethod
    def sniff(cls, head: Head) -> float:
        """JSONL of ``{info: {sessionID, role}, parts}`` lines (and optionally a session line)."""
        objects = head.objects()
        if not objects or not any(_is_message(o) for o in objects):
            return 0.0
        return 0.9 if all(_is_message(o) or _is_session(o) for o in objects) else 0.0

    def read(self, state: SourceState) -> Iterator[Event]:
        seen: set[str] = set()

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            problems: list[Problem] = []
            if _is_session(obj):
                seen.add(str(obj["info"]["id"]))
                yield session_record(obj["info"], self.source_label(), {})
                return
            if not _is_message(obj):
                yield Problem(line, "expected {info: {sessionID, role}, parts} (skipped)")
                return
            info = obj["info"]
            session_id = str(info["sessionID"])
            if session_id not in seen:
                seen.add(session_id)
                yield SessionRecord(id=session_id, started_at=_time(info, "created"),
                                    workspace=opt_str((info.get("path") or {}).get("cwd"))
                                    if isinstance(info.get("path"), dict) else None)
            model = model_of(info)
            if model:
                yield SessionRecord(id=session_id, model=model)
            for row in message_rows(session_id, info, obj["parts"], f"line {line}", problems):
                row.line = line
                yield row
            for problem in problems:
                yield Problem(line, problem.error)

        yield from read_jsonl(self, state, handle)
