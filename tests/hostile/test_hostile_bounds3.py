"""Issue 25: every batch, entity list, dump and config edit is bounded before work starts."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from hermes_store.builtin.store import MemoryStore
from hermes_store.cli import cli
from hermes_store.facts import portable
from hermes_store.facts.store import FactStore, FactStoreError
from hermes_store.tools import handle_tool_call


def tool(home, name, args):
    return json.loads(handle_tool_call(name, args, home=home))


@pytest.mark.parametrize("shape", ["list", "comma"])
def test_fact_add_with_50000_entities_is_refused_fast(engine, home, shape):
    names = [f"entity{i}" for i in range(50_000)]
    started = time.monotonic()
    reply = tool(home, "fact_store", {"action": "add", "content": "A fact with far too many entities",
                                      "entities": names if shape == "list" else ",".join(names)})
    assert time.monotonic() - started < 3.0
    assert reply["success"] is False and "too many" in reply["error"] and "64" in reply["error"]
    assert tool(home, "fact_store", {"action": "list"})["count"] == 0
    with FactStore(home.ensure()) as store, pytest.raises(FactStoreError, match="too many entities"):
        store.add_fact("Another fact", entities=names)
    ok = tool(home, "fact_store", {"action": "add", "content": "A fact with a few entities",
                                   "entities": names[:64]})
    assert ok["success"] is True and ok["status"] == "added"


def test_a_memory_batch_of_50000_operations_is_refused_before_any_scan(home):
    (home.memories_dir / "MEMORY.md").write_text("an existing note\n", encoding="utf-8")
    ops = [{"action": "add", "content": f"note {i}"} for i in range(50_000)]
    started = time.monotonic()
    reply = tool(home, "memory", {"target": "memory", "operations": ops})
    assert time.monotonic() - started < 2.0
    assert reply["success"] is False and "at most 100" in reply["error"]
    store = MemoryStore(home)
    store.load_from_disk()
    started = time.monotonic()
    direct = store.apply_batch("memory", ops)
    assert time.monotonic() - started < 1.0
    assert direct["success"] is False and "at most 100" in direct["error"]
    store.close()
    assert (home.memories_dir / "MEMORY.md").read_text(encoding="utf-8") == "an existing note\n"
    small = tool(home, "memory", {"target": "memory", "operations": ops[:3]})
    assert small["success"] is True


def _dump(path, facts: int) -> None:
    lines = [json.dumps({"kind": portable.FORMAT, "version": 1, "facts": facts, "entities": 0})]
    lines += [json.dumps({"kind": "fact", "fact_id": i + 1, "content": f"Imported fact number {i}",
                          "category": "general", "tags": "", "trust_score": 0.5}) for i in range(facts)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_facts_import_of_a_huge_dump_is_refused_unread(home, tmp_path, monkeypatch):
    dump = tmp_path / "dump.jsonl"
    _dump(dump, 50)
    monkeypatch.setattr(portable, "MAX_EXPORT_BYTES", dump.stat().st_size - 1)
    result = CliRunner().invoke(cli, ["--home", str(home.root), "facts", "import", str(dump)])
    assert result.exit_code != 0
    assert str(dump) in result.output and "at most" in result.output and "nothing imported" in result.output
    monkeypatch.setattr(portable, "MAX_EXPORT_BYTES", 64 << 20)
    monkeypatch.setattr(portable, "MAX_EXPORT_ROWS", 10)
    result = CliRunner().invoke(cli, ["--home", str(home.root), "facts", "import", str(dump)])
    assert result.exit_code != 0 and f"{dump}:12: more than 10 facts" in result.output
    assert tool(home, "fact_store", {"action": "list"})["count"] == 0
    assert portable.MAX_EXPORT_BYTES <= 64 << 20


def _laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\nmemory:\n  provider: builtin\n"


@pytest.mark.parametrize("command", [["provider", "off"], ["provider", "use", "builtin"]])
def test_provider_edit_on_an_alias_bomb_is_fast(home, command):
    path = home.root / "config.yaml"
    path.write_text(_laughs(), encoding="utf-8")
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["--home", str(home.root), *command])
    assert time.monotonic() - started < 3.0
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert str(path) in result.output
    assert path.read_text(encoding="utf-8") == _laughs()
