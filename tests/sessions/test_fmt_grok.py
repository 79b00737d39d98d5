"""xAI's Grok CLI sessions (``~/.grok/sessions/<url-encoded cwd>/<id>/chat_history.jsonl`` beside
``summary.json``). Before, each file was ``unknown format``. The fixture reproduces the records'
structure, never real content."""

from __future__ import annotations

from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format

SID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
FOLDER = f"grok-cli/.grok/sessions/%2Fsrv%2Fquarry/{SID}"


def test_grok_session_is_read_with_its_summary(store, format_fixtures):
    folder = format_fixtures / FOLDER
    for name in ("chat_history.jsonl", "summary.json", "updates.jsonl"):
        assert detect_format(folder / name) == "grok-cli"
    assert index(store, folder)["errors"] == []
    row = session(store, SID)
    assert (row["source"], row["title"], row["workspace"], row["model"]) == (
        "grok", "Duplicate tonnage in quarry report", "/srv/quarry", "grok-code-fast-1")
    assert (row["started_at"], row["ended_at"]) == (ts("2026-10-02T06:00:00Z"), ts("2026-10-02T06:04:30Z"))
    rows = messages(store, SID)
    assert roles(rows) == ["user", "system", "reasoning", "assistant", "tool", "assistant", "tool", "reasoning",
                           "assistant"]
    assert rows[0]["content"] == "the quarry report shows yesterday's tonnage twice, fix it"
    assert rows[1]["content"].startswith("<system-reminder>")  # injected (synthetic_reason): not the user's words
    assert rows[2]["content"] == "Look for the join that duplicates rows."  # newer summary_text blocks
    assert rows[3]["calls"] == [("read_file", {"path": "/srv/quarry/report.sql"}, "call_q1")]
    assert (rows[4]["tool_name"], rows[4]["tool_call_id"], rows[4]["content"]) == (
        "read_file", "call_q1", "SELECT * FROM loads JOIN shifts USING (day)")
    assert rows[5]["calls"] == [("run_terminal_cmd", {"command": "psql -c 'select count(*) from shifts where day = "
                                                                 "current_date - 1'"}, "call_q2")]
    assert (rows[6]["tool_call_id"], rows[6]["content"]) == ("call_q2", "[error]")  # an empty failed result, kept
    assert rows[7]["content"] == "Two shifts a day: the join doubles each load."  # an older summary string
    assert rows[8]["content"].startswith("Each day has two shifts")
    assert all("You are Grok" not in r["content"] for r in rows)


def test_without_summary_the_folder_names_the_workspace(store, tmp_path):
    import json

    folder = tmp_path / ".grok" / "sessions" / "%2Fhome%2Fli%2Fdepot" / "s1"
    folder.mkdir(parents=True)
    (folder / "chat_history.jsonl").write_text(
        json.dumps({"type": "user", "content": "hello"}) + "\n" +
        json.dumps({"type": "assistant", "model_id": "grok-4", "content": "hi"}) + "\n" +
        json.dumps({"type": "surprise", "content": "?"}) + "\n", encoding="utf-8")
    errors = index(store, folder / "chat_history.jsonl")["errors"]
    assert [e["line"] for e in errors] == [3] and "surprise" in errors[0]["error"]
    row = session(store, "s1")
    assert (row["workspace"], row["model"]) == ("/home/li/depot", "grok-4")
    assert [(r["role"], r["content"]) for r in messages(store, "s1")] == [("user", "hello"), ("assistant", "hi")]


def test_a_forks_session_store_file_is_read(store, format_fixtures):
    """The superagent Grok CLI's forks save ``~/.grok/sessions/<id>.json`` (``SessionStore``:
    ``{id, name, workingDirectory, model, messages: [{type, content, timestamp, toolCallName,
    toolCallSuccess}]}``). Before: ``unknown format``. A result whose call entry the agent replaced
    is preceded by the implied call; a failed empty result is ``[error]``."""
    path = format_fixtures / "grok-cli-session/.grok/sessions/session_mjv3k2a0_x7q9rt.json"
    assert detect_format(path) == "grok-cli-session"
    assert index(store, path)["errors"] == []
    rows = messages(store, "session_mjv3k2a0_x7q9rt")
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "why is the nightly build red?"),
        ("assistant", "Let me look at the last log."),
        ("assistant", ""), ("tool", "error: missing symbol kiln_init"),
        ("assistant", "Executing..."), ("tool", "[error]"),
        ("assistant", "kiln_init was renamed; the build script still calls the old name."),
    ]
    assert [r["calls"][0][0] for r in rows if r["calls"]] == ["bash", "view_file"]
    assert [(r["tool_name"], r["tool_call_id"]) for r in rows if r["role"] == "tool"] == [
        (call["calls"][0][0], call["calls"][0][2]) for call in rows if call["calls"]]
    row = session(store, "session_mjv3k2a0_x7q9rt")
    assert (row["source"], row["workspace"], row["model"]) == ("grok", "/srv/kiln", "grok-4-latest")
