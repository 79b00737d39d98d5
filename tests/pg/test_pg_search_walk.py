"""PostgreSQL search reads id windows newest first: exactly the newest matches, bounded in time."""

from __future__ import annotations

import json
import random
import re

import pytest
from pg_messages import add_messages
from statement_spy import spy_statements

from hermes_store.pgdb import PgDatabase, pg_schema_dir
from hermes_store.query import compile_query
from hermes_store.sessions import storage_pg, storage_pg_bulk
from hermes_store.sessions.search import search_messages
from hermes_store.sessions.storage import Filters, open_session_storage

WORDS = ["alpha", "beta", "gamma", "delta", "deploy", "server", "running", "runs", "café", "naïve"]


@pytest.fixture(scope="module")
def corpus(pg_server):
    """600 messages in 6 sessions: word frequencies from every message to a handful."""
    db = PgDatabase(pg_server.create_database("search_walk"))
    rng = random.Random(16)
    for n in range(6):
        rows = []
        for seq in range(100):
            words = ["common"] + [w for i, w in enumerate(WORDS) if rng.random() < 0.5 / (i + 1)]
            if rng.random() < 0.02:
                words.append("needle")
            rng.shuffle(words)
            role = "reasoning" if seq % 17 == 0 else ("user" if seq % 2 else "assistant")
            rows.append((role, " ".join(words), 1000.0 * n + seq, None))
        add_messages(db, f"s{n}", rows, source="cron" if n == 5 else "cli", started_at=float(n))
    db.execute("ANALYZE messages")
    yield db
    db.close()
    pg_server.drop_database("search_walk")


def _reference(db, match, filters: Filters, budget: int, descending: bool) -> list[int]:
    """The first ``budget`` matching ids in id order, by one plain query."""
    sql, params = storage_pg.tsquery_sql(match)
    where, where_params = storage_pg._filters_sql(filters)
    order = "DESC" if descending else "ASC"
    rows = db.query(f"SELECT m.id FROM messages m LEFT JOIN sessions s ON s.id = m.session_id"
                    f" WHERE m.tsv @@ {sql}{where} ORDER BY m.id {order} LIMIT %s",
                    (*params, *where_params, budget))
    return [r["id"] for r in rows]


QUERIES = ["common", "alpha", "gamma delta", "needle", '"alpha beta"', "deploy OR needle",
           "alpha NOT beta", "serv*", "running", "cafe", "nothingmatches", '"beta alpha gamma"',
           '"runs cafe"', '"alpha beta" OR needle', '"common alpha"*', '"naive running" common']


@pytest.mark.parametrize("text", QUERIES)
@pytest.mark.parametrize("sort", ["relevance", "oldest"])
def test_windowed_walk_returns_exactly_the_first_matches(corpus, monkeypatch, text, sort):
    monkeypatch.setattr(storage_pg, "FIRST_WINDOW", 3)
    monkeypatch.setattr(storage_pg, "MAX_WINDOW", 40)
    storage = open_session_storage(corpus)
    match = compile_query(text).strict_match
    for filters in (Filters(exclude_roles=["reasoning"]), Filters(sources=["cron"]), Filters()):
        for budget in (1, 7, 50, 1000):
            hits = storage.hits(match, filters, sort=sort, budget=budget)
            assert hits.note is None
            assert [h.message_id for h in hits] == _reference(corpus, match, filters, budget, sort != "oldest")


@pytest.mark.parametrize(("text", "keyed"), [('"alpha beta"', True), ('"beta alpha gamma"', True),
                                             ('"runs cafe"', True), ('"naive running" common', True),
                                             ('"common alpha"*', False), ('"alpha beta" OR needle', False)])
