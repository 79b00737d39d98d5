"""Every CLI command that touches the store, on the three ways of naming a store -- the
default ``<home>/hermes_store.db``, a ``sqlite:///`` URL in config.yaml and a PostgreSQL URL --
gives the same (normalised) output, and a store named elsewhere never makes a
``<home>/hermes_store.db`` appear (issue 21: one opener, decided in ``Home``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from engine_helpers import normalise

from hermes_store.cli import cli

TRANSCRIPT = [
    {"role": "session_meta", "id": "s-deploy", "title": "deploy fix #notes", "timestamp": "2026-02-01T12:00:00Z"},
    {"role": "user", "content": "how do we roll the kubernetes cluster out to 桂林", "timestamp": "2026-02-01T12:00:05Z"},
    {"role": "assistant", "content": "use helm to roll the kubernetes cluster", "timestamp": "2026-02-01T12:00:10Z"},
]
# keys whose values name where the store is, how big it is or how long a step took
VOLATILE = {"backup", "database", "restored", "path", "url", "size_bytes", "bytes", "pages", "seconds",
            "taken_at", "backup_taken_at", "previous_kept_as", "engine", "db_bytes", "index_bytes",
            "kept_as", "started_at", "ended_at", "timestamp", "time", "when", "schema_version", "done",
            "note", "tables", "rows",
            "kinds_searched"}  # a server store always exists; an absent SQLite file is not searched


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


class Store:
    """One home whose store is named one way."""

    def __init__(self, root: Path, way: str, url: str | None) -> None:
        self.root, self.way, self.url = root, way, url
        root.mkdir(parents=True)
        if way == "sqlite-url":
            (root / "config.yaml").write_text(f'store:\n  database_url: "{url}"\n', encoding="utf-8")

    def run(self, *args: str) -> dict[str, Any]:
        base = ["--home", str(self.root)] + (["--database-url", self.url] if self.way == "postgresql" else [])
        result = CliRunner().invoke(cli, [*base, *args])
        text = result.stdout.strip()
        try:
            out: Any = json.loads(text)
        except ValueError:
            out = re.sub(r"\d+(\.\d+)? ?(ms|s)\b", "<t>", text)
        if args[0] == "doctor" and isinstance(out, dict):  # each engine names its own indexes
            # and only a SQLite file is compared object by object with the schema the
            # migrations create (foreign_objects; PostgreSQL's schema check lists what is missing)
            out = {"ok": out["ok"], "checks": [c for c in out["checks"] if not c["check"].startswith("fts:")
                                               and c["check"] != "foreign_objects"]}
        return {"exit": result.exit_code, "out": _strip(normalise(out, (str(self.root),))),
                "err": result.stderr.strip()[:300] if result.exit_code else ""}


@pytest.fixture
def stores(tmp_path, pg_url):
    other = tmp_path / "elsewhere" / "other.db"
    other.parent.mkdir()  # a URL's folder must exist (it is never made)
    return [Store(tmp_path / "default", "default", None),
            Store(tmp_path / "sqlite", "sqlite-url", f"sqlite:///{other}"),
            Store(tmp_path / "pg", "postgresql", pg_url)]


def _script(tmp_path: Path) -> list[tuple[str, ...]]:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in TRANSCRIPT) + "\n", encoding="utf-8")
    bak = str(tmp_path / "{way}.bak")
    return [
        # reads before anything is stored: empty answers, no file created
        ("sessions", "list", "--json"),
        ("sessions", "search", "kubernetes", "--json"),
        ("recall", "kubernetes", "--json"),
        ("facts", "search", "deploy", "--json"),
        ("tool", "recall", '{"query": "kubernetes"}'),
        ("tool", "session_search", '{"query": "kubernetes"}'),
        ("tool", "fact_store", '{"action": "search", "query": "deploy"}'),
        ("tool", "fact_feedback", '{"action": "helpful", "fact_id": 1}'),
        # writes and reads
        ("sessions", "index", str(transcript), "--json"),
        ("sessions", "list", "--json"),
        ("sessions", "show", "t", "--json"),
        ("sessions", "search", "kubernetes", "--json"),
        ("sessions", "search", "桂林", "--json"),
        ("sessions", "stats", "--json"),
        ("facts", "add", "the deploy runs on fridays", "--json"),
        ("facts", "search", "deploy", "--json"),
        ("facts", "list", "--json"),
        ("memory", "add", "kubernetes clusters live in 桂林"),
        ("memory", "show", "--json"),
        ("memory", "history", "--json"),
        ("recall", "kubernetes", "--json"),
        ("tool", "recall", '{"query": "kubernetes"}'),
        ("tool", "session_search", '{"query": "deploy fix"}'),
        ("tool", "session_search", '{"query": "\\u0000"}'),
        ("tool", "session_search", '{"query": "kube\\u0000rnetes\\u0007"}'),
        ("status", "--json"),
        ("doctor", "--json"),
        ("backup", bak, "--json"),
        ("restore", bak, "--json"),
        ("sessions", "search", "kubernetes", "--json"),
        ("facts", "search", "deploy", "--json"),
    ]


READS = 8  # the script's first steps only read


def test_every_store_command_agrees_on_the_three_ways_of_naming_a_store(stores, tmp_path):
    script = _script(tmp_path)
    outputs: dict[str, list[dict[str, Any]]] = {}
    for store in stores:
        outputs[store.way] = []
        for step in script:
            args = tuple(a.replace("{way}", store.way) for a in step)
            outputs[store.way].append(store.run(*args))
            if len(outputs[store.way]) == READS:  # nothing written yet: no file anywhere
                assert not (store.root / "hermes_store.db").exists(), store.way
                assert store.way != "sqlite-url" or not (tmp_path / "elsewhere" / "other.db").exists()
            if store.way != "default":
                assert not (store.root / "hermes_store.db").exists(), (store.way, args)
    # the sqlite URL store really lives where the URL says
    assert (tmp_path / "elsewhere" / "other.db").is_file()
    default = outputs["default"]
    for way in ("sqlite-url", "postgresql"):
        for step, want, got in zip(script, default, outputs[way], strict=True):
            assert got == want, (way, step)
    for step, result in zip(script, default, strict=True):
        if step[:2] == ("tool", "fact_feedback"):
            assert result["out"]["success"] is False  # no such fact yet (and no file made for it)
            continue
        assert result["exit"] == 0, (step, result)
    # what the script should have found, once (the comparison above holds it for every way)
    search = default[script.index(("sessions", "search", "桂林", "--json"))]["out"]
    assert search["results"] and search["results"][0]["session_id"] == "t"
    title = default[script.index(("tool", "session_search", '{"query": "deploy fix"}'))]["out"]
    assert title["success"] is True
    nul = default[script.index(("tool", "session_search", '{"query": "\\u0000"}'))]["out"]
    assert nul["success"] is True


def test_a_command_that_cannot_apply_to_an_engine_says_so(tmp_path, pg_url):
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "h"), "--database-url", pg_url, "browse"])
    assert result.exit_code != 0 and "PostgreSQL" not in result.stdout
    assert "SQLite" in result.stderr or "sqlite" in result.stderr
    assert not (tmp_path / "h" / "hermes_store.db").exists()
