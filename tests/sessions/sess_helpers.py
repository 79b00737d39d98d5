"""Helpers shared by the session-index tests (imported by test modules)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


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