def test_a_phrase_of_common_pairs_opens_row_by_row_with_the_same_matches(corpus, monkeypatch, text, keyed):
    """A phrase whose pair keys are common tests its first window in id order (no index);
    the walk still returns exactly the first matches."""
    monkeypatch.setattr(storage_pg, "FIRST_WINDOW", 3)
    monkeypatch.setattr(storage_pg, "MAX_WINDOW", 40)
    monkeypatch.setattr(storage_pg, "COUNT_BELOW", 0)
    monkeypatch.setattr(storage_pg, "DENSE_PAIR_SHARE", 0.0)
    storage = open_session_storage(corpus)
    match = compile_query(text).strict_match
    statements = spy_statements(corpus, monkeypatch)
    for filters in (Filters(exclude_roles=["reasoning"]), Filters(sources=["cron"]), Filters()):
        for budget in (1, 7, 50, 1000):
            hits = storage.hits(match, filters, sort="relevance", budget=budget)
            assert [h.message_id for h in hits] == _reference(corpus, match, filters, budget, True)
    opened = [s for s in statements if "WHERE ts_match_vq(m.tsv, %s::tsquery)" in s]
    assert bool(opened) == keyed  # only a phrase every match holds (pair keys) opens row by row


def test_walk_is_not_vacuous(corpus, monkeypatch):
    """The windows really are many and small, and the result still spans the whole table."""
    monkeypatch.setattr(storage_pg, "FIRST_WINDOW", 3)
    monkeypatch.setattr(storage_pg, "MAX_WINDOW", 40)
    storage = open_session_storage(corpus)
    statements = spy_statements(corpus, monkeypatch)
    hits = storage.hits(compile_query("common").strict_match, Filters(), sort="relevance", budget=1000)
    windows = [s for s in statements if "m.id BETWEEN" in s and "EXPLAIN" not in s]
    assert len(windows) >= 5 and len(hits) == 600  # dense: windows only, to the end
    assert not any("m.id + 0 BETWEEN" in s for s in statements)
    statements.clear()
    hits = storage.hits(compile_query("needle").strict_match, Filters(), sort="relevance", budget=1000)
    total = corpus.scalar("SELECT count(*) FROM messages WHERE content LIKE '%needle%'")
    assert total >= 3 and len(hits) == total
    # sparse: after the first empty window, the rest in one statement through the GIN index
    assert sum("m.id + 0 BETWEEN" in s for s in statements) == 1


def test_a_walk_past_its_time_budget_stops_and_says_so(corpus, monkeypatch):
    monkeypatch.setattr(storage_pg, "FIRST_WINDOW", 3)
    monkeypatch.setattr(storage_pg, "WALK_BUDGET", 0.0)
    result = search_messages(corpus, "needle", limit=10)
    assert result.note and "time budget" in result.note and "results are partial" in result.note
    complete = _reference(corpus, compile_query("needle").strict_match, Filters(exclude_roles=["reasoning"]),
                          1000, True)
    assert {r["message_id"] for r in result.results} < set(complete)
    assert "query_note" in result.to_json()
    monkeypatch.setattr(storage_pg, "WALK_BUDGET", 60.0)
    result = search_messages(corpus, "needle", limit=10)
    assert result.note is None and len(result.results) == min(10, len(complete))


def test_one_term_idf_from_the_walk_keeps_the_order(corpus, monkeypatch):
    """A one-term search takes its IDF from its own walk; the order equals that of the
    separately sampled IDF (one IDF scales every score alike)."""
    for text in ["common", "gamma", "needle", '"alpha beta"']:
        fast = search_messages(corpus, text, limit=50)
        monkeypatch.setattr(storage_pg, "_corpus_wide", lambda filters: False)
        sampled = search_messages(corpus, text, limit=50)
        monkeypatch.undo()
        assert [r["message_id"] for r in fast.results] == [r["message_id"] for r in sampled.results]
        assert fast.results


# pg 0018: the letters unicode61 folds to another letter, and what they fold to
UNICODE61_FOLDS = ("\u00b5\u017f\u03c2\u03d0\u03d1\u03d5\u03d6\u03f0\u03f1\u03f5\u1e9b\u1fbe\u212b",
                   "\u03bcs\u03c3\u03b2\u03b8\u03c6\u03c0\u03ba\u03c1\u03b5s\u03b9a")


