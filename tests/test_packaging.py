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
    shipped = sorted(n.rsplit("/", 1)[-1] for n in names if n.startswith("hermes_store/_schema/"))
    expected = sorted(p.name for p in (ROOT / "schema").glob("*.sql"))
    assert shipped == expected and expected
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "hermes-store = hermes_store.cli:main" in text
