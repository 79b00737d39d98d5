"""Front-end parity: one scripted sequence through the CLI and the tools on SQLite and on
PostgreSQL gives the same JSON (after normalising what legitimately differs).

The script indexes the six-format fixture tree and a Hermes ``state.db``, then drives
``sessions list/show/search``, ``session_search`` (every mode and the query syntax: phrases,
OR, NOT, prefix, CJK, literals), ``fact_store`` (add/search/probe/related/reason/contradict/
list/update/remove) and ``fact_feedback``, the ``memory`` tool with provenance and
``memory history``, ``recall`` with each kind, the error shapes of all of them, and
``status --json``. Each step's output on the two engines is compared after
:func:`engine_helpers.normalise`: home paths, wall-clock times, scores (the ranking formulas differ; the
order of the hits is still compared) and the ``database`` section of ``status``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from engine_helpers import normalise

from hermes_store.cli import cli
from hermes_store.db import Database
from hermes_store.home import Home
from hermes_store.pgdb import writer_label
from hermes_store.tools import handle_tool_call

FIXTURES = Path(__file__).resolve().parent.parent / "sessions" / "fixtures"
CORE = ("hermes_home", "claude", "codex", "openai")
class Driver:
    """One home on one engine: the CLI (``--home``/``--database-url``) and the tool dispatcher."""

    def __init__(self, root: Path, url: str | None) -> None:
        self.root = root
        self.url = url
        Home(root).ensure()

    def home(self) -> Home:
        return Home(self.root, database_url=self.url)

    def cli(self, *args: Any) -> dict[str, Any]:
        """``hermes-store ARGS``: exit code and the output (JSON when it parses)."""
        base = ["--home", str(self.root)] + (["--database-url", self.url] if self.url else [])
        result = CliRunner().invoke(cli, [*base, *map(str, args)])
        text = result.stdout.strip()
        try:
            out: Any = json.loads(text)
        except ValueError:
            out = text
        return {"exit": result.exit_code, "out": out,
                "err": result.stderr.strip() if result.exit_code else ""}

    def tool(self, name: str, args: Any, session_id: str = "") -> Any:
        """The tool's JSON reply, as an agent gets it."""
        return json.loads(handle_tool_call(name, args, home=self.home(), session_id=session_id))


def _state_db(path: Path) -> Path:
    path.parent.mkdir(parents=True)
    db = Database(path, migrate=False)
    db.execute((FIXTURES / "hermes_state.sql").read_text(encoding="utf-8"))
    db.close()
    return path


# a Hermes transcript holding the awkward cases of the query language (CJK, hyphens, paths,
# percent signs, diacritics, emoji), indexed beside the fixture tree
PARITY_SESSION = [
    {"role": "session_meta", "model": "nous/hermes-4", "platform": "cli", "timestamp": "2026-02-01T12:00:00Z"},
    {"role": "user", "content": "東京の天気は晴れ、明日は雨です", "timestamp": "2026-02-01T12:00:05Z"},
    {"role": "assistant", "content": "Run ask-codex on src/auth.py; the login test is flaky at 100% load.",
     "timestamp": "2026-02-01T12:00:10Z"},
    {"role": "user", "content": "Café résumé naïve — the upgrade failed again 🚀", "timestamp": "2026-02-01T12:00:20Z"},
    {"role": "assistant", "content": "Upgrade the café router firmware, not kubernetes.",
     "timestamp": "2026-02-01T12:00:30Z"},
]
SEARCHES = [
    "kubernetes", '"login test"', '"test login"', "kubernetes OR login", "upgrade NOT kubernetes",
    "kube*", "ask*", "天気", "東京の天気", "晴れ OR 雨", "ask-codex", "100%", "src/auth.py", "cafe",
    "résumé", "naive", "🚀", "NOT", "AND OR", '"', "", "zzzz-nothing", "deploy.sh", "chmod +x",
    '"login te*"', "ask-cod*", "src/auth*", '"the login" OR flaky', "login -test",
]


