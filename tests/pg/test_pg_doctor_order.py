"""``doctor`` lists its checks in the same order on both engines (text and --json)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hermes_store.cli import cli


def test_doctor_lists_schema_then_foreign_objects_on_every_engine(engine, home) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["--home", str(home.root), "facts", "add", "the build uses make"]).exit_code == 0
    result = runner.invoke(cli, ["--home", str(home.root), "doctor", "--json"])
    names = [c["check"] for c in json.loads(result.stdout)["checks"]]
    assert names[:2] == ["schema", "foreign_objects"], (engine, names)
    text = runner.invoke(cli, ["--home", str(home.root), "doctor"]).stdout.splitlines()
    shown = [line.split()[1] for line in text[1:3]]
    assert shown == ["schema", "foreign_objects"], (engine, text)
