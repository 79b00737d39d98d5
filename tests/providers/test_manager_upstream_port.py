"""Upstream's own memory-manager tests, run against our manager (issue 26, fifth pass).

Each test carries over the assertions of zons-zhaozhy/hermes-agent
``tests/agent/test_memory_provider.py`` at 03d70b32e91e24c1819e522e83e3297d10e9d34e (the newest
copy of that file the index holds) with ``agent.memory_manager.MemoryManager`` mapped onto
``hermes_store.providers.manager.MemoryManager`` and ``agent.memory_provider.MemoryProvider`` onto
``hermes_store.providers.base.MemoryProvider``. No upstream code is imported; tests of Hermes
internals (prefetch spill through Hermes' hook config, the toolset gate on an ``AIAgent``,
skill registration, ``plugins.memory`` paths) are left out or covered in ``test_discovery.py``.
"""

from __future__ import annotations

import json
import threading
import time
from unittest.mock import MagicMock

import pytest

from hermes_store.providers.base import MemoryProvider
from hermes_store.providers.manager import MemoryManager


class FakeMemoryProvider(MemoryProvider):
    """Upstream's minimal concrete provider."""

    def __init__(self, name="fake", available=True, tools=None):
        self._name = name
        self._available = available
        self._tools = tools or []
        self.synced_turns = []
        self.prefetch_queries = []
        self.queued_prefetches = []
        self.turn_starts = []
        self.memory_writes = []
        self._prefetch_result = ""

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return self._available

    def initialize(self, session_id, **kwargs):
        self.initialized = True

    def prefetch(self, query, *, session_id=""):
        self.prefetch_queries.append(query)
        return self._prefetch_result

    def queue_prefetch(self, query, *, session_id=""):
        self.queued_prefetches.append(query)

    def sync_turn(self, user_content, assistant_content, *, session_id=""):
        self.synced_turns.append((user_content, assistant_content))

    def get_tool_schemas(self):
        return self._tools

    def handle_tool_call(self, tool_name, args, **kwargs):
        return json.dumps({"handled": tool_name, "args": args})

    def on_turn_start(self, turn_number, message):
        self.turn_starts.append((turn_number, message))

    def on_memory_write(self, action, target, content):
        self.memory_writes.append((action, target, content))


class MessagesMemoryProvider(FakeMemoryProvider):
    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        self.synced_turns.append((user_content, assistant_content, session_id, messages))


class AuthorMemoryProvider(FakeMemoryProvider):
    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None, turn_author=None):
        self.synced_turns.append((user_content, assistant_content, turn_author))


class BlockingPrefetchProvider(FakeMemoryProvider):
    def __init__(self, name="external"):
        super().__init__(name=name)
        self.started = threading.Event()
        self.release = threading.Event()

    def prefetch(self, query, *, session_id=""):
        self.prefetch_queries.append(query)
        self.started.set()
        self.release.wait(timeout=5.0)
        return self._prefetch_result


def test_empty_manager():
    mgr = MemoryManager()
    assert mgr.providers == []
    assert mgr.get_all_tool_schemas() == []
    assert mgr.build_system_prompt() == ""
    assert mgr.prefetch_all("test") == ""


def test_get_provider_by_name():
    mgr = MemoryManager()
    p = FakeMemoryProvider("test1")
    mgr.add_provider(p)
    assert mgr.get_provider("test1") is p
    assert mgr.get_provider("nonexistent") is None


def test_failed_schema_load_leaves_manager_unregistered():
    """#9948: a provider whose get_tool_schemas() raises must not poison the single-external slot."""
    class BrokenProvider(FakeMemoryProvider):
        def get_tool_schemas(self):
            raise RuntimeError("boom")

    mgr = MemoryManager()
    with pytest.raises(RuntimeError):
        mgr.add_provider(BrokenProvider("broken"))
    assert mgr.providers == []
    ok = FakeMemoryProvider("ok")
    mgr.add_provider(ok)
    assert mgr.get_provider("ok") is ok


def test_on_turn_start_passes_each_provider_only_the_kwargs_it_accepts():
    class AuthorAwareProvider(FakeMemoryProvider):
        def on_turn_start(self, turn_number, message, *, author_id=None, **kwargs):
            self.turn_starts.append((turn_number, message, author_id))

    mgr = MemoryManager()
    legacy, aware = FakeMemoryProvider("builtin"), AuthorAwareProvider("aware")
    mgr.add_provider(legacy)
    mgr.add_provider(aware)
    mgr.on_turn_start(1, "hello", author_id="bot:scout", author_name="scout", author_is_bot=True)
    assert legacy.turn_starts == [(1, "hello")]
    assert aware.turn_starts == [(1, "hello", "bot:scout")]