def script(d: Driver, sources: list[Path]) -> list[tuple[str, Callable[[], Any]]]:
    """The scripted sequence: ``(label, step)`` pairs run in order on one engine."""
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("index", lambda: d.cli("sessions", "index", "--json", *sources)),
        ("index again", lambda: d.cli("sessions", "index", "--json", *sources)),
        ("list", lambda: d.cli("sessions", "list", "--json", "--limit", "50")),
        ("list cron", lambda: d.cli("sessions", "list", "--json", "--source", "cron")),
        ("show", lambda: d.cli("sessions", "show", "--json", "20260105_101500_a1b2c3")),
        ("show prefix", lambda: d.cli("sessions", "show", "--json", "7f3c2a10")),
        ("show missing", lambda: d.cli("sessions", "show", "does-not-exist")),
        ("stats", lambda: d.cli("sessions", "stats", "--json")),
    ]
    for query in SEARCHES:
        steps.append((f"cli search {query!r}", lambda q=query: d.cli("sessions", "search", "--json", q)))
        steps.append((f"tool search {query!r}", lambda q=query: d.tool("session_search", {"query": q})))
    steps += [
        ("cli search newest", lambda: d.cli("sessions", "search", "--json", "--sort", "newest", "the")),
        ("cli search roles", lambda: d.cli("sessions", "search", "--json", "--role", "user", "login")),
        ("cli search source", lambda: d.cli("sessions", "search", "--json", "--source", "telegram", "the")),
        ("cli search context", lambda: d.cli("sessions", "search", "--json", "--context", "flaky")),
        ("tool recent", lambda: d.tool("session_search", {})),
        ("tool sort newest", lambda: d.tool("session_search", {"query": "the", "sort": "newest", "limit": 3})),
        ("tool session", lambda: d.tool("session_search", {"session_id": "20260105_101500_a1b2c3"})),
        ("tool around", lambda: d.tool("session_search", {"session_id": "20260105_101500_a1b2c3",
                                                           "around_message_id": 3, "window": 1})),
        ("tool role filter", lambda: d.tool("session_search", {"query": "login", "role_filter": "user"})),
        ("tool bad limit", lambda: d.tool("session_search", {"query": "x", "limit": "many"})),
        ("tool bad sort", lambda: d.tool("session_search", {"query": "x", "sort": "sideways"})),
        ("tool unknown session", lambda: d.tool("session_search", {"session_id": "nope"})),
    ]
    facts = [
        ("Alice lives in Paris", "general", "home"),
        ("Alice works at Acme Corp", "project", "work"),
        ("Bob works at Acme Corp", "project", ""),
        ("Alice lives in Berlin", "general", ""),
        ("Robert aka Bob likes chess", "general", ""),
        ("王伟住在北京，喜欢喝茶", "general", ""),
        ("run systemctl daemon-reexec after editing 100% of units", "general", "ops"),
    ]
    for content, category, tags in facts:
        steps.append((f"fact add {content!r}", lambda c=content, k=category, t=tags: d.tool(
            "fact_store", {"action": "add", "content": c, "category": k, "tags": t})))
    steps += [
        ("fact add duplicate", lambda: d.tool("fact_store", {"action": "add", "content": " Alice lives in Paris "})),
        ("fact add empty", lambda: d.tool("fact_store", {"action": "add", "content": "  "})),
        ("fact add cli", lambda: d.cli("facts", "add", "Carol uses Emacs", "--json")),
        ("fact feedback helpful", lambda: d.tool("fact_feedback", {"action": "helpful", "fact_id": 2})),
        ("fact feedback unhelpful", lambda: d.tool("fact_feedback", {"action": "unhelpful", "fact_id": 3})),
        ("fact feedback unknown", lambda: d.tool("fact_feedback", {"action": "helpful", "fact_id": 4242})),
        ("fact feedback bad action", lambda: d.tool("fact_feedback", {"action": "meh", "fact_id": 1})),
        ("fact feedback cli", lambda: d.cli("facts", "feedback", "helpful", "1", "--json")),
        ("fact search", lambda: d.tool("fact_store", {"action": "search", "query": "Alice"})),
        ("fact search phrase", lambda: d.tool("fact_store", {"action": "search", "query": '"Acme Corp"'})),
        ("fact search OR", lambda: d.tool("fact_store", {"action": "search", "query": "Paris OR Berlin"})),
        ("fact search NOT", lambda: d.tool("fact_store", {"action": "search", "query": "Alice NOT Paris"})),
        ("fact search prefix", lambda: d.tool("fact_store", {"action": "search", "query": "Ber*"})),
        ("fact search CJK", lambda: d.tool("fact_store", {"action": "search", "query": "北京"})),
        ("fact search literal", lambda: d.tool("fact_store", {"action": "search", "query": "100%"})),
        ("fact search hyphen", lambda: d.tool("fact_store", {"action": "search", "query": "daemon-reexec"})),
        ("fact search min trust", lambda: d.tool("fact_store", {"action": "search", "query": "Acme",
                                                                "min_trust": 0.45})),
        ("fact search category", lambda: d.tool("fact_store", {"action": "search", "query": "Acme",
                                                               "category": "project"})),
        ("fact search cli", lambda: d.cli("facts", "search", "Acme", "--json")),
        ("fact search syntax error", lambda: d.tool("fact_store", {"action": "search", "query": "AND OR"})),
        ("fact search empty", lambda: d.tool("fact_store", {"action": "search", "query": "  "})),
        ("fact probe", lambda: d.tool("fact_store", {"action": "probe", "entity": "Alice"})),
        ("fact probe alias", lambda: d.tool("fact_store", {"action": "probe", "entity": "bob"})),
        ("fact probe unknown", lambda: d.tool("fact_store", {"action": "probe", "entity": "Nobody"})),
        ("fact related", lambda: d.tool("fact_store", {"action": "related", "entity": "Alice"})),
        ("fact reason", lambda: d.tool("fact_store", {"action": "reason", "entities": ["Alice", "Acme Corp"]})),
        ("fact contradict", lambda: d.tool("fact_store", {"action": "contradict"})),
        ("fact list", lambda: d.tool("fact_store", {"action": "list"})),
        ("fact list cli", lambda: d.cli("facts", "list", "--json")),
        ("fact entities cli", lambda: d.cli("facts", "entities", "--json")),
        ("fact update", lambda: d.tool("fact_store", {"action": "update", "fact_id": 4,
                                                      "content": "Alice moved to Berlin", "trust_delta": 0.1})),
        ("fact update duplicate", lambda: d.tool("fact_store", {"action": "update", "fact_id": 4,
                                                                "content": "Alice lives in Paris"})),
        ("fact remove", lambda: d.tool("fact_store", {"action": "remove", "fact_id": 8})),
        ("fact remove again", lambda: d.tool("fact_store", {"action": "remove", "fact_id": 8})),
        ("fact unknown action", lambda: d.tool("fact_store", {"action": "explode"})),
        ("fact get after", lambda: d.tool("fact_store", {"action": "search", "query": "Berlin"})),
        ("memory add", lambda: d.tool("memory", {"action": "add", "target": "memory",
                                                 "content": "The billing service deploys on Fridays"},
                                      session_id="sess-parity")),
        ("memory add user", lambda: d.tool("memory", {"action": "add", "target": "user",
                                                      "content": "Alice prefers short answers"},
                                           session_id="sess-parity")),
        ("memory replace", lambda: d.tool("memory", {"action": "replace", "target": "memory",
                                                     "old_text": "billing service",
                                                     "content": "The billing service deploys on Mondays"},
                                          session_id="sess-parity")),
        ("memory add cli", lambda: d.cli("memory", "add", "Unrelated: the cat is called Miso")),
        ("memory remove missing", lambda: d.tool("memory", {"action": "remove", "target": "memory",
                                                            "old_text": "no such entry"})),
        ("memory history", lambda: d.cli("memory", "history", "--json")),
        ("memory show", lambda: d.cli("memory", "show", "--json")),
        ("memory restore", lambda: d.cli("memory", "restore", "2")),
        ("memory history after restore", lambda: d.cli("memory", "history", "--json", "--limit", "2")),
        ("memory restore unknown", lambda: d.cli("memory", "restore", "999")),
    ]
    for kinds in ("memory", "user", "facts", "sessions", "memory,user,facts,sessions"):
        for query in ("billing Alice", "deploy OR Alice OR kubernetes"):
            steps.append((f"recall cli {kinds} {query!r}", lambda k=kinds, q=query: d.cli(
                "recall", "--json", "--kinds", k, q)))
            steps.append((f"recall tool {kinds} {query!r}", lambda k=kinds, q=query: d.tool(
                "recall", {"query": q, "kinds": k.split(",")})))
    steps += [
        ("recall budget", lambda: d.tool("recall", {"query": "Alice", "budget_tokens": 200})),
        ("recall bad kind", lambda: d.tool("recall", {"query": "Alice", "kinds": ["nope"]})),
        ("recall cli bad kind", lambda: d.cli("recall", "--json", "--kinds", "nope", "Alice")),
        ("status", lambda: d.cli("status", "--json")),
        ("sessions delete", lambda: d.cli("sessions", "delete", "support-1")),
        ("list after delete", lambda: d.cli("sessions", "list", "--json", "--limit", "50")),
    ]
    return steps


