"""Bad input is reported with path and line; the rest is imported; nothing indexed is lost."""

from __future__ import annotations

import json
from pathlib import Path

from sess_helpers import index_json, write_jsonl

from hermes_store.sessions import SessionIndex
from hermes_store.sessions.importers.base import MAX_CONTENT_CHARS


def _good(i: int) -> dict:
    return {"role": "user" if i % 2 == 0 else "assistant", "content": f"good message number {i}"}


def _errors_for(summary, path):
    return [(e["line"], e["error"]) for e in summary["errors"] if e["path"] == str(path)]


def test_malformed_line(run, store, tmp_path):
    path = tmp_path / "sessions" / "20260101_000000_aaaaaa.jsonl"
    write_jsonl(path, [_good(0), _good(1)])
    with open(path, "a") as handle:
        handle.write('{"role": "user", "content": "unterminated\n')
    write_jsonl(path, [_good(3)], mode="a")
    code, summary = index_json(run, path)
    assert code == 0
    assert summary["messages_added"] == 3
    errors = _errors_for(summary, path)
    assert len(errors) == 1 and errors[0][0] == 3 and "malformed JSON" in errors[0][1]


def test_invalid_utf8_nul_and_surrogates(run, store, tmp_path):
    path = tmp_path / "sessions" / "20260101_000000_bbbbbb.jsonl"
    with open(path.parent.mkdir(parents=True) or path, "wb") as handle:
        handle.write(json.dumps(_good(0)).encode() + b"\n")
        handle.write(b'{"role": "user", "content": "caf\xe9 au lait"}\n')  # Latin-1 byte
        handle.write(b'{"role": "assistant", "content": "nul\\u0000inside"}\n')
        handle.write(b'{"role": "user", "content": "raw nul \x00 byte"}\n')
        handle.write(b'{"role": "assistant", "content": "lone \\ud800 surrogate"}\n')
        handle.write(json.dumps(_good(5)).encode() + b"\n")
    code, summary = index_json(run, path)
    assert code == 0
    assert summary["messages_added"] == 6
    errors = dict(_errors_for(summary, path))
    assert "invalid UTF-8" in errors[2]
    assert "NUL" in errors[3] and "NUL" in errors[4]
    assert "surrogate" in errors[5]
    contents = [m["content"] for m in SessionIndex(store).get_messages("20260101_000000_bbbbbb")]
    assert contents[1] == "caf\ufffd au lait"
    assert contents[2] == "nulinside" and "\x00" not in contents[3]
    assert contents[4] == "lone \ufffd surrogate"


def test_fifty_megabyte_message(run, store, tmp_path):
    path = tmp_path / "sessions" / "20260101_000000_cccccc.jsonl"
    big = "word " * (10 * 1024 * 1024)  # 50 MiB
    write_jsonl(path, [_good(0), {"role": "tool", "content": big}, _good(2)])
    del big
    code, summary = index_json(run, path)
    assert code == 0 and summary["messages_added"] == 3
    errors = _errors_for(summary, path)
    assert errors and errors[0][0] == 2 and "truncated" in errors[0][1]
    stored = SessionIndex(store).get_messages("20260101_000000_cccccc")
    assert len(stored[1]["content"]) == MAX_CONTENT_CHARS
    assert stored[2]["content"] == "good message number 2"


