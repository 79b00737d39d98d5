"""Issue 14 points 7-8: searches are bounded in time (inside SQLite) and in parser depth.

A store of 30,000 messages and 3,000 facts (built with SQL for speed) stands in for the
200k-message store of the issue; the budget is what bounds the time, whatever the size.
"""

from __future__ import annotations

import json
import random
import string
import time

import pytest
from click.testing import CliRunner

from hermes_store.budget import bounded_query, query_budget
from hermes_store.cli import cli
from hermes_store.facts.store import FactStore
from hermes_store.query import MAX_DEPTH, compile_query, run_match
from hermes_store.tools import handle_tool_call

MESSAGES = 30_000
ALPHABET_PREFIXES = " OR ".join(f"{c}*" for c in string.ascii_lowercase)


@pytest.fixture(scope="module")
def big_home(tmp_path_factory):
    from hermes_store.home import Home

    home = Home(tmp_path_factory.mktemp("bounds") / "home").ensure()
    rng = random.Random(14)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9))) for _ in range(5000)]
    db = home.open_db()
    with db.write():
        db.executemany("INSERT INTO sessions (id, origin_format, source, title, started_at) VALUES (?, 'live', 'cli', ?, ?)",
                       [(f"s{i}", f"session {i}", 1.7e9 + i) for i in range(300)])
        db.executemany("INSERT INTO messages (session_id, seq, role, content, timestamp) VALUES (?, ?, ?, ?, ?)",
                       [(f"s{i % 300}", i // 300, "user" if i % 2 else "assistant",
                         "common " + " ".join(rng.choice(words) for _ in range(30)), 1.7e9 + i)
                        for i in range(MESSAGES)])
    db.close()
    with FactStore(home) as store:
        for i in range(300):
            store.db.execute("INSERT INTO facts (content, category, tags, trust_score) VALUES (?, 'general', '', 0.5)",
                             (f"fact {i} common " + " ".join(rng.choice(words) for _ in range(12)),))
    return home


def _timed(home, name, args, **options):
    started = time.monotonic()
    out = json.loads(handle_tool_call(name, args, home=home, **options))
    return out, time.monotonic() - started


def test_short_prefixes_are_bounded(big_home):
    plan = compile_query(ALPHABET_PREFIXES)
    assert "*" not in (plan.strict or "") and "shorter than 3 characters" in plan.note
    plan = compile_query("alpha* bravo* charlie* delta* echo* foxtrot*")
    assert (plan.strict or "").count("*") == 4 and "more than 4 prefix" in plan.note
    for name, args in (("recall", {"query": ALPHABET_PREFIXES}), ("session_search", {"query": ALPHABET_PREFIXES}),
                       ("fact_store", {"action": "search", "query": ALPHABET_PREFIXES})):
        out, seconds = _timed(big_home, name, args)
        assert out["success"] is not False, out
        assert seconds < 6.0, (name, seconds)


def test_time_budget_interrupts_inside_sqlite_with_a_note(big_home):
    db = big_home.open_db()
    calls = []

    def fetch(expression, limit):  # a deliberately expensive statement: a recursive count
        calls.append(expression)
        return db.query("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 50000000) "
                        "SELECT count(*) AS c FROM n")

    started = time.monotonic()
    with query_budget(0.2):
        outcome = run_match(fetch, "common words", 10)
    elapsed = time.monotonic() - started
    db.close()
    assert elapsed < 1.5 and calls
    assert outcome.rows == [] and "0.2 s time budget" in outcome.note and "partial" in outcome.note


def test_tool_and_cli_searches_return_partial_results_with_a_note(big_home, monkeypatch):
    # a tiny budget forces the interruption on a real search over 30k messages
    query = "common OR " + " OR ".join(f"word{i}" for i in range(40))
    out, seconds = _timed(big_home, "session_search", {"query": query, "role_filter": "tool"},
                          query_budget=0.0005)
    assert seconds < 3.0
    assert "time budget" in out.get("query_note", ""), out
    monkeypatch.setenv("HERMES_STORE_CLI_QUERY_BUDGET", "0.0005")
    result = CliRunner().invoke(cli, ["--home", str(big_home.root), "sessions", "search", query,
                                      "--role", "tool", "--json"])
    assert result.exit_code == 0 and "time budget" in json.loads(result.stdout)["query_note"]
    recalled, _ = _timed(big_home, "recall", {"query": query}, query_budget=0.0005)
    notes = json.dumps(recalled.get("query_notes", {}))
    assert recalled["success"] is True and "time budget" in notes, recalled


def test_budget_does_not_touch_follow_up_statements(big_home):
    db = big_home.open_db()
    with query_budget(0.05), bounded_query():
        pass
    assert db.scalar("SELECT count(*) FROM messages") == MESSAGES  # no stale deadline left behind
    db.close()


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 300, 4000])
def test_deep_parentheses_fall_back_to_literal_words(big_home, depth):
    query = "(" * depth + "common" + ")" * depth
    plan = compile_query(query)
    assert plan.strict == plan.literal and "nested deeper" in plan.note
    for name, args in (("session_search", {"query": query}), ("recall", {"query": query}),
                       ("fact_store", {"action": "search", "query": query})):
        out, _ = _timed(big_home, name, args)
        assert out["success"] is not False and "RecursionError" not in json.dumps(out), (name, out)
    for argv in (["sessions", "search", query], ["recall", query], ["facts", "search", query]):
        result = CliRunner().invoke(cli, ["--home", str(big_home.root), *argv])
        assert result.exit_code == 0 and "Traceback" not in result.output, (argv, result.output[-500:])
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_nested_but_shallow_queries_keep_their_operators():
    query = "(" * MAX_DEPTH + "alpha OR beta" + ")" * MAX_DEPTH
    assert compile_query(query).strict.strip("()") == '"alpha" OR "beta"'
