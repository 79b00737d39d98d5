"""Unknown values are usage errors naming the valid ones; dumps' roles map onto stored roles (issue 22)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from hermes_store.cli import cli

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample_home" / "sessions"
DUMP = ("speaker,text,when\ncustomer,my printer is on fire,2026-01-01T10:00:00\n"
        "rep,please unplug it,2026-01-01T10:01:00\nagent,done unplugging,2026-01-01T10:02:00\n")


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_unknown_role_source_and_kind_are_usage_errors(home, tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "s")
    assert _run("sessions", "index", str(tmp_path / "s")).exit_code == 0
    out = _run("sessions", "search", "backup", "--role", "usr")
    assert out.exit_code == 2 and "'usr'" in out.stderr and "user, assistant, system, tool" in out.stderr
    out = _run("sessions", "search", "backup", "--source", "nope")
    assert out.exit_code == 2 and "'nope'" in out.stderr and "cli, telegram" in out.stderr
    out = _run("recall", "backup", "--kinds", "memroy")
    assert out.exit_code == 2 and "memroy" in out.stderr and "sessions" in out.stderr
    assert _run("sessions", "search", "backup", "--source", "telegram,cli", "--role", "user").exit_code == 0


def test_bad_map_names_the_missing_column_and_those_found(home, tmp_path):
    dump = tmp_path / "dump.csv"
    dump.write_text(DUMP, encoding="utf-8")
    out = _run("sessions", "index", str(dump), "--map", "role=sender,content=text")
    assert out.exit_code == 1
    assert "no column for role (sender)" in out.stderr
    assert "columns found: speaker, text, when" in out.stderr
    assert "unknown format" not in out.stderr


def test_dump_roles_map_to_stored_roles(home, tmp_path):
    dump = tmp_path / "dump.csv"
    dump.write_text(DUMP, encoding="utf-8")
    out = _run("sessions", "index", str(dump), "--map", "content=text,time=when", "--role-map", "rep=assistant")
    assert out.exit_code == 0, out.output
    roles = {m["content"]: m["role"] for m in json.loads(
        _run("sessions", "show", "dump", "--json", "--raw").stdout)["messages"]}
    assert roles == {"my printer is on fire": "user", "please unplug it": "assistant",
                     "done unplugging": "assistant"}
    out = _run("sessions", "index", str(dump), "--role-map", "rep=boss")
    assert out.exit_code == 2 and "user, assistant, system, tool" in out.stderr


def test_unmapped_dump_role_is_reported(home, tmp_path):
    dump = tmp_path / "dump.csv"
    dump.write_text(DUMP, encoding="utf-8")
    out = _run("sessions", "index", str(dump))
    assert out.exit_code == 0
    assert "role 'rep' is not one of user, assistant, system, tool" in out.stderr
    assert "--role-map rep=" in out.stderr