def test_unknown_format_and_exit_codes(run, tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("hello, not a transcript\n")
    code, summary = index_json(run, junk)
    assert code == 1  # every input failed
    assert summary["files"] == 1 and summary["messages_added"] == 0
    assert summary["errors"][0]["path"] == str(junk)
    assert "unknown format" in summary["errors"][0]["error"]
    assert "line" in summary["errors"][0]
    good = tmp_path / "sessions" / "20260101_000000_dddddd.jsonl"
    write_jsonl(good, [_good(0)])
    code, summary = index_json(run, junk, good)
    assert code == 0 and summary["messages_added"] == 1 and len(summary["errors"]) == 1


def test_usage_errors_exit_2(run, tmp_path):
    assert run("sessions", "index", str(tmp_path / "missing.jsonl")).exit_code == 2
    assert run("sessions", "index").exit_code == 2
    assert run("sessions", "index", "--format", "bogus", str(tmp_path)).exit_code == 2


def test_forced_wrong_format_reports_lines(run, fixtures):
    path = fixtures / "claude/projects/-home-ana-webapp/7f3c2a10-5b6d-4e8f-9a0b-1c2d3e4f5a6b.jsonl"
    code, summary = index_json(run, "--format", "openai-jsonl", path)
    assert code == 1
    assert summary["errors"] and all(e["line"] is not None for e in summary["errors"])
    assert all("role" in e["error"] for e in summary["errors"])


def test_bad_file_does_not_lose_indexed_data(run, store, fixtures, tmp_path):
    code, first = index_json(run, fixtures / "openai")
    assert code == 0 and first["messages_added"] == 8
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"\xff\xfe garbage \x00\n{not json\n")
    code, second = index_json(run, broken, fixtures / "openai")
    assert code == 0
    assert store.scalar("SELECT COUNT(*) FROM messages") == 8
    assert any(e["path"] == str(broken) for e in second["errors"])


def test_huge_first_line_still_detected(run, store, tmp_path):
    path = tmp_path / "export" / "chat.jsonl"  # not a Hermes-style name: content decides
    write_jsonl(path, [{"session_id": "big-1", "role": "user", "content": "x" * (3 * 1024 * 1024)},
                       {"session_id": "big-1", "role": "assistant", "content": "short answer"}])
    code, summary = index_json(run, path)
    assert code == 0 and summary["messages_added"] == 2
    assert [e["error"] for e in summary["errors"]] == [
        f"field 'content': {3 * 1024 * 1024} characters truncated to {MAX_CONTENT_CHARS}"]


def test_self_referencing_symlinks_and_directory_loops_are_problems(run, tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "selfref.jsonl").symlink_to("selfref.jsonl")
    (folder / "a.jsonl").symlink_to("b.jsonl")
    (folder / "b.jsonl").symlink_to("a.jsonl")
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    (folder / "ok.jsonl").write_text('{"role": "user", "content": "still indexed"}\n')
    code, summary = index_json(run, folder)
    assert code == 0 and summary["messages_added"] == 1
    errors = {Path(e["path"]).name: e["error"] for e in summary["errors"]}
    assert errors["selfref.jsonl"].startswith("symbolic link loop")
    assert errors["a.jsonl"].startswith("symbolic link loop")
    assert errors["loop"].startswith("directory loop: links back to")
    code, summary = index_json(run, folder / "selfref.jsonl")  # named explicitly: same report, no traceback
    assert code == 1 and summary["errors"][0]["error"].startswith("symbolic link loop")


def test_hidden_agent_folders_are_named_not_walked_in_silence(run, tmp_path):
    """``sessions index ~`` walks no hidden folder (``.cache``, ``.git``: no transcripts, often
    huge), but one named like an agent's data folder (``.claude``, ``.codex``, from the
    importers' default locations) is reported, in the text summary and in ``--json``; naming
    it indexes it."""
    home = tmp_path / "me"
    project = home / ".claude" / "projects" / "-home-me-app"
    write_jsonl(project / "s1.jsonl", [{"type": "user", "sessionId": "s1", "uuid": "u1",
                                        "timestamp": "2026-01-01T00:00:00Z",
                                        "message": {"role": "user", "content": "where is the zebrafish tank"}}])
    (home / ".cache").mkdir()
    write_jsonl(home / ".cache" / "x.jsonl", [{"role": "user", "content": "cache"}])
    write_jsonl(home / "notes.jsonl", [{"role": "user", "content": "plain notes"}])
    code, summary = index_json(run, home)
    assert code == 0 and summary["messages_added"] == 1  # notes.jsonl only
    assert summary["unwalked"] == [str(home / ".claude")]  # .cache is not an agent's folder
    result = run("sessions", "index", str(home))
    assert result.exit_code == 0
    assert f"note: hidden folders not walked (agents keep data there): {home / '.claude'}" in result.output
    code, summary = index_json(run, home / ".claude")
    assert code == 0 and summary["messages_added"] == 1 and "unwalked" not in summary
