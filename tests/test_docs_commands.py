"""Every shell command shown in README.md and docs/*.md is run, so the docs never drift (issue 22).

The convention for writers of README.md and docs/*.md:

* Commands meant to be run go in ```sh (or ```bash) fences; one command per line, a trailing
  ``\\`` continues it on the next line. Synopses with placeholders (``ID``, ``[--json]``,
  ``a|b``) go in ```text fences: they are not run.
* Blank lines and lines starting with ``#`` are skipped.
* A command ending in ``# not run: REASON`` is skipped (it needs a server, another program, the
  network, or it is the test suite itself); the reason is required.
* A command ending in ``# exit N`` must exit with status N; any other must exit 0.
* Each file's commands run in order, with ``bash -c``, in one fresh home for that file: a copy
  of ``examples/sample_home`` (MEMORY.md, USER.md, four transcripts in ``sessions/``, nothing
  indexed yet) in a temporary directory, with ``HERMES_HOME`` pointing at it, the working
  directory at the repository root (so ``examples/...`` paths work) and this Python's
  ``bin`` directory first on ``PATH`` (so ``hermes-store`` is the package under test). Index
  the transcripts in your file before searching them. ``$HERMES_HOME`` may be used in commands.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^\s*```(sh|bash)\s*$")
NOT_RUN = re.compile(r"#\s*not run:\s*(\S.*)$")
EXIT = re.compile(r"#\s*exit\s+(\d+)\s*$")


def doc_files() -> list[Path]:
    """README.md and every docs/*.md (whoever adds one)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def commands(path: Path) -> list[tuple[int, str, int | None]]:
    """(line number, command, expected status or None when not run) for each shell command."""
    found: list[tuple[int, str, int | None]] = []
    inside, pending, start = False, "", 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            inside = bool(FENCE.match(line)) if not inside else False
            continue
        if not inside:
            continue
        if pending:
            line, pending = pending + line.lstrip(), ""
        else:
            start = number
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1] + " "
            continue
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if NOT_RUN.search(text):
            found.append((start, text, None))
            continue
        status = EXIT.search(text)
        found.append((start, text, int(status.group(1)) if status else 0))
    return found


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_shown_command_works(path: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(ROOT / "examples" / "sample_home", home)
    env = {k: v for k, v in os.environ.items()
           if k not in ("HERMES_STORE_DATABASE_URL", "NO_COLOR", "HERMES_STORE_DEBUG")}
    env.update(HERMES_HOME=str(home), HOME=str(tmp_path),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    for number, command, expected in commands(path):
        if expected is None:
            continue
        done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == expected, (
            f"{path.name}:{number}: `{command}` exited {done.returncode}, expected {expected}\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def test_the_convention_is_applied() -> None:
    """Skipped commands say why; README shows its two set-up commands."""
    for path in doc_files():
        for number, command, expected in commands(path):
            if expected is None:
                assert NOT_RUN.search(command).group(1).strip(), f"{path.name}:{number}: give a reason"
    shown = [c for _, c, _ in commands(ROOT / "README.md")]
    assert any(c.startswith("scripts/demo") for c in shown)
    assert any(c.startswith("scripts/test") for c in shown)
