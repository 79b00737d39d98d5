"""Session storage methods the shared contract suite does not cover yet, on PostgreSQL."""

from __future__ import annotations

from hermes_store.pgdb import PgDatabase
from hermes_store.sessions.storage import open_session_storage
from hermes_store.sessions.storage_pg_health import PROJECTION_BACKFILL_KEY


def test_backfill_and_session_counts(pg_url):
    with PgDatabase(pg_url) as db:
        storage = open_session_storage(db)
        storage.add_session("s1", origin_format="live", source="cli", title=None, model=None,
                            workspace=None, started_at=1.0, parent_session_id=None, meta={})
        mid = storage.append_message("s1", role="user", content="我喜欢东京塔", tool_name=None,
                                     tool_calls=None, tool_call_id=None, timestamp=2.0, cjk="stale")
        storage.append_message("s1", role="user", content="plain ascii", tool_name=None,
                               tool_calls=None, tool_call_id=None, timestamp=3.0, cjk=None)
        assert storage.backfill_projection(100) == 0  # no marker: nothing asked for
        db.execute("INSERT INTO store_meta(key, value) VALUES (%s, '1')", (PROJECTION_BACKFILL_KEY,))
        assert storage.backfill_projection(1) == 1
        assert db.scalar("SELECT cjk FROM messages WHERE id = %s", (mid,)).startswith("我喜 喜欢")
        assert db.scalar("SELECT count(*) FROM store_meta WHERE key = %s", (PROJECTION_BACKFILL_KEY,)) == 0
        source = db.scalar("INSERT INTO sources(path, format, imported_at) VALUES ('/x', 'f', 0) RETURNING id")
        db.execute("UPDATE sessions SET source_id = %s", (source,))
        assert storage.session_counts([source, source + 1]) == {source: 1}
