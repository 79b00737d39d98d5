"""Short words are not stemmed (pg 0013): FTS5's porter tokenizer passes a token of fewer than
three bytes through as it is, PostgreSQL's Porter stemmer did not: ``ls`` was indexed as ``l``
(so ``sessions search ls`` on PostgreSQL also found ``crontab -l``), ``is`` as ``i``, ``as`` as
``a``, ``js`` as ``j``, ``oy`` as ``oi``. Both engines now find the same messages and facts.
"""

from __future__ import annotations

import pytest
from sess_helpers import both_engines

from hermes_store.facts.store import FactStore
from hermes_store.pgdb import PgDatabase
from hermes_store.sessions import SessionIndex
from hermes_store.sessions.search import search_messages

MESSAGES = {
    "m-crontab": "run crontab -l to see the jobs",
    "m-ls": "ls -l /opt/scripts shows the backup script",
    "m-is": "the backup is broken",
    "m-i": "I fixed it yesterday",
    "m-as": "use it as a fallback",
    "m-a": "a job ran twice",
    "m-js": "the js bundle is large",
    "m-j": "press j to scroll",
    "m-oy": "oy that hurt",
    "m-oi": "oi over there",
    "m-running": "running jobs are listed",
}
QUERIES = ("ls", "is", "as", "js", "oy", "l", "i", "a", "j", "oi", '"ls -l"', "ls backup", "runs",
           "jobs", "js OR j")


def _fill(db) -> None:
    index = SessionIndex(db)
    for n, (sid, text) in enumerate(sorted(MESSAGES.items())):
        index.create_session(sid, source="cli", started_at=1000.0 + n)
        index.append_message(sid, "user", text, timestamp=1000.0 + n)


def _found(db, query: str) -> list[str]:
    return sorted(hit["session_id"] for hit in search_messages(db, query, limit=20).results)


@pytest.fixture
def both(home, pg_url):
    with both_engines(home, pg_url, _fill) as pair:
        yield pair


@pytest.mark.parametrize("query", QUERIES)
def test_a_short_word_finds_the_same_messages_on_both_engines(both, query):
    sqlite, pg = both
    assert _found(pg, query) == _found(sqlite, query)


def test_short_words_are_found_and_marked_on_postgresql(both):
    _, pg = both
    assert _found(pg, "ls") == ["m-ls"]
    assert _found(pg, "is") == ["m-is", "m-js"]
    hit = search_messages(pg, "ls", limit=5).results[0]
    assert ">>>ls<<<" in hit["snippet"]


def test_facts_find_the_same_short_words_on_both_engines(home, pg_url, monkeypatch):
    found = {}
    for engine in ("sqlite", "postgresql"):
        if engine == "postgresql":
            monkeypatch.setenv("HERMES_STORE_DATABASE_URL", pg_url)
        with FactStore(home) as facts:
            facts.add_fact("Frontend uses a j shortcut for jumping")
            facts.add_fact("The js bundle is built with esbuild")
            found[engine] = {q: sorted(r["content"] for r in facts.search(q)) for q in ("js", "j")}
    assert found["postgresql"] == found["sqlite"]
    assert found["sqlite"]["js"] == ["The js bundle is built with esbuild"]


def test_a_store_indexed_before_pg_0013_is_reindexed_by_it(home, pg_url, monkeypatch):
    """Vectors stored with the old hermes_tokens (``ls`` as ``l``) are recomputed by the migration:
    an upgraded store finds what a new one finds."""
    from hermes_store import pgdb

    every = pgdb.pg_migrations()
    monkeypatch.setattr(pgdb, "pg_migrations", lambda: [m for m in every if m[0] < 13])
    old = PgDatabase(pg_url)
    assert old.schema_version == 12
    _fill(old)
    assert _found(old, "ls") == ["m-crontab", "m-ls"]  # the old behaviour: ls found -l
    old.close()
    monkeypatch.setattr(pgdb, "pg_migrations", lambda: [m for m in every if m[0] <= 13])
    new = PgDatabase(pg_url)
    try:
        assert new.schema_version == 13
        assert _found(new, "ls") == ["m-ls"]
        assert _found(new, "l") == ["m-crontab", "m-ls"]
    finally:
        new.close()