def _status_neutral(step: str, out: Any) -> Any:
    """``status``'s ``database`` section names the engine and its location: compared apart."""
    if step == "status" and isinstance(out, dict) and isinstance(out.get("out"), dict):
        out["out"].pop("database", None)
    return out


def _ties_neutral(out: Any) -> Any:
    """Facts of equal trust in id order: ``list`` breaks trust ties by ``updated_at``, a
    wall-clock second, so which of two facts touched around a second boundary comes first is
    timing, not engine (the trust order itself is still compared)."""
    body = out.get("out") if isinstance(out, dict) and isinstance(out.get("out"), dict) else out
    if isinstance(body, dict) and isinstance(body.get("facts"), list):
        body["facts"].sort(key=lambda f: (-f.get("trust_score", 0), f.get("fact_id", 0)))
    return out


def run_script(driver: Driver, sources: list[Path], roots: tuple[str, ...]) -> list[tuple[str, Any]]:
    """Every step's normalised output, in order."""
    return [(label, _ties_neutral(_status_neutral(label, normalise(step(), roots))))
            for label, step in script(driver, sources)]


def make_sources(tmp_path: Path) -> list[Path]:
    """One copy of the fixture tree, the parity transcript and a Hermes ``state.db``."""
    target = tmp_path / "fixtures"
    for name in CORE:
        shutil.copytree(FIXTURES / name, target / name)
    extra = tmp_path / "extra" / "20260201_120000_parity.jsonl"
    extra.parent.mkdir()
    extra.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in PARITY_SESSION),
                     encoding="utf-8")
    return [target / name for name in CORE] + [extra, _state_db(tmp_path / "hermes" / "state.db")]


