"""session_search's ``after``/``before``/``exclude_session_ids`` (issue 26), held to the newest
Hermes tool (zons-zhaozhy/hermes-agent 03d70b32, tools/session_search_tool.py): bounds on the
session's start, relative durations, a date-only ``before`` at midnight UTC, Hermes' error for a
bad bound, excluded lineage roots; the scroll hint and the read cap; the same bounds on
``sessions search`` and ``recall``."""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from hermes_store import timeutil
from hermes_store.cli import cli
from hermes_store.recall import recall
from hermes_store.sessions.session_search import SESSION_SEARCH_SCHEMA
from hermes_store.tools import handle_tool_call
from tests.search.conftest import add_session

JUNE_30 = datetime(2026, 6, 30, 23, 59, tzinfo=timezone.utc).timestamp()
JULY_1 = datetime(2026, 7, 1, 0, 0, tzinfo=timezone.utc).timestamp()
JULY_2 = datetime(2026, 7, 2, 12, 0, tzinfo=timezone.utc).timestamp()
BAD = ("invalid time bound: 'last tuesday' (expected ISO date/datetime like 2026-07-01, "
       "or a relative duration like 7d, 24h, 2w)")


def call(home, args, session_id=""):
    return json.loads(handle_tool_call("session_search", args, home=home, session_id=session_id))


def ids(out):
    return sorted(r["session_id"] for r in out["results"])


@pytest.fixture
def dated(db):
    add_session(db, "june", [("user", "kubernetes upgrade in june")], start=JUNE_30)
    add_session(db, "july1", [("user", "kubernetes upgrade at midnight")], start=JULY_1)
    add_session(db, "july2", [("user", "kubernetes upgrade later")], start=JULY_2)
    return db


def test_parse_bound_grammar_and_error():
    now = 1_800_000_000.0
    assert timeutil.parse_bound("7d", now=now) == int(now) - 7 * 86400
    assert timeutil.parse_bound("24H", now=now) == int(now) - 86400
    assert timeutil.parse_bound("2w", now=now) == int(now) - 14 * 86400
    assert timeutil.parse_bound("2026-07-01") == int(JULY_1)
    assert timeutil.parse_bound("2026-07-01T00:00:00+02:00") == int(JULY_1) - 7200
    assert timeutil.parse_bound("  ") is None and timeutil.parse_bound(None) is None
    for bad in ("last tuesday", "30m", "1700000000", "7 days"):
        with pytest.raises(timeutil.TimeParseError, match="^invalid time bound: "):
            timeutil.parse_bound(bad)


def test_after_is_inclusive_and_date_only_before_is_midnight_utc(home, dated):
    assert ids(call(home, {"query": "kubernetes", "limit": 10, "before": "2026-07-01"})) == ["june"]
    assert ids(call(home, {"query": "kubernetes", "limit": 10, "after": "2026-07-01"})) == ["july1", "july2"]
    window = call(home, {"query": "kubernetes", "limit": 10, "after": "2026-07-01", "before": "2026-07-02"})
    assert ids(window) == ["july1"]


def test_relative_durations(home, db):
    now = time.time()
    add_session(db, "recent", [("user", "terraform plan")], start=now - 3600)
    add_session(db, "lastweek", [("user", "terraform apply")], start=now - 5 * 86400)
    add_session(db, "old", [("user", "terraform destroy")], start=now - 30 * 86400)
    assert ids(call(home, {"query": "terraform", "limit": 10, "after": "24h"})) == ["recent"]
    assert ids(call(home, {"query": "terraform", "limit": 10, "after": "7d"})) == ["lastweek", "recent"]
    assert ids(call(home, {"query": "terraform", "limit": 10, "before": "2w"})) == ["old"]


def test_bad_bound_answers_hermes_error(home, dated):
    assert call(home, {"query": "kubernetes", "after": "last tuesday"}) == {"success": False, "error": BAD}
    assert call(home, {"query": "kubernetes", "before": "last tuesday"}) == {"success": False, "error": BAD}
    # Hermes reads the bounds only in the discovery shape: browse ignores them
    assert call(home, {"after": "last tuesday"})["mode"] == "browse"


