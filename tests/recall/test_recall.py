"""recall: one query over built-in memory, user profile, facts and past sessions."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from hermes_store.builtin import MemoryStore
from hermes_store.cli import cli
from hermes_store.facts import FactStore
from hermes_store.recall import KINDS, recall
from hermes_store.sessions import SessionIndex
from hermes_store.tools import handle_tool_call

pytestmark = pytest.mark.usefixtures("engine")  # every test on both storage engines


@pytest.fixture
def full_home(home):
    """A home where memory, user profile, facts and sessions all mention the same subject."""
    store = MemoryStore(home)
    store.load_from_disk()
    assert store.add("memory", "The billing service deploys with scripts/deploy.sh on Fridays")["success"]
    assert store.add("user", "Alice owns the billing service and prefers short answers")["success"]
    assert store.add("memory", "Unrelated: the cat is called Miso")["success"]
    with home.open_db() as db:
        facts = FactStore(db)
        added = facts.add_fact("Billing service runs on Postgres 15", "project", "billing")
        facts.add_fact("The office plant needs water weekly", "general", "")
        index = SessionIndex(db)
        old = index.create_session(source="cli", title="Billing outage", started_at=time.time() - 86400 * 30)
        index.append_message(old, "user", "Why did the billing service fail last night?",
                             timestamp=time.time() - 86400 * 30)
        index.append_message(old, "assistant", "The billing deploy ran a migration that locked a table.",
                             timestamp=time.time() - 86400 * 30 + 5)
        cron = index.create_session(source="cron", title="nightly")
        index.append_message(cron, "assistant", "gardening report: tomatoes are fine")
    return home, added


def test_all_three_kinds_with_provenance(full_home):
    home, _ = full_home
    result = recall("billing service", home=home)
    kinds = {item.kind for item in result.results}
    assert kinds == {"memory", "user", "facts", "sessions"}
    by_kind = {item.kind: item.to_dict() for item in result.results}
    memory = by_kind["memory"]
    assert memory["id"] == 1 and memory["file"].endswith("MEMORY.md")
    assert memory["created_at"] and memory["updated_at"]
    fact = by_kind["facts"]
    assert fact["trust_score"] == pytest.approx(0.5) and "helpful_count" in fact and "entities" in fact
    session = by_kind["sessions"]
    assert session["link"].startswith("@session:") and session["source"] == "cli"
    assert session["title"] == "Billing outage" and session["seq"] in (0, 1) and session["timestamp"]
    assert all(item.why for item in result.results)
    assert all((item.snippet or item.text).strip() for item in result.results)
    scores = [item.score for item in result.results]
    assert scores == sorted(scores, reverse=True)


def test_kinds_filter(full_home):
    home, _ = full_home
    result = recall("billing", home=home, kinds=["facts"])
    assert result.results and {i.kind for i in result.results} == {"facts"}
    assert result.kinds_searched == ["facts"]
    with pytest.raises(ValueError, match="unknown kind"):
        recall("billing", home=home, kinds=["nope"])


def test_trust_moves_fact_rank(full_home):
    home, added = full_home
    before = next(i for i in recall("billing", home=home).results if i.kind == "facts")
    with home.open_db() as db:
        facts = FactStore(db)
        for _ in range(5):
            facts.record_feedback(added["fact_id"], "helpful")
    after = next(i for i in recall("billing", home=home).results if i.kind == "facts")
    assert after.provenance["trust_score"] == pytest.approx(0.75)
    assert after.score > before.score and "trust 0.75" in after.why


def test_budget_is_respected(full_home):
    home, _ = full_home
    result = recall("billing service", home=home, budget_tokens=40)
    assert result.used_tokens <= 40
    assert result.rendered.startswith("Recalled for:")
    assert ">>>" not in result.rendered and "<<<" not in result.rendered
    assert result.omitted and all(o["reason"] == "over budget" for o in result.omitted)
    assert len(result.results) + len(result.omitted) == len(recall("billing service", home=home).results)


def test_since_filters_old_sessions(full_home):
    home, _ = full_home
    result = recall("billing", home=home, kinds=["sessions"], since="7d")
    assert result.results == []
    assert recall("billing", home=home, kinds=["sessions"], since="60d").results


def test_empty_home_and_no_database(home):
    result = recall("anything at all", home=home)
    assert result.results == [] and result.errors == {}
    assert not home.db_path.exists()


@pytest.mark.parametrize("text", ["", "   ", '"', "NOT", "(((", "a*b:c-d", "🎉", "数据", "\x00", "x" * 5000])
def test_never_raises_on_query_text(full_home, text):
    home, _ = full_home
    result = recall(text, home=home)
    assert result.errors == {}


def test_tool_and_cli(full_home):
    home, _ = full_home
    out = json.loads(handle_tool_call("recall", {"query": "billing", "limit": 3}, home=home))
    assert out["success"] is True and out["count"] == 3 and len(out["results"]) == 3
    bad = json.loads(handle_tool_call("recall", {"query": 5}, home=home))
    assert bad["success"] is False and "'query'" in bad["error"]
    missing = json.loads(handle_tool_call("recall", {}, home=home))
    assert missing["success"] is False and "'query'" in missing["error"]
    runner = CliRunner()
    res = runner.invoke(cli, ["--home", str(home.root), "recall", "billing", "--json", "--kinds", "memory,user"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["query"] == "billing" and {r["kind"] for r in data["results"]} <= {"memory", "user"}
    res = runner.invoke(cli, ["--home", str(home.root), "recall", "billing"])
    assert res.exit_code == 0 and "Facts" in res.output and "Past sessions" in res.output
    res = runner.invoke(cli, ["--home", str(home.root), "recall", "billing", "--kinds", "bogus"])
    assert res.exit_code == 2


def test_tool_is_listed():
    from hermes_store.tools import TOOL_NAMES, tool_schemas

    assert "recall" in TOOL_NAMES
    schema = next(s for s in tool_schemas() if s["name"] == "recall")
    assert schema["parameters"]["required"] == ["query"]
    assert set(schema["parameters"]["properties"]["kinds"]["items"]["enum"]) == set(KINDS)


def test_recorded_terminal_escapes_reach_no_snippet(home):
    """A message recorded with terminal escapes (a tool's coloured output) is shown without
    them: ``session_search``'s content was stripped, and now its snippet and title are too,
    as ``recall``'s session items (no ESC reaches a model or a terminal)."""
    with home.open_db() as db:
        index = SessionIndex(db)
        sid = index.create_session(source="cli", title="\x1b[1mbuild\x1b[0m log")
        index.append_message(sid, "user", "the crème brûlée \x1b[31m deployment \x1b[0m failed again")
    reply = json.loads(handle_tool_call("session_search", {"query": "deployment"}, home=home))
    result = reply["results"][0]
    assert "deployment" in result["snippet"] and "\x1b" not in json.dumps(result, ensure_ascii=False)
    assert result["title"] == "build log"
    items = recall("deployment", home=home, kinds=["sessions"]).results
    assert items and all("\x1b" not in json.dumps(item.to_dict(), ensure_ascii=False) for item in items)


PROMPT_MESSAGE = "python repl: >>> import quokka then <<<<<<< HEAD conflict quokka >>>>>>> branch"
PROMPT_ENTRY = "In the REPL type >>> import quokka <<< to test"


def test_caller_marks_never_confuse_stored_marks(home):
    """Stored ``>>>``/``<<<`` (a Python prompt, a merge conflict) were indistinguishable from the
    hit marks: the CLI and the TUI bolded the wrong span, and the ``--budget`` block dropped them
    from the stored text. A caller's own marks surround exactly the matched words now, on both
    engines, in session snippets and memory snippets; the budget block keeps the text as written."""
    from hermes_store.builtin.search import search_entries
    from hermes_store.sessions.search import search_messages

    (home.memories_dir / "MEMORY.md").write_text(PROMPT_ENTRY, encoding="utf-8")
    with home.open_db() as db:
        index = SessionIndex(db)
        sid = index.create_session(source="cli", title="repl")
        index.append_message(sid, "user", PROMPT_MESSAGE)
        marks = ("\ue000[", "]\ue001")
        found = search_messages(db, "quokka", marks=marks).results
        assert [r["snippet"] for r in found] == [PROMPT_MESSAGE.replace("quokka", "\ue000[quokka]\ue001")]
        assert search_messages(db, "quokka").results[0]["snippet"] == PROMPT_MESSAGE.replace("quokka", ">>>quokka<<<")
        entry = search_entries(db, home.memories_dir, "quokka", marks=marks).hits[0]
        assert entry.snippet == PROMPT_ENTRY.replace("quokka", "\ue000[quokka]\ue001")
    result = recall("quokka", kinds=["memory", "sessions"], home=home, marks=marks)
    assert sorted(item.snippet for item in result.results) == sorted(
        text.replace("quokka", "\ue000[quokka]\ue001") for text in (PROMPT_MESSAGE, PROMPT_ENTRY))
    default = recall("quokka", kinds=["memory", "sessions"], home=home).to_dict()
    assert PROMPT_MESSAGE.replace("quokka", ">>>quokka<<<") in json.dumps(default, ensure_ascii=False)
    block = recall("quokka", kinds=["memory", "sessions"], home=home, budget_tokens=300).rendered
    assert PROMPT_MESSAGE in block and PROMPT_ENTRY in block, block