@pytest.fixture
def sources(tmp_path) -> list[Path]:
    """The inputs both homes index (the same files, so the same paths on both engines)."""
    return make_sources(tmp_path)


LIMIT = 6000  # characters of each differing output shown


def test_cli_and_tools_give_the_same_json_on_both_engines(tmp_path, sources, pg_store_url, monkeypatch):
    monkeypatch.delenv("HERMES_STORE_DATABASE_URL", raising=False)
    monkeypatch.delenv("HERMES_HOME", raising=False)
    lite = Driver(tmp_path / "home_sqlite", None)
    pg = Driver(tmp_path / "home_pg", pg_store_url)
    roots = (str(lite.root), str(pg.root))
    on_sqlite = run_script(lite, sources, roots)
    on_pg = run_script(pg, sources, roots)
    assert [label for label, _ in on_sqlite] == [label for label, _ in on_pg]
    differences = [(label, a, b) for (label, a), (_, b) in zip(on_sqlite, on_pg, strict=True) if a != b]
    report = "\n\n".join(f"{label}:\n  sqlite:     {json.dumps(a, ensure_ascii=False)[:LIMIT]}\n"
                         f"  postgresql: {json.dumps(b, ensure_ascii=False)[:LIMIT]}"
                         for label, a, b in differences)
    assert not differences, f"{len(differences)} of {len(on_sqlite)} steps differ:\n{report}"
    # the script exercised what it claims: hits, errors and writes, not empty answers
    outputs = dict(on_sqlite)
    assert outputs["index"]["out"]["messages_added"] > 0 and outputs["index"]["out"]["errors"] == []
    assert outputs["tool search 'kubernetes'"]["success"] is True
    assert outputs["fact search"]["count"] >= 2 and outputs["fact feedback unknown"]["success"] is False
    assert outputs["show missing"]["exit"] == 1 and outputs["memory history"]["out"]
    assert outputs["status"]["exit"] == 0
    # and the shared store said who wrote what (left out of the comparison above)
    raw = pg.tool("fact_store", {"action": "search", "query": "Alice"})["results"]
    assert raw and {r["written_by"] for r in raw} == {writer_label(pg.root)}
