"""The wheel carries the schema migrations (not only editable installs)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_ships_schema_and_cli(tmp_path):
    # hatchling comes with the `test` extra, so the build needs no network
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True,
    )
    assert built.returncode == 0, built.stderr
    wheel = next(tmp_path.glob("hermes_store-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(n[len("hermes_store/_schema/"):] for n in names
                     if n.startswith("hermes_store/_schema/") and n.endswith(".sql"))
    expected = sorted(p.relative_to(ROOT / "schema").as_posix() for p in (ROOT / "schema").rglob("*.sql"))
    assert shipped == expected and expected
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "hermes-store = hermes_store.cli:main" in text


def test_readme_names_every_front_end_extra_and_the_set_up_brings_them() -> None:
    """README's set-up paragraph listed `[mcp,browse,postgresql]` as the front ends' extras: a
    newcomer installing that way had no `tui` (Textual) and no event-driven `sessions watch`.
    Every extra a front end needs is named there, and the `test` extra `scripts/demo` and
    `scripts/test` install brings each of them."""
    import re

    import pytest

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = set(re.search(r"pip install -e '\.\[([a-z,]+)\]'", readme).group(1).split(","))
    front_ends = {"mcp", "browse", "tui", "watch", "postgresql"}
    assert named == front_ends and front_ends <= set(extras)
    assert all(f"hermes_store[{name}]" in extras["test"] or name == "postgresql" for name in front_ends)
    assert {"psycopg[binary]>=3.1,<4", "psycopg-pool>=3.2,<4"} <= set(extras["test"])
