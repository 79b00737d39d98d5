"""One ``sessions index`` run per store at a time, across processes and hosts.

On SQLite the loader's storage holds ``<db>.index.lock``; on PostgreSQL a session-level
advisory lock of the database, so two hosts (separate homes, separate processes) indexing the
same files against one server import every message exactly once, with no errors. A run that
cannot get the lock within its bound fails with a message naming the store (a server URL with
its password masked).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from filelock import FileLock

from hermes_store.cli import cli
from hermes_store.home import Home
from hermes_store.sessions import loader
from hermes_store.sessions.storage import IndexLockTimeout
from hermes_store.sessions.storage_pg import INDEX_RUN_LOCK

SHARED_FILES, EXTRA_FILES, MESSAGES = 24, 3, 40
MAIN = "import sys; from hermes_store.cli import main; sys.argv[0] = 'hermes-store'; main()"


def _transcripts(folder: Path, prefix: str, files: int) -> dict[str, int]:
    """``files`` Hermes JSONL transcripts of ``MESSAGES`` messages; ``session id -> count``."""
    folder.mkdir(parents=True)
    made = {}
    for n in range(files):
        sid = f"20260301_{n:06d}_{prefix}"
        lines = [{"role": "session_meta", "model": "nous/hermes-4", "platform": "cli",
                  "timestamp": "2026-03-01T10:00:00Z"}]
        lines += [{"role": "user" if i % 2 == 0 else "assistant",
                   "content": f"{prefix} file {n} message {i} about the staging cluster",
                   "timestamp": 1772359200 + n * 1000 + i} for i in range(MESSAGES)]
        (folder / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        made[sid] = MESSAGES
    return made


def test_two_hosts_indexing_overlapping_sources_import_every_message_once(tmp_path, pg_store_url):
    shared = _transcripts(tmp_path / "shared", "shared", SHARED_FILES)
    expected = dict(shared)
    procs = []
    for host in ("host_a", "host_b"):
        own = _transcripts(tmp_path / host / "own", host, EXTRA_FILES)
        expected.update(own)
        home = tmp_path / host / "home"
        home.mkdir()
        procs.append(subprocess.Popen(
            [sys.executable, "-c", MAIN, "--home", str(home), "--database-url", pg_store_url,
             "sessions", "index", "--json", str(tmp_path / "shared"), str(tmp_path / host / "own")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    summaries = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]
        summaries.append(json.loads(out))
    assert [s["errors"] for s in summaries] == [[], []]
    total = sum(expected.values())
    # each shared message imported by one host; the other found its files indexed already
    assert sum(s["messages_added"] for s in summaries) == total
    assert sum(s["sessions_added"] for s in summaries) == len(expected)
    with Home(tmp_path / "check", database_url=pg_store_url).ensure().open_db() as db:
        counts = {r["session_id"]: r["n"] for r in db.query(
            "SELECT session_id, count(*) AS n, count(DISTINCT seq) AS seqs FROM messages"
            " GROUP BY session_id HAVING count(*) = count(DISTINCT seq)")}
        assert counts == expected
        assert db.scalar("SELECT count(*) FROM messages") == total
        assert db.scalar("SELECT count(*) FROM messages m JOIN messages o ON o.session_id = m.session_id"
                         " AND o.content = m.content AND o.id <> m.id") == 0


@pytest.fixture
def held_lock(engine, home):
    """The indexing lock of the home's store, held by someone else for the test's duration."""
    if engine == "sqlite":
        home.open_db().close()
        lock = FileLock(str(home.db_path) + ".index.lock")
        lock.acquire()
        yield lock
        lock.release()
        return
    import psycopg

    with psycopg.connect(home.database_url(), autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (INDEX_RUN_LOCK,))
        yield conn


def test_a_run_that_cannot_get_the_lock_fails_naming_the_store(held_lock, engine, home, tmp_path,
                                                               monkeypatch):
    _transcripts(tmp_path / "in", "waiting", 1)
    monkeypatch.setattr(loader, "RUN_LOCK_TIMEOUT", 0.6)
    args = ["--home", str(home.root)]
    if engine == "postgresql":  # a password in the URL (the test server trusts the socket)
        url = home.database_url().replace("postgresql://postgres@", "postgresql://postgres:s3cret@")
        args += ["--database-url", url]
    result = CliRunner().invoke(cli, [*args, "sessions", "index", "--json", str(tmp_path / "in")])
    assert result.exit_code == 1
    assert "another `sessions index` run" in result.stderr and "0.6 s" in result.stderr
    if engine == "postgresql":
        assert "postgres:***@" in result.stderr and "s3cret" not in result.output + result.stderr
    else:
        assert f"{home.db_path}.index.lock" in result.stderr
    with home.open_db() as db:  # nothing was imported while the other run held the lock
        assert db.scalar("SELECT count(*) FROM messages") == 0


def test_the_lock_is_released_after_a_run_and_after_a_failed_one(engine, home, tmp_path, monkeypatch):
    from hermes_store.sessions.storage import open_session_storage

    _transcripts(tmp_path / "in", "again", 2)
    with home.open_db() as db:
        storage = open_session_storage(db)
        with pytest.raises(RuntimeError, match="boom"), storage.index_run_lock(1.0):
            raise RuntimeError("boom")
        with storage.index_run_lock(1.0):  # free again at once
            pass
    monkeypatch.setattr(loader, "RUN_LOCK_TIMEOUT", 1.0)
    for expected in (2 * MESSAGES, 0):  # a second run finds the lock free and the files indexed
        result = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "index", "--json",
                                          str(tmp_path / "in")])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["messages_added"] == expected
    assert issubclass(IndexLockTimeout, TimeoutError)
