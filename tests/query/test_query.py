"""query.py: user text -> safe FTS5 expressions, with fallback and relaxation."""

from __future__ import annotations

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_store.query import compile_query, is_query_error, literal_term, run_match
from hermes_store.tokens import cjk_projection, tokenize

DOCS = [
    "run scripts/deploy.sh now",
    "C:\\Users\\bob\\file.txt",
    "TODO: fix the P2.2 bug",
    "ask-codex helps",
    "我喜欢用Python写数据库代码",
    "猫 is cute",
    "email bob@example.com 50% done",
    "snake_case_name here",
    "The quick brown fox",
    "don't panic",
    "東京の天気は晴れです",
    "Café au lait, naïve résumé",
]


@pytest.fixture(scope="module")
def fts():
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(content, cjk, tokenize='unicode61 remove_diacritics 2')")
    for i, doc in enumerate(DOCS, 1):
        conn.execute("INSERT INTO f(rowid, content, cjk) VALUES (?,?,?)", (i, doc, cjk_projection(doc)))
    return conn


def search(conn, text, limit=10):
    def fetch(expr, lim):
        return list(conn.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY rank LIMIT ?", (expr, lim)))

    return run_match(fetch, text, limit)


def hits(conn, text, limit=10):
    return [row[0] for row in search(conn, text, limit).rows]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("scripts/deploy.sh", 1),
        ("deploy.sh", 1),
        ("C:\\Users", 2),
        ("P2.2", 3),
        ("TODO: fix", 3),
        ("ask-codex", 4),
        ("bob@example.com", 7),
        ("50%", 7),
        ("snake_case", 8),
        ("don't", 10),
        ("cafe", 12),
        ("resume", 12),
    ],
)
def test_punctuation_is_literal(fts, query, expected):
    assert expected in hits(fts, query)


@pytest.mark.parametrize(
    ("query", "expected"),
    [("数据库", 5), ("数据", 5), ("猫", 6), ("用Python写", 5), ("python", 5), ("東京", 11), ("天気", 11), ("晴", 11)],
)
def test_cjk_words_of_every_length(fts, query, expected):
    assert expected in hits(fts, query)


def test_cjk_does_not_match_unrelated(fts):
    assert hits(fts, "库数") == []


def test_operators_are_honoured(fts):
    assert hits(fts, '"quick brown"') == [9]
    assert hits(fts, '"brown quick"') == []
    assert set(hits(fts, "quick OR panic")) == {9, 10}
    assert hits(fts, "quick NOT fox") == []
    assert hits(fts, "qui*") == [9]
    assert set(hits(fts, "(quick OR panic) AND fox")) == {9}


def test_lowercase_operator_words_are_plain_words(fts):
    plan = compile_query("cats or dogs")
    assert " OR " not in plan.strict


@pytest.mark.parametrize("query", ["(quick", "NOT fox", "fox AND", "AND OR NOT", ")(", "fox NOT"])
def test_bad_syntax_falls_back_with_note(fts, query):
    outcome = search(fts, query)
    if compile_query(query).empty:
        assert outcome.rows == []
    else:
        assert outcome.note or outcome.mode in ("strict", "relaxed")
    if query in ("(quick", "NOT fox"):
        assert outcome.rows and "literally" in outcome.note


def test_nothing_searchable_is_reported(fts):
    outcome = search(fts, "?? !!")  # punctuation only (emoji are searchable words)
    assert outcome.rows == [] and outcome.mode == "empty" and outcome.note


def test_natural_question_relaxes_to_or(fts):
    outcome = search(fts, "what did the quick cat say about panic?", limit=5)
    assert set(r[0] for r in outcome.rows) >= {9, 10}
    assert outcome.mode == "relaxed" and "matched every word" in outcome.note


def test_strict_hits_come_first(fts):
    outcome = search(fts, "quick brown panic", limit=5)
    assert outcome.rows[0][0] in (9, 10)


def test_engine_rejection_is_retried_literally():
    calls = []

    def fetch(expr, limit):
        calls.append(expr)
        if len(calls) == 1:
            raise apsw.SQLError("SQLError: fts5: syntax error near \"x\"")
        return [(1,)]

    outcome = run_match(fetch, "(quick OR fox)", 5)
    assert outcome.rows == [(1,)] and outcome.mode == "literal" and "literally" in outcome.note


def test_non_query_errors_propagate():
    def fetch(expr, limit):
        raise apsw.SQLError("SQLError: no such table: f")

    with pytest.raises(apsw.SQLError):
        run_match(fetch, "fox", 5)
    assert not is_query_error(apsw.SQLError("no such table: f"))