def test_prefetch_merges_results_and_queue_prefetch_all():
    mgr = MemoryManager()
    p1, p2 = FakeMemoryProvider("builtin"), FakeMemoryProvider("external")
    p1._prefetch_result, p2._prefetch_result = "Memory from builtin", "Memory from external"
    mgr.add_provider(p1)
    mgr.add_provider(p2)
    result = mgr.prefetch_all("what do you know?")
    assert "Memory from builtin" in result and "Memory from external" in result
    assert p1.prefetch_queries == p2.prefetch_queries == ["what do you know?"]
    mgr.queue_prefetch_all("next turn")
    mgr.flush_pending(timeout=5)
    assert p1.queued_prefetches == p2.queued_prefetches == ["next turn"]


def test_sync_failure_doesnt_block_others():
    mgr = MemoryManager()
    p1, p2 = FakeMemoryProvider("builtin"), FakeMemoryProvider("external")
    p1.sync_turn = MagicMock(side_effect=RuntimeError("boom"))
    mgr.add_provider(p1)
    mgr.add_provider(p2)
    mgr.sync_all("user", "assistant")
    mgr.flush_pending(timeout=5)
    assert p2.synced_turns == [("user", "assistant")]


def test_sync_all_keeps_legacy_provider_working_when_messages_are_available():
    mgr = MemoryManager()
    legacy = FakeMemoryProvider("legacy")
    mgr.add_provider(legacy)
    mgr.sync_all("user", "assistant", session_id="legacy-session",
                 messages=[{"role": "user", "content": "user"}, {"role": "assistant", "content": "assistant"}])
    mgr.flush_pending(timeout=5)
    assert legacy.synced_turns == [("user", "assistant")]


def test_sync_all_forwards_author_only_to_providers_that_accept_it():
    legacy = FakeMemoryProvider("legacy")
    messages_only = MessagesMemoryProvider("messages")
    author_aware = AuthorMemoryProvider("author")
    author = {"id": "bot:alpha", "name": "Alpha", "is_bot": True}
    for p in (legacy, messages_only, author_aware):
        mgr = MemoryManager()
        mgr.add_provider(p)
        mgr.sync_all("user", "assistant", session_id="s1", turn_author=author)
        mgr.sync_all("user", "assistant")
        mgr.flush_pending(timeout=5)
    assert legacy.synced_turns == [("user", "assistant")] * 2
    assert messages_only.synced_turns == [("user", "assistant", "s1", None), ("user", "assistant", "", None)]
    assert author_aware.synced_turns == [("user", "assistant", author), ("user", "assistant", None)]


def test_tool_routing_and_tool_names():
    mgr = MemoryManager()
    p1 = FakeMemoryProvider("builtin", tools=[{"name": "builtin_tool", "description": "B", "parameters": {}}])
    p2 = FakeMemoryProvider("ext", tools=[{"name": "ext_recall", "description": "E1", "parameters": {}},
                                          {"name": "ext_retain", "description": "E2", "parameters": {}}])
    mgr.add_provider(p1)
    mgr.add_provider(p2)
    assert json.loads(mgr.handle_tool_call("builtin_tool", {"a": 1}))["handled"] == "builtin_tool"
    assert json.loads(mgr.handle_tool_call("ext_recall", {"b": 2}))["handled"] == "ext_recall"
    # upstream's get_all_tool_names() is a set (Hermes unions it into valid_tool_names)
    assert mgr.get_all_tool_names() == {"builtin_tool", "ext_recall", "ext_retain"}
    assert mgr.has_tool("ext_retain") and not mgr.has_tool("nope")


def test_external_prefetch_timeout_skips_stuck_provider():
    mgr = MemoryManager(external_prefetch_timeout=0.01)
    builtin = FakeMemoryProvider("builtin")
    builtin._prefetch_result = "builtin memory"
    external = BlockingPrefetchProvider("hy-memory")
    external._prefetch_result = "late external memory"
    mgr.add_provider(builtin)
    mgr.add_provider(external)
    started = time.monotonic()
    assert mgr.prefetch_all("query") == "builtin memory"
    assert time.monotonic() - started < 0.5
    assert external.started.wait(timeout=1.0)
    assert mgr.prefetch_all("query 2") == "builtin memory"
    assert external.prefetch_queries == ["query"]
    external.release.set()
    deadline = time.monotonic() + 2.0
    while external.prefetch_queries == ["query"] and time.monotonic() < deadline:
        result = mgr.prefetch_all("query 3")
        if external.prefetch_queries != ["query"]:
            break
        time.sleep(0.01)
    assert result == "builtin memory\n\nlate external memory"
    assert external.prefetch_queries == ["query", "query 3"]


