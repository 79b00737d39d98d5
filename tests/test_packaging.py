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
