"""``codex-json``: the rollouts of the first, TypeScript Codex CLI (spring 2025).

Before the Rust rewrite, ``codex`` saved each session whole after every turn as one JSON
document, ``~/.codex/sessions/rollout-<YYYY-MM-DD>-<sessionId>.json`` (openai/codex
``codex-cli/src/utils/storage/save-rollout.ts``): ``{session: {timestamp, id, instructions,
model?, provider?, lastResponseId?}, items}``, the items the Responses API items the agent
kept: ``message`` (``input_text`` / ``output_text`` parts), ``reasoning`` (summaries),
``function_call`` (``shell`` with its ``command``, ``apply_patch``) and
``function_call_output`` (JSON text ``{"output", "metadata": {"exit_code", ...}}``),
``local_shell_call``. They are read by the JSONL rollout's item reader
(:func:`codex.item_events`): messages, ``reasoning`` rows, calls with their arguments, outputs
as ``tool`` rows. The items carry no times: the session starts at ``session.timestamp``. The
file is re-read whole when it changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    Problem,
    SessionRecord,
    SourceState,
    opt_str,
    safe_timestamp,
)
from hermes_store.sessions.importers.codex import (
    CALL_TYPES,
    ITEM_TYPES,
    OUTPUT_TYPES,
    SILENT_TYPES,
    item_events,
)
from hermes_store.sessions.importers.doc_common import (
    NamedByDocument,
    ReplacedWhenChanged,
    load_document,
    safe_rows,
    shape_guarded,
)
from hermes_store.sessions.importers.openai_common import ToolNames

_KNOWN = ITEM_TYPES | CALL_TYPES | OUTPUT_TYPES | SILENT_TYPES


def is_ts_rollout(doc: Any) -> bool:
    """True for ``{session: {id, timestamp}, items: [Responses API items]}``."""
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        return False
    session = doc.get("session")
    if not isinstance(session, dict) or "id" not in session or "timestamp" not in session:
        return False
    items = [item for item in doc["items"][:20] if isinstance(item, dict)]
    return all(item.get("type") in _KNOWN for item in items)


class CodexJsonImporter(NamedByDocument, ReplacedWhenChanged, Importer):
    """A TypeScript Codex CLI rollout (``~/.codex/sessions/rollout-<date>-<id>.json``)."""

    name = "codex-json"
    agent = "OpenAI Codex CLI (TypeScript, 2025)"
    indexes = "messages, reasoning summaries, shell and patch calls with arguments and their output"
    source: str | None = "codex"
    resumable_by_offset = False
    snapshot = True
    default_locations = {"linux": ("~/.codex/sessions/rollout-*.json",),
                         "darwin": ("~/.codex/sessions/rollout-*.json",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """The rollout document (0.95 when named ``rollout-*.json``)."""
        if head.is_sqlite or head.data.lstrip()[:1] != b"{":
            return 0.0
        if not is_ts_rollout(head.document()):
            return 0.0
        return 0.95 if head.path.name.startswith("rollout-") else 0.85

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if not is_ts_rollout(doc):
            yield Problem(1, "expected a Codex rollout: {session: {id, timestamp}, items: [...]}")
            return
        session = doc["session"]
        self.doc_id = opt_str(session.get("id"))
        session_id = self.default_session_id()
        times: list[Problem] = []
        meta = {k: session[k] for k in ("provider",) if opt_str(session.get(k))}
        yield SessionRecord(id=session_id, source=self.source,
                            started_at=safe_timestamp(session.get("timestamp"), None, times),
                            model=opt_str(session.get("model")), meta=meta)
        yield from times
        tools = ToolNames()
        for index, item in enumerate(doc["items"], 1):
            if not isinstance(item, dict):
                yield Problem(index, f"items[{index - 1}]: expected an object (skipped)")
                continue
            if item.get("type") not in _KNOWN:
                yield Problem(index, f"items[{index - 1}]: unknown item type {item.get('type')!r} (skipped)")
                continue
            rows_problems: list[Problem] = []
            yield from safe_rows(item_events, rows_problems, index, f"items[{index - 1}]",
                                 item, session_id, None, index, tools)
            yield from rows_problems
        yield Checkpoint("done")
