"""FactStoreProvider: interface, prefetch lines, auto-extract switch, mirroring, no raising."""

from __future__ import annotations

import json

import pytest
import yaml

from hermes_store.providers.base import MemoryProvider
from hermes_store.providers.holographic_store import FactStoreProvider

pytestmark = pytest.mark.usefixtures("engine")  # every test on both storage engines


def make(home, config=None):
    provider = FactStoreProvider(config)
    provider.initialize("s1", hermes_home=str(home.root), platform="cli", agent_context="primary")
    return provider


def test_interface_and_schemas(home):
    provider = make(home)
    assert isinstance(provider, MemoryProvider)
    assert provider.name == "holographic_store" and provider.is_available()
    assert [s["name"] for s in provider.get_tool_schemas()] == ["fact_store", "fact_feedback"]
    assert "Empty fact store" in provider.system_prompt_block()
    provider.shutdown()


def test_prefetch_lines_carry_trust_and_id(home):
    provider = make(home)
    reply = json.loads(provider.handle_tool_call("fact_store", {"action": "add", "content": "Ann drinks oolong tea"}))
    assert reply["status"] == "added"
    text = provider.prefetch("what tea does Ann like?")
    assert text.splitlines() == ["## Holographic Memory", "- [0.5] Ann drinks oolong tea (#1)"]
    assert provider.store.get_fact(1)["retrieval_count"] == 1
    assert provider.recall_status().count == 1
    assert "1 facts stored" in provider.system_prompt_block()
    for _ in range(3):
        provider.handle_tool_call("fact_feedback", {"action": "unhelpful", "fact_id": 1})
    assert provider.prefetch("what tea does Ann like?") == ""
    provider.shutdown()


def test_auto_extract_off_by_default_and_string_false(home):
    messages = [{"role": "user", "content": "I prefer dark mode in every editor."}]
    for config in (None, {"auto_extract": "false"}):
        provider = make(home, config)
        provider.on_session_end(messages)
        assert provider.store.count() == 0
        provider.shutdown()
    provider = make(home, {"auto_extract": "true"})
    provider.on_session_end(messages)
    assert [f["content"] for f in provider.store.list_facts()] == ["I prefer dark mode in every editor"]
    provider.shutdown()


def test_auto_extract_reads_config_yaml(home):
    home.config_path.write_text(yaml.safe_dump({"memory": {"holographic_store": {"auto_extract": True}}}))
    provider = make(home)
    provider.on_session_end([{"role": "user", "content": "We decided to use SQLite for state."}])
    assert provider.store.list_facts()[0]["category"] == "project"
    provider.shutdown()


def test_mirrors_add_replace_remove(home):
    provider = make(home)
    provider.on_memory_write("add", "user", "User prefers concise answers")
    fact = provider.store.list_facts()[0]
    assert fact["category"] == "user_pref"
    provider.on_memory_write("replace", "user", "User prefers detailed answers",
                             metadata={"old_text": "concise", "previous_content": "User prefers concise answers"})
    facts = provider.store.list_facts()
    assert [(f["fact_id"], f["content"]) for f in facts] == [(fact["fact_id"], "User prefers detailed answers")]
    provider.on_memory_write("replace", "user", "User prefers bullet lists", metadata={"old_text": "detailed"})
    assert [f["content"] for f in provider.store.list_facts()] == ["User prefers bullet lists"]
    provider.on_memory_write("remove", "user", "", metadata={"old_text": "bullet",
                                                             "previous_content": "User prefers bullet lists"})
    assert provider.store.count() == 0
    provider.on_memory_write("add", "memory", "Server runs on port 8080")
    provider.on_memory_write("remove", "memory", "port 8080")
    assert provider.store.count() == 0
    provider.shutdown()


def test_mirrored_entry_holding_a_secret_is_found_again(home):
    """With ``memory.allow_secrets`` an entry may hold a token; its fact holds the marker. A replace
    or remove compared the raw entry (or an ``old_text`` naming the token) with the stored marker:
    nothing matched, the replace added a second fact and the old one stayed, recalled for ever."""
    token = "ghp_R2d2C3p0Bb8Yoda4Luke6Leia8Han0Solo2Xy"
    entry = f"Deploy key of the okapi repo is {token}"
    provider = make(home)
    provider.on_memory_write("add", "memory", entry)
    fact = provider.store.list_facts()[0]
    assert token not in fact["content"] and "[REDACTED:github-token:" in fact["content"]
    provider.on_memory_write("replace", "memory", "Deploy key of the okapi repo was rotated",
                             metadata={"old_text": token, "previous_content": entry})
    assert [(f["fact_id"], f["content"]) for f in provider.store.list_facts()] == [
        (fact["fact_id"], "Deploy key of the okapi repo was rotated")]
    provider.on_memory_write("add", "memory", f"okapi backup token {token}")
    provider.on_memory_write("remove", "memory", "", metadata={"old_text": f"backup token {token}"})
    assert [f["content"] for f in provider.store.list_facts()] == ["Deploy key of the okapi repo was rotated"]
    provider.shutdown()


def test_non_primary_context_does_not_write(home):
    provider = FactStoreProvider()
    provider.initialize("cron", hermes_home=str(home.root), agent_context="cron")
    provider.on_memory_write("add", "memory", "something from cron")
    assert provider.store.count() == 0
    provider.shutdown()


def test_failures_never_raise(home, monkeypatch):
    provider = make(home)

    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(type(provider.store), "search", boom)
    monkeypatch.setattr(type(provider.store), "add_fact", boom)
    assert provider.prefetch("anything") == ""
    provider.on_memory_write("add", "memory", "x")
    provider._config = provider.config.__class__(auto_extract=True)
    provider.on_session_end([{"role": "user", "content": "I prefer dark mode always"}])
    reply = json.loads(provider.handle_tool_call("fact_store", {"action": "search", "query": "x"}))
    assert reply["success"] is False and "disk on fire" in reply["error"]
    assert json.loads(provider.handle_tool_call("nope", {}))["success"] is False
    provider.shutdown()


def test_save_config_merges_atomically(home):
    home.config_path.write_text(yaml.safe_dump({"memory": {"provider": "holographic_store"}, "other": 1}))
    provider = make(home)
    provider.save_config({"auto_extract": "true", "hrr_dim": "512"}, str(home.root))
    data = yaml.safe_load(home.config_path.read_text())
    assert data["other"] == 1 and data["memory"]["provider"] == "holographic_store"
    assert data["memory"]["holographic_store"] == {"auto_extract": True, "hrr_dim": 512}
    assert provider.config.auto_extract is True
    provider.shutdown()


def test_prefetch_has_a_relevance_floor(home):
    provider = make(home)
    provider.store.add_fact("the build server runs Jenkins on port 8080")
    provider.store.add_fact("Mia prefers green tea")
    assert provider.prefetch("please fix the flaky login page test on staging today build") == ""
    assert "Jenkins" in provider.prefetch("which port does the build server use")
    assert "green tea" in provider.prefetch("what should I bring Mia")
    provider.shutdown()
