"""A PostgreSQL server that stops answering costs an agent one connect timeout, not one per call.

Found driving the Hermes plug-in with its store on a server that accepts connections and never
answers: every hook and tool call opened the store again and waited the whole connect timeout
(5 s) again -- ``system_prompt_block`` 5 s, ``prefetch`` 5 s, ``recall`` 10 s, each
``fact_store`` call and each mirrored memory write 5 s -- for as long as the server was away.
Now the first open waits and fails; the calls after it fail at once, saying why, until
``pgreach.RETRY_AFTER`` has passed.
"""

from __future__ import annotations

import json
import socket
import time

import pytest

from hermes_store import pgreach
from hermes_store.hermes_plugin import make_provider
from hermes_store.tools import handle_tool_call


@pytest.fixture
def silent_url(tmp_path, monkeypatch):
    """The URL of a 'server' that accepts connections and never says a word."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / ".s.PGSQL.5432"))
    listener.listen(64)  # connections queue in the backlog; nothing ever answers them
    url = f"postgresql://sam:hunter2@/store?host={tmp_path}&port=5432"
    monkeypatch.setenv("HERMES_STORE_DATABASE_URL", url)
    pgreach.forget(url)
    yield url
    pgreach.forget(url)
    listener.close()


def _timed(call):
    started = time.monotonic()
    value = call()
    return value, time.monotonic() - started


def test_after_one_timeout_every_hook_and_tool_answers_at_once(home, silent_url):
    provider = make_provider()
    provider.initialize("s1", hermes_home=str(home.root))
    first, seconds = _timed(lambda: provider.prefetch("what is the deploy plan of the billing service?"))
    assert first == "" and seconds >= pgreach.SILENT_AFTER  # the one wait: the server is tried
    calls = {
        "system_prompt_block": lambda: provider.system_prompt_block(),
        "prefetch": lambda: provider.prefetch("what is the deploy plan of the billing service?"),
        "fact_store": lambda: provider.handle_tool_call("fact_store", {"action": "list"}),
        "recall (plug-in)": lambda: provider.handle_tool_call("recall", {"query": "deploy plan"}),
        "recall (tools)": lambda: handle_tool_call("recall", {"query": "deploy plan"}, home=home),
        "on_memory_write": lambda: provider.on_memory_write("add", "memory", "User likes tea", {}),
    }
    for name, call in calls.items():
        value, seconds = _timed(call)
        assert seconds < 2, f"{name} waited {seconds:.1f}s for a server that did not answer a moment ago"
        if name.startswith(("fact_store", "recall")):
            reply = json.loads(value)
            text = json.dumps(reply)
            assert "not reachable" in text and "hunter2" not in text, reply
            # recall still answers from MEMORY.md / USER.md, naming the database in its errors
            assert reply["success"] is (name != "fact_store"), reply
    provider.shutdown()


def test_the_server_is_tried_again_once_the_window_has_passed(home, silent_url, monkeypatch):
    provider = make_provider()
    provider.initialize("s1", hermes_home=str(home.root))
    provider.prefetch("what is the deploy plan of the billing service?")
    assert pgreach.recent_silence(silent_url) is not None
    monkeypatch.setattr(pgreach, "RETRY_AFTER", 0.0)
    assert pgreach.recent_silence(silent_url) is None  # tried again (and waits again) from now on
    provider.shutdown()