def test_hermes_tokens_0005_equals_0003_on_every_kind_of_text(corpus):
    """The faster hermes_tokens (pg 0005; hermes_fold_tokens since pg 0013 gives short words their
    tail) gives the output of 0003's for every input, once the letters pg 0018 folds as
    unicode61 does (the final sigma, µ, ſ ...) are folded first."""
    text = (pg_schema_dir() / "0003_diacritics.sql").read_text(encoding="utf-8")
    body = re.search(r"CREATE OR REPLACE FUNCTION hermes_tokens.*?\$\$;", text, re.S).group(0)
    rng = random.Random(5)
    pool = [chr(c) for c in [*range(0x20, 0x7F), *range(0xA0, 0x300), *range(0x370, 0x500),
                             *range(0x1D00, 0x2000), *range(0x3040, 0x3100), *range(0x4E00, 0x4E40)]]
    pool += ["😀", "\u0301", "e\u0301", "ɏ", "Ḁ", "\u1eff"]
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(0, 60))) for _ in range(3000)]
    texts += ["café", "Crème brûlée", "plain ascii", "", "ỹ"]
    caps = [rng.choice([2, 9, 4096]) for _ in texts]
    with corpus.connection() as conn:  # pg_temp lives in this one session
        conn.execute(body.replace("FUNCTION hermes_tokens(", "FUNCTION pg_temp.hx_0003("))
        row = conn.execute(
            "SELECT count(*) AS n, count(*) FILTER (WHERE pg_temp.hx_0003(translate(t, %s, %s), c)"
            " IS DISTINCT FROM hermes_fold_tokens(t, c)) AS differ,"
            " count(*) FILTER (WHERE t ~ '[À-ɏḀ-ỿ]') AS folded"
            " FROM unnest(%s::text[], %s::int[]) AS x(t, c)", (*UNICODE61_FOLDS, texts, caps)).fetchone()
    assert row["n"] == len(texts) and row["folded"] > 1000
    assert row["differ"] == 0
    assert corpus.scalar("SELECT hermes_fold_tokens('Crème brûlée, café!', 100)") == "Creme brulee cafe "
    assert corpus.scalar("SELECT hermes_tokens('Crème brûlée is ça, js!', 100)") == "Creme brulee is0hs0 ca js0hs0 "


def _write_sessions(root, sessions: int, per_session: int, first: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for n in range(sessions):
        lines = [json.dumps({"role": "session_meta", "platform": "cli", "model": "m", "timestamp": 1.0e9 + n})]
        lines += [json.dumps({"role": "user" if i % 2 == 0 else "assistant",
                              "content": f"message {i} of session {n} deploy", "timestamp": 1.0e9 + n + i})
                  for i in range(per_session)]
        (root / f"20240101_000000_{first + n:08x}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_bulk_load_settles_the_index_and_statistics(pg_url, tmp_path, monkeypatch):
    """After a big enough bulk load the planner's statistics describe the loaded table."""
    from hermes_store.sessions.loader import BulkLoader

    monkeypatch.setattr(storage_pg_bulk, "SETTLE_AFTER", 50)
    with PgDatabase(pg_url) as db:
        _write_sessions(tmp_path / "small", 2, 10, 0)
        BulkLoader(db).run([tmp_path / "small"])  # 20 messages into an empty table: settled
        assert db.scalar("SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass") == 20
        db.execute("ANALYZE messages")
        _write_sessions(tmp_path / "more", 1, 1, 10)
        BulkLoader(db).run([tmp_path / "more"])  # 1 message into 20 (under a tenth): not settled
        assert db.scalar("SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass") == 20
        _write_sessions(tmp_path / "big", 6, 10, 20)
        BulkLoader(db).run([tmp_path / "big"])  # 60 >= SETTLE_AFTER: settled
        assert db.scalar("SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass") == 81
        assert db.scalar("SELECT count(*) FROM messages") == 81


def test_a_page_of_hits_takes_the_same_few_statements_however_many_hits(corpus, monkeypatch):
    """The excerpts of every hit come from one statement (plus one for the tokens ts_headline
    cannot mark): the statement count does not grow with the page."""
    search_messages(corpus, "common", limit=2)  # corpus statistics are cached from here on
    counts = {}
    for limit in (2, 10, 30):
        statements = spy_statements(corpus, monkeypatch)
        found = search_messages(corpus, "common", limit=limit)
        assert len(found.results) == limit
        assert all(">>>common<<<" in r["snippet"] for r in found.results)
        counts[limit] = len(statements)
        monkeypatch.undo()
    assert counts[2] == counts[10] == counts[30], counts
