"""An agent's read tools never wait on another writer's lock longer than a moment.

A search records the facts it returned (``retrieval_count``): a write. With another process
holding the write lock (a bulk index, another agent's write, a transaction that never ends)
that bookkeeping must give up at once and the read answer anyway. It used to wait the
store's whole write patience: SQLite's busy timeout (30 s) was set on the connection when it
opened, and lowering the Python-side patience left it there; PostgreSQL waited
``lock_timeout`` (30 s). Found driving ``hermes-store mcp``: ``fact_store`` ``search`` took
30 s and ``recall`` 60 s on both engines while a writer held the lock.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from hermes_store.facts import FactStore
from hermes_store.tools import handle_tool_call

HOLD_SQLITE = textwrap.dedent("""
    import sys, time, apsw
    conn = apsw.Connection(sys.argv[1]); conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE facts SET tags = tags")
    print("held", flush=True); time.sleep(600)
""")
HOLD_PG = textwrap.dedent("""
    import sys, time, psycopg
    conn = psycopg.connect(sys.argv[1])
    conn.execute("SELECT fact_id FROM facts FOR UPDATE")
    print("held", flush=True); time.sleep(600)
""")
READS = [("fact_store", {"action": "search", "query": "kiwi"}), ("recall", {"query": "kiwi port"}),
         ("fact_store", {"action": "probe", "entity": "kiwi"})]


@pytest.fixture
def writer_holding_the_lock(engine, home, monkeypatch):
    """A store with one fact, and another process holding a write lock over it."""
    monkeypatch.setenv("HERMES_STORE_BUSY_TIMEOUT", "20")  # a patient writer; reads must not be
    with home.open_db() as db:
        FactStore(db).add_fact("The kiwi service runs on port 8080", "project", "kiwi", entities=["kiwi"])
    if engine == "postgresql":
        script, target = HOLD_PG, os.environ["HERMES_STORE_DATABASE_URL"]
    else:
        script, target = HOLD_SQLITE, str(home.db_path)
    holder = subprocess.Popen([sys.executable, "-c", script, target], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield home
    finally:
        holder.kill()
        holder.wait(timeout=30)


@pytest.mark.parametrize(("tool", "args"), READS, ids=[f"{t}-{a.get('action', '')}" for t, a in READS])
def test_a_read_tool_answers_at_once_while_another_process_writes(writer_holding_the_lock, tool, args):
    started = time.monotonic()
    reply = json.loads(handle_tool_call(tool, args, home=writer_holding_the_lock))
    seconds = time.monotonic() - started
    assert reply["success"] is True, reply
    assert "8080" in json.dumps(reply), reply
    assert seconds < 5, f"{tool} waited {seconds:.1f}s behind another writer"
