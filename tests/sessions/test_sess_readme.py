"""README's supported-agents table is the one the registry generates."""

from __future__ import annotations

from pathlib import Path

from hermes_store.sessions.importers import IMPORTERS
from hermes_store.sessions.importers.base import Importer
from hermes_store.sessions.importers.catalog import formats_table, indexed_text, readme_section

README = Path(__file__).resolve().parents[2] / "docs" / "formats.md"


def test_readme_table_is_generated_from_the_registry():
    assert readme_section(IMPORTERS) in README.read_text(encoding="utf-8"), (
        "docs/formats.md's supported-agents table is out of date: run scripts/formats_table.py --write")


def test_table_rows_follow_the_importers():
    class Example(Importer):
        """Example chats | with a pipe."""

        name = "example"
        agent = "Example Agent"
        default_locations = {"linux": ("~/.example/*.jsonl",), "darwin": ("~/Library/Example/*.jsonl",)}

        @classmethod
        def sniff(cls, head):
            return 0.0

        def read(self, state):
            yield from ()

    table = formats_table({"example": Example})
    row = table.splitlines()[2]
    assert row == ("| Example Agent | `example` | `~/.example/*.jsonl`<br>`~/Library/Example/*.jsonl` (macOS) |"
                   " Example chats \\| with a pipe. |")
    assert indexed_text(Example) == "Example chats | with a pipe."
