"""Issue 14 point 3 (config fails closed) and 11b (a YAML alias bomb is refused fast)."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.home import ConfigError, load_config
from hermes_store.tools import handle_tool_call

GOOD = "memory:\n  write_approval: true\n  memory_enabled: false\n  memory_char_limit: 3000\n"


def _add(home, target="memory") -> dict:
    return json.loads(handle_tool_call("memory", {"action": "add", "target": target,
                                                  "content": "deploys go through make release"}, home=home))


@pytest.mark.parametrize("broken", [
    GOOD + "  nudge_interval: often\n",             # one bad value
    GOOD + "  render: fancy\n",
    GOOD + "agent: [unclosed\n",                    # a YAML syntax error anywhere
    "memory: 7\n",                                  # wrong shape
])
def test_unusable_config_refuses_writes_naming_file_line_and_key(home, broken):
    (home.root / "config.yaml").write_text(broken, encoding="utf-8")
    for target in ("memory", "user"):
        reply = _add(home, target)
        assert reply["success"] is False
        assert str(home.root / "config.yaml") in reply["error"]
        assert "refused" in reply["error"]
    assert not (home.memories_dir / "MEMORY.md").exists() or \
        "make release" not in (home.memories_dir / "MEMORY.md").read_text()
    assert not (home.memories_dir / "USER.md").exists()


def test_bad_value_names_line_and_key_and_keeps_the_others(home):
    (home.root / "config.yaml").write_text(GOOD + "  nudge_interval: often\n", encoding="utf-8")
    cfg = home.read_memory_config()
    assert cfg.write_approval is True and cfg.memory_enabled is False and cfg.memory_char_limit == 3000
    assert cfg.errors == (f"{home.root / 'config.yaml'}:5: memory.nudge_interval: expected an integer, "
                          "got 'often'",)


def test_reads_go_on_with_a_broken_config(home):
    (home.memories_dir / "MEMORY.md").write_text("an existing note\n", encoding="utf-8")
    (home.root / "config.yaml").write_text("memory: {write_approval: maybe}\n", encoding="utf-8")
    runner = CliRunner()
    shown = runner.invoke(cli, ["--home", str(home.root), "memory", "show"])
    assert shown.exit_code == 0 and "an existing note" in shown.output
    assert "memory.write_approval" in shown.output  # the warning (stderr, mixed in by CliRunner)
    status = runner.invoke(cli, ["--home", str(home.root), "status", "--json"])
    assert status.exit_code == 0
    assert "memory.write_approval" in json.loads(status.stdout)["config_errors"][0]
    added = runner.invoke(cli, ["--home", str(home.root), "memory", "add", "another note"])
    assert json.loads(added.stdout)["success"] is False and "refused" in added.stdout
    assert (home.memories_dir / "MEMORY.md").read_text() == "an existing note\n"
    recalled = json.loads(handle_tool_call("recall", {"query": "existing note"}, home=home))
    assert recalled["success"] is True and recalled["count"] >= 1


def test_valid_config_still_applies(home):
    (home.root / "config.yaml").write_text(GOOD.replace("memory_enabled: false", "memory_enabled: true"),
                                           encoding="utf-8")
    reply = _add(home)
    assert reply["success"] is True and reply.get("staged") is True  # write_approval honoured


def _laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\nmemory:\n  write_approval: true\n"


def _merges(levels: int = 12) -> str:
    lines = ["m0: &m0 {k0: 1, k1: 2, k2: 3, k3: 4}"]
    lines += [f"m{i}: &m{i} {{" + ", ".join(f"x{j}: {{<<: *m{i - 1}}}" for j in range(4)) + "}"
              for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("bomb", [_laughs(), _merges(), "a: &a [*a]\n", "x" * (2 << 20)])
def test_alias_bomb_refused_fast(home, bomb):
    path = home.root / "config.yaml"
    path.write_text(bomb, encoding="utf-8")
    started = time.monotonic()
    with pytest.raises(ConfigError, match=str(path)):
        load_config(path)
    assert time.monotonic() - started < 1.0
    started = time.monotonic()
    reply = _add(home)
    status = CliRunner().invoke(cli, ["--home", str(home.root), "status", "--json"])
    assert time.monotonic() - started < 5.0
    assert reply["success"] is False and str(path) in reply["error"]
    assert "Traceback" not in status.output


def test_ordinary_aliases_still_load(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("base: &b {render: compact}\nmemory:\n  <<: *b\n  write_approval: true\n", encoding="utf-8")
    assert load_config(path)["memory"] == {"render": "compact", "write_approval": True}