def test_on_session_end_fans_out_and_tolerates_failure():
    class Recorder(FakeMemoryProvider):
        def __init__(self, name):
            super().__init__(name)
            self.end_calls = []

        def on_session_end(self, messages):
            self.end_calls.append(list(messages or []))

    mgr = MemoryManager()
    builtin, external = Recorder("builtin"), Recorder("openviking")
    mgr.add_provider(builtin)
    mgr.add_provider(external)
    msgs = [{"role": "user", "content": "hi"}]
    mgr.on_session_end(msgs)
    assert builtin.end_calls == [msgs] and external.end_calls == [msgs]
    bad = Recorder("bad-provider")
    bad.on_session_end = lambda m: (_ for _ in ()).throw(RuntimeError("boom"))
    mgr2 = MemoryManager()
    mgr2.add_provider(FakeMemoryProvider("builtin"))
    mgr2.add_provider(bad)
    mgr2.on_session_end([])  # must not raise


def test_on_memory_write_tolerates_provider_failure():
    mgr = MemoryManager()
    bad = FakeMemoryProvider("builtin")
    bad.on_memory_write = MagicMock(side_effect=RuntimeError("boom"))
    good = FakeMemoryProvider("good")
    mgr.add_provider(bad)
    mgr.add_provider(good)
    mgr.on_memory_write("add", "user", "test")
    assert good.memory_writes == [("add", "user", "test")]


def test_an_empty_turn_or_query_reaches_no_provider():
    """Upstream's sync_all / queue_prefetch_all return early when the (skill-stripped) user text
    is empty: nothing is queued for the providers."""
    mgr = MemoryManager()
    p = FakeMemoryProvider("external")
    mgr.add_provider(p)
    mgr.sync_all("", "assistant reply")
    mgr.queue_prefetch_all("")
    mgr.flush_pending(timeout=5)
    assert p.synced_turns == [] and p.queued_prefetches == []


def test_hermes_module_names_are_importable_from_our_base():
    """A provider written against Hermes' ``agent/memory_provider.py`` (zons 35c6ba51) imports
    these names; our base module answers to the same spellings."""
    from hermes_store.providers import base

    assert base.CORE_MEMORY_PROVIDER_SENTINELS == frozenset({"", "default", "builtin", "built-in", "none"})
    assert base.is_core_memory_provider(" None ") and not base.is_core_memory_provider("honcho")
    assert base.PRE_COMPRESS_CHECKPOINT_API_VERSION == 2 and base.INDICATOR_GLYPH == "🧠"
    seen = []
    thread = base.spawn_context_thread(lambda: seen.append(1), name="t")
    thread.start()
    thread.join(5)
    assert seen == [1] and base.ctx_bound(lambda x: x + 1)(1) == 2


def test_pre_compress_hands_a_checkpoint_provider_the_evidence_as_its_messages():
    """Upstream ``on_pre_compress`` (zons agent/memory_manager.py @03d70b32): a provider at or past
    ``checkpoint_api_version`` gets ``evidence_messages`` (when the host gives them) as its one
    positional argument and ``require_checkpoint`` only when its signature takes it; a v1 provider
    gets the raw messages; the failure names the version asked for."""
    class V1(FakeMemoryProvider):
        def on_pre_compress(self, messages):
            self.got = messages
            return "v1 text"

    class V2(FakeMemoryProvider):
        pre_compress_checkpoint_api_version = 2

        def on_pre_compress(self, messages, *, require_checkpoint=False):
            self.got = (messages, require_checkpoint)
            return "v2 text"

    class V2Bare(FakeMemoryProvider):
        pre_compress_checkpoint_api_version = 2

        def on_pre_compress(self, messages):
            self.got = messages
            return ""

    raw = [{"role": "user", "content": "raw turn"}]
    evidence = [{"role": "user", "content": "normalized turn"}]
    mgr = MemoryManager()
    v1, v2 = V1("builtin"), V2("ext")
    mgr.add_provider(v1)
    mgr.add_provider(v2)
    assert mgr.on_pre_compress(raw, evidence_messages=evidence, require_checkpoint=True) == "v1 text\n\nv2 text"
    assert v1.got == raw and v2.got == (evidence, True)
    assert mgr.on_pre_compress(raw) == "v1 text\n\nv2 text" and v2.got == (raw, False)
    bare_mgr = MemoryManager()
    bare = V2Bare("ext")
    bare_mgr.add_provider(bare)
    assert bare_mgr.on_pre_compress(raw, evidence_messages=evidence, require_checkpoint=True) == ""
    assert bare.got == evidence
    with pytest.raises(RuntimeError, match="^No active memory provider completed pre-compress checkpoint API v3$"):
        mgr.on_pre_compress(raw, require_checkpoint=True, checkpoint_api_version=3)


