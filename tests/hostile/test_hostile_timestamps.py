"""Times no date can show (NaN, 1e300, -1e300) in a transcript or through the live API.

Before, a JSONL line with ``"timestamp": 1e300`` (or ``"NaN"``) was imported as it was; then
``sessions list`` and ``sessions show`` failed for the whole store with ``Error: timestamp out of
range for platform time_t`` and ``recall`` lost every past session
(``errors: {"sessions": "OverflowError: ..."}``). Now the importer reports the line and field and
keeps the message without a time, the live API refuses the value naming the argument, and a
time already stored that way is shown raw instead of failing its reader, on both engines."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.recall import recall
from hermes_store.sessions import index_paths
from hermes_store.sessions.live import SessionIndex


def test_a_transcript_time_no_date_can_show_is_reported_with_its_line(engine, home, tmp_path):
    path = tmp_path / "20251001_000000_stamp1.jsonl"
    lines = [{"role": "session_meta", "model": "m", "platform": "cli", "timestamp": 1_760_000_000},
             {"role": "user", "content": "okapi far future", "timestamp": 1e300},
             {"role": "user", "content": "okapi long ago", "timestamp": -1e300},
             {"role": "user", "content": "okapi no time", "timestamp": "NaN"},
             {"role": "user", "content": "okapi fine", "timestamp": 1_760_000_001}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    summary = index_paths(home, [path])
    problems = {(e["path"], e["line"]): e["error"] for e in summary["errors"]}
    for line, value in ((2, "1e+300"), (3, "-1e+300"), (4, "'NaN'")):
        assert problems[(str(path), line)] == f"field 'timestamp': timestamp {value} is outside the years 1 to 9999"
    assert summary["messages_added"] == 4, summary  # every message is kept, without the time
    listed = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "list"])
    assert listed.exit_code == 0, listed.output
    assert recall("okapi", home=home).to_dict().get("errors", {}) == {}


@pytest.mark.parametrize(("call", "name"), [
    (lambda ix: ix.create_session("far", started_at=1e300), "started_at"),
    (lambda ix: ix.create_session("nan", started_at=float("nan")), "started_at"),
    (lambda ix: ix.append_message(ix.create_session("ok"), "user", "x", timestamp=-1e300), "timestamp"),
])
def test_the_live_api_refuses_a_time_no_date_can_show(engine, home, call, name):
    with SessionIndex(home) as index, pytest.raises(ValueError, match=f"^{name}: timestamp .* is outside"):
        call(index)


def test_a_stored_time_no_date_can_show_fails_no_reader(engine, home):
    with SessionIndex(home) as index:
        index.create_session("far", started_at=1_760_000_000)
        index.append_message("far", "user", "okapi far future", timestamp=1_760_000_000)
    db = home.open_db()
    try:
        with db.write():  # written before the check existed, or by hand
            db.execute("UPDATE sessions SET started_at = 1e300")
            db.execute("UPDATE messages SET timestamp = -1e300")
    finally:
        db.close()
    for args in (["sessions", "list"], ["sessions", "show", "far"], ["sessions", "export", "far"]):
        out = CliRunner().invoke(cli, ["--home", str(home.root), *args])
        assert out.exit_code == 0 and "out of range" not in out.output, (args, out.output)
    found = recall("okapi", home=home).to_dict()
    assert found.get("errors", {}) == {} and found["count"] == 1, found
