"""``cline-sdk``: the sessions of Cline's SDK hosts (the Cline 3 CLI, the desktop app, Kanban and
the SDK build of the VS Code extension), ``~/.cline/data/sessions/<id>/<id>.messages.json``.

The file follows ``sdk/packages/core/docs/messages-contract-v1.md`` (cline/cline): one
document ``{version: 1, updated_at, agent: "lead" | "subagent" | "teammate", sessionId,
taskType?, messages: [...], system_prompt?}`` whose messages are Anthropic-native,
``{id, role: "user" | "assistant", content: [blocks], ts? (ms, on assistant turns),
modelInfo? {id, provider}, metrics?}`` with ``text``, ``thinking``, ``tool_use`` {``id``,
``name``, ``input``} and ``tool_result`` {``tool_use_id``, ``content``, ``is_error``} blocks
(tool results ride on ``user`` messages; there is no ``tool`` role at rest). They are read by
the Anthropic block reader Cline's task histories use: thinking as ``reasoning``, calls with
their input, each result a ``tool`` row (empty ones kept), ``system_prompt`` not indexed.

Beside it, the session's manifest ``<id>.json`` (``session_manifest.ts``: ``session_id``,
``cwd``, ``provider``, ``model``, ``started_at``, ``ended_at``, ``status``, ``prompt``,
``metadata``) gives the workspace, the times and the model; it and ``<id>.hooks.jsonl``
(debug telemetry) are members read through the messages file. A subagent's or teammate's
file lies below the root session's folder (``<root>/<agent>/<id>.messages.json``, or
``<root>/<agent id>.messages.json``): a session of its own whose parent is the root. The
document is replaced when the session goes on (re-read whole on change).
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
    Notice,
    Problem,
    SessionRecord,
    SourceState,
    opt_str,
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    load_document,
    shape_guarded,
)
from hermes_store.sessions.importers.openai_common import ToolNames

SUFFIX = ".messages.json"
_AGENTS = {"lead", "subagent", "teammate"}


def _stem(path: Path) -> str:
    return path.name[: -len(SUFFIX)] if path.name.endswith(SUFFIX) else path.stem


def _owner(path: Path) -> Path | None:
    """The messages file a session's manifest (``<id>.json``) or hooks log (``<id>.hooks.jsonl``)
    lies beside; None for any other file."""
    name = path.name
    if name.endswith(SUFFIX):
        return None
    stem = name[: -len(".hooks.jsonl")] if name.endswith(".hooks.jsonl") else path.stem if path.suffix == ".json" else None
    messages = path.parent / f"{stem}{SUFFIX}" if stem else None
    return messages if messages is not None and messages.is_file() else None


def _is_contract(doc: Any) -> bool:
    """A messages-contract document: a numeric ``version``, a ``messages`` list of role messages."""
    if not isinstance(doc, dict) or not isinstance(doc.get("version"), int) or not isinstance(doc.get("messages"), list):
        return False
    first = [m for m in doc["messages"][:8] if isinstance(m, dict)]
    return (doc.get("agent") in _AGENTS or "sessionId" in doc) and all(
        m.get("role") in ("user", "assistant") and isinstance(m.get("content"), (list, str)) for m in first)


def _root(path: Path) -> str | None:
    """The root session a file lies under (the folder just below ``sessions/``)."""
    for folder in path.parents:
        if folder.parent.name == "sessions":
            return folder.name
    return None


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value) if value is not None else None
    except ValueError:
        return None


class ClineSdkImporter(ReplacedWhenChanged, Importer):
    """One Cline SDK session (``<id>.messages.json``, messages contract v1)."""

    name = "cline-sdk"
    agent = "Cline (CLI 3 / SDK sessions)"
    indexes = "the messages contract: prompts, replies, thinking, tool calls and results; cwd, times, model from the manifest; subagents"
    source: str | None = "cline"
    resumable_by_offset = False
    snapshot = True
    walk_names = ("*.messages.json",)
    default_locations = {
        "linux": ("~/.cline/data/sessions/*/*.messages.json", "~/.cline/data/sessions/*/*/*.messages.json"),
        "darwin": ("~/.cline/data/sessions/*/*.messages.json", "~/.cline/data/sessions/*/*/*.messages.json"),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A messages-contract document (0.95 when named ``*.messages.json``); the session's
        manifest or hooks log beside one is its member."""
        if head.is_sqlite:
            return 0.0
        if cls.member_of(head) is not None:
            return 0.6
        if head.path.suffix.lower() != ".json":
            return 0.0
        if not _is_contract(head.document()):
            return 0.0
        return 0.95 if head.path.name.endswith(SUFFIX) else 0.8

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """``<id>.json`` (the manifest) and ``<id>.hooks.jsonl`` beside ``<id>.messages.json``."""
        return _owner(head.path)

    def default_session_id(self) -> str:
        return _stem(self.path)

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        if _owner(self.path) is not None:
            yield Checkpoint(str(self.path.stat().st_size), 0)  # a member: read through the messages file
            return
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if doc is None:
            return
        if not _is_contract(doc):
            yield Problem(None, "expected a messages document {version, sessionId, messages: [{role, content}]}")
            return
        if not doc["messages"]:  # a session saved when it started, before its first message
            yield Notice(None, "the session holds no messages yet; nothing to import")
            return
        session_id = opt_str(doc.get("sessionId")) or self.default_session_id()
        root = _root(self.path)
        record = SessionRecord(id=session_id, source=self.source,
                               parent_session_id=root if root and root != session_id else None,
                               ended_at=_stamp(doc.get("updated_at")),
                               meta={k: doc[k] for k in ("agent", "taskType", "version") if doc.get(k) is not None})
        manifest = self._manifest(session_id)
        if manifest:
            record.workspace = opt_str(manifest.get("cwd")) or opt_str(manifest.get("workspace_root"))
            record.started_at = _stamp(manifest.get("started_at"))
            record.ended_at = _stamp(manifest.get("ended_at")) or record.ended_at
            record.model = opt_str(manifest.get("model"))
            metadata = manifest.get("metadata") if isinstance(manifest.get("metadata"), dict) else {}
            record.title = opt_str(metadata.get("title"))
            record.meta.update({k: manifest[k] for k in ("status", "provider", "source") if opt_str(manifest.get(k))})
        models = [opt_str(m.get("modelInfo", {}).get("id")) for m in doc["messages"]
                  if isinstance(m, dict) and isinstance(m.get("modelInfo"), dict)]
        record.model = next((m for m in reversed(models) if m), None) or record.model
        yield record
        tools = ToolNames()
        for index, message in enumerate(doc["messages"]):
            where = f"messages[{index}]"
            if not isinstance(message, dict):
                yield Problem(None, f"{where}: not a message object (skipped)")
                continue
            stamp = message.get("ts")
            stamp = stamp / 1000 if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else None
            problems = []
            yield from anthropic_rows(message, session_id, stamp, where, tools, problems)
            yield from problems
        yield Checkpoint(str(self.path.stat().st_size), 0)

    def _manifest(self, session_id: str) -> dict[str, Any] | None:
        """The session's manifest ``<id>.json`` beside the messages file, when it is one."""
        for name in (f"{session_id}.json", f"{_stem(self.path)}.json"):
            path = self.path.parent / name
            try:
                doc = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
            except (OSError, ValueError, RecursionError):
                doc = None
            if isinstance(doc, dict) and ("session_id" in doc or "messages_path" in doc):
                return doc
        return None
