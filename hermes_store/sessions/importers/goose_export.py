"""``goose-export``: a Goose session saved with ``goose session export --format json``.

One JSON object, the session as Goose's ``sessions.db`` holds it: ``id``,
``name`` / ``description``, ``working_dir``, ``created_at`` / ``updated_at``,
token totals, ``model_config`` (``model_name``) and ``conversation``: the
messages (``{id, role, created (s), content: [parts], metadata}``), read with
the parts of the other Goose formats (``toolRequest``, ``toolResponse``,
``thinking``, notices). Messages whose ``metadata.userVisible`` is false
(Goose's own scaffolding: summaries sent to the model only) are kept as
``system`` rows rather than as the user's words. The file is re-read whole when
it changes.
"""

from __future__ import annotations

from collections.abc import Iterator

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
from hermes_store.sessions.importers.doc_common import (
    NamedByDocument,
    ReplacedWhenChanged,
    load_document,
    shape_guarded,
)
from hermes_store.sessions.importers.goose import goose_rows, is_goose_message, visible_rows
from hermes_store.sessions.importers.openai_common import ToolNames


class GooseExportImporter(NamedByDocument, ReplacedWhenChanged, Importer):
    """``goose session export --format json`` output."""

    name = "goose-export"
    reader = 2  # 2: tool-result items for the user alone left out (Goose's audience annotations, 2026-12-07)
    agent = "Goose (goose session export --format json)"
    indexes = "the exported conversation: messages, tool requests and responses, thinking; name, directory, times"
    source: str | None = "goose"
    resumable_by_offset = False
    snapshot = True

    @classmethod
    def sniff(cls, head: Head) -> float:
        """One object with ``working_dir`` and a ``conversation`` of Goose messages."""
        if head.is_sqlite or head.data.lstrip()[:1] != b"{":
            return 0.0
        doc = head.document()
        if not isinstance(doc, dict) or not isinstance(doc.get("conversation"), list):
            return 0.0
        messages = [m for m in doc["conversation"][:20] if isinstance(m, dict)]
        if not messages or not all(is_goose_message(m) for m in messages):
            return 0.0
        return 0.9 if "working_dir" in doc or "id" in doc else 0.7


    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if not isinstance(doc, dict) or not isinstance(doc.get("conversation"), list):
            yield Problem(1, "expected an object with a 'conversation' list")
            return
        self.doc_id = opt_str(doc.get("id"))
        session_id = self.default_session_id()
        times: list[Problem] = []
        config = doc.get("model_config") if isinstance(doc.get("model_config"), dict) else {}
        yield SessionRecord(
            id=session_id, source=self.source,
            title=opt_str(doc.get("name")) or opt_str(doc.get("description")),
            workspace=opt_str(doc.get("working_dir")),
            started_at=safe_timestamp(doc.get("created_at"), None, times),
            ended_at=safe_timestamp(doc.get("updated_at"), None, times),
            model=opt_str(config.get("model_name")),
            meta={k: doc[k] for k in ("session_type", "provider_name", "accumulated_total_tokens", "schedule_id")
                  if doc.get(k) not in (None, "", "user")})
        yield from times
        tools = ToolNames()
        for index, message in enumerate(doc["conversation"], 1):
            if not isinstance(message, dict):
                yield Problem(index, f"conversation[{index - 1}]: expected an object")
                continue
            rows_problems: list[Problem] = []
            rows = goose_rows(message, session_id, index, tools, rows_problems)
            yield from visible_rows(message, rows)
            yield from rows_problems
        yield Checkpoint("done")

