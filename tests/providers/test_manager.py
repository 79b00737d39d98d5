"""MemoryManager: hook order, isolation, single external rule, routing, mirroring, shutdown."""

from __future__ import annotations

import json
import logging
import time

import pytest
from provider_fakes import (
    HangingPrefetchProvider,
    HangingShutdownProvider,
    LegacyProvider,
    PositionalWriteProvider,
    RaisingProvider,
    RecordingProvider,
    SlowSyncProvider,
)

from hermes_store.providers.manager import (
    CHECKPOINT_FAILED,
    MemoryManager,
    expand_memory_writes,
    is_trivial_prompt,
)


def _manager(**kwargs) -> MemoryManager:
    kwargs.setdefault("hermes_home", "/tmp/hermes-home-for-tests")
    return MemoryManager(**kwargs)


def test_full_session_calls_every_hook_in_order_with_arguments():
    events: list = []
    builtin = RecordingProvider("builtin", tools=("memory",), events=events, prompt="BUILTIN BLOCK")
    ext = RecordingProvider("ext", tools=("ext_search",), events=events, prompt="EXT BLOCK",
                            prefetch_text="recalled fact")
    mgr = _manager()
    assert mgr.add_provider(ext) and mgr.add_provider(builtin)
    assert [mgr.name_of(p) for p in mgr.providers] == ["builtin", "ext"]  # builtin forced first

    mgr.initialize_all("s1", platform="cli", agent_context="primary")
    prompt = mgr.build_system_prompt()
    mgr.on_turn_start(1, "What did we decide about the database?", author_id="u1")
    context = mgr.prefetch_all("What did we decide about the database?")
    tool_result = json.loads(mgr.handle_tool_call("ext_search", {"q": "db"}))
    mgr.sync_all("What did we decide about the database?", "We chose SQLite.",
                 messages=[{"role": "user", "content": "q"}])
    mgr.queue_prefetch_all("next", session_id="s1")
    assert mgr.flush_pending(5)
    summary = mgr.on_pre_compress([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    mgr.on_session_end([{"role": "user", "content": "bye"}])
    mgr.shutdown_all()

    assert prompt == "BUILTIN BLOCK\n\nEXT BLOCK"
    assert context == "recalled fact"
    assert tool_result == {"success": True, "handled_by": "ext", "tool": "ext_search"}
    assert summary == "builtin summary\n\next summary"
    hooks = [(name, hook) for name, hook, _ in events]
    assert hooks == [
        ("builtin", "initialize"), ("ext", "initialize"),
        ("builtin", "system_prompt_block"), ("ext", "system_prompt_block"),
        ("builtin", "on_turn_start"), ("ext", "on_turn_start"),
        ("builtin", "prefetch"), ("ext", "prefetch"),
        ("ext", "handle_tool_call"),
        ("builtin", "sync_turn"), ("ext", "sync_turn"),
        ("builtin", "queue_prefetch"), ("ext", "queue_prefetch"),
        ("builtin", "on_pre_compress"), ("ext", "on_pre_compress"),
        ("builtin", "on_session_end"), ("ext", "on_session_end"),
        ("ext", "shutdown"), ("builtin", "shutdown"),  # reverse order
    ]
    payload = {(name, hook): data for name, hook, data in events}
    init = payload[("ext", "initialize")]
    assert init["session_id"] == "s1" and init["platform"] == "cli" and init["agent_context"] == "primary"
    assert init["hermes_home"] == "/tmp/hermes-home-for-tests"  # injected when absent
    assert payload[("ext", "on_turn_start")] == {"turn_number": 1, "author_id": "u1",
                                                 "message": "What did we decide about the database?"}
    assert payload[("ext", "prefetch")]["session_id"] == "s1"
    assert payload[("ext", "handle_tool_call")] == {"tool_name": "ext_search", "args": {"q": "db"}}
    sync = payload[("ext", "sync_turn")]
    assert sync == {"user": "What did we decide about the database?", "assistant": "We chose SQLite.",
                    "session_id": "s1", "messages": [{"role": "user", "content": "q"}]}
    assert payload[("ext", "on_session_end")] == {"count": 1}


def test_second_external_provider_is_refused_with_the_reference_warning(caplog):
    mgr = _manager()
    assert mgr.add_provider(RecordingProvider("first", tools=()))
    with caplog.at_level(logging.WARNING):
        assert not mgr.add_provider(RecordingProvider("second", tools=()))
    assert [mgr.name_of(p) for p in mgr.providers] == ["first"]
    assert ("Rejected memory provider 'second' — external provider 'first' is already registered. "
            "Only one external memory provider is allowed at a time. "
            "Configure which one via memory.provider in config.yaml.") in caplog.text
    assert mgr.add_provider(RecordingProvider("builtin", tools=()))  # builtin is exempt
    assert not mgr.add_provider(RecordingProvider("builtin", tools=()))  # but not twice


def test_tool_routing_shadowing_and_duplicates(caplog):
    mgr = _manager()
    builtin = RecordingProvider("builtin", tools=("memory",))
    ext = RecordingProvider("ext", tools=("memory", "terminal", "ext_tool", "ext_tool"))
    with caplog.at_level(logging.WARNING):
        mgr.add_provider(builtin)
        mgr.add_provider(ext)
    assert mgr.get_all_tool_names() == {"memory", "ext_tool"}
    assert [s["name"] for s in mgr.get_all_tool_schemas()] == ["memory", "ext_tool"]
    assert "Memory provider 'ext' tool 'memory' shadows a reserved core tool name" in caplog.text
    assert "Memory provider 'ext' tool 'terminal' shadows a reserved core tool name" in caplog.text
    assert "Memory tool name conflict: 'ext_tool' already registered by ext, ignoring from ext" in caplog.text
    assert json.loads(mgr.handle_tool_call("memory", {}))["handled_by"] == "builtin"
    assert json.loads(mgr.handle_tool_call("ext_tool", '{"a": 1}'))["handled_by"] == "ext"
    missing = json.loads(mgr.handle_tool_call("nope", {}))
    assert missing == {"error": "No memory provider handles tool 'nope'"}  # Hermes' tool_error shape
    assert mgr.has_tool("ext_tool") and not mgr.has_tool("terminal")
    assert json.loads(mgr.handle_tool_call("ext_tool", "[1, 2]"))["error"] == \
        "arguments must be a JSON object, got list"
    assert "not valid JSON" in json.loads(mgr.handle_tool_call("ext_tool", "{oops"))["error"]


def test_duplicate_tool_across_providers_keeps_the_first():
    mgr = _manager()
    mgr.add_provider(RecordingProvider("builtin", tools=("shared",)))
    mgr.add_provider(RecordingProvider("ext", tools=("shared",)))
    assert json.loads(mgr.handle_tool_call("shared", {}))["handled_by"] == "builtin"


def test_wrapped_and_nameless_schemas_are_normalised():
    class Wrapped(RecordingProvider):
        def get_tool_schemas(self):
            return [{"type": "function", "function": {"name": "wrapped_tool", "parameters": {}}},
                    {"description": "no name"}]

    mgr = _manager()
    assert mgr.add_provider(Wrapped("ext"))
    assert mgr.get_all_tool_schemas() == [{"name": "wrapped_tool", "parameters": {}}]


def test_schema_failure_refuses_provider_without_blocking_later_registration():
    class BadSchemas(RecordingProvider):
        def get_tool_schemas(self):
            raise RuntimeError("schemas broken")

    mgr = _manager()
    with pytest.raises(RuntimeError, match="schemas broken"):  # raised as Hermes' add_provider does (#9948)
        mgr.add_provider(BadSchemas("bad"))
    assert mgr.providers == [] and mgr.get_all_tool_names() == set()
    assert mgr.add_provider(RecordingProvider("good"))
    assert mgr.get_all_tool_names() == {"fake_tool"}


def test_tool_exception_becomes_an_error_string():
    class Boom(RecordingProvider):
        def handle_tool_call(self, tool_name, args, **kwargs):
            raise ValueError("kaput")

    mgr = _manager()
    mgr.add_provider(Boom("ext", tools=("boom",)))
    reply = mgr.handle_tool_call("boom", {})
    assert reply == '{"error": "Memory tool \'boom\' failed: kaput"}'  # Hermes' tool_error, byte for byte


def test_raising_provider_never_reaches_the_caller_and_others_still_run():
    events: list = []
    good = RecordingProvider("builtin", tools=(), events=events, prefetch_text="good recall", prompt="P")
    bad = RaisingProvider("bad", tools=(), events=events)
    mgr = _manager()
    mgr.add_provider(bad)
    mgr.add_provider(good)
    mgr.initialize_all("s")
    assert mgr.build_system_prompt() == "P"
    mgr.on_turn_start(1, "hello there friend")
    assert mgr.prefetch_all("tell me about the project") == "good recall"
    mgr.sync_all("u", "a")
    mgr.queue_prefetch_all("q")
    assert mgr.flush_pending(5)
    assert mgr.on_pre_compress([]) == "builtin summary"
    mgr.on_session_switch("s2", parent_session_id="s")
    mgr.on_delegation("task", "result", child_session_id="c")
    mgr.on_memory_write("add", "memory", "x")
    mgr.on_session_end([])
    mgr.shutdown_all()
    good_hooks = [hook for name, hook, _ in events if name == "builtin"]
    assert good_hooks == ["initialize", "system_prompt_block", "on_turn_start", "prefetch", "sync_turn",
                          "queue_prefetch", "on_pre_compress", "on_session_switch", "on_delegation",
                          "on_session_end", "shutdown"]
    bad_hooks = {hook for name, hook, _ in events if name == "bad"}
    assert {"initialize", "prefetch", "sync_turn", "on_memory_write", "shutdown"} <= bad_hooks


def test_hanging_external_prefetch_times_out_and_is_skipped_until_it_returns():
    hanging = HangingPrefetchProvider("slow", tools=())
    mgr = _manager(external_prefetch_timeout=0.2)
    mgr.add_provider(RecordingProvider("builtin", tools=(), prefetch_text="inline"))
    mgr.add_provider(hanging)
    started = time.monotonic()
    assert mgr.prefetch_all("what is my favourite editor") == "inline"
    assert time.monotonic() - started < 5
    assert mgr.prefetch_all("and my favourite language") == "inline"
    assert hanging.entered == 1  # skipped while the stuck call is still running
    hanging.release.set()
    deadline = time.monotonic() + 5
    while mgr._stuck["slow"].is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert mgr.prefetch_all("which database do we use") == "inline\n\nlate result"
    assert hanging.entered == 2


def test_prefetch_timeout_must_be_positive():
    with pytest.raises(ValueError):
        MemoryManager(external_prefetch_timeout=0)


def test_trivial_prompts_skip_prefetch():
    ext = RecordingProvider("ext", tools=(), prefetch_text="x")
    mgr = _manager()
    mgr.add_provider(ext)
    for prompt in ("", "  ", "/help", "ok", "Thanks!", "lgtm", "hi"):
        assert is_trivial_prompt(prompt)
        assert mgr.prefetch_all(prompt) == ""
    assert not is_trivial_prompt("ok so what database do we use?")
    assert ext.events == []


def test_sync_runs_in_order_on_the_background_worker_without_blocking():
    slow = SlowSyncProvider("ext", tools=())
    mgr = _manager(shutdown_timeout=0.2)
    mgr.add_provider(slow)
    started = time.monotonic()
    for turn in range(5):
        mgr.sync_all(f"user {turn}", f"assistant {turn}")
    assert time.monotonic() - started < 1  # the caller never waits for the provider
    assert not mgr.flush_pending(0.1)
    slow.release.set()
    assert mgr.flush_pending(5)
    users = [data["user"] for _, hook, data in slow.events if hook == "sync_turn"]
    assert users == [f"user {n}" for n in range(5)]


def test_shutdown_drains_with_a_bound_and_reports_abandoned_work():
    slow = SlowSyncProvider("ext", tools=())
    mgr = _manager(shutdown_timeout=0.2)
    mgr.add_provider(slow)
    mgr.sync_all("u1", "a1")
    mgr.sync_all("u2", "a2")
    mgr.queue_prefetch_all("q")
    started = time.monotonic()
    abandoned = mgr.shutdown_all()
    assert time.monotonic() - started < 3
    assert abandoned == {"sync": 2, "prefetch": 1}
    assert ("ext", "shutdown", None) in slow.events
    mgr.sync_all("late", "late")  # dropped after shutdown, does not raise
    assert mgr.shutdown_all() == abandoned  # idempotent
    slow.release.set()


def test_a_provider_whose_shutdown_hangs_is_not_waited_for_beyond_the_bound(caplog):
    """Found driving the lifecycle with a hanging provider: the drain was bounded, but each
    provider's shutdown() ran inline, so one stuck close held the agent's exit forever."""
    builtin = RecordingProvider("builtin", tools=())
    stuck = HangingShutdownProvider("ext", tools=())
    mgr = _manager(shutdown_timeout=0.3)
    mgr.add_provider(builtin)
    mgr.add_provider(stuck)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        abandoned = mgr.shutdown_all()
    assert time.monotonic() - started < 3
    assert abandoned == {"shutdown": 1}
    assert ("builtin", "shutdown", None) in builtin.events  # the others are still closed
    assert "'ext' shutdown still running" in caplog.text
    stuck.release.set()


def test_legacy_signatures_are_called_correctly():
    legacy = LegacyProvider("legacy")
    mgr = _manager()
    mgr.add_provider(legacy)
    mgr.initialize_all("s", platform="cli")
    mgr.on_turn_start(3, "hello world again", author_id="x", is_bot=False)
    assert mgr.prefetch_all("what is the plan") == "legacy recall"
    mgr.sync_all("u", "a", session_id="s", messages=[{"role": "user", "content": "u"}])
    assert mgr.flush_pending(5)
    mgr.on_memory_write("add", "user", "likes tea", {"tool_name": "memory"})
    assert legacy.calls == [("initialize", "s"), ("on_turn_start", 3, "hello world again"),
                            ("prefetch", "what is the plan"), ("sync_turn", "u", "a"),
                            ("on_memory_write", "add", "user", "likes tea")]
    positional = PositionalWriteProvider("pos")
    mgr2 = _manager()
    mgr2.add_provider(positional)
    mgr2.on_memory_write("remove", "memory", "old", {"k": 1})
    assert positional.calls == [("on_memory_write", "remove", "memory", "old", {"k": 1})]


def test_session_switch_forwards_rewound_only_when_true_and_ignores_empty_ids():
    ext = RecordingProvider("ext", tools=())
    mgr = _manager()
    mgr.add_provider(ext)
    mgr.on_session_switch("")
    mgr.on_session_switch("s2", parent_session_id="s1", reset=True)
    mgr.on_session_switch("s3", rewound=True)
    switches = [data for _, hook, data in ext.events if hook == "on_session_switch"]
    assert switches == [
        {"new_session_id": "s2", "parent_session_id": "s1", "reset": True, "rewound": False},
        {"new_session_id": "s3", "parent_session_id": "", "reset": False, "rewound": True},
    ]
    assert mgr.session_id == "s3"


def test_session_boundary_runs_end_then_switch_as_one_background_task():
    ext = RecordingProvider("ext", tools=())
    mgr = _manager()
    mgr.add_provider(ext)
    mgr.commit_session_boundary_async([{"role": "user", "content": "x"}], "new", "old", reason="reset")
    assert mgr.flush_pending(5)
    assert [hook for _, hook, _ in ext.events] == ["on_session_end", "on_session_switch"]
    assert ext.events[1][2]["reset"] is True and ext.events[1][2]["parent_session_id"] == "old"
    assert ext.events[1][2]["reason"] == "reset"


def test_session_boundary_reason_defaults_to_new_session_as_in_hermes():
    # Hermes' MemoryManager.commit_session_boundary_async(..., reason="new_session")
    ext = RecordingProvider("ext", tools=())
    mgr = _manager()
    mgr.add_provider(ext)
    mgr.commit_session_boundary_async([], new_session_id="new", parent_session_id="old")
    assert mgr.flush_pending(5)
    assert ext.events[-1][2]["reason"] == "new_session"


def test_memory_writes_are_mirrored_to_the_external_provider_only():
    events: list = []
    builtin = RecordingProvider("builtin", tools=(), events=events)
    ext = RecordingProvider("ext", tools=(), events=events)
    mgr = _manager()
    mgr.add_provider(builtin)
    mgr.add_provider(ext)
    mgr.initialize_all("sess")
    mgr.mirror_builtin_write("add", "user", "prefers dark mode", {"write_origin": "tool"})
    writes = [(name, data) for name, hook, data in events if hook == "on_memory_write"]
    assert writes == [("ext", {"action": "add", "target": "user", "content": "prefers dark mode",
                               "metadata": {"write_origin": "tool", "session_id": "sess",
                                            "tool_name": "memory"}})]


def test_notify_memory_tool_write_mirrors_committed_writes_and_expands_batches():
    ext = RecordingProvider("ext", tools=())
    mgr = _manager()
    mgr.add_provider(ext)

    def mirrored():
        out = [(d["action"], d["target"], d["content"], d["metadata"]) for _, h, d in ext.events
               if h == "on_memory_write"]
        ext.events.clear()
        return out

    assert mgr.notify_memory_tool_write({"success": True}, {"action": "add", "target": "memory",
                                                            "content": "new fact"}) == 1
    assert mirrored() == [("add", "memory", "new fact", {"session_id": "", "tool_name": "memory"})]

    mgr.notify_memory_tool_write(json.dumps({"success": True, "replaced_entry": "old fact"}),
                                 {"action": "replace", "old_text": "old", "content": "newer fact"},
                                 build_metadata=lambda: {"platform": "cli"})
    assert mirrored() == [("replace", "memory", "newer fact",
                           {"platform": "cli", "session_id": "", "tool_name": "memory",
                            "old_text": "old", "previous_content": "old fact"})]

    batch_args = {"target": "user", "operations": [
        {"action": "add", "content": "a"},
        {"action": "replace", "old_text": "b", "new_text": "B"},
        {"action": "remove", "old_text": "c"},
    ]}
    result = {"success": True, "replaced_entries": [None, "b entry", None],
              "removed_entries": [None, None, "c entry"]}
    assert mgr.notify_memory_tool_write(result, batch_args) == 3
    got = mirrored()
    assert [(a, t, c) for a, t, c, _ in got] == [("add", "user", "a"), ("replace", "user", "B"),
                                                  ("remove", "user", "c entry")]
    assert got[1][3]["previous_content"] == "b entry" and got[2][3]["old_text"] == "c"

    for not_committed in ({"success": False, "error": "x"}, {"success": True, "staged": True},
                          {"success": "yes"}, "not json"):
        assert mgr.notify_memory_tool_write(not_committed, {"action": "add", "content": "z"}) == 0
    assert mirrored() == []


def test_mirrored_content_falls_back_to_new_text_when_content_is_empty():
    # Hermes' notify_memory_tool_write: str(op.get("content") or op.get("new_text") or "")
    writes = expand_memory_writes({"success": True, "replaced_entry": "old"},
                                  {"action": "replace", "target": "memory", "old_text": "o", "content": "",
                                   "new_text": "new"})
    assert [(a, c) for a, _t, c, _m in writes] == [("replace", "new")]


def test_expand_memory_writes_accepts_one_based_dict_indexes():
    writes = expand_memory_writes({"success": True, "removed_entries": {"1": "gone"}},
                                  {"operations": [{"action": "remove", "old_text": "go"}]})
    assert writes == [("remove", "memory", "gone",
                       {"old_text": "go", "previous_content": "gone", "batch_index": 0})]


def test_pre_compress_checkpoint_v2():
    class V2(RecordingProvider):
        pre_compress_checkpoint_api_version = 2

        def on_pre_compress(self, messages, *, evidence_messages=None, **kwargs):
            self._log("v2", evidence_messages)
            return "v2 checkpoint"

    class BrokenV2(V2):
        def on_pre_compress(self, messages, **kwargs):
            raise RuntimeError("checkpoint failed")

    mgr = _manager()
    v2 = V2("ext", tools=())
    mgr.add_provider(v2)
    msgs = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}, {"role": "tool", "content": ""}]
    assert mgr.on_pre_compress(msgs, require_checkpoint=True) == "v2 checkpoint"
    assert v2.events[-1][2] == [{"role": "user", "content": "hi"}]

    plain = _manager()
    plain.add_provider(RecordingProvider("ext", tools=()))
    with pytest.raises(RuntimeError, match=CHECKPOINT_FAILED.format(version=2)):
        plain.on_pre_compress([], require_checkpoint=True)
    broken = _manager()
    broken.add_provider(BrokenV2("ext", tools=()))
    with pytest.raises(RuntimeError, match="checkpoint failed"):
        broken.on_pre_compress([], require_checkpoint=True)
    assert broken.on_pre_compress([]) == ""  # without require_checkpoint the failure is isolated


