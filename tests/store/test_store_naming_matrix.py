"""Every store command x every way of naming the store (docs/store.md, "How a store is named").

For each naming, one scripted run of the commands that touch the store, with a decoy store in
every other place a store could be looked for (the home's own file, the variable's, config.yaml's,
another database or schema on the server). After each step an independent look (sqlite3 /
psycopg, file listing) checks that the step read or wrote the named store, and that no other
file or database was created or changed (no stray ``hermes_store.db``, ``-wal`` or vector file
beside the wrong file)."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_home" / "sessions"
SID = "20260312_091500_3fa2c1"
WEIRD = "d 1/x#y?z%20w é"  # a folder holding what URLs and SQLite URIs read specially


def _uri(path: Path) -> str:
    text = str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file:{text}?mode=ro"


def _sql(store: Path | str, sql: str) -> list[tuple]:
    """Rows of ``sql`` on ``store`` (a file or a PostgreSQL URL), read without our code."""
    if isinstance(store, str):
        import psycopg

        with psycopg.connect(store) as conn:
            return [tuple(r) for r in conn.execute(sql).fetchall()]
    conn = sqlite3.connect(_uri(store), uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _facts(store: Path | str) -> list[str]:
    return sorted(r[0] for r in _sql(store, "SELECT content FROM facts"))


def _count(table: str) -> Callable[[Path | str], Any]:
    return lambda store: _sql(store, f"SELECT count(*) FROM {table}")[0][0]


@dataclass
class Naming:
    """How the store is named: leading options, environment, config.yaml, working directory."""

    options: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    config: str | None = None
    home: Path | None = None  # the home the command uses (config.yaml and memories/ go there)
    target: Path | str = ""  # the named store
    decoys: list[Path | str] = field(default_factory=list)


def _sqlite_namings(base: Path) -> dict[str, Callable[[], Naming]]:
    home, other, work = base / "home", base / "home2", base / "work"
    weird = base / WEIRD / "st ore#1?a=b%20c.db"
    env_file, cfg_rel = base / "env.db", home / "stores" / "cfg.db"
    candidates = [home / "hermes_store.db", other / "hermes_store.db", weird, work / "rel.db", env_file, cfg_rel,
                  base / "realhome" / "hermes_store.db"]

    def naming(target: Path, **kw: Any) -> Callable[[], Naming]:
        return lambda: Naming(target=target, decoys=[c for c in candidates if c != target], **kw)

    config = 'store:\n  database_url: "sqlite:///stores/cfg.db"\n'
    return {
        "default": naming(home / "hermes_store.db"),
        "home-option": naming(other / "hermes_store.db", options=["--home", str(other)], home=other),
        "option-absolute-odd-path": naming(weird, options=["--database-url", f"sqlite:///{weird}"]),
        "option-relative": naming(work / "rel.db", options=["--database-url", "sqlite:///rel.db"]),
        "env-absolute": naming(env_file, env={"HERMES_STORE_DATABASE_URL": f"sqlite:///{env_file}"}),
        "config-relative": naming(cfg_rel, config=config),
        "config-absolute-odd-path": naming(weird, config=f'store:\n  database_url: "sqlite:///{weird}"\n'),
        "symlinked-home": naming(base / "realhome" / "hermes_store.db", options=["--home", str(base / "linkhome")],
                                 home=base / "linkhome"),
        "option-over-env-over-config": naming(work / "rel.db", options=["--database-url", "sqlite:///rel.db"],
                                              env={"HERMES_STORE_DATABASE_URL": f"sqlite:///{env_file}"},
                                              config=config),
        "env-over-config": naming(env_file, env={"HERMES_STORE_DATABASE_URL": f"sqlite:///{env_file}"},
                                  config=config),
    }


def _pg_namings(base: Path, target: str, decoy: str) -> dict[str, Callable[[], Naming]]:
    from psycopg.conninfo import conninfo_to_dict

    parts = conninfo_to_dict(target)
    schema_url = decoy + "&options=-csearch_path%3Dhermes"
    libpq_env = {"PGHOST": parts["host"], "PGPORT": parts["port"], "PGUSER": parts["user"],
                 "PGDATABASE": parts["dbname"]}
    files = [base / "home" / "hermes_store.db", base / "env.db"]

    def naming(url: str, **kw: Any) -> Callable[[], Naming]:
        others = [decoy] if url != decoy else []
        return lambda: Naming(target=url, decoys=[*files, *others], **kw)

    return {
        "postgresql-option": naming(target, options=["--database-url", target]),
        "postgres-scheme-env": naming(target, env={"HERMES_STORE_DATABASE_URL":
                                                   target.replace("postgresql://", "postgres://", 1)}),
        "postgresql-config-over-nothing": naming(target, config=f'store:\n  database_url: "{target}"\n'),
        "schema-in-options": naming(schema_url, options=["--database-url", schema_url]),
        "libpq-environment": naming(target, options=["--database-url", "postgresql://"], env=libpq_env),
        "postgresql-option-over-env-over-config": naming(
            target, options=["--database-url", target], env={"HERMES_STORE_DATABASE_URL": f"sqlite:///{base}/env.db"},
            config=f'store:\n  database_url: "{decoy}"\n'),
    }


def _decoy_file(tmp_path_factory) -> Path:
    made = tmp_path_factory.getbasetemp() / "decoy-store.db"
    if not made.exists():
        home = tmp_path_factory.mktemp("decoy")
        assert CliRunner().invoke(cli, ["--home", str(home), "facts", "add", "kiwi decoy fact"]).exit_code == 0
        shutil.copy(home / "hermes_store.db", made)
    return made


def _files(base: Path) -> dict[str, str]:
    return {str(p): hashlib.sha1(p.read_bytes()).hexdigest() for p in sorted(base.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def _server_state(url: str) -> Any:
    return (_facts(url), _count("sessions")(url), _count("memory_history")(url))


class Cell:
    """One naming's base folder, its stores and the check after each step."""

    def __init__(self, base: Path, naming: Naming, monkeypatch) -> None:
        self.base, self.naming = base, naming
        self.home = naming.home or base / "home"
        self.out = base / "out"
        self.out.mkdir()
        monkeypatch.chdir(base / "work")
        monkeypatch.setenv("HERMES_HOME", str(base / "home"))
        monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
        for name, value in naming.env.items():
            monkeypatch.setenv(name, value)
        if naming.config:
            (self.home / "config.yaml").write_text(naming.config, encoding="utf-8")
        self.checked = 0

    def allowed(self, path: str) -> bool:
        """Files a step may create or change: the named store's own (its name as prefix, or the
        home's ``session_vectors.db`` beside a home's ``hermes_store.db``), this home's memories,
        what the step was asked to write."""
        target = self.naming.target
        own: list[str] = [str(self.out), str(self.home.resolve() / "memories"), str(self.home / "memories")]
        if isinstance(target, Path):
            own += [str(target), str(target.resolve())]
            if target.name == "hermes_store.db":
                own.append(str(target.resolve().parent / "session_vectors.db"))
        return any(path.startswith(prefix) for prefix in own)

    def step(self, argv: list[str], expect: Callable[[str], Any] | None = None) -> str:
        before = _files(self.base)
        servers = [_server_state(d) for d in self.naming.decoys if isinstance(d, str)]
        result = CliRunner().invoke(cli, [*self.naming.options, *argv])
        assert result.exit_code == 0, (argv, result.output)
        after = _files(self.base)
        touched = [p for p in after if before.get(p) != after[p] and not self.allowed(p)]
        assert touched == [], (argv, touched)
        assert [_server_state(d) for d in self.naming.decoys if isinstance(d, str)] == servers, argv
        if expect is not None:
            assert expect(result.stdout), (argv, result.stdout[:500])
        self.checked += 1
        return result.stdout


