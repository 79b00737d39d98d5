"""The session_search tool: discover / scroll / read / browse shapes, lineage, caps, errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_store.cli import cli
from hermes_store.home import Home
from hermes_store.tools import handle_tool_call
from tests.search.conftest import DAY, T0, add_session

DISCOVER_KEYS = {"success", "mode", "query", "detail", "results", "count", "sessions_searched"}
RESULT_KEYS = {"session_id", "when", "source", "model", "title", "matched_role", "match_message_id", "snippet",
               "bookend_start", "messages", "bookend_end", "messages_before", "messages_after", "detail", "link"}


def call(home: Home, args: dict, session_id: str = "") -> dict:
    return json.loads(handle_tool_call("session_search", args, home=home, session_id=session_id))


def conversation(topic: str, n: int) -> list[tuple[str, str]]:
    return [("user" if i % 2 == 0 else "assistant", f"{topic} message {i}") for i in range(n)]


# --------------------------------------------------------------------------- no store


def test_home_without_database_answers_gracefully(home):
    assert not home.db_path.exists()
    found = call(home, {"query": "anything"})
    assert found["success"] and found["count"] == 0 and found["message"].startswith("No matching sessions found. FTS5 ANDs")
    browsed = call(home, {})
    assert browsed["success"] and browsed["mode"] == "browse" and browsed["count"] == 0
    assert call(home, {"session_id": "nope"})["success"] is False
    assert not home.db_path.exists()


# --------------------------------------------------------------------------- discover


@pytest.fixture
def store(db):
    add_session(db, "alpha", [("user", "we fixed the postgres vacuum issue"), ("assistant", "postgres is happy")],
                start=T0, title="Postgres tuning")
    add_session(db, "beta", [("user", "postgres replication lag again")], start=T0 + DAY)
    add_session(db, "gamma", [("user", "nothing relevant here")], start=T0 + 2 * DAY)
    return db


def test_discover_shape(home, store):
    out = call(home, {"query": "postgres"})
    assert set(out) >= DISCOVER_KEYS and out["mode"] == "discover" and out["success"] is True
    assert out["count"] == len(out["results"]) == 2
    first = out["results"][0]
    assert set(first) >= RESULT_KEYS
    assert first["link"] == f"@session:{first['session_id']}"
    assert any(m.get("anchor") for m in first["messages"])
    assert out["sessions_searched"] == 2


def test_adaptive_detail_hydrates_only_the_first(home, store):
    out = call(home, {"query": "postgres", "limit": 5})
    assert [r["detail"] for r in out["results"]] == ["full", "compact"]
    compact = out["results"][1]
    assert compact["bookend_start"] == [] and compact["bookend_end"] == []
    assert [m["id"] for m in compact["messages"]] == [compact["match_message_id"]]
    full = call(home, {"query": "postgres", "limit": 5, "detail": "full"})
    assert [r["detail"] for r in full["results"]] == ["full", "full"]


def test_limit_is_clamped(home, db):
    for i in range(14):
        add_session(db, f"s{i}", [("user", f"widget number {i}")], start=T0 + i)
    assert call(home, {"query": "widget", "limit": 50})["count"] == 10
    assert call(home, {"query": "widget", "limit": 0})["count"] == 1
    assert call(home, {"query": "widget"})["count"] == 3


def test_no_match_message(home, store):
    out = call(home, {"query": "kubernetes"})
    assert out["success"] and out["count"] == 0 and out["message"].startswith("No matching sessions found. FTS5 ANDs")


def test_title_match_comes_first(home, store):
    out = call(home, {"query": '"Postgres tuning"'})
    first = out["results"][0]
    assert first["matched_role"] == "session_title" and first["session_id"] == "alpha"
    assert first["snippet"] == "Session title matched: Postgres tuning"


def test_title_match_numbered_variant(home, db):
    add_session(db, "v1", [("user", "first part")], title="Refactor", start=T0)
    add_session(db, "v2", [("user", "second part")], title="Refactor #2", start=T0 + DAY)
    first = call(home, {"query": "refactor"})["results"][0]
    assert first["matched_role"] == "session_title" and first["session_id"] == "v2"


def test_role_filter_and_tool_rows(home, db):
    add_session(db, "t", [("user", "run it"), ("tool", "zanzibar output line"), ("assistant", "done")])
    assert call(home, {"query": "zanzibar"})["count"] == 0
    out = call(home, {"query": "zanzibar", "role_filter": "user,assistant,tool"})
    assert out["count"] == 1 and out["results"][0]["matched_role"] == "tool"


def test_results_grouped_by_lineage_root(home, db):
    add_session(db, "root", [("user", "quasar design")], start=T0)
    add_session(db, "child", [("user", "quasar design continued")], parent="root", start=T0 + DAY)
    add_session(db, "grandchild", [("user", "quasar design final")], parent="child", start=T0 + 2 * DAY)
    add_session(db, "other", [("user", "quasar elsewhere")], start=T0 + 3 * DAY)
    out = call(home, {"query": "quasar", "limit": 10})
    sessions = [r["session_id"] for r in out["results"]]
    assert len(sessions) == 2 and "other" in sessions
    assert len({"root", "child", "grandchild"} & set(sessions)) == 1
    grouped = next(r for r in out["results"] if r["session_id"] != "other")
    if grouped["session_id"] != "root":
        assert grouped["parent_session_id"] in ("root", "child")


def test_current_lineage_is_excluded(home, db):
    add_session(db, "root", [("user", "nebula plan")], start=T0)
    add_session(db, "now", [("user", "nebula plan live")], parent="root", start=T0 + DAY)
    add_session(db, "else", [("user", "nebula elsewhere")], start=T0 + 2 * DAY)
    out = call(home, {"query": "nebula", "limit": 10}, session_id="now")
    assert [r["session_id"] for r in out["results"]] == ["else"]
    assert len(call(home, {"query": "nebula", "limit": 10})["results"]) == 2


def test_lineage_session_that_left_context_is_searchable(home, db):
    add_session(db, "root", [("user", "comet notes")], start=T0, meta={"end_reason": "compression"})
    add_session(db, "now", [("user", "talking")], parent="root", start=T0 + DAY)
    out = call(home, {"query": "comet"}, session_id="now")
    assert [r["session_id"] for r in out["results"]] == ["root"]


def test_cron_is_demoted(home, db):
    add_session(db, "cronjob", [("user", "backup backup backup report")], source="cron", start=T0 + DAY)
    add_session(db, "human", [("user", "did the backup run, and what else happened in the long night?")])
    out = call(home, {"query": "backup", "limit": 5})
    assert [r["session_id"] for r in out["results"]] == ["human", "cronjob"]


def test_subagent_and_kanban_sessions_are_hidden_from_discovery_and_browse(home, db):
    # Hermes' _HIDDEN_SESSION_SOURCES = ("kanban", "subagent", "tool"): delegate subagent runs
    # and kanban workers are not the user's history; an explicit read still works.
    add_session(db, "sub", [("user", "quasar quasar quasar")], source="subagent", start=T0 + DAY)
    add_session(db, "board", [("user", "quasar quasar notes")], source="kanban", start=T0 + DAY)
    add_session(db, "human", [("user", "we talked about the quasar once")])
    assert [r["session_id"] for r in call(home, {"query": "quasar", "limit": 10})["results"]] == ["human"]
    assert [r["session_id"] for r in call(home, {})["results"]] == ["human"]
    assert call(home, {"session_id": "sub"})["success"] is True


def test_sort_newest(home, db):
    add_session(db, "early", [("user", "orbit orbit orbit")], start=T0)
    add_session(db, "late", [("user", "orbit once in a longer sentence")], start=T0 + 5 * DAY)
    assert call(home, {"query": "orbit", "sort": "newest"})["results"][0]["session_id"] == "late"
    assert call(home, {"query": "orbit", "sort": "oldest"})["results"][0]["session_id"] == "early"


def test_sort_and_detail_are_read_as_hermes_reads_them(home, db):
    # Hermes: sort.strip().lower(); detail "full" in any case; an empty string is an omitted
    # value (strict providers send "" for optional fields). Ours refused all of these.
    add_session(db, "early", [("user", "orbit orbit orbit")], start=T0)
    add_session(db, "late", [("user", "orbit once in a longer sentence")], start=T0 + 5 * DAY)
    assert call(home, {"query": "orbit", "sort": " Newest "})["results"][0]["session_id"] == "late"
    assert call(home, {"query": "orbit", "sort": ""})["results"][0]["session_id"] == "early"
    out = call(home, {"query": "orbit", "detail": "FULL"})
    assert out["detail"] == "full" and all(r["detail"] == "full" for r in out["results"])
    assert call(home, {"query": "orbit", "detail": ""})["detail"] == "adaptive"


def test_caps_and_bookends(home, db):
    msgs = [("user", "opening question about the system"), ("assistant", "opening answer"),
            ("user", "[CONTEXT SUMMARY]: earlier stuff"), ("assistant", "more setup")]
    msgs += [("user", f"filler {i}") for i in range(8)]
    msgs += [("assistant", "the needle " + "x" * 5000)]
    msgs += [("user", f"after {i}") for i in range(8)]
    msgs += [("assistant", "closing " + "y" * 2000)]
    add_session(db, "long", msgs)
    first = call(home, {"query": "needle"})["results"][0]
    anchor = next(m for m in first["messages"] if m.get("anchor"))
    assert anchor["content_truncated"] is True and anchor["original_content_chars"] == 5011
    assert len(anchor["content"]) == 4001 and anchor["content"].endswith("…")
    starts = [m["content"] for m in first["bookend_start"]]
    assert starts == ["opening question about the system", "opening answer", "more setup"]
    end = first["bookend_end"]
    assert len(end) == 3 and end[-1]["content"].startswith("closing")
    assert len(end[-1]["content"]) == 1201 and end[-1]["content_truncated"]
    # Hermes' get_messages_around: how many slice messages precede / follow the anchor (±5)
    assert (first["messages_before"], first["messages_after"]) == (5, 5)


# --------------------------------------------------------------------------- scroll


@pytest.fixture
def long_session(db):
    return add_session(db, "long", conversation("saga", 40), start=T0)


def test_scroll_window(home, long_session):
    anchor = long_session[20]
    out = call(home, {"session_id": "long", "around_message_id": anchor, "window": 3})
    assert out["success"] and out["mode"] == "scroll" and out["window"] == 3
    assert [m["id"] for m in out["messages"]] == long_session[17:24]
    assert [m["id"] for m in out["messages"] if m.get("anchor")] == [anchor]
    # Hermes' get_messages_around counts the slice's messages before/after the anchor (fewer than
    # `window` means the start/end of the session is in view), not the whole session's.
    assert out["messages_before"] == 3 and out["messages_after"] == 3
    start = call(home, {"session_id": "long", "around_message_id": long_session[1], "window": 3})
    assert (start["messages_before"], start["messages_after"]) == (1, 3)
    end = call(home, {"session_id": "long", "around_message_id": long_session[-1], "window": 3})
    assert (end["messages_before"], end["messages_after"]) == (3, 0)
    assert set(out["session_meta"]) == {"when", "source", "model", "title"}


def test_scroll_window_is_clamped(home, long_session):
    out = call(home, {"session_id": "long", "around_message_id": long_session[20], "window": 99})
    assert out["window"] == 20 and len(out["messages"]) == 40


def test_scroll_errors(home, long_session, db):
    assert call(home, {"session_id": "long", "around_message_id": 99999}) == {
        "success": False, "error": "around_message_id 99999 not in session_id long"}
    assert call(home, {"session_id": "nope", "around_message_id": long_session[0]}) == {
        "success": False, "error": "session_id not found: nope"}
    assert call(home, {"session_id": "long", "around_message_id": "twelve"}) == {
        "success": False, "error": "scroll requires integer around_message_id"}
    add_session(db, "stranger", [("user", "hello")])
    out = call(home, {"session_id": "stranger", "around_message_id": long_session[0]})
    assert out["success"] is False


def test_scroll_rejects_current_lineage(home, long_session):
    out = call(home, {"session_id": "long", "around_message_id": long_session[5]}, session_id="long")
    assert out == {"success": False, "error": "scroll rejected: anchor lives in the current session lineage "
                                              "(already in your active context)"}


def test_scroll_rebinds_to_descendant(home, db):
    add_session(db, "p", [("user", "parent talk")])
    ids = add_session(db, "c", [("user", "child talk"), ("assistant", "child reply")], parent="p")
    out = call(home, {"session_id": "p", "around_message_id": ids[1]})
    assert out["success"] and out["session_id"] == "c" and "warning" in out


# --------------------------------------------------------------------------- read


def test_read_small_session(home, db):
    add_session(db, "small", conversation("brief", 4), title="Brief")
    out = call(home, {"session_id": "small"})
    assert out["mode"] == "read" and out["truncated"] is False and out["message_count"] == 4
    assert out["link"] == "@session:small" and len(out["messages"]) == 4


def test_read_large_session_head_and_tail(home, long_session):
    out = call(home, {"session_id": "long"})
    assert out["truncated"] is True and len(out["messages"]) == 30
    ids = [m["id"] for m in out["messages"]]
    assert ids == long_session[:20] + long_session[-10:]
    assert "around_message_id" in out["message"]


def test_read_unknown_session(home, db):
    # issue 26: the newest Hermes' READ miss names the profile scope (_read_scoped, #106761)
    assert call(home, {"session_id": "missing"}) == {
        "success": False, "error": "session_id not found in this profile: missing. If it belongs to another "
        "profile, pass profile=<name> (or the @session:<profile>/<id> link)."}


# --------------------------------------------------------------------------- browse


def test_browse(home, db):
    add_session(db, "old", [("user", "x" * 100)], start=T0)
    add_session(db, "new", [("user", "short opener")], start=T0 + 3 * DAY)
    add_session(db, "compressed-child", [("user", "child")], parent="old", start=T0 + 4 * DAY)
    add_session(db, "branch", [("user", "branched")], parent="old", start=T0 + 5 * DAY,
                meta={"_branched_from": "old"})
    add_session(db, "me", [("user", "current")], start=T0 + 6 * DAY)
    out = call(home, {"limit": 10}, session_id="me")
    assert out["mode"] == "browse" and out["success"]
    ids = [r["session_id"] for r in out["results"]]
    assert ids == ["branch", "new", "old"]
    old = out["results"][-1]
    assert old["preview"] == "x" * 60 + "..." and old["link"] == "@session:old"
    assert out["message"].startswith("Showing 3 most recent sessions.")


def test_browse_default_limit(home, db):
    for i in range(6):
        add_session(db, f"b{i}", [("user", "hi")], start=T0 + i)
    assert call(home, {})["count"] == 3


# --------------------------------------------------------------------------- errors and entry points


@pytest.mark.parametrize(
    ("args", "needle"),
    [({"query": "x", "sort": "best"}, "sort"), ({"query": 5}, "query"),
     ({"query": "x", "detail": "huge"}, "detail"), ({"session_id": "s", "around_message_id": "abc"},
                                                    "around_message_id")],
)
def test_bad_arguments(home, store, args, needle):
    out = call(home, args)
    assert out["success"] is False and needle in out["error"]


def test_cli_tool_command(home, store):
    result = CliRunner().invoke(cli, ["--home", str(home.root), "tool", "session_search", '{"query": "postgres"}'])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["count"] == 2


def test_cli_search_command_json(home, store):
    from hermes_store.cli.sessions_search import search

    runner = CliRunner()
    result = runner.invoke(search, ["postgres", "--json", "--limit", "2", "--role", "user"], obj=home)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["count"] == 2 and all(r["role"] == "user" for r in data["results"])
    assert ">>>" in data["results"][0]["snippet"]
    text = runner.invoke(search, ["postgres", "--since", "2023-11-15"], obj=home)
    assert text.exit_code == 0 and "beta" in text.output and ">>>" not in text.output
    wide = runner.invoke(search, ["vacuum", "--json", "--context"], obj=home)
    assert [r["seq"] for r in json.loads(wide.output)["results"]] == [0, 1]
    bad = runner.invoke(search, ["postgres", "--since", "someday"], obj=home)
    assert bad.exit_code == 2 and "not a date" in bad.output


ARG_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 100), st.text(max_size=30),
                       st.sampled_from(["newest", "oldest", "full", "adaptive", "alpha", "user,tool", "a/b"]))
ARGS = st.dictionaries(
    st.sampled_from(["query", "limit", "sort", "detail", "session_id", "around_message_id", "window",
                     "role_filter", "junk"]),
    ARG_VALUES, max_size=5,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(args=ARGS)
def test_fuzz_tool_never_raises(home, store, args):
    out = call(home, args)
    assert isinstance(out["success"], bool)
    if not out["success"]:
        assert isinstance(out["error"], str) and out["error"]
        assert "failed:" not in out["error"], out["error"]


@pytest.mark.parametrize("session_id", ["\x00", "alpha\x00", "\x00alpha"])
def test_a_nul_in_a_session_id_is_read_alike_on_both_engines(home, store, session_id):
    """No stored id holds a NUL (importers drop them) and PostgreSQL text cannot carry one: the
    id is read with its control characters as spaces, as a query is (found by the fuzz test:
    ``session_id='\\x00'`` was a DataError on PostgreSQL)."""
    out = call(home, {"session_id": session_id})
    assert "failed:" not in out.get("error", "")
    if session_id == "\x00":
        assert out["success"] is False and "must not be empty" in out["error"]
    else:  # the NUL is a space, stripped: the session itself, on either engine
        assert out["success"] is True and out["mode"] == "read" and out["session_id"] == "alpha"


def test_profile_argument_and_cross_profile_read(home):
    other = Home(home.root, "work").ensure()
    db = other.open_db()
    try:
        add_session(db, "w1", [("user", "profile secret sauce")], title="Work")
    finally:
        db.close()
    out = call(home, {"query": "sauce", "profile": "work"})
    assert out["count"] == 1 and out["results"][0]["link"] == "@session:work/w1"
    read_out = call(home, {"session_id": "work/w1"})
    assert read_out["success"] and read_out["link"] == "@session:work/w1"
    # issue 26: newest Hermes never falls through to another profile's store on a bare id (#106761)
    found = call(home, {"session_id": "w1"})
    assert found == {"success": False, "error": "session_id not found in this profile: w1. If it belongs to "
                     "another profile, pass profile=<name> (or the @session:<profile>/<id> link)."}
    assert call(home, {"query": "x", "profile": "nope"})["success"] is False


def test_sessions_search_through_the_root_cli(home, store):
    result = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "search", "postgres", "--json",
                                      "--exclude-source", "telegram", "--sort", "newest"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["query"] == "postgres" and data["results"][0]["session_id"] == "beta"


# --------------------------------------------------------------------------- Hermes shapes (issue 13)

TOOL_CALLS = '[{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{\\"command\\": \\"ls\\"}"}}]'


@pytest.fixture
def tool_session(db):
    return add_session(db, "tools", [
        ("user", "list the deploy directory"),
        ("assistant", "", {"tool_calls": TOOL_CALLS}),
        ("tool", "app.py\nDockerfile", {"tool_call_id": "c1", "tool_name": "terminal"}),
        ("assistant", "the deploy directory holds app.py and a Dockerfile"),
    ], start=T0, title="Deploy dir")


def test_read_returns_every_role_and_tool_calls_as_objects(home, tool_session):
    out = call(home, {"session_id": "tools"})
    assert [m["role"] for m in out["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert out["message_count"] == 4
    assert out["messages"][1]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}]
    assert out["messages"][2]["tool_call_id"] == "c1" and out["messages"][2]["tool_name"] == "terminal"


def test_scroll_returns_every_role(home, tool_session):
    out = call(home, {"session_id": "tools", "around_message_id": tool_session[1], "window": 5})
    assert [m["role"] for m in out["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert isinstance(out["messages"][1]["tool_calls"], list)
    assert (out["messages_before"], out["messages_after"]) == (1, 2)


def test_discover_window_keeps_user_assistant_but_counts_every_role(home, tool_session):
    out = call(home, {"query": "Dockerfile"})
    first = out["results"][0]
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "assistant"]
    assert (first["messages_before"], first["messages_after"]) == (3, 0)


def test_read_large_session_message_is_hermes_wording(home, db):
    add_session(db, "big", conversation("topic", 35))
    out = call(home, {"session_id": "big"})
    assert out["truncated"] is True and len(out["messages"]) == 30
    assert out["message"] == ("Session has 35 messages; showing first 20 + last 10. Pass around_message_id "
                              "(any id above) to scroll the middle.")


def test_browse_message_is_hermes_wording(home, store):
    out = call(home, {})
    assert out["message"] == (f"Showing {out['count']} most recent sessions. Pass a query= to search, or "
                              "session_id+around_message_id to scroll.")


@pytest.fixture
def compressed(db):
    # root ended by compression at T0+600; its continuation started then and is the live tip
    add_session(db, "root", [("user", "plan the kubernetes upgrade"), ("assistant", "drain nodes first")],
                start=T0, title="kubernetes upgrade", model=None, ended_at=T0 + 600,
                meta={"end_reason": "compression"})
    add_session(db, "cont", [("user", "[CONTEXT SUMMARY]: upgrading kubernetes"),
                             ("user", "nodes are drained, kubernetes control plane next")],
                start=T0 + 600, parent="root", title=None, model=None)
    add_session(db, "other", [("user", "unrelated chat")], start=T0 + 100, title="other")


def test_browse_lists_a_compressed_lineage_by_its_newest_continuation(home, compressed):
    out = call(home, {})
    ids = [r["session_id"] for r in out["results"]]
    assert "cont" in ids and "root" not in ids and ids.count("cont") == 1
    entry = next(r for r in out["results"] if r["session_id"] == "cont")
    assert entry["started_at"] == T0  # the root's start, as Hermes keeps it
    assert entry["link"] == "@session:cont"


def test_discover_describes_a_continuation_by_its_root(home, compressed):
    out = call(home, {"query": "control plane"})
    hit = out["results"][0]
    assert hit["session_id"] == "cont" and hit["parent_session_id"] == "root"
    keys = [k for k in hit if k != "written_by"]  # written_by: ours, on a shared PostgreSQL store
    assert keys[-3:] == ["detail", "parent_session_id", "link"]  # Hermes' key order
    assert hit["title"] == "kubernetes upgrade"  # the root's title (the child has none)
    assert hit["model"] == "unknown"  # a missing model reads "unknown"
    assert out["sessions_searched"] == 1  # lineages, as Hermes counts them


def test_sessions_searched_counts_lineages(home, store):
    out = call(home, {"query": "postgres"})
    assert out["sessions_searched"] == len({r["session_id"] for r in out["results"]}) == 2
