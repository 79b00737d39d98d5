"""Words hold what SQLite's unicode61 tokenizer keeps in them (pg 0015): number-like symbols
(``x²``, ``½``, ``①``), unicode61's foldings (``µ`` micro sign -> ``μ``) and its separators
(a Devanagari virama splits ``नमस्ते``). PostgreSQL dropped the symbols (``x²`` found every
``x``, ``½`` nothing), did not fold ``µ``, and its highlighter split words where SQLite did
not; both engines now find the same messages and facts, mark the same words, and a store
indexed before pg 0015 is upgraded in place.
"""

from __future__ import annotations

import re

import pytest

from hermes_store.facts.store import FactStore
from hermes_store.pgdb import PgDatabase
from hermes_store.sessions import SessionIndex
from hermes_store.sessions.search import search_messages
from hermes_store.tokens import tokenize

MESSAGES = {
    "m-x2": "solve x² plus one",
    "m-x": "mark the x spot",
    "m-x2-plain": "the x2 register",
    "m-half": "add ½ cup of flour",
    "m-circled": "step ① is done",
    "m-roman": "chapter Ⅻ begins",
    "m-micro": "latency 40 µs today",
    "m-mu": "latency 90 μs yesterday",
    "m-hindi": "नमस्ते दुनिया",
    "m-cafe": "cafe\u0301s open",
    "m-zh": "three жs here",
    "m-robot": "the 🤖 replied",
}
QUERIES = ("x²", "x", "x2", "½", "①", "Ⅻ", "ⅻ", "µs", "μs", "μ", "नमस्ते", "दुनिया", "cafés", "cafe",
           "ж", "жs", "🤖", "x²*", "½*", "①*", '"solve x²"', '"x² plus"', "½ OR ①", "x² NOT solve")
MARKED = ("x²", "½", "①", "µs", "नमस्ते", "दुनिया", "cafés", "Ⅻ", '"solve x²"')


def _fill(db) -> None:
    index = SessionIndex(db)
    for n, (sid, text) in enumerate(sorted(MESSAGES.items())):
        index.create_session(sid, source="cli", started_at=1000.0 + n)
        index.append_message(sid, "user", text, timestamp=1000.0 + n)


def _found(db, query: str) -> list[str]:
    return sorted(hit["session_id"] for hit in search_messages(db, query, limit=20).results)


def _marks(db, query: str) -> dict[str, list[str]]:
    return {hit["session_id"]: re.findall(r">>>(.*?)<<<", hit["snippet"] or "", re.S)
            for hit in search_messages(db, query, limit=20).results}


@pytest.fixture(scope="module")
def both(tmp_path_factory, pg_server):
    from hermes_store.home import Home

    root = tmp_path_factory.mktemp("uni") / "home"
    root.mkdir()
    sqlite = Home(root).ensure().open_db()
    pg = PgDatabase(pg_server.create_database("unicode_word_parity"))
    for db in (sqlite, pg):
        _fill(db)
    yield sqlite, pg
    sqlite.close()
    pg.close()
    pg_server.drop_database("unicode_word_parity")


@pytest.mark.parametrize("query", QUERIES)
def test_a_unicode_word_finds_the_same_messages_on_both_engines(both, query):
    sqlite, pg = both
    assert _found(pg, query) == _found(sqlite, query)


def test_symbols_and_foldings_are_found_as_sqlite_finds_them(both):
    for db in both:
        assert _found(db, "x²") == ["m-x2"]
        assert _found(db, "½") == ["m-half"]
        assert _found(db, "①") == ["m-circled"]
        assert _found(db, "ⅻ") == ["m-roman"]
        assert _found(db, "µs") == ["m-micro", "m-mu"]
        assert _found(db, "μs") == ["m-micro", "m-mu"]
        assert _found(db, "ж") == ["m-zh"]  # `жs` is 3 bytes: stemmed
        assert _found(db, "🤖") == ["m-robot"]


@pytest.mark.parametrize("query", MARKED)
def test_a_unicode_word_is_marked_alike_on_both_engines(both, query):
    sqlite, pg = both
    assert _marks(pg, query) == _marks(sqlite, query)


def test_a_virama_word_is_marked_as_one_span(both):
    for db in both:
        assert _marks(db, "नमस्ते") == {"m-hindi": ["नमस्त"]}  # the final vowel sign separates


def test_the_query_side_splits_as_unicode61():
    assert tokenize("नमस्ते x² ½ a_b cafe\u0301s \u0301x") == ["नमस", "त", "x²", "½", "a", "b", "cafe\u0301s", "x"]


def test_facts_find_the_same_unicode_words_on_both_engines(home, pg_url, monkeypatch):
    found = {}
    for engine in ("sqlite", "postgresql"):
        if engine == "postgresql":
            monkeypatch.setenv("HERMES_STORE_DATABASE_URL", pg_url)
        with FactStore(home) as facts:
            facts.add_fact("The timer resolution is 10 µs")
            facts.add_fact("Use ½ of the budget on x² terms")
            facts.add_fact("The x axis is horizontal")
            found[engine] = {q: sorted(r["content"] for r in facts.search(q)) for q in ("μs", "½", "x²")}
    assert found["postgresql"] == found["sqlite"]
    assert found["sqlite"]["x²"] == ["Use ½ of the budget on x² terms"]


def test_a_store_indexed_before_pg_0015_is_reindexed_by_it(home, pg_url, monkeypatch):
    """Vectors stored with the old hermes_tokens (symbols dropped, ``µ`` unfolded) are
    recomputed by the migration: an upgraded store finds what a new one finds."""
    from hermes_store import pgdb

    every = pgdb.pg_migrations()
    monkeypatch.setattr(pgdb, "pg_migrations", lambda: [m for m in every if m[0] < 15])
    old = PgDatabase(pg_url)
    assert old.schema_version == 14
    _fill(old)
    old.execute("INSERT INTO facts(content) VALUES (%s)", ("a fact about ½ µs",))
    assert _found(old, "x²") == ["m-x", "m-x2"]  # the old behaviour
    assert _found(old, "½") == []
    assert _found(old, "μs") == ["m-mu"]
    old.close()
    monkeypatch.setattr(pgdb, "pg_migrations", lambda: every)
    new = PgDatabase(pg_url)
    try:
        assert new.schema_version >= 15
        assert _found(new, "x²") == ["m-x2"]
        assert _found(new, "½") == ["m-half"]
        assert _found(new, "μs") == ["m-micro", "m-mu"]
        assert new.scalar("SELECT count(*) FROM facts WHERE tsv @@ phraseto_tsquery('hermes_search',"
                          " hermes_tokens('½ μs', 10))") == 1
        assert new.scalar("SELECT count(*) FROM pg_proc WHERE proname LIKE 'hermes%0014'") == 0
    finally:
        new.close()
