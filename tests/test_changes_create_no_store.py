"""A command that only changes or removes what is stored, or exports it, makes no store to say
there is nothing there (found running each command on a fresh home: `forget`, `sessions delete`,
`sessions prune`, `redact` (even `--dry-run`), `facts remove/update/feedback`, `facts export` and a
`facts import` of a missing file each left an empty ``hermes_store.db`` behind). The answers are
the same as before; only the file is not made. Both for the home's own store and a URL's file."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli

# argv, exit status, what stdout or stderr says
CHANGES = [
    (["forget", "nosuch#1"], 1, "Error: session not found: nosuch"),
    (["forget", "--session", "nosuch"], 1, "Error: session not found: nosuch"),
    (["forget", "--matching", "never said"], 0, "nothing was forgotten: no stored message holds that text"),
    (["sessions", "delete", "nosuch"], 1, "Error: session not found: nosuch"),
    (["sessions", "prune", "--older-than", "90d"], 0, "Deleted 0 sessions."),
    (["sessions", "export", "nosuch"], 1, "Error: session not found: nosuch"),
    (["redact"], 0, "redacted 0 secrets in 0 rows"),
    (["redact", "--dry-run"], 0, "would redact 0 secrets in 0 rows"),
    (["facts", "remove", "1"], 1, "Error: fact_id 1 not found"),
    (["facts", "update", "1", "--content", "x"], 1, "Error: fact_id 1 not found"),
    (["facts", "feedback", "helpful", "1"], 1, "Error: fact_id 1 not found"),
    (["facts", "export"], 0, '"facts": 0'),
    (["facts", "import", "MISSING"], 1, "MISSING: cannot read: No such file or directory"),
    (["tool", "fact_store", json.dumps({"action": "remove", "fact_id": 1})], 0, '"removed": false'),
    (["tool", "fact_store", json.dumps({"action": "update", "fact_id": 1, "content": "x"})], 0, '"success"'),
]


@pytest.mark.parametrize("naming", ["home", "url"])
@pytest.mark.parametrize(("argv", "code", "said"), CHANGES, ids=[" ".join(c[0][:3]) for c in CHANGES])
def test_nothing_to_change_makes_no_store(home, tmp_path, naming, argv, code, said):
    missing = str(tmp_path / "missing.jsonl")
    argv = [missing if arg == "MISSING" else arg for arg in argv]
    said = said.replace("MISSING", missing)
    other = tmp_path / "other.db"
    head = ["--home", str(home.root)] + (["--database-url", f"sqlite:///{other}"] if naming == "url" else [])
    before = sorted(p.name for p in tmp_path.rglob("*"))
    result = CliRunner().invoke(cli, [*head, *argv])
    assert result.exit_code == code, result.output
    assert said in result.output
    assert "Traceback" not in result.output
    assert not home.db_path.exists() and not other.exists()
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
