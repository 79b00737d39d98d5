"""Issue 14 point 16: the -wal/-shm files deleted while a writer runs lose nothing it acknowledged."""

from __future__ import annotations

import os
import subprocess
import sys

from hermes_store.db import Database
from hermes_store.facts.store import FactStore

WRITER = """
import os, sys
from hermes_store.facts.store import FactStore
from hermes_store.home import Home
home = Home(sys.argv[1])
with FactStore(home) as store:
    store.add_fact("the first fact before the deletion")
    print("ready", flush=True)
    sys.stdin.readline()                      # the test deletes -wal and -shm now
    for i in range(10):
        store.add_fact(f"fact {i} written after the WAL vanished")
    print(store.db.wal_vanished, flush=True)
    sys.stdin.readline()                      # another process reads meanwhile
"""


def test_writes_after_the_wal_vanished_are_not_lost(home):
    FactStore(home).close()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(home.root)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "ready"
    for suffix in ("-wal", "-shm"):
        os.remove(f"{home.db_path}{suffix}")
    writer.stdin.write("go\n")
    writer.stdin.flush()
    rescued = int(writer.stdout.readline())
    with FactStore(home) as reader:  # a new connection sees every acknowledged write at once
        seen = reader.count()
    writer.stdin.write("done\n")
    writer.stdin.flush()
    writer.wait(timeout=60)
    with Database(home.db_path) as db:
        final = db.scalar("SELECT count(*) FROM facts")
        assert [r[0] for r in db.iter_rows("PRAGMA integrity_check")] == ["ok"]
    assert rescued == 10 and seen == 11 and final == 11
