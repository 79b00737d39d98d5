"""The README's supported-agents table names every format added for the wider coverage."""

from __future__ import annotations

import re
from pathlib import Path

from hermes_store.sessions.importers.registry import IMPORTERS

README = Path(__file__).resolve().parents[2] / "docs" / "formats.md"  # the table moved there (issue 22)
# the formats added for the wider coverage (issue 12, "Coverage")
ADDED = ("gemini-cli", "gemini-cli-logs", "gemini-cli-checkpoint", "qwen-code", "qwen-code-legacy",
         "qwen-code-logs", "opencode-json", "opencode-db", "cursor", "chatgpt-export", "aider", "cline",
         "copilot-chat", "copilot-cli", "goose-jsonl", "goose-db", "amp", "crush", "factory-droid",
         "kimi-cli", "pi", "openclaw", "openhands")


def test_every_added_format_is_in_the_readme_table():
    text = README.read_text(encoding="utf-8")
    section = text.split("<!-- supported-agents:start", 1)[1].split("<!-- supported-agents:end", 1)[0]
    named = set(re.findall(r"`([a-z0-9-]+)`", section))
    assert [name for name in ADDED if name not in named] == []
    assert [name for name in ADDED if name not in IMPORTERS] == []  # and each is registered


def test_default_locations_are_bounded_globs_for_both_platforms():
    """Discovery expands these under $HOME: every added format names Linux and macOS places,
    relative to the home directory, without unbounded recursive globs."""
    for name in ADDED:
        locations = IMPORTERS[name].default_locations
        assert set(locations) == {"linux", "darwin"}, name
        for pattern in (*locations["linux"], *locations["darwin"]):
            assert pattern.startswith("~/") and "**" not in pattern, (name, pattern)
