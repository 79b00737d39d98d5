"""Long words are not stemmed (pg 0014): FTS5's porter tokenizer passes a token of more than 64
bytes through as it is, PostgreSQL's Porter stemmer stemmed it, so a long identifier ending in
``ing`` also found the same identifier ending in ``ings`` or ``ed`` on PostgreSQL only. The CJK
projection (Latin glued to CJK, ``東京as``) is folded and tailed as the text is. Both engines
now find the same messages and facts, and a store indexed before pg 0014 is upgraded in place.
"""

from __future__ import annotations

import pytest
from sess_helpers import both_engines

from hermes_store.facts.store import FactStore
from hermes_store.pgdb import PgDatabase
from hermes_store.sessions import SessionIndex
from hermes_store.sessions.search import search_messages
from hermes_store.tokens import cjk_projection

STEM = "kubernetesproductionclusterserviceaccounttokenrotationwebhookdeploy"  # 67 bytes
WIDE = "a" + "ж" * 31  # 32 letters, 63 bytes: with an ending, more than 64 bytes in 34 or 35 letters
EDGE = "clusterserviceaccounttokenrotationwebhookdeploy"  # 47 bytes: stemmed with any ending
MESSAGES = {
    "m-ing": f"the {STEM}ing step failed",
    "m-ings": f"two {STEM}ings ran",
    "m-ed": f"it {STEM}ed yesterday",
    "m-wide-ing": f"mot {WIDE}ing ici",
    "m-wide-ed": f"mot {WIDE}ed là",
    "m-edge-ing": f"edge {EDGE}ing case",
    "m-edge-s": f"edge {EDGE}s case",
    "m-cjk-as": "東京as test",
    "m-cjk-cafe": "東京café ouvert",
    "m-as": "use it as a fallback",
    "m-a": "a job ran twice",
}
QUERIES = (f"{STEM}ing", f"{STEM}ings", f"{STEM}ed", STEM, f"{STEM}*", f"{STEM}in*", "build*",
           f"{WIDE}ing", f"{WIDE}ed", f"{WIDE}*", f"{EDGE}ing", f"{EDGE}s", f"{EDGE}*",
           f'"the {STEM}ing step"', f'"the {STEM}ings step"', f"{STEM}ing OR {STEM}ed",
           "東京as", "as", "a", "東京cafe", "cafe", "東京")


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
def test_a_long_word_finds_the_same_messages_on_both_engines(both, query):
    sqlite, pg = both
    assert _found(pg, query) == _found(sqlite, query)


def test_long_words_are_found_as_written(both):
    for db in both:
        assert _found(db, f"{STEM}ing") == ["m-ing"]
        assert _found(db, f"{STEM}*") == ["m-ed", "m-ing", "m-ings"]
        assert _found(db, f"{WIDE}ing") == ["m-wide-ing"]
        assert _found(db, f"{EDGE}ing") == ["m-edge-ing", "m-edge-s"]  # 50 bytes: stemmed
        assert _found(db, "東京as") == ["m-cjk-as"]
        assert _found(db, "東京cafe") == ["m-cjk-cafe"]


def test_a_long_word_is_marked_on_both_engines(both):
    for db in both:
        hit = search_messages(db, f"{STEM}ings", limit=5).results
        assert [h["session_id"] for h in hit] == ["m-ings"]
        assert f">>>{STEM}ings<<<" in hit[0]["snippet"]


def test_facts_find_the_same_long_words_on_both_engines(home, pg_url, monkeypatch):
    found = {}
    for engine in ("sqlite", "postgresql"):
        if engine == "postgresql":
            monkeypatch.setenv("HERMES_STORE_DATABASE_URL", pg_url)
        with FactStore(home) as facts:
            facts.add_fact(f"The {STEM}ing job runs nightly")
            facts.add_fact(f"The {STEM}ed flag is set")
            facts.add_fact("東京as is a tag")
            found[engine] = {q: sorted(r["content"] for r in facts.search(q))
                             for q in (f"{STEM}ing", f"{STEM}ed", f"{STEM}*", "東京as")}
    assert found["postgresql"] == found["sqlite"]
    assert found["sqlite"][f"{STEM}ing"] == [f"The {STEM}ing job runs nightly"]


def test_a_store_indexed_before_pg_0014_is_reindexed_by_it(home, pg_url, monkeypatch):
    """Vectors stored with the old hermes_tokens (a long word stemmed, the CJK projection
    unfolded) are recomputed by the migration: an upgraded store finds what a new one finds."""
    from hermes_store import pgdb

    every = pgdb.pg_migrations()
    monkeypatch.setattr(pgdb, "pg_migrations", lambda: [m for m in every if m[0] < 14])
    old = PgDatabase(pg_url)
    assert old.schema_version == 13
    _fill(old)
    old.execute("INSERT INTO facts(content, cjk) VALUES (%s, %s)", ("東京as fact", cjk_projection("東京as fact")))
    assert _found(old, f"{STEM}ing") == ["m-ed", "m-ing", "m-ings"]  # the old behaviour
    assert _found(old, "東京as") == []
    old.close()
    monkeypatch.setattr(pgdb, "pg_migrations", lambda: every)
    new = PgDatabase(pg_url)
    try:
        assert new.schema_version >= 14
        assert _found(new, f"{STEM}ing") == ["m-ing"]
        assert _found(new, f"{STEM}*") == ["m-ed", "m-ing", "m-ings"]
        assert _found(new, "東京as") == ["m-cjk-as"]
        assert new.scalar("SELECT count(*) FROM facts WHERE tsv @@ phraseto_tsquery('hermes_search',"
                          " hermes_tokens('as', 10))") == 1  # its CJK projection, recomputed
    finally:
        new.close()


def test_pg_0016_tokens_equal_pg_0014s_for_every_kind_of_text(pg_url):
    """pg 0016 rewrote hermes_tokens() in PL/pgSQL for speed; stored vectors were not recomputed,
    so it must give exactly pg 0014's text (its body is read from the migration file)."""
    import re

    from hermes_store.pgdb import pg_schema_dir

    source = (pg_schema_dir() / "0014_long_words.sql").read_text(encoding="utf-8")
    body = re.search(r"CREATE OR REPLACE FUNCTION hermes_tokens\(.*?\$\$;", source, re.S).group(0)
    texts = [*MESSAGES.values(), *QUERIES, "", None, "as is by my", "Ünïcödé façade cafés",
             f"{STEM} {STEM.upper()}S {WIDE}ing {WIDE}ings {'ж' * 40}", "日本語" * 30 + "ing",
             f"x{'y' * 70} ok", "tab\tnew\nline  spaced", "a" * 17, "b" * 64, "c" * 65, "é" * 33, "ab1" * 30]
    db = PgDatabase(pg_url)
    try:
        with db.connection() as conn:
            conn.execute(body.replace("FUNCTION hermes_tokens(", "FUNCTION pg_temp.tokens_0014("))
            for cap in (5, 64, 4096):
                for text in texts:
                    row = conn.execute("SELECT hermes_tokens(%s, %s) AS now, pg_temp.tokens_0014(%s, %s) AS was",
                                       (text, cap, text, cap)).fetchone()
                    assert row["now"] == row["was"], (text, cap)
    finally:
        db.close()
