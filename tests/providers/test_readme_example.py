"""The worked example of docs/hermes.md (a third-party provider package) works as printed."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.providers.activation import build_memory_manager

# --- exactly the two files shown in docs/hermes.md -------------------------------------------
PYPROJECT = '''\
[project]
name = "hermes-store-notes"
version = "0.1.0"
dependencies = ["hermes_store"]

[project.entry-points."hermes_store.providers"]
notes = "notes_provider:NotesProvider"
'''

NOTES_PROVIDER = '''\
"""A tiny memory provider: a `note` tool and keyword recall over a notes file."""
import json
from pathlib import Path

from hermes_store.providers import MemoryProvider


class NotesProvider(MemoryProvider):
    name = "notes"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.path = Path(kwargs["hermes_home"]) / "notes.txt"

    def get_tool_schemas(self):
        return [{"name": "note", "description": "Save a one-line note.",
                 "parameters": {"type": "object", "required": ["text"],
                                "properties": {"text": {"type": "string"}}}}]

    def handle_tool_call(self, tool_name, args, **kwargs):
        with self.path.open("a", encoding="utf-8") as f:
            f.write(" ".join(args["text"].split()) + "\\n")
        return json.dumps({"success": True})

    def prefetch(self, query, *, session_id=""):
        if not self.path.exists():
            return ""
        words = set(query.lower().split())
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return "\\n".join(f"- {line}" for line in lines if words & set(line.lower().split()))
'''


def _install(site) -> None:
    """What ``pip install .`` leaves behind: the module plus dist-info with the entry point."""
    (site / "notes_provider.py").write_text(NOTES_PROVIDER)
    info = site / "hermes_store_notes-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-store-notes\nVersion: 0.1.0\n")
    entry_points = PYPROJECT.split('[project.entry-points."hermes_store.providers"]\n', 1)[1]
    (info / "entry_points.txt").write_text("[hermes_store.providers]\n" + entry_points.replace('"', ""))


def test_example_is_short():
    assert len(PYPROJECT.splitlines()) + len(NOTES_PROVIDER.splitlines()) < 40


def test_worked_example_end_to_end(home, tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    _install(site)
    monkeypatch.syspath_prepend(str(site))
    result = CliRunner().invoke(cli, ["--home", str(home.root), "provider", "use", "notes"])
    assert result.exit_code == 0, result.output
    manager, selection = build_memory_manager(home, session_id="s1")
    try:
        assert selection.active == "notes"
        assert manager.get_all_tool_names() == {"memory", "note"}
        assert json.loads(manager.handle_tool_call("note", {"text": "standup moved to 10:30"}))["success"]
        block = manager.prefetch_context("when is standup now?")
        assert "- standup moved to 10:30" in block and block.startswith("<memory-context>")
    finally:
        manager.shutdown_all()
