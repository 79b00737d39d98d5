"""Parity as a user meets it: letters FTS5's unicode61 folds to another letter (the Greek final
sigma, the Greek symbol forms, the micro sign, the long s, the angstrom sign) find and mark the
same messages, facts and memory entries on both engines.

Found by an audit building one store on SQLite and on PostgreSQL: `sessions search σίσυφος`
found a message holding `ΣΊΣΥΦΟΣ σίσυφος` on both, but PostgreSQL marked only `σίσυφος` and
ranked it lower (its lower() keeps `ς` apart from `σ`), and `ΣΊΣΥΦΟΣ` did not find a message
holding only `σίσυφος` at all (schema/pg/0018).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_store.facts.store import FactStore
from hermes_store.home import Home
from hermes_store.sessions.loader import BulkLoader
from hermes_store.sessions.search import search_messages
from hermes_store.sessions.storage import open_session_storage

# (stored word, the query that must find it): each pair differs only by a letter FTS5 folds
PAIRS = [
    ("ΣΊΣΥΦΟΣ", "σίσυφος"),  # capital sigma against the final sigma
    ("σίσυφος", "ΣΊΣΥΦΟΣ"),
    ("Οδυσσέας", "ΟΔΥΣΣΈΑΣ"),
    ("5µm", "5μm"),  # the micro sign against the Greek mu
    ("ϑεός", "θεός"),  # the theta symbol
    ("ϕιλία", "φιλία"),  # the phi symbol
    ("ϰαλός", "καλός"),  # the kappa symbol
    ("Maſs", "mass"),  # the long s
    ("10Åwide", "10åwide"),  # the angstrom sign against A with ring
]


@pytest.fixture
def storage(home, engine):
    db = home.open_db()
    store = open_session_storage(db)
    store.add_session("s1", origin_format="live", source="cli", title=None, model=None,
                      workspace=None, started_at=1.0, parent_session_id=None, meta={})
    yield db, store
    db.close()


@pytest.mark.parametrize(("stored", "query"), PAIRS)
def test_a_folded_letter_finds_and_marks_the_stored_word(storage, stored, query):
    db, store = storage
    wanted = store.append_message("s1", role="user", content=f"we talked about {stored} today",
                                  tool_name=None, tool_calls=None, tool_call_id=None,
                                  timestamp=2.0, cjk=None)
    store.append_message("s1", role="user", content="an unrelated message", tool_name=None,
                         tool_calls=None, tool_call_id=None, timestamp=3.0, cjk=None)
    hits = {r["message_id"]: r["snippet"] for r in search_messages(db, query, limit=10).results}
    assert list(hits) == [wanted], hits
    assert f">>>{stored}<<<" in hits[wanted]


def test_both_spellings_are_marked_and_counted_alike(storage):
    db, store = storage
    both = store.append_message("s1", role="user", content="ΣΊΣΥΦΟΣ and σίσυφος again",
                                tool_name=None, tool_calls=None, tool_call_id=None,
                                timestamp=2.0, cjk=None)
    one = store.append_message("s1", role="user", content="σίσυφος alone in a longer message here",
                               tool_name=None, tool_calls=None, tool_call_id=None,
                               timestamp=3.0, cjk=None)
    for query in ("σίσυφος", "ΣΊΣΥΦΟΣ"):
        results = search_messages(db, query, limit=10).results
        # two occurrences in a shorter message rank above one in a longer one, as FTS5 ranks it
        assert [r["message_id"] for r in results] == [both, one]
        assert results[0]["snippet"] == ">>>ΣΊΣΥΦΟΣ<<< and >>>σίσυφος<<< again"


def test_facts_and_their_probe_fold_the_final_sigma(home, engine):
    with FactStore(home) as facts:
        fact_id = facts.add_fact("Ο ΣΊΣΥΦΟΣ σπρώχνει την πέτρα", "general", "")["fact_id"]
        found = [r["fact_id"] for r in facts.search("σίσυφος")]
    assert found == [fact_id]


SAMPLE_SESSIONS = Path(__file__).resolve().parents[2] / "examples" / "sample_home" / "sessions"
# prefix queries: FTS5 counts every token a prefix matches; PostgreSQL scored a prefix term by
# presence over an estimated row length, so `backup*` listed #6 above #2 there and `the*` put a
# short message second that SQLite ranks fourth
PREFIX_QUERIES = ["backup*", "cron*", "cront*", "migr*", "backup* cron", "the*"]


def _ranked(root: Path, url: str | None, query: str) -> list[tuple[str, int, float]]:
    db = Home(root, database_url=url).open_db()
    try:
        return [(r["session_id"], int(r["seq"]), float(r["score"]))
                for r in search_messages(db, query, limit=10).results]
    finally:
        db.close()


def test_prefix_queries_rank_alike_on_both_engines(tmp_path, pg_store_url, monkeypatch):
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
    homes = {"sqlite": (tmp_path / "lite", None), "postgresql": (tmp_path / "pg", pg_store_url)}
    for root, url in homes.values():
        db = Home(root, database_url=url).ensure().open_db()
        try:
            assert BulkLoader(db).run([SAMPLE_SESSIONS]).errors == []
        finally:
            db.close()
    for query in PREFIX_QUERIES:
        lite, pg = (_ranked(root, url, query) for root, url in homes.values())
        assert lite, query
        assert [hit[:2] for hit in pg] == [hit[:2] for hit in lite], query
        if query != "the*":  # one term's IDF comes from the walk there: it scales every score alike
            assert [round(hit[2], 4) for hit in pg] == [round(hit[2], 4) for hit in lite], query


# session ids that sort differently by code point (SQLite's BINARY) and by a language's rules
TIED_IDS = ["20260101_000000_b", "20260101_000000_B", "20260101_000000_a-x", "20260101_000000_ax",
            "20260101_000000_Äz"]


@pytest.fixture
def icu_url(pg_server):
    """A database created with an ICU collation (en-US), as many installations' default locale
    orders text; skipped where the server has no ICU."""
    import psycopg

    name = "t_icu_order"
    try:
        pg_server.admin(f"CREATE DATABASE {name} LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"
                        " LOCALE 'C.UTF-8' TEMPLATE template0")
    except psycopg.Error as exc:
        pytest.skip(f"no ICU collation on this server: {exc}")
    try:
        yield pg_server.url(name)
    finally:
        pg_server.drop_database(name)


def test_tied_listings_order_text_as_sqlite_does_whatever_the_database_collation(tmp_path, icu_url, monkeypatch):
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
    source = tmp_path / "src"
    source.mkdir()
    for session_id in TIED_IDS:  # the same time: the listing's order is its tie-break
        (source / f"{session_id}.jsonl").write_text(
            '{"role": "session_meta", "model": "m", "platform": "cli", "timestamp": "2026-01-01T00:00:00Z"}\n'
            '{"role": "user", "content": "tie word", "timestamp": "2026-01-01T00:00:01Z"}\n', encoding="utf-8")
    listed = {}
    for engine, url in (("sqlite", None), ("postgresql", icu_url)):
        home = Home(tmp_path / engine, database_url=url).ensure()
        db = home.open_db()
        try:
            assert BulkLoader(db).run([source]).errors == []
            listed[engine] = [s["id"] for s in open_session_storage(db).list_sessions(limit=10)]
        finally:
            db.close()
    assert listed["sqlite"] == sorted(TIED_IDS)  # by code point
    assert listed["postgresql"] == listed["sqlite"]
