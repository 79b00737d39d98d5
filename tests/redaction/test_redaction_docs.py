"""Every ``sh`` command in docs/redaction.md runs (in a fresh home) and exits 0."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "redaction.md"


def commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_doc_commands_run(tmp_path) -> None:
    found = commands()
    assert any(c.startswith("hermes-store redact") for c in found)
    assert any(c.startswith("hermes-store forget") for c in found)
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home")}
    env.pop("HERMES_STORE_DATABASE_URL", None)
    exe = Path(sys.executable).with_name("hermes-store")
    for command in found:
        argv = shlex.split(command, comments=True)  # a trailing `# ...` is the reader's note
        assert argv[0] == "hermes-store", command
        result = subprocess.run([str(exe), *argv[1:]], env=env, capture_output=True, text=True, timeout=120,
                                cwd=DOC.parents[1])  # examples/... paths from the repository root
        assert result.returncode == 0, (command, result.stdout, result.stderr)
