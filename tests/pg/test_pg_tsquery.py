"""FTS5 expressions compiled to tsquery: same hits as SQLite's FTS5 on the same messages."""

from __future__ import annotations

import pytest

from hermes_store.db import Database
from hermes_store.pgdb import PgDatabase
from hermes_store.pgquery import Term, TsQueryError, parse_expression, positive_terms, tsquery_sql
from hermes_store.query import compile_query
from hermes_store.tokens import cjk_projection

CORPUS = [
    "deploy the staging server with scripts/deploy.sh tonight",
    "the production deploy failed: permission denied on /etc/nginx",
    "we use PostgreSQL for the shared team memory",
    "Postgres replication lag was 3 seconds",
    "remember: the build uses P2.2 of the toolchain",
    "C:\\Users\\alice\\projects holds the Windows checkout",
    "东京的天气很好，我们明天去京都",
    "我喜欢东京塔",
    "日本語のテキストとEnglish mixed",
    "pick up the dry cleaning on Tuesday",
    "Tuesday standup moved to Wednesday",
    "deployment checklist: backups, migrations, smoke tests",
    "the cat sat on the mat",
    "a deployer role was created for CI",
    "email me at bob@example.com about the ssh key",
    "naive tokenizers split foo_bar into foo and bar",
    "meet at the café near the Crème brûlée stand",
    "the cafe on Main street",
]

QUERIES = [
    "deploy",
    "deploy*",
    "deploy staging",
    '"production deploy"',
    '"deploy failed"',
    "deploy OR tuesday",
    "deploy NOT staging",
    "deploy AND NOT staging",
    "(deploy OR postgres) NOT replication",
    "scripts/deploy.sh",
    "P2.2",
    "C:\\Users",
    "东京",
    "京都",
    "东京塔",
    "天气很好",
    "テキスト",
    "English",
    "tuesday wednesday",
    "dep* tue*",
    '"dry cleaning"*',
    "postgre*",
    "bob@example.com",
    "foo_bar",
    "nothing-matches-this",
    "what happened with the deploy?",
    "(unbalanced",
    "café",
    "cafe",
    "creme brulee",
    '"crème brûlée"',
    "caf*",
    "NOT",
]


@pytest.fixture(scope="module")
def engines(pg_server):
    url = pg_server.create_database("tsquery_parity")
    sqlite = Database(":memory:")
    pg = PgDatabase(url)
    with sqlite.write():
        sqlite.execute("INSERT INTO sessions(id, origin_format) VALUES ('s', 'live')")
        for seq, text in enumerate(CORPUS, start=1):
            sqlite.execute("INSERT INTO messages(id, session_id, seq, role, content, cjk) VALUES (?,?,?,?,?,?)",
                           (seq, "s", seq, "user", text, cjk_projection(text)))
    pg.execute("INSERT INTO sessions(id, origin_format) VALUES ('s', 'live')")
    pg.copy_rows("COPY messages(id, session_id, seq, role, content, cjk) FROM STDIN",
                 ((seq, "s", seq, "user", text, cjk_projection(text)) for seq, text in enumerate(CORPUS, 1)))
    yield sqlite, pg
    pg.close()
    sqlite.close()
    pg_server.drop_database("tsquery_parity")


def _sqlite_hits(db, expression):
    return {r["rowid"] for r in db.query("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", (expression,))}


def _pg_hits(db, expression):
    sql, params = tsquery_sql(expression)
    return {r["id"] for r in db.query(f"SELECT id FROM messages WHERE tsv @@ {sql}", params)}


@pytest.mark.parametrize("text", QUERIES)
def test_every_plan_expression_matches_the_same_messages(engines, text):
    sqlite, pg = engines
    plan = compile_query(text)
    expressions = [e for e in (plan.strict, plan.relaxed, plan.literal) if e]
    for expression in expressions:
        assert _pg_hits(pg, expression) == _sqlite_hits(sqlite, expression), expression


def test_parity_is_not_vacuous(engines):
    sqlite, pg = engines
    assert _pg_hits(pg, compile_query("deploy").strict) == {1, 2}
    assert _pg_hits(pg, compile_query("东京").strict) == {7, 8}
    assert _pg_hits(pg, compile_query("deploy NOT staging").strict) == {2}
    assert _pg_hits(pg, compile_query("dep*").strict) == {1, 2, 12, 14}
    assert _pg_hits(pg, compile_query("cafe").strict) == _pg_hits(pg, compile_query("café").strict) == {17, 18}


def test_terms_travel_as_parameters_never_as_sql(engines):
    _, pg = engines
    hostile = "x'); DROP TABLE messages; --"
    plan = compile_query(f'"{hostile}" OR deploy')
    sql, params = tsquery_sql(plan.strict)
    assert "DROP" not in sql and "'" not in sql.replace("'hermes_search'", "").replace("':*'", "")
    assert sql.count("%s") == len(params)
    assert any("DROP" in p for p in params)
    assert _pg_hits(pg, plan.strict) == {1, 2}
    assert pg.scalar("SELECT count(*) FROM messages") == len(CORPUS)


def test_parse_shapes_and_errors():
    node = parse_expression('("a b" OR "c"*) NOT "d"')
    assert node.kind == "NOT"
    assert positive_terms('("a b" OR "c"*) NOT "d"') == [Term(("a", "b")), Term(("c",), True)]
    for bad in ["", '"unterminated', "bare", '("a"', '"a" OR', 'AND "a"', '""']:
        with pytest.raises(TsQueryError):
            tsquery_sql(bad)
    with pytest.raises(TsQueryError):
        tsquery_sql('"a"', config="x; drop")
