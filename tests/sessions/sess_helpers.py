"""Helpers shared by the session-index tests (imported by test modules)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
# the original six-format tree; the per-format directories added since have their own tests
CORE = ("hermes_home", "claude", "codex", "openai")


def core(fixtures: Path) -> list[Path]:
    """The six-format part of a fixtures copy (whole-tree counts stay stable as formats are added)."""
    return [fixtures / name for name in CORE]


def index_json(run, *args) -> tuple[int, dict]:
    """Run ``sessions index --json ARGS`` and return (exit code, summary)."""
    result = run("sessions", "index", "--json", *args)
    return result.exit_code, json.loads(result.stdout)


def write_jsonl(path: Path, objects, mode: str = "w") -> None:
    """Write (or append) JSON objects one per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode, encoding="utf-8") as handle:
        for obj in objects:
            handle.write(json.dumps(obj, ensure_ascii=False) + "\n")
