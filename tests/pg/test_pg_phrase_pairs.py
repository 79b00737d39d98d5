"""The phrase pair index (pg 0006): every row matching a phrase holds the phrase's pair keys,
and a walk that reads the rest of a phrase's matches through it returns exactly the matches."""

from __future__ import annotations

import random

import pytest
from pg_messages import add_messages
from statement_spy import spy_statements

from hermes_store.pgdb import PgDatabase
from hermes_store.pgquery import TsQueryError, pair_keys_sql, required_phrases, tsquery_sql
from hermes_store.query import compile_query
from hermes_store.sessions import storage_pg
from hermes_store.sessions.storage import Filters, open_session_storage
from hermes_store.tokens import cjk_projection


def test_required_phrases_are_the_phrases_every_match_holds():
    assert required_phrases('"alpha beta"') == ["alpha beta"]
    assert required_phrases('"alpha beta gamma"') == ["alpha beta gamma"]
    assert required_phrases('"alpha"') == []  # one word: its own GIN entry is as good
    assert required_phrases('"alpha beta" AND "gamma delta"') == ["alpha beta", "gamma delta"]
    assert required_phrases('"alpha beta" AND "alpha beta"') == ["alpha beta"]
    assert required_phrases('"alpha beta" OR "gamma delta"') == []  # either may be absent
    assert required_phrases('("alpha beta" OR "x") AND "gamma delta"') == ["gamma delta"]
    assert required_phrases('"alpha beta" NOT "gamma delta"') == ["alpha beta"]  # kept side only
    assert required_phrases('"alpha beta"*') == []  # the prefix token is no key
    assert required_phrases('"alpha beta gamma"*') == ["alpha beta"]
    # the tree compile_query makes, not only FTS5 text
    assert required_phrases(compile_query('"deploy the server" staging').strict_match) == ["deploy the server"]


def test_pair_keys_sql_binds_every_phrase():
    sql, params = pair_keys_sql(["alpha beta", "it's; DROP TABLE x"])
    assert params == ["alpha beta", "it's; DROP TABLE x"] and "DROP" not in sql
    assert sql.count("%s") == 2
    assert pair_keys_sql([]) == ("'{}'::integer[]", [])
    with pytest.raises(TsQueryError):
        pair_keys_sql(["a b"], config="x; drop")


# awkward text: stems, diacritics, CJK through the projection, digits, a word repeated past the
# 256 positions a vector keeps, a message past the 16,383rd position (positions are clamped)
TEXTS = [
    "deploy the server tonight",
    "Deploying the servers, tonight!",
    "the café naïve crème brûlée",
    "cafe naive creme brulee",
    "version 2 of P2.2 ships on 2024-05-01",
    " ".join(["deploy"] * 300 + ["the server"]),
    " ".join(f"w{i}" for i in range(16390)) + " deploy the server",
    "东京的天气很好，我们明天去京都",
    "我们明天去东京",
    "the the the server the server",
    "alpha beta alpha beta gamma",
]
PHRASES = ["deploy the server", "the server", "deploying servers", "cafe naive", "café naïve creme",
           "creme brulee", "p2 2", "2024 05 01", "w16380 w16381", "w16388 w16389 deploy",
           "东京的天", "明天", "我们明天去", "the the", "server the server", "alpha beta gamma",
           "beta alpha"]


@pytest.fixture(scope="module")
def awkward(pg_server):
    db = PgDatabase(pg_server.create_database("phrase_pairs"))
    add_messages(db, "s", [("user", text, float(seq), cjk_projection(text) or None)
                           for seq, text in enumerate(TEXTS)])
    yield db
    db.close()
    pg_server.drop_database("phrase_pairs")


@pytest.mark.parametrize("phrase", PHRASES)
def test_every_phrase_match_holds_the_phrase_keys(awkward, phrase):
    """The keys are a superset test: no row the phrase test finds lacks them."""
    match = compile_query(f'"{phrase}"').strict_match
    query_sql, params = tsquery_sql(match)
    keys_sql, key_params = pair_keys_sql(required_phrases(match))
    row = awkward.query_one(
        f"SELECT count(*) FILTER (WHERE tsv @@ {query_sql}) AS matches,"
        f" count(*) FILTER (WHERE tsv @@ {query_sql} AND hermes_pair_keys(tsv) @> {keys_sql}) AS kept,"
        f" count(*) FILTER (WHERE hermes_pair_keys(tsv) @> {keys_sql}) AS candidates"
        " FROM messages", (*params, *params, *key_params, *key_params))
    assert row["kept"] == row["matches"]
    assert row["candidates"] >= row["matches"]


