"""Red team (issue 14 point 3): invalid values for every ``memory.*`` and ``store.*`` key.

Lists, maps, huge and non-finite numbers, YAML tags (``!!binary``, ``!!python/object``),
hex and null values for each key: no command may trace back, and where the memory
config cannot be read the memory tool refuses the write naming config.yaml.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.home import Home
from hermes_store.tools import handle_tool_call

VALUES = ["[1, 2]", "{a: 1}", "-5", "1e999", "99999999999999999999999", "'yes please'", "!!binary aGk=",
          "!!python/object:os.system ls", ".nan", "0x10"]
KEYS = ["memory_enabled", "user_profile_enabled", "memory_char_limit", "user_char_limit", "write_approval",
        "nudge_interval", "provider", "render"]
# Values no reader of these keys can accept (a bool or an int key).
NEVER_VALID = ["[1, 2]", "{a: 1}", "!!python/object:os.system ls"]


def _no_traceback(result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output


@pytest.mark.parametrize("key", KEYS)
def test_invalid_memory_values_never_trace_back(tmp_path, key):
    for n, value in enumerate(VALUES):
        home = Home(tmp_path / f"h{n}").ensure()
        home.config_path.write_text(f"memory:\n  {key}: {value}\n", encoding="utf-8")
        for argv in (["memory", "show"], ["memory", "add", "hello world entry"], ["status"]):
            _no_traceback(CliRunner().invoke(cli, ["--home", str(home.root), *argv]))
        reply = json.loads(handle_tool_call("memory", {"action": "add", "target": "memory", "content": "tool entry"},
                                            home=home))
        if value in NEVER_VALID and key not in ("provider", "render"):
            assert reply["success"] is False and "config.yaml" in reply["error"], (key, value, reply)
            memory_md = home.memories_dir / "MEMORY.md"
            assert not memory_md.exists() or "tool entry" not in memory_md.read_text(encoding="utf-8")


@pytest.mark.parametrize("store_yaml", ["store:\n  database_url: [1]\n", "store:\n  database_url: 5\n",
                                        "store: [1, 2]\n", "store:\n  database_url: 'sqlite:////nonexistent/d/x.db'\n",
                                        "store:\n  database_url: 'nosuchengine://x'\n"])
def test_invalid_store_values_give_a_clear_error(tmp_path, store_yaml):
    home = Home(tmp_path / "h").ensure()
    home.config_path.write_text(store_yaml, encoding="utf-8")
    for argv in (["facts", "list"], ["status"], ["recall", "x"], ["sessions", "list"]):
        _no_traceback(CliRunner().invoke(cli, ["--home", str(home.root), *argv]))