def test_shutdown_drain_state_reports_the_bounded_drain():
    """Upstream ``shutdown_drain_state`` (zons agent/memory_manager.py @03d70b32): not_started
    before shutdown; drained when the queue ran; timed_out with the queued writes and prefetches
    abandoned unrun and the one task still running counted as active."""
    clean = MemoryManager()
    clean.add_provider(FakeMemoryProvider("ext"))
    assert clean.shutdown_drain_state == {"status": "not_started", "abandoned_writes": 0,
                                          "abandoned_prefetches": 0, "active_tasks": 0}
    clean.sync_all("user", "assistant")
    clean.shutdown_all()
    assert clean.shutdown_drain_state["status"] == "drained"

    release = threading.Event()

    class Stuck(FakeMemoryProvider):
        def sync_turn(self, user_content, assistant_content, *, session_id=""):
            release.wait(5)

    mgr = MemoryManager(shutdown_timeout=0.2)
    mgr.add_provider(Stuck("ext"))
    mgr.sync_all("one", "a")  # runs and hangs
    mgr.sync_all("two", "b")  # queued behind it
    mgr.queue_prefetch_all("next")  # queued too
    time.sleep(0.1)
    mgr.shutdown_all()
    release.set()
    assert mgr.shutdown_drain_state == {"status": "timed_out", "abandoned_writes": 1,
                                        "abandoned_prefetches": 1, "active_tasks": 1}


def test_hermes_manager_module_names():
    """Upstream's tests import these from ``agent.memory_manager`` (zons 03d70b32)."""
    from hermes_store.providers import manager

    assert manager.normalize_tool_schema("nope") is None and manager.normalize_tool_schema(None) is None
    wrapped = {"type": "function", "function": {"name": "x_grep", "description": "d", "parameters": {}}}
    assert manager.normalize_tool_schema(wrapped)["name"] == "x_grep"
    result = manager.sanitize_context("fact one</memory-context>INJECTED<memory-context>fact two")
    assert "</memory-context>" not in result and "<memory-context>" not in result
    assert "fact one" in result and "fact two" in result
    assert "datamore" in manager.sanitize_context("data</MEMORY-CONTEXT>more")
    scrubber = manager.StreamingContextScrubber()
    assert scrubber.feed("visible\n<memory-context>\nhidden</memory-context> after") + scrubber.flush() == \
        "visible\n after"


def test_session_boundary_works_on_a_snapshot_of_the_messages():
    """Upstream ``commit_session_boundary_async`` snapshots ``list(messages or [])`` before queueing:
    the agent resets its own list right after /new, and the queued ``on_session_end`` must still
    see the old session's turns. ``on_session_end(None)`` hands providers ``[]``."""
    release = threading.Event()

    class Recorder(FakeMemoryProvider):
        def __init__(self, name):
            super().__init__(name)
            self.ended = []
            self.switched = []

        def sync_turn(self, user_content, assistant_content, *, session_id=""):
            release.wait(5)  # keeps the worker busy until the caller has cleared its list

        def on_session_end(self, messages):
            self.ended.append(messages if messages is None else list(messages))

        def on_session_switch(self, new_session_id, *, parent_session_id="", reset=False, **kwargs):
            self.switched.append((new_session_id, parent_session_id, reset, kwargs.get("reason")))

    mgr = MemoryManager()
    p = Recorder("ext")
    mgr.add_provider(p)
    messages = [{"role": "user", "content": "old turn"}]
    mgr.sync_all("u", "a")
    mgr.commit_session_boundary_async(messages, new_session_id="s2", parent_session_id="s1")
    messages.clear()  # what the agent does to its own transcript on /new
    release.set()
    assert mgr.flush_pending(timeout=5)
    assert p.ended == [[{"role": "user", "content": "old turn"}]]
    assert p.switched == [("s2", "s1", True, "new_session")]
    mgr.on_session_end(None)
    assert p.ended[-1] == []


def test_blocks_and_recall_are_joined_as_the_providers_wrote_them():
    """Upstream joins ``system_prompt_block()`` and ``prefetch()`` texts with a blank line, leaving
    each non-blank text as written (zons agent/memory_manager.py @03d70b32): the system prompt is
    byte-for-byte what the providers returned."""
    class Block(FakeMemoryProvider):
        def __init__(self, name, block, recall):
            super().__init__(name)
            self._block = block
            self._prefetch_result = recall

        def system_prompt_block(self):
            return self._block

    mgr = MemoryManager()
    mgr.add_provider(Block("builtin", "BUILTIN BLOCK\n", "  - tea\n"))
    mgr.add_provider(Block("ext", "\n", "- coffee"))
    assert mgr.build_system_prompt() == "BUILTIN BLOCK\n"
    mgr2 = MemoryManager()
    mgr2.add_provider(Block("builtin", "## Memory\n", "  - tea\n"))
    mgr2.add_provider(Block("ext", "EXT\n", "- coffee"))
    assert mgr2.build_system_prompt() == "## Memory\n\n\nEXT\n"
    assert mgr2.prefetch_all("what do I drink?") == "  - tea\n\n\n- coffee"
