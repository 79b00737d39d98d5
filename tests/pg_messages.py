"""Put messages straight into a PostgreSQL store's session index (COPY), for search tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_store.sessions.storage import open_session_storage

COPY_MESSAGES = ("COPY messages(session_id, seq, role, content, tool_name, tool_calls, tool_call_id,"
                 " timestamp, cjk) FROM STDIN")


def add_messages(db: Any, session_id: str, rows: Sequence[tuple[str, str, float, str | None]], *,
                 source: str = "cli", started_at: float = 0.0) -> None:
    """A session ``session_id`` holding ``rows`` of ``(role, content, timestamp, cjk)``, in
    ``seq`` order from 0."""
    open_session_storage(db).add_session(
        session_id, origin_format="live", source=source, title=None, model=None, workspace=None,
        started_at=started_at, parent_session_id=None, meta={})
    db.copy_rows(COPY_MESSAGES, [(session_id, seq, role, content, None, None, None, ts, cjk)
                                 for seq, (role, content, ts, cjk) in enumerate(rows)])
