"""The provider interface of the newest Hermes (issue 26; agent/memory_provider.py of
zons-zhaozhy/hermes-agent): identity_signature, the fail-closed pre-compress checkpoint (API v2),
background threads that carry the caller's context variables (Hermes' per-profile HERMES_HOME
override is a ContextVar), and on_turn_start's author trio recorded as the turn's writer."""

from __future__ import annotations

import contextvars
import threading
from typing import Any

import pytest

from hermes_store.hermes_plugin import HermesStoreProvider
from hermes_store.providers.base import PRE_COMPRESS_CHECKPOINT_API_VERSION, MemoryProvider
from hermes_store.providers.manager import MemoryManager
from hermes_store.sessions.state_sync import StateDbSync
from hermes_store.threads import ctx_bound, spawn_context_thread
from tests.providers.provider_fakes import RecordingProvider

# stands in for hermes_constants' ContextVar-scoped HERMES_HOME override
PROFILE_HOME: contextvars.ContextVar[str | None] = contextvars.ContextVar("PROFILE_HOME", default=None)


class SeeingProvider(RecordingProvider):
    """Records the profile ContextVar and the thread each background hook ran on."""

    def __init__(self, name: str = "seeing") -> None:
        super().__init__(name, tools=())
        self.seen: list[tuple[str, str | None, str]] = []

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list | None = None, turn_author: dict | None = None) -> None:
        self.seen.append(("sync_turn", PROFILE_HOME.get(), threading.current_thread().name))
        self._log("sync_turn", {"user": user_content, "turn_author": turn_author})

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self.seen.append(("queue_prefetch", PROFILE_HOME.get(), threading.current_thread().name))

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self.seen.append(("prefetch", PROFILE_HOME.get(), threading.current_thread().name))
        return ""

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict | None = None) -> None:
        self._log("on_memory_write", metadata)

    def identity_signature(self) -> dict[str, Any]:
        return {"seeing.writer": "alice"}


def test_context_helpers_carry_the_callers_context():
    token = PROFILE_HOME.set("/homes/work")
    try:
        box: list[str | None] = []
        thread = spawn_context_thread(lambda: box.append(PROFILE_HOME.get()), name="t")
        bound = ctx_bound(lambda: PROFILE_HOME.get())
    finally:
        PROFILE_HOME.reset(token)
    thread.start()
    thread.join(5)
    assert box == ["/homes/work"]
    plain: list[str | None] = []
    other = threading.Thread(target=lambda: plain.append(PROFILE_HOME.get()))
    other.start()
    other.join(5)
    assert plain == [None]  # what a bare threading.Thread sees: the default profile
    assert bound() == "/homes/work"


def test_manager_background_threads_see_the_profile_contextvar():
    manager = MemoryManager(external_prefetch_timeout=5)
    provider = SeeingProvider()
    manager.add_provider(provider)
    # the worker thread is started by a first submission under one profile ...
    token = PROFILE_HOME.set("/homes/first")
    try:
        manager.sync_all("hi there", "hello", session_id="s1")
    finally:
        PROFILE_HOME.reset(token)
    assert manager.flush_pending(5)
    # ... and a later turn under another profile must run under that profile, not the first
    token = PROFILE_HOME.set("/homes/second")
    try:
        manager.sync_all("the deploy failed", "looking", session_id="s1")
        manager.queue_prefetch_all("deploy failure", session_id="s1")
        manager.prefetch_all("what about the deploy", session_id="s1")
    finally:
        PROFILE_HOME.reset(token)
    assert manager.flush_pending(5)
    manager.shutdown_all()
    assert sorted((hook, home) for hook, home, _ in provider.seen) == sorted([
        ("sync_turn", "/homes/first"), ("prefetch", "/homes/second"),
        ("sync_turn", "/homes/second"), ("queue_prefetch", "/homes/second")])
    main = threading.current_thread().name
    assert all(thread != main for hook, _, thread in provider.seen if hook != "prefetch")


def test_state_sync_thread_sees_the_profile_contextvar(home, monkeypatch):
    seen: list[str | None] = []
    sync = StateDbSync(home)
    monkeypatch.setattr(sync, "sync", lambda: seen.append(PROFILE_HOME.get()))
    token = PROFILE_HOME.set("/homes/work")
    try:
        sync.kick()
    finally:
        PROFILE_HOME.reset(token)
    assert sync.wait(5)
    assert seen == ["/homes/work"]