def test_the_superset_test_is_not_vacuous(awkward):
    """Most phrases match; the keys of a phrase of two or more words pick exactly its matches
    here (rows holding only the words are no candidates); the stored vector's limits hold on
    both sides: a position past 16,383 and a word's 257th position are kept by neither."""
    found = {}
    for phrase in PHRASES:
        match = compile_query(f'"{phrase}"').strict_match
        query_sql, params = tsquery_sql(match)
        keys_sql, key_params = pair_keys_sql(required_phrases(match))
        row = awkward.query_one(
            f"SELECT count(*) FILTER (WHERE tsv @@ {query_sql}) AS matches,"
            f" count(*) FILTER (WHERE hermes_pair_keys(tsv) @> {keys_sql}) AS candidates FROM messages",
            (*params, *key_params))
        found[phrase] = (row["matches"], row["candidates"])
    assert sum(1 for matches, _ in found.values() if matches) >= len(PHRASES) - 2
    assert found["deploy the server"] == (2, 2)  # stems; the 300-times word is past 256 positions
    assert found["cafe naive"] == found["café naïve creme"] == (2, 2)  # diacritics folded alike
    assert found["我们明天去"] == (2, 2) and found["beta alpha"] == (1, 1)
    assert found["w16380 w16381"] == (1, 1) and found["w16388 w16389 deploy"] == (0, 0)
    assert found["明天"] == (2, len(TEXTS))  # one CJK bigram: no pair, every row a candidate
    words = awkward.scalar("SELECT count(*) FROM messages WHERE tsv @@ 'server & the'::tsquery")
    assert words > found["server the server"][1] == 1


@pytest.fixture(scope="module")
def sparse(pg_server):
    """1,200 messages holding every word; the phrase "delta epsilon" in 8 of them."""
    db = PgDatabase(pg_server.create_database("phrase_sparse"))
    rng = random.Random(6)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    rows = []
    for seq in range(1200):
        text = " and ".join(rng.sample(words, len(words)))  # every row holds every word, no pair
        if seq % 150 == 7:
            text += " and gamma delta epsilon"
        rows.append(("user", text, float(seq), None))
    add_messages(db, "s", rows)
    db.execute("ANALYZE messages")
    yield db
    db.close()
    pg_server.drop_database("phrase_sparse")


@pytest.mark.parametrize("text", ['"delta epsilon"', '"delta epsilon" alpha', '"and delta"',
                                  '"delta epsilon" NOT "alpha and zeta"', '"gamma delta epsilon"',
                                  '"delta epsilon" OR "zeta alpha"'])
@pytest.mark.parametrize("sort", ["relevance", "oldest"])
def test_a_sparse_phrase_is_read_through_the_pair_index(sparse, monkeypatch, text, sort):
    monkeypatch.setattr(storage_pg, "FIRST_WINDOW", 8)
    storage = open_session_storage(sparse)
    match = compile_query(text).strict_match
    query_sql, params = tsquery_sql(match)
    order = "DESC" if sort != "oldest" else "ASC"
    expected = [r["id"] for r in sparse.query(
        f"SELECT id FROM messages WHERE tsv @@ {query_sql} ORDER BY id {order} LIMIT 1000", params)]
    statements = spy_statements(sparse, monkeypatch)
    hits = storage.hits(match, Filters(), sort=sort, budget=1000)
    assert [h.message_id for h in hits] == expected
    through_pairs = [s for s in statements if "hermes_pair_keys(m.tsv) @>" in s and "EXPLAIN" not in s]
    if "delta epsilon" in text and "OR" not in text:  # 8 of 1,200 rows: the pair index
        assert 1 <= len(expected) <= 8 and through_pairs  # the walk (and a phrase term's IDF)
        assert all("ts_match_vq(m.tsv" in s for s in through_pairs)


def test_a_stored_index_migrates_to_the_pair_index(pg_url):
    """A store made before pg 0006 (messages already indexed) gains the pair index when it is
    opened, and its phrase searches go through it with the same results."""
    from hermes_store.pgdb import MIGRATIONS_TABLE

    with PgDatabase(pg_url) as db:
        add_messages(db, "s", [("user", f"{'delta epsilon' if seq % 50 == 3 else 'epsilon delta'} and more",
                                float(seq), None) for seq in range(400)])
        storage = open_session_storage(db)
        expected = [h.message_id for h in storage.hits(compile_query('"delta epsilon"').strict_match,
                                                       Filters(), sort="relevance", budget=1000)]
        db.execute("DROP INDEX messages_pairs")
        db.execute("DROP FUNCTION hermes_pair_keys(tsvector)")
        db.execute(f"DELETE FROM {MIGRATIONS_TABLE} WHERE version >= 6")
        assert db.schema_version == 5
    with PgDatabase(pg_url) as db:  # opening migrates
        assert db.schema_version >= 6
        assert db.scalar("SELECT count(*) FROM messages WHERE hermes_pair_keys(tsv)"
                         " @> hermes_pair_keys(to_tsvector('hermes_search', 'delta epsilon'))") == 8
        storage = open_session_storage(db)
        hits = storage.hits(compile_query('"delta epsilon"').strict_match, Filters(), sort="relevance",
                            budget=1000)
        assert [h.message_id for h in hits] == expected and len(expected) == 8
