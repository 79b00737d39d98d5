"""Several writers on one store: a check that meets another process's write lock waits a
bounded time and says the store was busy; it never reads the lock as damage.

Found by an audit running `hermes-store doctor` on a SQLite home while another process held
the write lock (a `sessions index` run, a gateway writing memory): every full-text check
printed `FAIL fts:messages_fts: database is locked` (exit 1), as if the index were corrupt,
and `doctor --fix` went on to rebuild the index for it. FTS5's `integrity-check` is a write
statement; it ran outside the store's bounded write wait, and its BusyError was returned as
the index's problem.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner
from filelock import FileLock

from hermes_store.builtin.storage import open_builtin_storage
from hermes_store.cli import cli
from hermes_store.db import DatabaseError
from hermes_store.facts.store import FactStore, FactStoreError
from hermes_store.home import Home
from hermes_store.query import compile_query
from hermes_store.sessions import maintenance
from hermes_store.sessions.loader import BulkLoader
from hermes_store.sessions.storage import open_session_storage


@pytest.fixture
def locked_store(home, monkeypatch):
    """A SQLite store with a fact and a memory entry, and another connection holding its write
    lock until the test ends (as a `sessions index` run in another process would)."""
    monkeypatch.setenv("HERMES_STORE_BUSY_TIMEOUT", "0.3")
    with FactStore(home) as facts:
        facts.add_fact("the gateway fleet shares one store", "general", "")
    other = apsw.Connection(str(home.db_path))
    other.execute("BEGIN IMMEDIATE")
    yield home
    other.execute("ROLLBACK")
    other.close()


def test_doctor_reports_a_busy_store_not_a_broken_index(locked_store):
    result = CliRunner().invoke(cli, ["--home", str(locked_store.root), "doctor", "--json"])
    checks = {c["check"]: c for c in json.loads(result.stdout)["checks"]}
    fts = [c for name, c in checks.items() if name.startswith("fts:")]
    assert fts, checks
    for check in fts:
        # the bounded wait is named, with what to do; never a bare "database is locked"
        assert "stayed busy for 0.3s" in check["problem"], check
        assert not check.get("fixed")
    assert result.exit_code == 1


def test_a_busy_index_check_raises_instead_of_returning_a_problem(locked_store):
    db = locked_store.open_db()
    try:
        tables = maintenance.fts_tables(db)
        assert tables
        # a returned problem is what `doctor --fix` rebuilds the index for
        with pytest.raises(DatabaseError, match="stayed busy"):
            maintenance.fts_integrity(db, tables[0])
    finally:
        db.close()


def test_the_check_runs_once_the_other_writer_commits(home, monkeypatch):
    monkeypatch.setenv("HERMES_STORE_BUSY_TIMEOUT", "30")
    with FactStore(home) as facts:
        facts.add_fact("the gateway fleet shares one store", "general", "")
    other = apsw.Connection(str(home.db_path))
    other.execute("BEGIN IMMEDIATE")
    db = home.open_db()
    started, results = threading.Event(), []

    def check() -> None:
        started.set()
        results.append([maintenance.fts_integrity(db, t) for t in maintenance.fts_tables(db)])

    worker = threading.Thread(target=check)
    worker.start()
    started.wait(5)
    other.execute("ROLLBACK")  # the other writer finishes: the waiting check goes on
    worker.join(30)
    other.close()
    db.close()
    assert results and all(problem is None for problem in results[0])


def _wait_for_a_lock_wait(url: str, timeout: float = 20.0) -> None:
    """Return once some session of the server waits for a lock (the step the test orders on)."""
    import psycopg

    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            waiting = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                                   " AND pid <> pg_backend_pid()").fetchone()[0]
            if waiting:
                return
            time.sleep(0.01)
    raise AssertionError("the second refresh never waited for the first")


def test_two_gateways_refreshing_one_entry_index_take_turns(tmp_path, pg_store_url):
    """Two processes of one home (a gateway's recall, the MCP server's) rebuild the same entry
    index at once: the second waits for the first, then replaces its rows (it failed with
    UniqueViolation on (home, target, entry_index), and recall reported the memory kind as an
    error)."""
    root = tmp_path / "gateway"
    first_db = Home(root, database_url=pg_store_url).open_db()
    second_db = Home(root, database_url=pg_store_url).open_db()
    first, second = open_builtin_storage(first_db), open_builtin_storage(second_db)
    errors: list[BaseException] = []

    def refresh_from_the_other_process() -> None:
        try:
            second.replace_index("memory", "digest-2", ["the fleet note", "a second note"], 2.0)
        except BaseException as exc:  # noqa: BLE001  (handed to the test's assertion)
            errors.append(exc)

    try:
        with first.transaction():
            first.replace_index("memory", "digest-1", ["the fleet note", "a second note"], 1.0)
            other = threading.Thread(target=refresh_from_the_other_process)
            other.start()
            _wait_for_a_lock_wait(pg_store_url)  # the second is inside its refresh, waiting
        other.join(30)
        assert not other.is_alive()
        assert errors == []
        assert first.indexed_hash("memory") == "digest-2"
        hits, _ = first.search_index(compile_query("note"), ("memory",), 10)
        assert sorted(int(h["entry_index"]) for h in hits) == [1, 2]  # each entry once
    finally:
        first_db.close()
        second_db.close()


def _race_after_lookup(stores: list[FactStore], method: str, key: str) -> None:
    """Make each store's lookup ``method`` of ``key`` wait, once it has looked, until every
    store has looked too: both then act on what they saw before the other wrote."""
    all_looked = threading.Barrier(len(stores), timeout=20)
    for store in stores:
        lookup = getattr(store, method)

        def racing_lookup(value, _lookup=lookup):
            found = _lookup(value)
            if value == key:
                all_looked.wait()
            return found

        setattr(store, method, racing_lookup)


def test_two_gateways_naming_a_new_entity_at_once_both_store_their_fact(tmp_path, pg_store_url):
    """Two hosts add different facts about the same new person at once: both facts are stored,
    linked to one entity (the second failed with UniqueViolation on entities.name_key and its
    fact was lost)."""
    stores = [FactStore(Home(tmp_path / f"gateway{n}", database_url=pg_store_url)) for n in range(2)]
    _race_after_lookup(stores, "resolve_entity", "Quentin Zorblax")  # each looks the new entity up first
    replies: list[dict] = []
    failures: list[BaseException] = []

    def add(store: FactStore, n: int) -> None:
        try:
            replies.append(store.add_fact(f"Quentin Zorblax fixed printer {n}", "general", ""))
        except BaseException as exc:  # noqa: BLE001  (the raw UniqueViolation this test is about)
            failures.append(exc)

    threads = [threading.Thread(target=add, args=(store, n)) for n, store in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    try:
        assert failures == []
        assert sorted(r["status"] for r in replies) == ["added", "added"]
        probed = stores[0].probe("quentin zorblax")
        assert sorted(r["fact_id"] for r in probed) == sorted(r["fact_id"] for r in replies)
        assert [e["name"] for e in stores[0].list_entities(10)].count("Quentin Zorblax") == 1
    finally:
        for store in stores:
            store.close()


def _transcript(folder, name: str, text: str):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    path.write_text(json.dumps({"role": "session_meta", "model": "m", "platform": "cli",
                                "timestamp": "2026-01-01T00:00:00Z"}) + "\n"
                    + json.dumps({"role": "user", "content": text, "timestamp": "2026-01-01T00:00:01Z"}) + "\n",
                    encoding="utf-8")
    return path


def test_an_indexing_run_that_must_wait_says_so_then_indexes(home, engine, tmp_path):
    """A second indexing run (another gateway's `sessions index`, an agent's state.db sync)
    waited up to an hour without a word; it now says once who holds the store and how long it
    waits, and indexes when the first run is done. Ordered: the holder lets go when told."""
    source = _transcript(tmp_path / "src", "20260101_000000_fleet01", "the zebra gateway transcript")
    holder_db, runner_db = home.open_db(), home.open_db()
    holding, release = threading.Event(), threading.Event()

    def first_run() -> None:
        with open_session_storage(holder_db).index_run_lock(60):
            holding.set()
            release.wait(60)

    holder = threading.Thread(target=first_run)
    holder.start()
    notes: list[str] = []

    def told(line: str) -> None:
        notes.append(line)
        release.set()  # the first run finishes once the second has said it waits

    try:
        assert holding.wait(30)
        summary = BulkLoader(runner_db, on_wait=told).run([source])
    finally:
        release.set()
        holder.join(30)
        holder_db.close()
        runner_db.close()
    assert len(notes) == 1
    assert "another `sessions index` run" in notes[0] and "waiting for it to finish (at most 3600 s" in notes[0]
    assert summary.sessions_added == 1 and summary.errors == []


def test_sessions_index_prints_the_wait_on_stderr(home, tmp_path):
    """The command line shows the note while it waits (stderr), before any summary."""
    source = _transcript(tmp_path / "src", "20260101_000000_fleet02", "the zebra gateway transcript")
    lock = FileLock(str(home.db_path) + ".index.lock")
    lock.acquire()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("HERMES_STORE_DATABASE_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "hermes_store.cli", "--home", str(home.root), "sessions",
                             "index", str(source)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:  # the run blocks until it is let go: its first line must come while it waits
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        first = proc.stderr.readline() if ready else ""
    finally:
        lock.release()
    out, err = proc.communicate(timeout=60)
    assert first.startswith("note: ") and "index.lock: another `sessions index` run" in first
    assert proc.returncode == 0, err
    assert "1 session and 1 message added" in out


def test_two_gateways_giving_two_facts_one_content_at_once(tmp_path, pg_store_url):
    """Two hosts edit two facts to the same text at once: one wins, the other is told which fact
    has the content, as on SQLite (it got a raw UniqueViolation on facts_content_key)."""
    stores = [FactStore(Home(tmp_path / f"gateway{n}", database_url=pg_store_url)) for n in range(2)]
    ids = [stores[0].add_fact(f"fact number {n}")["fact_id"] for n in range(2)]
    _race_after_lookup(stores, "find_by_content", "the one content")  # each finds the content free first
    outcomes: list[object] = []

    def edit(store: FactStore, fact_id: int) -> None:
        try:
            outcomes.append(store.update_fact(fact_id, content="the one content"))
        except BaseException as exc:  # noqa: BLE001  (compared below)
            outcomes.append(exc)

    threads = [threading.Thread(target=edit, args=(store, fact_id)) for store, fact_id in zip(stores, ids, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    try:
        assert outcomes.count(True) == 1, outcomes
        refused = next(o for o in outcomes if o is not True)
        winner = stores[0].storage.fact_id_by_content("the one content")
        assert isinstance(refused, FactStoreError)
        assert str(refused) == f"another fact (#{winner}) already has this content"
        loser = next(i for i in ids if i != winner)
        assert stores[0].get_fact(loser)["content"].startswith("fact number")  # left as it was
    finally:
        for store in stores:
            store.close()


def test_a_queue_another_process_replayed_first_is_not_an_error(home, monkeypatch):
    """Two processes of one home write memory after provenance was queued (the store was busy):
    both see the queue; the first replays and removes it; the second, waiting on the queue's
    lock meanwhile, then read a file that was gone: 'memory provenance unavailable (record:
    FileNotFoundError ...)' and its own record queued again instead of written."""
    from hermes_store.builtin import provenance as prov

    first, second = prov.Provenance(home), prov.Provenance(home)
    first.record("memory", [], ["queued while busy"], [prov.Event("add", new_text="queued while busy")],
                 origin="tool")  # the store exists now
    queued = {"target": "memory", "before": ["queued while busy"],
              "after": ["queued while busy", "second entry"],
              "events": [{"action": "add", "old_text": None, "new_text": "second entry"}],
              "origin": "tool", "session_id": "", "restored_from": None, "stamp": 2.0}
    assert first._enqueue(queued)
    real_locked, at_the_lock = prov.locked, threading.Event()

    def locked(path):  # the second writer has seen the queue and now waits on its lock
        if threading.current_thread().name == "second-writer":
            at_the_lock.set()
        return real_locked(path)

    monkeypatch.setattr(prov, "locked", locked)
    ids: list[list[int]] = []
    with real_locked(first.pending_path):
        writer = threading.Thread(target=lambda: ids.append(second.record(
            "memory", ["queued while busy", "second entry"], ["queued while busy", "second entry", "third"],
            [prov.Event("add", new_text="third")], origin="tool")), name="second-writer")
        writer.start()
        assert at_the_lock.wait(20)
        with first._database().transaction():  # the first process replays the queue, as _write does
            for item in prov._read_queue(first.pending_path):
                first._apply_record(first._database(), item)
        first.pending_path.unlink()
    writer.join(30)
    try:
        assert ids and ids[0], second.last_error  # recorded now, not queued again
        assert not first.pending_path.exists()
        added = [e["new_text"] for e in first.history() if e["action"] == "add"]
        assert sorted(added) == ["queued while busy", "second entry", "third"]  # each once
    finally:
        first.close()
        second.close()