def test_tokenize_matches_unicode61_split():
    assert tokenize("scripts/deploy.sh") == ["scripts", "deploy", "sh"]
    assert tokenize("emoji🎉here") == ["emoji", "here"]
    assert literal_term("!!!") is None


def test_projection_none_without_cjk():
    assert cjk_projection("plain English") is None
    assert cjk_projection(None) is None
    proj = cjk_projection("用Python写")
    assert "Python" in proj.split() and "用" in proj.split()


QUERY_ALPHABET = st.sampled_from(
    list("abcXYZ019 \t\n\"'()*:-/\\.%_@#^$+~!?,;{}[]<>|&=`")
    + ["AND", "OR", "NOT", "NEAR", "数据", "猫", "東京", "🎉", "\x00", "\x07", "\ud800", "é", "ﬁ", "Ｐ"]
)


@settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(QUERY_ALPHABET, max_size=20).map("".join) | st.text(max_size=40))
def test_fuzz_never_raises(fts, text):
    outcome = search(fts, text)
    assert isinstance(outcome.rows, list)


@pytest.fixture(scope="module")
def issue_fts():
    """Documents for the regressions named in the session-search issue (Hermes #20494, #54242, ...)."""
    docs = ["广西桂林旅游攻略", "修改youer服务端", "Москва и 東京 mixed", "emoji 🚀 launch", "a-b c.d e_f"]
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(content, cjk, tokenize='porter unicode61 remove_diacritics 2')")
    for i, doc in enumerate(docs, 1):
        conn.execute("INSERT INTO f(rowid, content, cjk) VALUES (?,?,?)", (i, doc, cjk_projection(doc)))
    return conn


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("广西 OR 桂林", {1}),  # 2-character tokens joined by OR (#20494)
        ("youer", {2}),  # Latin glued to CJK (#54242)
        ("修改youer服务端", {2}),
        ("服务", {2}),
        ("Москва 東京", {3}),  # mixed scripts
        ("🚀 launch", {4}),  # the emoji matched through the projection
        ("a-b", {5}),
        ("c.d", {5}),
        ("e_f", {5}),
    ],
)
def test_issue_regressions(issue_fts, query, expected):
    assert set(hits(issue_fts, query)) == expected


def test_highlight_excerpt_marks_words_and_cjk():
    from hermes_store.excerpts import highlight_excerpt

    assert highlight_excerpt("Run deploy.sh now", "DEPLOY") == "Run >>>deploy<<<.sh now"
    assert ">>>数据库<<<" in highlight_excerpt("我们的数据库很大", "数据库")
    long_text = "x " * 200 + "needle" + " y" * 200
    excerpt = highlight_excerpt(long_text, "needle", width=40)
    assert ">>>needle<<<" in excerpt and excerpt.startswith("...") and excerpt.endswith("...")
    assert highlight_excerpt("nothing here", "absent") == "nothing here"


def test_highlight_excerpt_marks_whole_words_the_index_matched():
    """A query word is marked where the index's porter/unicode61 tokens match it: whole words,
    stems and folded diacritics, never a piece of another word (a one-letter ``I`` used to
    mark every ``i`` of the excerpt)."""
    from hermes_store.excerpts import highlight_excerpt
    from hermes_store.query import compile_query

    plan = compile_query("what pet do I have")
    assert highlight_excerpt("Done, I edited the crontab instead.", plan) == \
        "Done, >>>I<<< edited the crontab instead."
    assert ">>>" not in highlight_excerpt("pytest fails with ImportError", plan)
    assert highlight_excerpt("I was editing the Crontabs at the café", "edit crontab cafe") == \
        "I was >>>editing<<< the >>>Crontabs<<< at the >>>café<<<"
    assert highlight_excerpt("deployment of the deployer", compile_query("deploy*")) == \
        ">>>deployment<<< of the >>>deployer<<<"
    assert highlight_excerpt("naïve señor 数据库", "naive senor") == ">>>naïve<<< >>>señor<<< 数据库"


def test_highlight_excerpt_marks_a_prefix_match_however_it_is_accented():
    """``deploy*`` finds ``déploiement`` (the index stems the prefix to ``deploi``, which the folded
    word begins with): the fallback highlighter, and the terminal's bold for facts, mark it too."""
    from hermes_store.cli.common import bold_terms
    from hermes_store.excerpts import highlight_excerpt

    for query in ("deploy*", "Deploy*", "déploi*", "DÉPLOI*"):
        assert highlight_excerpt("le déploiement est fini", query) == "le >>>déploiement<<< est fini"
    assert highlight_excerpt("we deploy the deployer", "deploy*") == "we >>>deploy<<< the >>>deployer<<<"
    assert highlight_excerpt("Redéploiement demain", "deploy*") == "Redéploiement demain"
    assert bold_terms("le déploiement est fini", "deploy*") != "le déploiement est fini"
