"""Several hosts (separate homes in separate processes) writing to one PostgreSQL store at once:
every acknowledged write is present, trust arithmetic is exact, and no host saw an error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_store.facts import trust
from hermes_store.facts.store import FactStore
from hermes_store.home import Home
from hermes_store.sessions import SessionIndex

WORKER = Path(__file__).with_name("multihost_worker.py")
SHARED_FACTS = ["the shared staging cluster lives in rack 7", "deploys freeze on Fridays after 3 pm",
                "the on-call rotation changes every Monday"]


def _run_hosts(tmp_path, url, hosts: int, seconds: float) -> list[list[dict]]:
    seed_home = Home(tmp_path / "seed", database_url=url).ensure()
    with FactStore(seed_home) as facts:
        shared = [facts.add_fact(text, "general", "shared")["fact_id"] for text in SHARED_FACTS]
    procs, logs = [], []
    for n in range(hosts):
        home_dir = tmp_path / f"host{n}"
        home_dir.mkdir()
        log = tmp_path / f"host{n}.jsonl"
        logs.append(log)
        procs.append(subprocess.Popen(
            [sys.executable, str(WORKER), str(home_dir), url, str(seconds), str(log),
             ",".join(map(str, shared))], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        out, err = proc.communicate(timeout=seconds + 120)
        assert proc.returncode == 0, err[-2000:]
    return shared, [[json.loads(line) for line in log.read_text().splitlines()] for log in logs]


def _verify(url, shared, records):
    home = Home(Path("/nonexistent-home"), database_url=url)
    flat = [r for host in records for r in host]
    errors = [r for r in flat if r["kind"] == "error"]
    assert errors == [], errors[:3]
    assert all(host and host[-1]["kind"] == "done" for host in records)
    db = home.open_db()
    try:
        index, facts = SessionIndex(db), FactStore(db)
        messages = [r for r in flat if r["kind"] == "message"]
        by_session: dict[str, list[dict]] = {}
        for r in messages:
            by_session.setdefault(r["session_id"], []).append(r)
        for sid, acked in by_session.items():
            stored = {m["seq"]: m for m in index.get_messages(sid)}
            for r in acked:
                assert stored[r["seq"]]["id"] == r["id"] and stored[r["seq"]]["content"] == r["content"]
            assert index.get_session(sid)["message_count"] == len(stored)
        added = [r for r in flat if r["kind"] == "fact"]
        for r in added:
            assert facts.get_fact(r["id"])["content"] == r["content"]
        assert len({r["id"] for r in added}) == len(added)  # no two hosts got the same id
        for fact_id in shared:
            given = [r["action"] for r in flat if r["kind"] == "feedback" and r["id"] == fact_id]
            helpful = given.count("helpful")
            expected = trust.DEFAULT_TRUST + helpful * trust.HELPFUL_DELTA + given.count("unhelpful") * trust.UNHELPFUL_DELTA
            row = facts.get_fact(fact_id)
            assert row["helpful_count"] == helpful
            assert row["trust_score"] == pytest.approx(expected, abs=1e-9)
        searches = [r for r in flat if r["kind"] == "search"]
        assert all(r["count"] >= 1 for r in searches)
        return len(messages), len(added), sum(1 for r in flat if r["kind"] == "feedback")
    finally:
        db.close()


def test_two_hosts_for_a_few_seconds(tmp_path, pg_url):
    shared, records = _run_hosts(tmp_path, pg_url, hosts=2, seconds=4)
    messages, added, feedback = _verify(pg_url, shared, records)
    assert messages >= 6 and added >= 2 and feedback >= 6


@pytest.mark.slow
def test_three_hosts_for_sixty_seconds(tmp_path, pg_url):
    shared, records = _run_hosts(tmp_path, pg_url, hosts=3, seconds=60)
    messages, added, feedback = _verify(pg_url, shared, records)
    print(f"multi-host: 3 hosts x 60 s: {messages} messages, {added} facts, {feedback} feedback, 0 errors")
    assert messages >= 300