def test_describe_recall_and_prefetch_context():
    mgr = _manager()
    mgr.add_provider(RecordingProvider("builtin", tools=(), prefetch_text=""))
    mgr.add_provider(RecordingProvider("Facts", tools=(), prefetch_text="- [0.5] likes tea"))
    assert mgr.describe_recall() == "🧠 builtin — recalled 2 memories  🧠 Facts — recalled 2 memories"
    block = mgr.prefetch_context("what does the user drink")
    assert block.startswith("<memory-context>\n[System note:") and "- [0.5] likes tea" in block


def test_oversized_external_recall_is_trimmed_at_a_line_boundary():
    big = "\n".join(f"- fact number {n} with some padding text" for n in range(200))
    mgr = _manager(max_prefetch_chars=500)
    mgr.add_provider(RecordingProvider("builtin", tools=(), prefetch_text="small builtin recall"))
    mgr.add_provider(RecordingProvider("ext", tools=(), prefetch_text=big))
    out = mgr.prefetch_all("what facts do we have")
    kept, note = out.rsplit("\n", 1)
    assert kept.startswith("small builtin recall\n\n- fact number 0")
    assert len(kept) < 600 and kept.endswith("padding text")
    assert note.startswith("[… ") and note.endswith(" more chars of recalled memory omitted]")