def test_exclusion_of_a_lineage_root(home, db):
    add_session(db, "root", [("user", "the flaky deploy script")], start=JULY_1,
                meta={"end_reason": "compression"}, ended_at=JULY_1 + 100)
    add_session(db, "child", [("user", "deploy script fixed")], start=JULY_1 + 200, parent="root")
    add_session(db, "other", [("user", "another deploy story")], start=JULY_2)
    base = call(home, {"query": "deploy", "limit": 10})
    assert {r["session_id"] for r in base["results"]} & {"root", "child"} and "other" in ids(base)
    # excluding the child hides its lineage root too (Hermes: "their lineage roots")
    out = call(home, {"query": "deploy", "limit": 10, "exclude_session_ids": ["child"]})
    assert ids(out) == ["other"]
    out = call(home, {"query": "deploy", "limit": 10, "exclude_session_ids": "root"})
    assert ids(out) == ["other"]
    # at most 20 ids are read: a 21st is ignored
    many = [f"x{i}" for i in range(20)] + ["other"]
    assert "other" in ids(call(home, {"query": "deploy", "limit": 10, "exclude_session_ids": many}))


def test_title_match_respects_exclusion_and_window(home, db):
    add_session(db, "titled", [("user", "hello there")], start=JUNE_30, title="Migration plan")
    assert call(home, {"query": "Migration plan"})["results"][0]["matched_role"] == "session_title"
    assert call(home, {"query": "Migration plan", "exclude_session_ids": ["titled"]})["count"] == 0
    assert call(home, {"query": "Migration plan", "after": "2026-07-01"})["count"] == 0


def test_scroll_hint_and_read_cap(home, db):
    msg_ids = add_session(db, "long", [("user", "x" * 5000), ("assistant", "short reply")], start=JULY_1)
    scrolled = call(home, {"session_id": "long", "around_message_id": msg_ids[1]})
    assert scrolled["hint"].startswith("Scroll forward: re-call with around_message_id = the LAST message's id")
    read = call(home, {"session_id": "long"})
    first = read["messages"][0]
    assert first["content_truncated"] and first["original_content_chars"] == 5000
    assert len(first["content"]) == 2001  # 2,000 characters and the ellipsis


def test_schema_lists_the_new_parameters():
    props = SESSION_SEARCH_SCHEMA["parameters"]["properties"]
    assert props["exclude_session_ids"]["type"] == "array"
    assert "Exclusive upper bound" in props["before"]["description"]
    assert "Inclusive lower bound" in props["after"]["description"]


def test_schema_parameters_are_hermes_in_order_with_defaults():
    # Hermes' SESSION_SEARCH_SCHEMA (tools/session_search_tool.py): the same properties in the
    # same order, the same defaults and the same parameter descriptions.
    props = SESSION_SEARCH_SCHEMA["parameters"]["properties"]
    assert list(props) == ["query", "limit", "sort", "detail", "after", "before", "exclude_session_ids",
                           "session_id", "around_message_id", "window", "role_filter", "profile"]
    assert {k: v["default"] for k, v in props.items() if "default" in v} == {
        "limit": 3, "detail": "adaptive", "window": 5}
    assert props["limit"]["description"].startswith(
        "Discovery shape only. Max sessions to return (default 3, max 10). Bump to 5–10 when")
    assert props["window"]["description"].endswith("Clamped to [1, 20]. Default 5.")
    assert props["session_id"]["description"] == (
        "Scroll shape. Session to read inside. Use the session_id returned from a prior discovery "
        "call. Must be paired with around_message_id.")
    assert props["role_filter"]["description"].endswith("or 'tool' to search tool output only.")
    assert props["profile"]["description"].endswith("Omit to use the current profile.")
    assert SESSION_SEARCH_SCHEMA["parameters"]["required"] == []


def test_sessions_search_cli_bounds(home, dated):
    def run(*extra):
        result = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "search", "kubernetes",
                                          "--json", *extra])
        return result
    out = run("--before", "2026-07-01")
    assert out.exit_code == 0, out.output
    assert {r["session_id"] for r in json.loads(out.output)["results"]} == {"june"}
    out = run("--after", "2026-07-01", "--exclude-session", "july2")
    assert {r["session_id"] for r in json.loads(out.output)["results"]} == {"july1"}
    bad = run("--after", "last tuesday")
    assert bad.exit_code == 2 and "invalid time bound: 'last tuesday'" in bad.output


