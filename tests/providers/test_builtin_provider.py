"""The builtin provider over the real MemoryStore, mirrored to an external provider."""

from __future__ import annotations

import json

from provider_fakes import RecordingProvider

from hermes_store.providers.activation import build_memory_manager
from hermes_store.providers.builtin import BuiltinMemoryProvider
from hermes_store.providers.manager import MemoryManager


def _session(home):
    ext = RecordingProvider("ext", tools=("ext_tool",))
    manager = MemoryManager(hermes_home=str(home.root))
    manager.add_provider(ext)
    manager.add_provider(BuiltinMemoryProvider(home))
    manager.initialize_all("s-1", platform="cli", agent_context="primary")
    return manager, ext


def _mirrored(ext):
    out = [(d["action"], d["target"], d["content"], d["metadata"]) for _, hook, d in ext.events
           if hook == "on_memory_write"]
    ext.events.clear()
    return out


def call(manager, args):
    return json.loads(manager.handle_tool_call("memory", args))


def test_builtin_is_first_and_owns_the_memory_tool(home):
    manager, _ = _session(home)
    try:
        assert [manager.name_of(p) for p in manager.providers] == ["builtin", "ext"]
        assert manager.get_all_tool_names() == {"memory", "ext_tool"}
        schema = manager.get_all_tool_schemas()[0]
        assert schema["name"] == "memory" and "operations" in schema["parameters"]["properties"]
    finally:
        manager.shutdown_all()


def test_committed_writes_are_mirrored_with_metadata(home):
    manager, ext = _session(home)
    try:
        assert call(manager, {"action": "add", "target": "user", "content": "Prefers dark mode"})["success"]
        (action, target, content, meta), = _mirrored(ext)
        assert (action, target, content) == ("add", "user", "Prefers dark mode")
        assert meta["session_id"] == "s-1" and meta["tool_name"] == "memory" and meta["write_origin"] == "tool"
        assert meta["platform"] == "cli" and meta["execution_context"] == "primary"

        assert call(manager, {"action": "replace", "target": "user", "old_text": "dark",
                              "content": "Prefers light mode"})["success"]
        (action, _, content, meta), = _mirrored(ext)
        assert (action, content, meta["previous_content"]) == ("replace", "Prefers light mode",
                                                               "Prefers dark mode")

        assert call(manager, {"action": "remove", "target": "user", "old_text": "light"})["success"]
        (action, _, content, _meta), = _mirrored(ext)
        assert (action, content) == ("remove", "Prefers light mode")
    finally:
        manager.shutdown_all()


def test_batches_are_expanded_and_failures_are_not_mirrored(home):
    manager, ext = _session(home)
    try:
        assert call(manager, {"action": "add", "target": "memory", "content": "Repo uses uv"})["success"]
        _mirrored(ext)
        result = call(manager, {"target": "memory", "operations": [
            {"action": "add", "content": "CI runs on GitHub Actions"},
            {"action": "replace", "old_text": "uv", "content": "Repo uses uv and ruff"},
        ]})
        assert result["success"], result
        assert [(a, c) for a, _, c, _ in _mirrored(ext)] == [
            ("add", "CI runs on GitHub Actions"), ("replace", "Repo uses uv and ruff")]

        failed = call(manager, {"action": "remove", "target": "memory", "old_text": "no such entry"})
        assert failed["success"] is False
        poisoned = call(manager, {"target": "memory", "operations": [
            {"action": "add", "content": "fine entry"},
            {"action": "replace", "old_text": "missing entry", "content": "x"},
        ]})
        assert poisoned["success"] is False
        assert _mirrored(ext) == []
    finally:
        manager.shutdown_all()


def test_system_prompt_is_the_frozen_snapshot_refreshed_on_session_switch(home):
    manager, _ = _session(home)
    try:
        assert manager.build_system_prompt() == ""
        call(manager, {"action": "add", "target": "memory", "content": "Project codename is Falcon"})
        assert "Falcon" not in manager.build_system_prompt()  # frozen for the session
        manager.on_session_switch("s-2", parent_session_id="s-1", reset=True)
        prompt = manager.build_system_prompt()
        assert "MEMORY (your personal notes)" in prompt and "Project codename is Falcon" in prompt
    finally:
        manager.shutdown_all()


def test_disabled_stores_drop_the_tool(home):
    home.config_path.write_text("memory:\n  memory_enabled: false\n  user_profile_enabled: false\n")
    assert BuiltinMemoryProvider(home).get_tool_schemas() == []


def test_build_memory_manager_with_the_fact_store_mirrors_builtin_writes(home):
    home.config_path.write_text("memory:\n  provider: holographic_store\n")
    manager, selection = build_memory_manager(home, session_id="s-9")
    try:
        assert selection.active == "holographic_store", selection.message
        assert manager.get_all_tool_names() == {"memory", "fact_store", "fact_feedback"}
        assert call(manager, {"action": "add", "target": "user",
                              "content": "Alice works at Acme Robotics as a firmware engineer"})["success"]
        found = json.loads(manager.handle_tool_call("fact_store", {"action": "search", "query": "firmware"}))
        assert any("firmware" in r["content"] for r in found["results"]), found
    finally:
        manager.shutdown_all()
