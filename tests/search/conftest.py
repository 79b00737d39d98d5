"""Fixtures for search tests: a store filled through the storage seam (no importer needed), on
each storage engine in turn."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from hermes_store.sessions.storage import open_session_storage
from hermes_store.tokens import cjk_projection

DAY = 86400.0
T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def add_session(db, sid: str, messages: Sequence[tuple[str, str]], *, source: str = "cli",
                title: str | None = None, parent: str | None = None, start: float = T0,
                meta: dict | None = None, step: float = 60.0, model: str | None = "test-model",
                ended_at: float | None = None) -> list[int]:
    """Insert a session and its messages (role, content[, {tool_name, tool_calls, tool_call_id}])
    through the storage seam (so on either engine); returns the message ids in order."""
    storage = open_session_storage(db)
    storage.add_session(sid, origin_format="live", source=source, title=title, model=model,
                        workspace=None, started_at=start, parent_session_id=parent, meta=meta or {})
    ids = []
    for seq, (role, content, *extra) in enumerate(messages):
        fields = extra[0] if extra else {}
        ids.append(storage.append_message(
            sid, role=role, content=content, tool_name=fields.get("tool_name"),
            tool_calls=fields.get("tool_calls"), tool_call_id=fields.get("tool_call_id"),
            timestamp=start + seq * step, cjk=cjk_projection(content)))
    if ended_at is not None:
        storage.end_session(sid, ended_at, None)
    return ids


@pytest.fixture
def db(home, engine):
    """The home's store database (migrated, empty), on each engine in turn."""
    database = home.open_db()
    yield database
    database.close()
