"""``scripts/demo`` as README.md's first step shows it, its output read from a pipe (found running it
as a newcomer: ``scripts/demo | less`` showed ``ESC[1m$ hermes-store status ESC[0m`` on every
heading, and the headings printed ``tool memory {"action": "add", ...}`` unquoted, which a shell
cannot run as shown). The package is not installed again: a stand-in ``_venv.sh`` puts this
Python's ``hermes-store`` first on PATH, as the real one does with ``.venv``."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_in_a_pipe_prints_plain_runnable_headings(tmp_path: Path) -> None:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    shutil.copy(ROOT / "scripts" / "demo", scripts / "demo")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "hermes-store").write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -c "from hermes_store.cli import main; main()" "$@"\n',
        encoding="utf-8")
    (bin_dir / "hermes-store").chmod(0o755)
    (scripts / "_venv.sh").write_text(f'ROOT="{ROOT}"\nexport PATH="{bin_dir}:$PATH"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items()
           if k not in ("HERMES_STORE_DATABASE_URL", "NO_COLOR", "HERMES_HOME")}
    env.update(TERM="xterm-256color", PYTHONPATH=str(ROOT))
    done = subprocess.run(["bash", str(scripts / "demo")], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    headings = [line[2:] for line in done.stdout.splitlines() if line.startswith("$ hermes-store ")]
    assert len(headings) > 10
    argv = {tuple(shlex.split(line)) for line in headings}
    assert ("hermes-store", "tool", "fact_feedback", '{"action": "helpful", "fact_id": 1}') in argv
    assert ("hermes-store", "sessions", "search", "backup cron", "--limit", "3") in argv
    assert not any(re.search(r"\\033|\x1b", line) for line in headings)