def _named(text: str) -> bool:
    return "kiwi target" in text and "decoy" not in text


def _script(cell: Cell, short: bool = False) -> None:
    """The commands that touch the store, in an order each finds what the previous wrote
    (``short``: one read of each kind, for the slower server namings past the first)."""
    target = cell.naming.target
    out = cell.out
    has = lambda check, want: lambda _stdout: check(target) == want  # noqa: E731
    cell.step(["facts", "add", "kiwi target fact about Alice"], lambda _s: "kiwi target fact about Alice" in _facts(target))
    cell.step(["sessions", "index", str(SAMPLE)], has(_count("sessions"), 4))
    cell.step(["memory", "add", "kiwi target memory"], has(_count("memory_history"), 1))
    for argv in (["recall", "kiwi"], ["memory", "history"], ["facts", "list"], ["facts", "search", "kiwi"],
                 ["tool", "fact_store", '{"action": "search", "query": "kiwi"}'])[:2 if short else 5]:
        cell.step(argv, _named)
    for argv in (["sessions", "search", "the", "--json"], ["sessions", "list"], ["sessions", "show", SID],
                 ["sessions", "export", SID], ["tool", "session_search", '{"query": "the"}'])[:1 if short else 5]:
        cell.step(argv, lambda s: SID in s)
    # the store named as given (a symlinked home's own file by the link's path)
    where = [str(cell.home / target.name), str(target)] if isinstance(target, Path) else ["postgres"]
    for argv in (["status", "--json"], ["doctor", "--json"]):
        cell.step(argv, lambda s: any(w in json.dumps(json.loads(s), ensure_ascii=False) for w in where))
    cell.step(["backup", str(out / "store.bak")], lambda _s: _named(" ".join(_facts(out / "store.bak"))))
    cell.step(["sessions", "delete", SID], has(_count("sessions"), 3))
    if not short:
        cell.step(["facts", "feedback", "helpful", "1"],
                  lambda _s: _sql(target, "SELECT helpful_count FROM facts")[0][0] == 1)
        cell.step(["facts", "export", str(out / "facts.jsonl")], lambda _s: _named((out / "facts.jsonl").read_text()))
        cell.step(["forget", "--session", "20260315_184210_9bd7e4"], has(_count("sessions"), 2))
        cell.step(["redact"])
        cell.step(["doctor", "--fix"])
    cell.step(["restore", "--force", str(out / "store.bak")], has(_count("sessions"), 4))
    if isinstance(target, str):  # and the other way: the named server store copied into a file
        cell.step(["migrate", "--to", f"sqlite:///{out / 'copy.db'}"], lambda _s: _named(" ".join(_facts(out / "copy.db"))))


