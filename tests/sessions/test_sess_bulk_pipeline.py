"""The bulk loader's pipeline: a small first batch (the writer thread starts at once), then full ones."""

from __future__ import annotations

import json

from hermes_store.db import Database
from hermes_store.sessions import loader as loader_mod
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
