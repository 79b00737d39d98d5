"""Secrets planted in every way in are found nowhere: not by search, not through any way out,
not in the raw database file, its WAL or a backup (both engines where a file exists)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from redaction_corpus import PLANTED

from hermes_store.cli import cli
from hermes_store.home import Home
from hermes_store.sessions.live import SessionIndex

KINDS = sorted(PLANTED)


def run(home: Home, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--home", str(home.root), *args], catch_exceptions=False)
    return result.exit_code, result.output


def write_openai_jsonl(path: Path) -> None:
    """An OpenAI-style JSONL transcript with every secret in message text, tool arguments and output."""
    lines = []
    for i, kind in enumerate(KINDS):
        text, _ = PLANTED[kind]
        sid = f"bulk-{i}"
        lines += [
            {"session_id": sid, "role": "user", "content": f"zebrafish question: {text}"},
            {"session_id": sid, "type": "tool_call", "id": f"c{i}", "name": "shell",
             "arguments": {"command": f"echo '{text}'"}},
            {"session_id": sid, "type": "tool_result", "tool_call_id": f"c{i}", "content": f"out: {text}"},
            {"session_id": sid, "role": "assistant", "content": f"zebrafish done ({text})"},
        ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")


def plant_everywhere(home: Home, tmp_path: Path) -> None:
    transcript = tmp_path / "agent_events.jsonl"
    write_openai_jsonl(transcript)
    code, out = run(home, "sessions", "index", "--json", str(transcript))
    assert code == 0, out
    assert json.loads(out)["messages_added"] == 4 * len(KINDS)
    with SessionIndex(home) as index:  # the live API: titles, text, tool calls and results
        for kind in KINDS:
            text, _ = PLANTED[kind]
            sid = index.create_session(title=f"zebrafish {text}", source="cli")
            index.append_message(sid, "user", f"live zebrafish {text}")
            index.append_message(sid, "assistant", "", tool_calls=[
                {"id": "t1", "type": "function", "function": {"name": "shell", "arguments": json.dumps({"cmd": text})}}])
            index.append_message(sid, "tool", f"result {text}", tool_call_id="t1", tool_name="shell")
            index.set_title(sid, f"renamed zebrafish {text}")
    for kind in KINDS:
        code, out = run(home, "facts", "add", f"zebrafish deploy credential {PLANTED[kind][0]}")
        assert code == 0, out


def assert_absent(blob: str | bytes, where: str) -> None:
    for kind in KINDS:
        secret = PLANTED[kind][1]
        needle = secret.encode() if isinstance(blob, bytes) else secret
        assert needle not in blob, f"{kind} secret found in {where}"


def test_planted_secrets_are_found_nowhere(engine, home, tmp_path) -> None:
    plant_everywhere(home, tmp_path)
    outputs = {}
    for kind in KINDS:  # searching for the secret itself finds nothing (the query is echoed back)
        found = json.loads(run(home, "sessions", "search", "--json", PLANTED[kind][1])[1])
        assert found["results"] == [], kind
    outputs["search"] = run(home, "sessions", "search", "--json", "--limit", "200", "zebrafish")[1]
    assert "[REDACTED:" in outputs["search"]
    listing = json.loads(run(home, "sessions", "list", "--json", "--limit", "200")[1])
    ids = [row["id"] for row in (listing if isinstance(listing, list) else listing["sessions"])]
    assert len(ids) == 2 * len(KINDS)
    for sid in ids:
        outputs[f"show {sid}"] = run(home, "sessions", "show", "--json", sid)[1]
    outputs["recall"] = run(home, "recall", "--json", "zebrafish")[1]
    outputs["facts"] = run(home, "facts", "list", "--json", "--limit", "100")[1]
    outputs["facts search"] = run(home, "facts", "search", "--json", "zebrafish")[1]
    outputs["session_search tool"] = run(home, "tool", "session_search", json.dumps({"query": "zebrafish"}))[1]
    outputs["fact tool"] = run(home, "tool", "fact_store", json.dumps({"action": "search", "query": "zebrafish"}))[1]
    for where, out in outputs.items():
        assert_absent(out, where)
    export = tmp_path / "facts.jsonl"
    assert run(home, "facts", "export", str(export))[0] == 0
    assert_absent(export.read_text(encoding="utf-8"), "facts export")
    assert "[REDACTED:" in export.read_text(encoding="utf-8")
    if engine == "sqlite":
        backup = tmp_path / "backup.db"
        assert run(home, "backup", str(backup))[0] == 0
        for path in (home.db_path, Path(str(home.db_path) + "-wal"), backup):
            if path.exists():
                assert_absent(path.read_bytes(), str(path))


def test_same_secret_same_marker_and_unrelated_text_kept(engine, home) -> None:
    with SessionIndex(home) as index:
        sid = index.create_session(title="t")
        first = index.append_message(sid, "user", "use ghp_R2d2C3p0Bb8Yoda4Luke6Leia8Han0Solo2Xy please")
        second = index.append_message(sid, "user", "again ghp_R2d2C3p0Bb8Yoda4Luke6Leia8Han0Solo2Xy and "
                                                   "commit 3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c")
        texts = {m["id"]: m["content"] for m in index.get_messages(sid)}
    marker = texts[first].split()[1]
    assert marker.startswith("[REDACTED:github-token:") and len(marker) == len("[REDACTED:github-token:]") + 6
    assert marker in texts[second]
    assert "3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c" in texts[second]


def test_redaction_off_keeps_text(home) -> None:
    home.config_path.write_text("store:\n  redact: false\n", encoding="utf-8")
    with SessionIndex(home) as index:
        sid = index.create_session(title="t")
        index.append_message(sid, "user", PLANTED["github"][0])
        assert index.get_messages(sid)[0]["content"] == PLANTED["github"][0]


def test_extra_patterns_and_allowlist(home) -> None:
    home.config_path.write_text(
        "store:\n  redact_patterns:\n    employee-id: 'EMP-[0-9]{6}'\n"
        "  redact_allow:\n    - 'AKIAIOSFODNN7EXAMPLE'\n", encoding="utf-8")
    with SessionIndex(home) as index:
        sid = index.create_session(title="t")
        index.append_message(sid, "user", "badge EMP-123456, doc key AKIAIOSFODNN7EXAMPLE, real AKIAQ3EGRTXMPL4Z7K2V")
        text = index.get_messages(sid)[0]["content"]
    assert "EMP-123456" not in text and "[REDACTED:employee-id:" in text
    assert "AKIAIOSFODNN7EXAMPLE" in text
    assert "AKIAQ3EGRTXMPL4Z7K2V" not in text


def test_bad_pattern_is_a_clear_error(home) -> None:
    home.config_path.write_text("store:\n  redact_patterns:\n    broken: '(['\n", encoding="utf-8")
    code, out = run(home, "sessions", "list")
    assert code != 0
    assert "store.redact_patterns.broken" in out


@pytest.mark.parametrize("kind", ["github", "openai", "pem", "url-password", "env-password"])
def test_memory_write_with_secret_refused(home, kind) -> None:
    text = PLANTED[kind][0].replace("\n", " ") if kind != "pem" else PLANTED[kind][0]
    before = home.memory_file.read_bytes() if home.memory_file.exists() else None
    code, out = run(home, "tool", "memory", json.dumps({"action": "add", "target": "memory", "content": text}))
    reply = json.loads(out)
    assert reply["success"] is False and "secret" in reply["error"] and "memory.allow_secrets" in reply["error"]
    code, out = run(home, "memory", "add", "--", text)
    assert "secret" in out
    after = home.memory_file.read_bytes() if home.memory_file.exists() else None
    assert after == before
    assert PLANTED[kind][1] not in (after or b"").decode()


def test_memory_secret_allowed_by_config(home) -> None:
    home.config_path.write_text("memory:\n  allow_secrets: true\n", encoding="utf-8")
    code, out = run(home, "tool", "memory", json.dumps({"action": "add", "target": "memory",
                                                        "content": PLANTED["github"][0]}))
    assert json.loads(out)["success"] is True
    assert PLANTED["github"][1] in home.memory_file.read_text(encoding="utf-8")  # the user's own file
    history = run(home, "memory", "history", "--json")[1]
    assert PLANTED["github"][1] not in history  # the store keeps only the marker


def test_hermes_state_db_sync_redacts(engine, home, tmp_path) -> None:
    from hermes_store.db import Database
    from hermes_store.sessions.state_sync import StateDbSync

    fixture = Path(__file__).resolve().parent.parent / "sessions" / "fixtures" / "hermes_state.sql"
    state = tmp_path / "hermes" / "state.db"
    state.parent.mkdir()
    db = Database(state, migrate=False)
    db.execute(fixture.read_text(encoding="utf-8"))
    text, secret = PLANTED["anthropic"]
    calls = json.dumps([{"id": "c9", "type": "function", "function": {"name": "terminal", "arguments": json.dumps(
        {"command": f"curl -H 'x-api-key: {secret}'"})}}])
    db.execute("UPDATE sessions SET title = ? WHERE id = '20260110_080000_aaaaaa'", (f"kubernetes {text}",))
    db.execute("INSERT INTO messages(session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp)"
               " VALUES ('20260110_080000_aaaaaa', 'user', ?, NULL, NULL, NULL, 1768032099),"
               " ('20260110_080000_aaaaaa', 'assistant', '', NULL, ?, NULL, 1768032100),"
               " ('20260110_080000_aaaaaa', 'tool', ?, 'c9', NULL, 'terminal', 1768032101)",
               (f"kubernetes {text}", calls, f"echo {text}"))
    db.close()
    result = StateDbSync(home, state).sync()
    assert result.as_dict()["messages_added"] > 0, result.as_dict()
    shown = run(home, "sessions", "show", "--json", "20260110_080000_aaaaaa")[1]
    assert "[REDACTED:anthropic-key:" in shown
    assert_absent(shown, "state.db sync")