def _base(tmp_path: Path, decoy: Path, stores: list[Path | str]) -> None:
    for folder in ("home/stores", "home2", "work", WEIRD, "realhome", "out-of-the-way"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / "linkhome").symlink_to(tmp_path / "realhome")
    for store in stores:
        if isinstance(store, Path):
            shutil.copy(decoy, store)


SQLITE = list(_sqlite_namings(Path("/")))


@pytest.mark.parametrize("way", SQLITE)
def test_every_command_uses_the_sqlite_store_named(tmp_path, tmp_path_factory, monkeypatch, way):
    naming = _sqlite_namings(tmp_path)[way]()
    _base(tmp_path, _decoy_file(tmp_path_factory), naming.decoys)
    cell = Cell(tmp_path, naming, monkeypatch)
    _script(cell)
    assert cell.checked == 23


PG = ["postgresql-option", "postgres-scheme-env", "postgresql-config-over-nothing", "schema-in-options",
      "libpq-environment", "postgresql-option-over-env-over-config"]


@pytest.mark.parametrize("way", PG)
def test_every_command_uses_the_postgresql_store_named(tmp_path, tmp_path_factory, monkeypatch, pg_server, way):
    import psycopg

    target, decoy = pg_server.create_database(f"named_{way.replace('-', '_')}"), None
    try:
        decoy = pg_server.create_database(f"decoy_{way.replace('-', '_')}")
        assert CliRunner().invoke(cli, ["--home", str(tmp_path / "decoy-home"), "--database-url", decoy,
                                        "facts", "add", "kiwi decoy fact"]).exit_code == 0
        with psycopg.connect(decoy, autocommit=True) as conn:
            conn.execute("CREATE SCHEMA hermes")
        naming = _pg_namings(tmp_path, target, decoy)[way]()
        _base(tmp_path, _decoy_file(tmp_path_factory), naming.decoys)
        cell = Cell(tmp_path, naming, monkeypatch)
        _script(cell, short=way != PG[0])
        assert cell.checked == (24 if way == PG[0] else 12)
    finally:
        pg_server.drop_database(f"named_{way.replace('-', '_')}")
        pg_server.drop_database(f"decoy_{way.replace('-', '_')}")
