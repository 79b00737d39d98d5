"""Issue 14 point 6: one symlink rule everywhere: a file we write is written through its link."""

from __future__ import annotations

import json
import os
import stat

from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.db import Database
from hermes_store.tools import handle_tool_call


def run(home, *args):
    return CliRunner().invoke(cli, ["--home", str(home.root), *args])


def test_symlinked_memory_and_config_are_written_through(home, tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "MEMORY.md").write_text("first note\n", encoding="utf-8")
    (dotfiles / "config.yaml").write_text("# my settings\nmemory:\n  memory_char_limit: 3000\n", encoding="utf-8")
    (home.memories_dir / "MEMORY.md").symlink_to(dotfiles / "MEMORY.md")
    home.config_path.symlink_to(dotfiles / "config.yaml")
    reply = json.loads(handle_tool_call("memory", {"action": "add", "target": "memory", "content": "second note"},
                                        home=home))
    assert reply["success"] is True
    assert (home.memories_dir / "MEMORY.md").is_symlink()
    assert "second note" in (dotfiles / "MEMORY.md").read_text()
    assert run(home, "provider", "use", "builtin").exit_code == 0
    assert home.config_path.is_symlink()
    text = (dotfiles / "config.yaml").read_text()
    assert "# my settings" in text and "memory_char_limit: 3000" in text


def test_database_through_a_dangling_symlink_is_private(home, tmp_path):
    target = tmp_path / "elsewhere" / "store.db"
    target.parent.mkdir()
    home.db_path.symlink_to(target)
    Database(home.db_path).close()
    assert home.db_path.is_symlink() and target.exists()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_symlinked_plugins_dir_is_written_through(home, tmp_path):
    real = tmp_path / "real_plugins"
    real.mkdir()
    home.plugins_dir.symlink_to(real)
    result = CliRunner().invoke(cli, ["--home", str(home.root), "hermes", "install", "--hermes-home",
                                      str(home.root)])
    assert result.exit_code == 0, result.output
    assert home.plugins_dir.is_symlink() and any(real.iterdir())


def test_a_link_that_cannot_be_written_is_refused_naming_it(home, tmp_path):
    link = home.memories_dir / "MEMORY.md"
    link.symlink_to(tmp_path / "no_such_dir" / "MEMORY.md")
    reply = json.loads(handle_tool_call("memory", {"action": "add", "target": "memory", "content": "note"},
                                        home=home))
    assert reply["success"] is False and str(link) in reply["error"]
    assert link.is_symlink() and not os.path.exists(tmp_path / "no_such_dir")
