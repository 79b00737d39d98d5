"""``antigravity``: Google Antigravity's conversation transcripts (the IDE and the ``agy`` CLI).

Each conversation's "brain" folder, ``~/.gemini/antigravity/brain/<conversation id>/``
(``antigravity-ide/`` and ``antigravity-cli/`` for the other hosts), keeps two logs of its steps
under ``.system_generated/logs/``: ``transcript_full.jsonl`` (every step whole) and
``transcript.jsonl`` (long outputs cut). One step per line::

    {"step_index": 0, "source": "USER_EXPLICIT", "type": "USER_INPUT", "status": "DONE",
     "created_at": "2026-08-21T03:00:00Z", "content": "<USER_REQUEST>...</USER_REQUEST>..."}
    {"step_index": 1, "source": "MODEL", "type": "PLANNER_RESPONSE", "thinking": "...",
     "content": "...", "tool_calls": [{"name": "run_command", "args": {...}}]}
    {"step_index": 2, "source": "MODEL", "type": "RUN_COMMAND", "content": "...", "exit_code": 0}
    {"step_index": 3, "source": "SYSTEM", "type": "SYSTEM_MESSAGE", "content": "..."}

``USER_INPUT`` is the user's row (the ``<USER_REQUEST>`` text first, the rest of the step --
``<ADDITIONAL_METADATA>`` and other context -- kept after it; agy's notice "changed setting
`Model Selection` from X to Y." in it names the session's model); ``PLANNER_RESPONSE`` the
model's: its ``thinking`` a ``reasoning`` row, its ``content`` and ``tool_calls`` (``name``,
``args`` or ``arguments``) one ``assistant`` row; ``SYSTEM_MESSAGE``, the context steps
``CONVERSATION_HISTORY`` / ``KNOWLEDGE_ARTIFACTS`` and any ``SYSTEM`` step a ``system`` row; every
other step type is a tool run (``RUN_COMMAND``, ``VIEW_FILE``, ``CODE_ACTION``,
``TOOL_RESPONSE``, ...): a ``tool`` row with its ``content`` / ``output`` (empty kept; a non-zero
``exit_code`` noted), answering the oldest open call of the matching name (``RUN_COMMAND`` ->
``run_command``), else the oldest open call; the transcript has no call ids, so calls get
``<conversation>:call-<n>``. The session is the conversation id (the brain folder), its times
the steps'. ``transcript.jsonl`` beside a ``transcript_full.jsonl`` is a member (the full log
is read). Read from third-party readers of real transcripts found by the reference search
(their decoders and tests: ``USER_EXPLICIT`` / ``USER_INPUT`` with ``<USER_REQUEST>`` tags,
``MODEL`` / ``PLANNER_RESPONSE`` with ``thinking`` and ``tool_calls`` {``name``, ``args`` or
``arguments``}, tool steps typed ``RUN_COMMAND`` / ``VIEW_FILE`` / ``CODE_ACTION`` /
``TOOL_RESPONSE``, ``SYSTEM`` / ``SYSTEM_MESSAGE``, ``status``, ``created_at``); Antigravity's
source is not public. The conversations' protobuf stores (``conversations/*.pb``, the CLI's
per-conversation SQLite) are not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers.base import (
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    opt_str,
    read_jsonl,
    safe_timestamp,
)
from hermes_store.sessions.importers.doc_common import dumps, tool_call

FULL = "transcript_full.jsonl"
SHORT = "transcript.jsonl"
_REQUEST = re.compile(r"<USER_REQUEST>\s*(.*?)\s*</USER_REQUEST>", re.S)
_STEP_KEYS = {"step_index", "source", "type"}
_SOURCES = {"USER_EXPLICIT", "USER", "MODEL", "SYSTEM", "TOOL"}
# steps that put context before the model (no tool ran): their text a ``system`` row, labelled
_CONTEXT_STEPS = {"SYSTEM_MESSAGE": None, "CONVERSATION_HISTORY": "conversation history",
                  "KNOWLEDGE_ARTIFACTS": "knowledge artifacts"}
# the notice agy writes into a USER_INPUT step when the model is switched
_MODEL_CHANGE = re.compile(r"changed setting `Model Selection` from (?P<old>[^\r\n<]+?) to (?P<new>[^\r\n<]+?)\.(?:\s|$)")


def _is_step(obj: dict[str, Any]) -> bool:
    return _STEP_KEYS <= obj.keys() and isinstance(obj.get("type"), str) and obj["type"].isupper()


def _request(text: str) -> str:
    """The words inside ``<USER_REQUEST>`` first, then whatever context surrounded them."""
    found = _REQUEST.search(text)
    if found is None:
        return text.strip()
    rest = (text[:found.start()] + text[found.end():]).strip()
    return found.group(1) + (f"\n\n{rest}" if rest else "")


def _arguments(call: dict[str, Any]) -> Any:
    value = call.get("args", call.get("arguments", call.get("input")))
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value if value is not None else {}


class _Steps:
    """Turns the steps of one transcript into rows (calls paired with the tool steps after them)."""

    def __init__(self, session_id: str) -> None:
        self.session = session_id
        self.open: list[tuple[str, str]] = []  # (call name, call id) not yet answered
        self.count = 0

    def rows(self, step: dict[str, Any], line: int) -> Iterator[Event]:
        problems: list[Problem] = []
        stamp = safe_timestamp(step.get("created_at"), line, problems)
        yield from problems
        kind = str(step.get("type"))
        content = step.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False) if content else ""
        if kind == "USER_INPUT":
            switched = _MODEL_CHANGE.search(text)
            if switched is not None and switched.group("new").strip() != "None":
                yield SessionRecord(id=self.session, model=switched.group("new").strip())
            if text.strip():
                yield MessageRecord(self.session, "user", _request(text), timestamp=stamp, line=line)
        elif kind == "PLANNER_RESPONSE":
            thought = step.get("thinking")
            if isinstance(thought, str) and thought.strip():
                yield MessageRecord(self.session, "reasoning", thought, timestamp=stamp, line=line)
            calls = []
            for call in step.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                name = opt_str(call.get("name")) or opt_str((call.get("function") or {}).get("name")) or "tool"
                self.count += 1
                call_id = opt_str(call.get("id")) or f"{self.session}:call-{self.count}"
                calls.append(tool_call(call_id, name, _arguments(call)))
                self.open.append((name, call_id))
            if text.strip() or calls:
                yield MessageRecord(self.session, "assistant", text, tool_calls=dumps(calls) if calls else None,
                                    timestamp=stamp, line=line)
        elif kind in _CONTEXT_STEPS or step.get("source") == "SYSTEM":
            label = _CONTEXT_STEPS.get(kind)
            if text.strip():
                yield MessageRecord(self.session, "system", f"[{label}] {text}" if label else text,
                                    timestamp=stamp, line=line)
        else:
            output = step.get("output")
            body = text or (output if isinstance(output, str) else "")
            code = step.get("exit_code")
            if isinstance(code, int) and code != 0:
                body = f"{body}\n[exit code {code}]" if body else f"[exit code {code}]"
            name, call_id = self._answer(kind.lower())
            yield MessageRecord(self.session, "tool", body, tool_name=name, tool_call_id=call_id,
                                timestamp=stamp, line=line)

    def _answer(self, kind: str) -> tuple[str, str | None]:
        """The open call a tool step answers: the oldest of its name, else the oldest."""
        for index, (name, call_id) in enumerate(self.open):
            if name.lower() == kind:
                del self.open[index]
                return name, call_id
        if self.open:
            name, call_id = self.open.pop(0)
            return name, call_id
        return kind, None


class AntigravityImporter(Importer):
    """One Antigravity conversation transcript (``brain/<id>/.system_generated/logs/transcript_full.jsonl``)."""

    name = "antigravity"
    agent = "Google Antigravity (IDE and agy CLI)"
    indexes = "conversation steps: user requests, model responses with thinking and tool calls, tool runs and their output, system messages"
    source: str | None = "antigravity"
    reader = 2  # 2: context steps as system rows, the model from agy's Model Selection notice (2026-12-07)
    walk_names = (FULL, SHORT)
    default_locations = {
        "linux": tuple(f"~/.gemini/{host}/brain/*/.system_generated/logs/{name}"
                       for host in ("antigravity", "antigravity-ide", "antigravity-cli") for name in (FULL, SHORT)),
        "darwin": tuple(f"~/.gemini/{host}/brain/*/.system_generated/logs/{name}"
                        for host in ("antigravity", "antigravity-ide", "antigravity-cli") for name in (FULL, SHORT)),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Lines that are Antigravity steps (``step_index``, ``source``, an upper-case ``type``)."""
        if head.is_sqlite:
            return 0.0
        objects = head.objects()
        if not objects or not all(_is_step(o) for o in objects):
            return 0.0
        if any(o.get("source") in _SOURCES or o.get("type") in ("USER_INPUT", "PLANNER_RESPONSE") for o in objects):
            return 0.95 if head.path.name in (FULL, SHORT) else 0.85
        return 0.0

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """``transcript.jsonl`` (long outputs cut) beside the full log is read through it."""
        full = head.path.parent / FULL
        return full if head.path.name == SHORT and full.is_file() else None

    def default_session_id(self) -> str:
        logs = self.path.parent
        if logs.name == "logs" and logs.parent.name == ".system_generated":
            return logs.parent.parent.name
        return self.path.stem

    def read(self, state: SourceState) -> Iterator[Event]:
        if self.path.name == SHORT and (self.path.parent / FULL).is_file():
            yield from read_jsonl(self, state, lambda obj, line: None)  # the full log holds it all
            return
        session_id = self.default_session_id()
        if not state.resume_at:
            yield SessionRecord(id=session_id, source=self.source, meta={
                "host": self.path.parents[4].name if len(self.path.parents) > 4 else None,
                "transcript": self.path.name})
        steps = _Steps(session_id)
        steps.count = int(state.meta.get("calls", 0))  # a read resumed after appended steps goes on
        steps.open = [(str(n), str(i)) for n, i in state.meta.get("open", [])]

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            if not _is_step(obj):
                yield Problem(line, "expected a step {step_index, source, type} (skipped)")
                return
            yield from steps.rows(obj, line)
            state.meta["calls"] = steps.count
            state.meta["open"] = [list(pair) for pair in steps.open[-64:]]

        yield from read_jsonl(self, state, handle)
