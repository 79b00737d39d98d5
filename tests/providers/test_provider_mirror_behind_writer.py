"""A mirrored memory write never holds the agent behind another process's write lock.

Hermes calls ``on_memory_write`` inside its ``memory`` tool call. Found driving the plug-in
while another process held the store's write lock: the mirror waited the store's whole busy
patience (30 s by default) inside the agent's tool call, then gave up and the fact was lost.
Now it waits a moment inline; when the lock is still held it is finished in the background,
and ``shutdown`` waits (bounded) for it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

from hermes_store.facts import FactStore
from hermes_store.hermes_plugin import make_provider

HOLD = textwrap.dedent("""
    import sys, time, apsw
    conn = apsw.Connection(sys.argv[1]); conn.execute("BEGIN IMMEDIATE")
    print("held", flush=True); time.sleep(float(sys.argv[2])); conn.execute("ROLLBACK")
""")


def test_a_mirrored_write_behind_a_writer_returns_at_once_and_is_stored_later(home, monkeypatch):
    monkeypatch.setenv("HERMES_STORE_BUSY_TIMEOUT", "20")
    with home.open_db() as db:
        FactStore(db).add_fact("The kiwi service runs on port 8080", "project", "kiwi")
    provider = make_provider()
    provider.initialize("s1", hermes_home=str(home.root))
    provider.prefetch("which port does the kiwi service use?")  # the store is open
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(home.db_path), "3"], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        provider.on_memory_write("add", "user", "User prefers green tea", {"session_id": "s1"})
        seconds = time.monotonic() - started
    finally:
        holder.wait(timeout=30)  # the holder lets go after 3 s
    provider.shutdown()  # waits for the mirror finishing in the background
    assert seconds < 2, f"on_memory_write held the agent {seconds:.1f}s behind another writer"
    with home.open_db() as db:
        assert FactStore(db).find_by_content("User prefers green tea") is not None
