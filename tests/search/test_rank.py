"""hs_bm25: the same scores as FTS5's bm25() while under the IDF sample, bounded work above it."""

from __future__ import annotations

import random

import pytest

import hermes_store.sessions.rank as rank_mod
from hermes_store.sessions import bm25
from hermes_store.sessions.rank import ensure_rank_function
from tests.search.conftest import add_session

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()


@pytest.fixture
def ranked_db(db):
    rng = random.Random(3)
    messages = [("user", " ".join(rng.choices(WORDS, k=rng.randint(3, 12)))) for _ in range(120)]
    add_session(db, "r", messages)
    ensure_rank_function(db)
    return db


def scores(db, function, expression):
    return db.iter_rows(
        f"SELECT rowid, {function} FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid",
        (expression,),
    ).fetchall()


@pytest.mark.parametrize("expression", ['"alpha"', '"beta" OR "kappa"', '"gamma" AND "delta"', '"eta theta"'])
def test_matches_builtin_bm25_when_sample_covers_everything(ranked_db, expression, monkeypatch):
    monkeypatch.setattr(bm25, "B", 0.75)  # FTS5's bm25() has b = 0.75 built in; ours ranks with bm25.B
    ours = scores(ranked_db, "hs_bm25(messages_fts, 1.0, 1.0)", expression)
    builtin = scores(ranked_db, "bm25(messages_fts, 1.0, 1.0)", expression)
    assert ours and [r[0] for r in ours] == [r[0] for r in builtin]
    for (_, a), (_, b) in zip(ours, builtin, strict=True):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-9)



def test_length_normalisation_follows_b(ranked_db, monkeypatch):
    """hs_bm25 marks a long row down by :data:`bm25.B` (read when a statement starts): with
    b = 0 one "omega" scores the same in a long row as in a short one, with b > 0 less."""
    add_session(ranked_db, "long", [("user", "omega " + "filler " * 40), ("user", "omega")])

    def long_over_short() -> float:
        rows = dict(scores(ranked_db, "hs_bm25(messages_fts, 1.0, 1.0, 1.0)", '"omega"'))
        long_id, short_id = sorted(rows)
        return rows[long_id] / rows[short_id]

    monkeypatch.setattr(bm25, "B", 0.0)
    assert long_over_short() == pytest.approx(1.0)
    monkeypatch.setattr(bm25, "B", 0.5)
    half = long_over_short()
    monkeypatch.setattr(bm25, "B", 0.75)
    assert long_over_short() < half < 1.0


@pytest.fixture
def db(home):
    """SQLite only: these tests check the FTS5 rank function itself."""
    database = home.open_db()
    yield database
    database.close()

def test_sampled_idf_keeps_the_order(db, monkeypatch):
    monkeypatch.setattr(rank_mod, "IDF_SAMPLE", 5)
    rows = []
    for i in range(200):
        words = ["filler", f"w{i}"]
        if i % 4 == 0:
            words.append("common")
        if i % 20 == 0:
            words.append("rare")
        rows.append(("user", " ".join(words)))
    ids = add_session(db, "s", rows)
    ensure_rank_function(db)
    expression = '"common" OR "rare"'
    ours = sorted(scores(db, "hs_bm25(messages_fts)", expression), key=lambda r: r[1])
    builtin = sorted(scores(db, "bm25(messages_fts)", expression), key=lambda r: r[1])
    with_rare = {ids[i] for i in range(0, 200, 20)}
    assert {r[0] for r in ours[:10]} == {r[0] for r in builtin[:10]} == with_rare
    for (_, a), (_, b) in zip(ours, builtin, strict=True):
        assert a == pytest.approx(b, rel=0.35)


def test_column_weights_apply(db):
    add_session(db, "w", [("user", "東京 tower"), ("user", "plain tower")])
    ensure_rank_function(db)
    even = dict(scores(db, "hs_bm25(messages_fts, 1.0, 1.0)", '"tower"'))
    heavy = dict(scores(db, "hs_bm25(messages_fts, 5.0, 1.0)", '"tower"'))
    assert all(heavy[k] < even[k] for k in even)


def test_registration_is_idempotent(db):
    assert ensure_rank_function(db) == ensure_rank_function(db) == "hs_bm25"
