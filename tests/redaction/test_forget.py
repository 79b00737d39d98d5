"""``hermes-store forget``: gone from rows, index, file, WAL and later backups; re-indexing skips it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.home import Home

PRIVATE = "walrus-private-diagnosis-7731"


def run(home: Home, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--home", str(home.root), *args], catch_exceptions=False)
    return result.exit_code, result.output


def transcript(path: Path) -> Path:
    lines = [
        {"session_id": "keep-1", "role": "user", "content": "narwhal plans for the week"},
        {"session_id": "keep-1", "role": "assistant", "content": f"noted narwhal and {PRIVATE}"},
        {"session_id": "keep-1", "role": "user", "content": "narwhal again"},
        {"session_id": "drop-2", "role": "user", "content": "narwhal secret project"},
        {"session_id": "drop-2", "role": "assistant", "content": "narwhal project noted"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def search(home: Home, query: str) -> list[dict]:
    return json.loads(run(home, "sessions", "search", "--json", "--limit", "50", query)[1])["results"]


def reindex(home: Home, path: Path) -> dict:
    """Index ``path`` again from scratch: rewritten with a new first line, so the loader drops
    what it imported from it and reads every line again."""
    first = json.dumps({"session_id": "new-3", "role": "user", "content": "orca arrives"})
    path.write_text(first + "\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    code, out = run(home, "sessions", "index", "--json", str(path))
    assert code == 0, out
    return json.loads(out)


def test_forget_reference_session_and_matching(engine, home, tmp_path) -> None:
    source = transcript(tmp_path / "events.jsonl")
    assert run(home, "sessions", "index", str(source))[0] == 0
    hit = next(h for h in search(home, "narwhal") if h["session_id"] == "keep-1" and h["seq"] == 2)
    code, out = run(home, "forget", "--json", f"keep-1#{hit['seq']}")
    assert code == 0 and json.loads(out)["forgotten_messages"] == 1
    code, out = run(home, "forget", "--json", "--matching", PRIVATE)
    assert json.loads(out)["forgotten_messages"] == 1
    code, out = run(home, "forget", "--json", "--session", "drop-2")
    assert json.loads(out) == {"success": True, "forgotten_sessions": ["drop-2"], "forgotten_messages": 2}
    assert not search(home, PRIVATE.split("-")[0])
    assert [h["seq"] for h in search(home, "narwhal")] == [0]
    show = json.loads(run(home, "sessions", "show", "--json", "keep-1")[1])
    assert sorted(show["forgotten_messages"]) == [1, 2] and len(show["messages"]) == 1
    code, out = run(home, "sessions", "show", "drop-2")
    assert code == 1 and "forgotten for good" in out
    sources = run(home, "sessions", "sources")[1]
    assert "1 session (drop-2), 2 single messages" in sources and PRIVATE not in sources
    listed = run(home, "sessions", "sources", "--json")[1]
    gone = sorted((item["session_id"], item["whole_session"], item["messages"])
                  for item in json.loads(listed) if item.get("status") == "forgotten")
    assert gone == [("drop-2", True, []), ("keep-1", False, [1, 2])]
    assert PRIVATE not in listed and "secret project" not in listed
    summary = reindex(home, source)
    assert summary["messages_added"] == 2 and summary["forgotten"] == 4  # orca + narwhal #0 only
    assert [h["seq"] for h in search(home, "narwhal")] == [0]
    if engine == "sqlite":
        backup = tmp_path / "later.db"
        assert run(home, "backup", str(backup))[0] == 0
        for path in (home.db_path, Path(f"{home.db_path}-wal"), backup):
            if path.exists():
                assert PRIVATE.encode() not in path.read_bytes(), path
                assert b"secret project" not in path.read_bytes(), path


def test_sessions_delete_forget(home, tmp_path) -> None:
    source = transcript(tmp_path / "events.jsonl")
    run(home, "sessions", "index", str(source))
    code, out = run(home, "sessions", "delete", "--forget", "drop-2")
    assert code == 0 and "forgotten for good" in out
    summary = reindex(home, source)
    assert summary["forgotten"] == 2
    assert {h["session_id"] for h in search(home, "narwhal")} == {"keep-1"}


def test_forget_needs_a_target(home) -> None:
    code, out = run(home, "forget")
    assert code == 2 and "REF, --session ID or --matching TEXT" in out
    code, out = run(home, "forget", "nosuch#3")
    assert code != 0


def test_a_message_forgotten_already_is_refused_as_sessions_show_refuses_it(engine, home, tmp_path) -> None:
    """A reference naming no stored message is refused (1, like `sessions show`), not a usage
    error (2: a command line that is wrong whatever the store holds); --json says so too."""
    run(home, "sessions", "index", str(transcript(tmp_path / "events.jsonl")))
    assert run(home, "forget", "keep-1#1")[0] == 0
    code, out = run(home, "forget", "keep-1#1")
    assert code == 1 and "has no message #1" in out and "Usage:" not in out
    assert run(home, "sessions", "show", "keep-1#1")[0] == 1
    result = CliRunner().invoke(cli, ["--home", str(home.root), "forget", "--json", "keep-1#1"])
    assert result.exit_code == 1 and json.loads(result.stdout) == {
        "success": False, "error": "session keep-1 has no message #1"}
    assert "Error: session keep-1 has no message #1" in result.stderr


TOKEN = "ghp_R2d2C3p0Bb8Yoda4Luke6Leia8Han0Solo2Xy"


def test_forgotten_message_stays_forgotten_when_redaction_is_toggled(engine, home, tmp_path) -> None:
    """The tombstone holds the hash of the text as stored: the redacted form. With
    ``store.redact: false`` set afterwards, a re-index compared the raw form and brought the
    forgotten message back -- with the secret it was redacted of. Both ways round."""
    path = tmp_path / "t.jsonl"
    lines = [{"session_id": "keep-1", "role": "user", "content": "narwhal plans"},
             {"session_id": "keep-1", "role": "user", "content": f"narwhal token {TOKEN}"},
             {"session_id": "keep-1", "role": "user", "content": "narwhal done"}]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert run(home, "sessions", "index", str(path))[0] == 0
    assert run(home, "forget", "keep-1#1")[0] == 0
    home.config_path.write_text("store:\n  redact: false\n", encoding="utf-8")
    summary = reindex(home, path)
    assert summary["forgotten"] == 1, summary
    shown = run(home, "sessions", "show", "--json", "keep-1")[1]
    assert TOKEN not in shown and "narwhal token" not in shown
    # the other way: forgotten with redaction off (raw text hashed), re-indexed with it on
    other = tmp_path / "u.jsonl"
    other.write_text(json.dumps({"session_id": "keep-2", "role": "user", "content": f"walrus token {TOKEN}"}) + "\n"
                     + json.dumps({"session_id": "keep-2", "role": "user", "content": "walrus done"}) + "\n",
                     encoding="utf-8")
    assert run(home, "sessions", "index", str(other))[0] == 0
    assert run(home, "forget", "keep-2#0")[0] == 0
    home.config_path.write_text("store:\n  redact: true\n", encoding="utf-8")
    assert reindex(home, other)["forgotten"] == 1
    assert "walrus token" not in run(home, "sessions", "show", "--json", "keep-2")[1]


def test_forget_matching_a_text_that_holds_a_secret(engine, home, tmp_path) -> None:
    """``forget --matching`` with the text as the user remembers it (the token in it) finds the
    messages that hold its marker: before, it compared the raw text with the stored one and
    forgot nothing ("0 forgotten") while the message, marker and all, stayed."""
    token = "ghp_R2d2C3p0Bb8Yoda4Luke6Leia8Han0Solo2Xy"
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in [
        {"session_id": "s-1", "role": "user", "content": f"narwhal push with {token} please"},
        {"session_id": "s-1", "role": "assistant", "content": "narwhal pushed"},
    ]) + "\n", encoding="utf-8")
    assert run(home, "sessions", "index", str(path))[0] == 0
    code, out = run(home, "forget", "--json", "--matching", f"push with {token}")
    assert code == 0 and json.loads(out)["forgotten_messages"] == 1, out
    assert [h["seq"] for h in search(home, "narwhal")] == [1]
