"""Red team (issue 14 points 7-8, 11): hostile queries through every door stay inside their bound.

Each attack runs in a child process with a hard timeout (a hang fails the test instead
of hanging the suite): deep parentheses (every door), 10,000-term queries, a thousand
prefixes, ``NEAR(...)`` with a huge distance, column filters, ``^`` and ``*`` alone,
unbalanced quotes and multi-megabyte query strings, through the tools, the CLI, the
provider prefetch and ``recall``. A reply must come back (results, a ``query_note`` or a
clear error), never a traceback.
"""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
import textwrap
import time

import pytest

from hermes_store.home import Home

LIMIT_S = 20.0  # per attack, well above the tool budget; a hang or a blow-up exceeds it
DEEP = "(" * 5000 + "a" + ")" * 5000
ATTACKS = {
    "deep_parens": DEEP,
    "deep_not": "NOT " * 3000 + "a",
    "deep_mixed": "(a OR " * 2000 + "b" + ")" * 2000,
    "ten_k_terms": " ".join(f"w{i}" for i in range(10_000)),
    "ten_k_or": " OR ".join(f"w{i}" for i in range(10_000)),
    "prefix_alphabet": " OR ".join(f"{a}{b}*" for a in string.ascii_lowercase for b in string.ascii_lowercase[:8]),
    "near_huge": "NEAR(common alpha beta gamma, 2147483647)",
    "near_nested": "NEAR(" * 200 + "a b" + ", 5)" * 200,
    "column_filter": "content: common OR role: user OR {content role}: x",
    "caret": "^common ^ ^^",
    "star_alone": "* ** *",
    "quote_unbalanced": '"common alpha' + '"' * 1001,
    "operators_only": "AND OR NOT NEAR ( ) AND",
    "multi_mb": "common " * 400_000,
    "nul_and_controls": "common\x00\x1b[2J\u202e alpha",
}
WORKER = textwrap.dedent("""
    import json, sys, time
    from hermes_store.home import Home
    door, home, query = sys.argv[1], sys.argv[2], sys.stdin.read()
    start = time.monotonic()
    if door == "tool_recall":
        from hermes_store.tools import handle_tool_call
        out = handle_tool_call("recall", {"query": query}, home=home)
    elif door == "tool_session_search":
        from hermes_store.tools import handle_tool_call
        out = handle_tool_call("session_search", {"query": query}, home=home)
    elif door == "tool_fact_search":
        from hermes_store.tools import handle_tool_call
        out = handle_tool_call("fact_store", {"action": "search", "query": query}, home=home)
    elif door == "recall":
        from hermes_store.recall import recall
        out = json.dumps(recall(query, home=Home(home)).to_dict())
    elif door == "prefetch":
        from hermes_store.providers.activation import build_memory_manager
        manager, _ = build_memory_manager(Home(home), session_id="bounds")
        out = manager.prefetch_context(query)
        manager.shutdown_all()
    print(json.dumps({"seconds": time.monotonic() - start, "chars": len(out), "head": out[:300]}))
""")
DOORS = ["tool_recall", "tool_session_search", "tool_fact_search", "recall", "prefetch"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Home:
    home = Home(tmp_path_factory.mktemp("rtbounds") / "home").ensure()
    home.config_path.write_text("memory:\n  provider: holographic_store\n", encoding="utf-8")
    rng = random.Random(7)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 8))) for _ in range(3000)]
    db = home.open_db()
    with db.write():
        db.executemany("INSERT INTO sessions (id, origin_format, source, title, started_at) VALUES (?, 'live', 'cli', ?, ?)",
                       [(f"s{i}", f"session {i}", 1.7e9 + i) for i in range(100)])
        db.executemany("INSERT INTO messages (session_id, seq, role, content, timestamp) VALUES (?, ?, ?, ?, ?)",
                       [(f"s{i % 100}", i // 100, "user" if i % 2 else "assistant",
                         "common alpha " + " ".join(rng.choice(words) for _ in range(25)), 1.7e9 + i)
                        for i in range(8000)])
    from hermes_store.facts.store import FactStore

    facts = FactStore(db)
    for i in range(200):
        facts.add_fact(f"common fact {i} " + " ".join(rng.choice(words) for _ in range(8)), "general", "")
    db.close()
    return home


def _attack(store: Home, door: str, query: str) -> dict:
    env = {**os.environ, "HERMES_HOME": str(store.root)}
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-c", WORKER, door, str(store.root)], input=query.encode(),
                              capture_output=True, timeout=LIMIT_S, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{door}: no reply within {LIMIT_S}s")
    assert proc.returncode == 0, (door, proc.stderr.decode(errors="replace")[-2000:])
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")[-2000:]
    reply = json.loads(proc.stdout)
    reply["wall"] = time.monotonic() - start
    return reply


FAST = ["deep_parens", "ten_k_or", "near_huge", "multi_mb"]


@pytest.mark.parametrize("attack", FAST)
@pytest.mark.parametrize("door", DOORS)
def test_attack_through_every_door_is_bounded(store, door, attack):
    reply = _attack(store, door, ATTACKS[attack])
    assert reply["seconds"] < 10.0, reply
    if door.startswith("tool_"):
        assert reply["head"].startswith("{"), reply  # a JSON reply (results, a note or an error)


@pytest.mark.slow
@pytest.mark.parametrize("attack", sorted(set(ATTACKS) - set(FAST)))
@pytest.mark.parametrize("door", DOORS)
def test_every_other_attack_through_every_door_is_bounded(store, door, attack):
    reply = _attack(store, door, ATTACKS[attack])
    assert reply["seconds"] < 10.0, reply


CLI_ATTACKS = ["deep_parens", "ten_k_or", "near_huge", "column_filter", "star_alone", "caret", "deep_not"]
CLI_FAST = ["deep_parens", "ten_k_or"]


@pytest.mark.parametrize("attack", [a if a in CLI_FAST else pytest.param(a, marks=pytest.mark.slow)
                                    for a in CLI_ATTACKS])
@pytest.mark.parametrize("argv", [["recall"], ["sessions", "search"], ["facts", "search"]],
                         ids=["recall", "sessions-search", "facts-search"])
def test_cli_attacks_are_bounded_and_never_trace_back(store, argv, attack):
    query = ATTACKS[attack][:100_000]  # an argv string is capped by the OS at 128 KiB
    env = {**os.environ, "HERMES_HOME": str(store.root)}
    try:
        proc = subprocess.run([sys.executable, "-c", "from hermes_store.cli import main; main()", "--home",
                               str(store.root), *argv[:2], query, *argv[2:]], capture_output=True,
                              timeout=LIMIT_S, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{argv} {attack}: no reply within {LIMIT_S}s")
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")[-2000:]
    assert proc.returncode in (0, 1, 2), proc.stderr
