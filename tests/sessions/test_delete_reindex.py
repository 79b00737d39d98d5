"""``sessions delete ID`` then ``sessions index FILE`` (unchanged file) imports it again (issue 22).

Runs on both engines (the ``engine`` fixture), through the CLI, as a person would.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from hermes_store.cli import cli

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_home" / "sessions"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_deleted_session_is_imported_again_from_the_unchanged_file(engine, home, tmp_path):
    files = tmp_path / "transcripts"
    shutil.copytree(SAMPLE, files)
    code, out = _run("sessions", "index", str(files), "--json")
    assert code == 0 and json.loads(out)["sessions_added"] == 4
    code, out = _run("sessions", "delete", "20260312_091500_3fa2c1")
    assert code == 0 and "8 messages" in out
    code, out = _run("sessions", "index", str(files / "20260312_091500_3fa2c1.jsonl"), "--json")
    summary = json.loads(out)
    assert code == 0
    assert (summary["sessions_added"], summary["messages_added"]) == (1, 8)
    code, out = _run("sessions", "list", "--json", "--raw")
    assert sorted(row["id"] for row in json.loads(out))[0] == "20260312_091500_3fa2c1"
    # and once imported again, the file is "unchanged" as before: nothing is added twice
    code, out = _run("sessions", "index", str(files), "--json")
    summary = json.loads(out)
    assert (summary["sessions_added"], summary["messages_added"], summary["skipped"]) == (0, 0, 23)
