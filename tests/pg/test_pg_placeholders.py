"""``?`` placeholders and ``IN ({marks})`` lists on PostgreSQL (:mod:`hermes_store.pgdb`).

The translator is checked as text (quotes, ``%`` in LIKE patterns, ``?`` inside literals,
comments, dollar quotes) and then against the real server, where a wrong translation
either fails or returns other rows.
"""

from __future__ import annotations

import pytest

from hermes_store.pgdb import PgDatabase
from hermes_store.pgplaceholders import qmark_to_pyformat


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT a FROM t WHERE a = ? AND b = ?", "SELECT a FROM t WHERE a = %s AND b = %s"),
    ("SELECT '?' AS q, ? AS v", "SELECT '?' AS q, %s AS v"),
    ("SELECT 'it''s ?', ?", "SELECT 'it''s ?', %s"),
    ("SELECT * FROM t WHERE name LIKE '50%' AND x = ?", "SELECT * FROM t WHERE name LIKE '50%%' AND x = %s"),
    ("SELECT 7 % ?", "SELECT 7 %% %s"),
    ('SELECT "we?ird" FROM t WHERE a = ?', 'SELECT "we?ird" FROM t WHERE a = %s'),
    ("SELECT E'a\\'?' , ?", "SELECT E'a\\'?' , %s"),
    ("SELECT 1 -- why?\n, ?", "SELECT 1 -- why?\n, %s"),
    ("SELECT /* ? */ ?", "SELECT /* ? */ %s"),
    ("SELECT $$a ? b$$, $x$?$x$, ?", "SELECT $$a ? b$$, $x$?$x$, %s"),
    ("SELECT 'unterminated ?", "SELECT 'unterminated ?"),
])
def test_qmark_translation_leaves_literals_alone(sql, expected):
    assert qmark_to_pyformat(sql) == expected


@pytest.fixture
def pg(pg_url):
    db = PgDatabase(pg_url)
    yield db
    db.close()


def test_portable_calls_bind_values_on_the_server(pg):
    sql = pg.portable
    sql.execute("CREATE TEMP TABLE IF NOT EXISTS ph (k text PRIMARY KEY, v int)")
    sql.execute("DELETE FROM ph")
    sql.executemany("INSERT INTO ph (k, v) VALUES (?, ?)",
                    [("50% off", 1), ("what?", 2), ("it's", 3), ("plain", 4)])
    assert sql.scalar("SELECT v FROM ph WHERE k LIKE '50%' AND v = ?", (1,)) == 1
    assert sql.scalar("SELECT count(*) FROM ph WHERE k = 'what?' AND v > ?", (0,)) == 1
    assert sql.query_one("SELECT k FROM ph WHERE k = ?", ("it's",)) == {"k": "it's"}
    # a value that looks like SQL or a placeholder stays a value
    assert sql.query("SELECT k FROM ph WHERE k = ?", ("x' OR '1'='1",)) == []
    assert sql.scalar("SELECT ? || '%'", ("?%",)) == "?%%"
    assert sql.execute("UPDATE ph SET v = v + ? WHERE v % 2 = 0", (10,)) == 2


def test_query_in_runs_once_per_chunk_in_value_order(pg):
    sql = pg.portable
    rows = sql.query_in("SELECT x FROM generate_series(1, 20) AS x WHERE x IN ({marks}) AND x > ? ORDER BY x",
                        [3, 9, 1, 15, 7], after=(2,), chunk=2)
    assert [r["x"] for r in rows] == [3, 9, 15, 7]  # chunks (3, 9), (1, 15), (7) in turn
    assert sql.query_in("SELECT x FROM generate_series(1, 3) AS x WHERE x IN ({marks})", []) == []
    before = sql.query_in("SELECT x FROM generate_series(1, 5) AS x WHERE x > ? AND x IN ({marks})",
                          [1, 2, 5], before=(1,))
    assert [r["x"] for r in before] == [2, 5]
