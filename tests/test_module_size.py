"""No module of the package or its scripts is over 700 lines (the brief's limit: a module that
long holds more than one job)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 700


def test_no_module_is_over_700_lines() -> None:
    too_long = {}
    for folder in ("hermes_store", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > LIMIT:
                too_long[str(path.relative_to(ROOT))] = lines
    assert not too_long, f"modules over {LIMIT} lines: {too_long}"