def test_trivial_prompts_are_hermes_list_word_for_word():
    # Hermes' TRIVIAL_PROMPT_RE (agent/memory_provider.py): these skip recall ...
    for prompt in ("nah", "yo", "sup", "do it", "thanks :)", "ok...", "done???", "k", "Yes!",
                   "got it", "thanks”", "hi (:", "ok\u00a0—"):
        assert is_trivial_prompt(prompt), prompt
    # ... and these carry meaning (not in Hermes' list, or more than a bare word)
    for prompt in ("thx", "ty", "np", "go on", "good", "sounds good", "perfect", "alright",
                   "kk", "k8s", "yolo", "note", "ok so what now"):
        assert not is_trivial_prompt(prompt), prompt


def test_reserved_core_tool_names_are_the_newest_hermes_list():
    # Hermes' _HERMES_CORE_TOOLS after the 2026-08 renames (todo_list, cronjob_manage,
    # process_manage; the old names still reach the core tools through the dispatcher's aliases),
    # with kanban_* / browser_* / computer_use / manage_connections; send_message,
    # mixture_of_agents and browser_close are no longer core tools.
    names = ("todo_list", "cronjob_manage", "process_manage", "kanban_show", "browser_cdp",
             "computer_use", "manage_connections", "todo")
    ext = RecordingProvider("ext", tools=(*names, "send_message", "mixture_of_agents", "browser_close"))
    mgr = _manager()
    mgr.add_provider(ext)
    assert mgr.get_all_tool_names() == {"send_message", "mixture_of_agents", "browser_close"}