def test_author_trio_is_recorded_as_the_turns_writer():
    manager = MemoryManager(external_prefetch_timeout=5)
    provider = SeeingProvider()
    manager.add_provider(provider)
    manager.on_turn_start(3, "remember my deploy key", author_id="u-42", author_name="Alice",
                          author_is_bot=False)
    turn_start = [p for _, hook, p in provider.events if hook == "on_turn_start"][-1]
    assert turn_start["author_id"] == "u-42" and turn_start["author_name"] == "Alice"
    manager.mirror_builtin_write("add", "memory", "deploy key lives in vault")
    write = [p for _, hook, p in provider.events if hook == "on_memory_write"][-1]
    assert (write["author_id"], write["author_name"], write["author_is_bot"]) == ("u-42", "Alice", False)
    manager.sync_all("remember my deploy key", "noted", session_id="s1")
    assert manager.flush_pending(5)
    synced = [p for _, hook, p in provider.events if hook == "sync_turn"][-1]
    assert synced["turn_author"] == {"id": "u-42", "name": "Alice", "is_bot": False}
    manager.on_turn_start(4, "next", author_id=None, author_name=None, author_is_bot=False)
    assert manager.turn_author is None
    manager.shutdown_all()


def test_identity_signature_is_cheap_and_works_uninitialised(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "h"))
    provider = HermesStoreProvider()
    assert provider.identity_signature() == {"hermes_store.home": str(tmp_path / "h")}
    assert not (tmp_path / "h").exists()  # read-only: nothing created
    assert MemoryProvider.identity_signature(provider) == {}  # the base default
    manager = MemoryManager(external_prefetch_timeout=5)
    manager.add_provider(SeeingProvider())
    assert manager.identity_signature() == {"seeing.writer": "alice"}


def _hermes_constants(monkeypatch):
    """A stand-in for Hermes' ``hermes_constants`` (zons 03d70b32): ``get_hermes_home()`` is
    the context-local profile override, then ``$HERMES_HOME``."""
    import os
    import sys
    import types
    from pathlib import Path

    module = types.ModuleType("hermes_constants")
    module.get_hermes_home = lambda: Path(PROFILE_HOME.get() or os.environ["HERMES_HOME"])
    monkeypatch.setitem(sys.modules, "hermes_constants", module)


def test_an_uninitialised_plugin_names_the_profile_home_hermes_resolves(tmp_path, monkeypatch):
    """A multi-profile gateway scopes each task to its profile with a ContextVar override that
    leaves ``$HERMES_HOME`` alone, and calls ``identity_signature()`` on an uninitialised instance
    (``backup_paths()`` must work without ``initialize()`` too). The plug-in named the process's
    ``$HERMES_HOME``, not the profile home it will write to."""
    _hermes_constants(monkeypatch)
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "process"))
    work = tmp_path / "profiles" / "work"
    work.mkdir(parents=True)
    elsewhere = tmp_path / "stores" / "work.db"
    (work / "config.yaml").write_text(f"store:\n  database_url: sqlite:///{elsewhere}\n", encoding="utf-8")
    token = PROFILE_HOME.set(str(work))
    try:
        provider = HermesStoreProvider()
        assert provider.identity_signature() == {"hermes_store.home": str(work)}
        assert provider.backup_paths() == [str(elsewhere)]
    finally:
        PROFILE_HOME.reset(token)
    # no override in effect: Hermes' own fallback, $HERMES_HOME
    assert HermesStoreProvider().identity_signature() == {"hermes_store.home": str(tmp_path / "process")}
    assert not (tmp_path / "process").exists() and not elsewhere.exists()  # read-only


def test_plugin_checkpoint_v2_writes_the_transcript_into_the_index(home, tmp_path):
    from pathlib import Path

    from hermes_store.db import Database
    fixture = Path(__file__).parent.parent / "sessions" / "fixtures" / "hermes_state.sql"
    state_db = home.root / "state.db"
    db = Database(state_db, migrate=False)
    db.execute(fixture.read_text(encoding="utf-8"))
    db.close()
    provider = HermesStoreProvider()
    assert provider.pre_compress_checkpoint_api_version == PRE_COMPRESS_CHECKPOINT_API_VERSION == 2
    provider._home = home
    manager = MemoryManager(external_prefetch_timeout=5)
    manager.add_provider(provider)
    manager.on_pre_compress([{"role": "user", "content": "x"}], require_checkpoint=True)
    store = home.open_db()
    try:
        assert store.scalar("SELECT count(*) FROM messages") > 0  # durably indexed before compression
    finally:
        store.close()


def test_checkpoint_that_cannot_be_written_stops_compression(home):
    provider = HermesStoreProvider()
    provider._home = home  # no state.db here: the transcript cannot be checkpointed
    manager = MemoryManager(external_prefetch_timeout=5)
    manager.add_provider(provider)
    with pytest.raises(RuntimeError, match="pre-compress checkpoint not written"):
        manager.on_pre_compress([{"role": "user", "content": "x"}], require_checkpoint=True)
    # best effort (checkpoint_required unset): logged, compression goes on
    assert manager.on_pre_compress([{"role": "user", "content": "x"}]) == ""
