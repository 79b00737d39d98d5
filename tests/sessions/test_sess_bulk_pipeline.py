"""The bulk loader's pipeline: a small first batch, then full ones; WAL checkpoints off the parser."""

from __future__ import annotations

import json
import os
import threading
import time

from hermes_store.db import Database
from hermes_store.sessions import loader as loader_mod
from hermes_store.sessions.checkpointer import BackgroundCheckpointer
from hermes_store.sessions.loader import BulkLoader


def _write_sessions(root, files: int, per_file: int):
    root.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        lines = [{"role": "session_meta", "model": "m", "platform": "cli"}] + [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} of file {f} word{i % 7}"}
            for i in range(per_file)]
        (root / f"20260301_0000{f:02d}_abc{f:03d}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return root


def test_first_batch_is_small_then_batches_grow_to_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(loader_mod, "FIRST_BATCH", 10)
    corpus = _write_sessions(tmp_path / "s", files=3, per_file=150)
    with Database(tmp_path / "store.db") as db:
        loader = BulkLoader(db, batch_messages=100)
        commits: list[int] = []
        committed = loader._committed
        loader._committed = lambda added, sessions: (commits.append(added), committed(added, sessions))[1]
        summary = loader.run([corpus])
        assert summary.messages_added == 450
        assert commits[:4] == [10, 40, 100, 100]  # 10, then 4x, capped at batch_messages
        assert sum(commits) == 450
        assert db.scalar("SELECT COUNT(*) FROM messages") == 450
        assert db.scalar("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'word3'") == 63


def test_checkpoints_run_on_their_own_thread_while_loading(tmp_path, monkeypatch):
    threads: list[str] = []
    checkpoint = Database.checkpoint

    def spy(self: Database) -> None:
        threads.append(threading.current_thread().name)
        checkpoint(self)

    monkeypatch.setattr(Database, "checkpoint", spy)
    monkeypatch.setattr(loader_mod, "FIRST_BATCH", 50)
    corpus = _write_sessions(tmp_path / "s", files=4, per_file=100)
    with Database(tmp_path / "store.db") as db:
        summary = BulkLoader(db, batch_messages=50).run([corpus])
        assert summary.messages_added == 400
    background = [name for name in threads if name == "hermes-store-checkpoint"]
    assert background  # requests that come while one runs are merged into the next
    assert threads.count(threading.current_thread().name) == 1  # the parser's: only the last batch, at close


def test_background_checkpointer_copies_committed_frames_into_the_file(tmp_path):
    path = tmp_path / "store.db"
    with Database(path) as db:
        db.execute("PRAGMA wal_autocheckpoint=0")
        db.execute("CREATE TABLE t(x)")
        with db.write():
            db.executemany("INSERT INTO t VALUES (?)", [("x" * 1000,)] * 2000)
        before = os.path.getsize(path)
        checkpointer = BackgroundCheckpointer(path)
        checkpointer.request()
        deadline = time.monotonic() + 30
        while checkpointer.runs == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        checkpointer.close()  # a request not started yet is dropped: the caller checkpoints after it
        assert checkpointer.runs == 1
        assert os.path.getsize(path) > before + 1_000_000  # the 2 MB now in the database file
        assert db.scalar("SELECT COUNT(*) FROM t") == 2000