FLEET_WORKER = Path(__file__).with_name("fleet_worker.py")
FLEET_ROUNDS = 12


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_fleet_of_gateways_loses_nothing_and_duplicates_nothing(tmp_path, request, kind, monkeypatch):
    """Four gateway processes at once on one store (on PostgreSQL two homes of two processes
    each, on SQLite one home): memory entries through the memory tool, facts of their own, the
    same facts, facts naming the same new entities, overlapping `sessions index` runs of one
    folder, searches. Afterwards every acknowledged write is there once, MEMORY.md and its
    history agree, no tool call failed, and `doctor` passes."""
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
    url = request.getfixturevalue("pg_store_url") if kind == "postgresql" else None
    homes = ([tmp_path / "a", tmp_path / "a", tmp_path / "b", tmp_path / "b"] if url
             else [tmp_path / "a"] * 4)
    shared = tmp_path / "shared"
    shared.mkdir()
    for root in set(homes):
        Home(root, database_url=url).ensure()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    procs = [subprocess.Popen([sys.executable, str(FLEET_WORKER), str(root), url or "-", str(FLEET_ROUNDS),
                               str(tmp_path / f"g{n}.jsonl"), f"g{n}", str(shared)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n, root in enumerate(homes)]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
    records = [json.loads(line) for n in range(4) for line in (tmp_path / f"g{n}.jsonl").read_text().splitlines()]
    assert [r for r in records if r["kind"] == "error"] == []
    assert sum(r["kind"] == "done" for r in records) == 4
    db = Home(homes[0], database_url=url).open_db()
    try:
        facts = FactStore(db)
        for root in set(homes):  # the file and its history agree with what was acknowledged
            wanted = sorted(r["text"] for r in records if r["kind"] == "memory"
                            and homes[int(r["who"][1:])] == root)
            text = (root / "memories" / "MEMORY.md").read_text(encoding="utf-8")
            assert sorted(e.strip() for e in text.split("\n§\n") if e.strip()) == wanted
            history = json.loads(CliRunner().invoke(cli, ["--home", str(root), *(["--database-url", url] if url else []),
                                                           "memory", "history", "--json", "--limit", "1000"]).stdout)
            assert sorted(e["new_text"] for e in history if e["action"] == "add") == wanted
        own = [r for r in records if r["kind"] in ("fact", "entity_fact")]
        assert all(r["status"] == "added" for r in own) and len({r["id"] for r in own}) == len(own)
        shared_ids = {}
        for r in (r for r in records if r["kind"] == "shared"):
            shared_ids.setdefault(r["id"], []).append(r["status"])
        assert len(shared_ids) == FLEET_ROUNDS  # one fact per content, added once
        assert all(sorted(s) == ["added", "exists", "exists", "exists"] for s in shared_ids.values())
        assert facts.count() == len(own) + FLEET_ROUNDS
        for n in range(FLEET_ROUNDS):  # one entity per name, linked to the four facts naming it
            assert len(facts.probe(f"Quentin Zorblax{n}")) == 4
        stats = json.loads(CliRunner().invoke(cli, ["--home", str(homes[0]), *(["--database-url", url] if url else []),
                                                    "sessions", "stats", "--json"]).stdout)
        assert stats["sessions"] == stats["messages"] == 4 * FLEET_ROUNDS  # every transcript once
    finally:
        db.close()
    doctor = CliRunner().invoke(cli, ["--home", str(homes[0]), *(["--database-url", url] if url else []), "doctor"])
    assert doctor.exit_code == 0, doctor.stdout