def test_recall_bounds(home, dated):
    found = recall("kubernetes", kinds=["sessions"], home=home, before="2026-07-01")
    assert {r.to_dict()["session_id"] if hasattr(r, "to_dict") else r.session_id
            for r in found.results} == {"june"}
    tool = json.loads(handle_tool_call("recall", {"query": "kubernetes", "kinds": ["sessions"],
                                                  "after": "2026-07-02"}, home=home))
    assert tool["success"] and len(tool["results"]) >= 1
    assert all("july2" in json.dumps(r) for r in tool["results"])
    bad = json.loads(handle_tool_call("recall", {"query": "k", "after": "last tuesday"}, home=home))
    assert bad["success"] is False and "invalid time bound: 'last tuesday'" in bad["error"]


def test_wrong_typed_bound_names_the_argument_and_nul_query_is_no_crash(home, dated):
    out = call(home, {"query": "kubernetes", "after": 5})
    assert out["success"] is False and "'after'" in out["error"]
    out = call(home, {"query": "kubernetes", "before": "x" * 500})
    assert out["success"] is False and "'before'" in out["error"] and len(out["error"]) < 300
    nul = call(home, {"query": "\x00"})
    assert "failed:" not in nul.get("error", "")


def test_lineage_prefetch_reads_many_parents_in_one_go(db, monkeypatch):
    """``Lineage.prefetch`` reads the parents of many sessions with one call (a discover
    resolves every hit's lineage root this way); the roots are the ones a walk one by one finds."""
    from hermes_store.sessions.search import Lineage
    from hermes_store.sessions.storage import open_session_storage

    add_session(db, "root", [("user", "a")])
    add_session(db, "child", [("user", "b")], parent="root")
    add_session(db, "grandchild", [("user", "c")], parent="child")
    for n in range(30):
        add_session(db, f"lone{n}", [("user", "d")])
    ids = ["grandchild", "child", "root", "missing", *(f"lone{n}" for n in range(30))]
    one_by_one = {sid: Lineage(db).root(sid) for sid in ids}
    storage = open_session_storage(db)
    calls = {"parent_of": 0, "parents_of": 0}
    for name in calls:
        real = getattr(storage, name)

        def counting(*args, _real=real, _name=name):
            calls[_name] += 1
            return _real(*args)

        monkeypatch.setattr(storage, name, counting)
    lineage = Lineage(storage)
    lineage.prefetch(ids)
    assert {sid: lineage.root(sid) for sid in ids} == one_by_one
    assert one_by_one["grandchild"] == "root" and one_by_one["missing"] == "missing"
    assert calls == {"parent_of": 0, "parents_of": 1}


def _live_session(home) -> None:
    from hermes_store.sessions.live import SessionIndex

    with SessionIndex(home) as index:
        sid = index.create_session("roles", started_at=JULY_2)
        index.append_message(sid, "user", "okapi migration plan")
        index.append_message(sid, "tool", "okapi tool output")


@pytest.mark.parametrize("role_filter", [",".join(["user"] * 100_000), ["tool"] * 100_000])
def test_a_repeated_role_filter_answers_on_both_engines(engine, home, role_filter):
    """A role named 100,000 times is one role: on SQLite it used to fail the call with
    'session_search failed: SQLError: too many SQL variables' (PostgreSQL answered)."""
    _live_session(home)
    out = call(home, {"query": "okapi", "role_filter": role_filter})
    assert out["success"] and out["count"] == 1, out


def test_a_role_filter_of_too_many_distinct_roles_is_refused_naming_it(engine, home):
    _live_session(home)
    out = call(home, {"query": "okapi", "role_filter": [f"r{i}" for i in range(40_000)]})
    assert out["success"] is False
    assert out["error"] == "'role_filter' names 40,000 distinct roles (at most 32)"


@pytest.mark.parametrize("args", [{"query": "okapi", "after": "9999999999999999d"},
                                  {"query": "okapi", "before": "99999999999999999999w"}])
def test_a_relative_bound_past_year_one_reads_as_ever(engine, home, args):
    """Before: 'session_search failed: OverflowError: int too big to convert' (the bound went
    into SQL as an integer no column holds)."""
    _live_session(home)
    out = call(home, args)
    assert out["success"], out
    assert out["count"] == (1 if "after" in args else 0), out


def test_a_message_number_no_store_can_hold_is_no_reference(engine, home):
    """Before: `roles#99999999999999999999` failed the call with 'OverflowError: int too big to
    convert'; now it is read as an id that does not exist, as any unknown id is."""
    _live_session(home)
    out = call(home, {"session_id": "roles#99999999999999999999"})
    assert out["success"] is False and "OverflowError" not in out["error"], out
    assert "roles#99999999999999999999" in out["error"], out
    assert call(home, {"session_id": "roles#1"})["success"]
