"""Secrets in the fields around the text: a session's meta (a Codex header's git URL), model,
source and end reason; a fact's category; an imported entity's name and aliases. Each was
stored as it came; each is redacted at write and by ``hermes-store redact``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.home import Home
from hermes_store.sessions.live import SessionIndex

GH = "ghp_R2d2C3p0Bb8Yoda4Luke6Leia8Han0Solo2Xy"
AK = "AKIAQ3EGRTXMPL4Z7K2V"
SID = "019a2d7a-41c4-78b1-b7cc-a45d62a89c00"


def run(home: Home, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--home", str(home.root), *args], catch_exceptions=False)
    return result.exit_code, result.output


def codex_rollout(root: Path) -> Path:
    """A Codex rollout whose header names a repository URL with a token in it."""
    folder = root / "codex" / "sessions" / "2026" / "01" / "02"
    folder.mkdir(parents=True)
    lines = [
        {"timestamp": "2026-01-02T00:00:00.000Z", "type": "session_meta", "payload": {
            "id": SID, "timestamp": "2026-01-02T00:00:00.000Z", "cwd": "/home/ana/app", "originator": "codex_cli_rs",
            "cli_version": "0.46.0", "source": "cli",
            "git": {"branch": "main", "repository_url": f"https://x-access-token:{GH}@github.com/org/repo.git"}}},
        {"timestamp": "2026-01-02T00:00:01.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "okapi push the branch"}]}},
    ]
    path = folder / f"rollout-2026-01-02T00-00-00-{SID}.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def stored_bytes(home: Home) -> bytes:
    return b"".join(Path(f"{home.db_path}{suffix}").read_bytes() for suffix in ("", "-wal")
                    if Path(f"{home.db_path}{suffix}").exists())


def test_codex_header_git_url_is_redacted(engine, home, tmp_path) -> None:
    code, out = run(home, "sessions", "index", "--json", str(codex_rollout(tmp_path)))
    assert code == 0 and json.loads(out)["sessions_added"] == 1, out
    shown = run(home, "sessions", "show", "--json", SID)[1]
    assert GH not in shown
    meta = json.loads(shown)["session"]["meta"] if "session" in json.loads(shown) else json.loads(shown)["meta"]
    assert meta["git"]["repository_url"].startswith("https://x-access-token:[REDACTED:github-token:")
    if engine == "sqlite":
        assert GH.encode() not in stored_bytes(home)


def test_live_session_fields_are_redacted_and_cleaned(engine, home) -> None:
    with SessionIndex(home) as index:
        sid = index.create_session(title="t", model=f"m {GH}", source=f"src {AK}",
                                   meta={"repo": f"https://u:{GH}@github.com/o/r", "deep": [{"k": f"token={GH}"}]})
        index.end_session(sid, end_reason=f"killed with {GH}")
        odd = index.create_session(title="t2", source="s\udc80", meta={"a\x00b": "x\x00y", "s": "\udc80"})
        index.end_session(odd, end_reason="r\x00")
        row, other = index.get_session(sid), index.get_session(odd)
    assert GH not in repr(row) and AK not in repr(row)
    assert row["meta"]["repo"].startswith("https://u:[REDACTED:github-token:")
    assert row["meta"]["end_reason"].startswith("killed with [REDACTED:github-token:")
    assert other["source"] == "s\ufffd" and other["meta"] == {"ab": "xy", "s": "\ufffd", "end_reason": "r"}


def test_fact_category_and_imported_entities_are_redacted(engine, home, tmp_path) -> None:
    assert run(home, "facts", "add", "okapi note", "--category", GH)[0] == 0
    export = tmp_path / "facts.jsonl"
    export.write_text("\n".join(json.dumps(x) for x in [
        {"kind": "hermes_store.facts", "version": 1, "facts": 1, "entities": 1},
        {"kind": "entity", "entity_id": 7, "name": f"key {AK}", "entity_type": "thing", "aliases": [f"alias {GH}"]},
        {"kind": "fact", "fact_id": 9, "content": "okapi imported", "category": f"cat {AK}", "tags": "",
         "trust_score": 0.5, "retrieval_count": 0, "helpful_count": 0, "created_at": "2026-01-01 00:00:00",
         "updated_at": "2026-01-01 00:00:00", "entity_ids": [7]},
    ]) + "\n", encoding="utf-8")
    code, out = run(home, "facts", "import", str(export))
    assert code == 0, out
    listed = run(home, "facts", "list", "--json")[1]
    assert GH not in listed and AK not in listed
    assert "[REDACTED:github-token:" in listed and "[REDACTED:aws-access-key-id:" in listed
    if engine == "sqlite":
        blob = stored_bytes(home)
        assert GH.encode() not in blob and AK.encode() not in blob and AK.lower().encode() not in blob


def test_redact_command_rewrites_meta_and_category(engine, home) -> None:
    home.config_path.write_text("store:\n  redact: false\n", encoding="utf-8")
    with SessionIndex(home) as index:
        sid = index.create_session(title="t", model=f"m {GH}", meta={"repo": f"https://u:{GH}@github.com/o/r"})
    assert run(home, "facts", "add", "okapi note", "--category", AK)[0] == 0
    with SessionIndex(home) as index:
        assert GH in repr(index.get_session(sid))
    code, out = run(home, "redact", "--json")
    assert code == 0, out
    with SessionIndex(home) as index:
        row = index.get_session(sid)
    assert GH not in repr(row) and row["meta"]["repo"].startswith("https://u:[REDACTED:github-token:")
    assert AK not in run(home, "facts", "list", "--json")[1]
    if engine == "sqlite":
        blob = stored_bytes(home)
        assert GH.encode() not in blob and AK.encode() not in blob


CJK_TEXT = "okapi 我的密钥sk-proj-Hq3Lm8Np2Rs6Tu0Vw4Xy7Za1Bc5De9Fg3Hj请保密"
CJK_SECRET = "Hq3Lm8Np2Rs6Tu0Vw4Xy7Za1Bc5De9Fg3Hj"


def test_redact_command_remakes_the_cjk_projection(engine, home, tmp_path) -> None:
    """The ``cjk`` column keeps the Latin part glued to CJK text: a store written with
    redaction off held the secret there, and ``redact`` rewrote the content but left the
    projection (a search for the secret still found the message; the file still held it)."""
    home.config_path.write_text("store:\n  redact: false\n", encoding="utf-8")
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"session_id": "c1", "role": "user", "content": CJK_TEXT}) + "\n", encoding="utf-8")
    assert run(home, "sessions", "index", str(path))[0] == 0
    assert run(home, "facts", "add", CJK_TEXT)[0] == 0
    assert json.loads(run(home, "sessions", "search", "--json", CJK_SECRET)[1])["results"]
    code, out = run(home, "redact", "--json")
    assert code == 0, out
    assert not json.loads(run(home, "sessions", "search", "--json", CJK_SECRET)[1])["results"]
    assert not json.loads(run(home, "facts", "search", "--json", CJK_SECRET)[1]).get("results")
    assert json.loads(run(home, "sessions", "search", "--json", "密钥")[1])["results"]  # CJK still searchable
    if engine == "sqlite":
        assert CJK_SECRET.encode() not in stored_bytes(home)


def test_bulk_index_projection_is_made_from_the_redacted_text(engine, home, tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"session_id": "c1", "role": "user", "content": CJK_TEXT}) + "\n", encoding="utf-8")
    assert run(home, "sessions", "index", str(path))[0] == 0
    assert not json.loads(run(home, "sessions", "search", "--json", CJK_SECRET)[1])["results"]
    assert json.loads(run(home, "sessions", "search", "--json", "密钥")[1])["results"]
    if engine == "sqlite":
        assert CJK_SECRET.encode() not in stored_bytes(home)


CALL_ARGS = [{"password": "hunter2isnotsafe"}, {"api_key": "Zt5Yx3Wv1Ut9Sr7Qp5On3Ml1"},
             {"env": {"DB_PASSWORD": "walrus22x"}}]
CALL_SECRETS = ("hunter2isnotsafe", "Zt5Yx3Wv1Ut9Sr7Qp5On3Ml1", "walrus22x")


def calls_transcript(path: Path) -> Path:
    lines = [{"session_id": "k1", "role": "user", "content": "okapi call the api"}]
    lines += [{"session_id": "k1", "type": "tool_call", "id": f"c{i}", "name": "http", "arguments": args}
              for i, args in enumerate(CALL_ARGS)]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_call_text_is_made_from_the_redacted_tool_calls(engine, home, tmp_path) -> None:
    """The indexed call text keeps argument values without their keys: made from the tool calls
    as they came, ``{"password": "hunter2isnotsafe"}`` stored and indexed ``hunter2isnotsafe``
    (the tool_calls column held the marker); a search for the password found the message."""
    assert run(home, "sessions", "index", str(calls_transcript(tmp_path / "t.jsonl")))[0] == 0
    for secret in CALL_SECRETS:
        assert not json.loads(run(home, "sessions", "search", "--json", secret)[1])["results"], secret
    assert json.loads(run(home, "sessions", "search", "--json", "http")[1])["results"]
    if engine == "sqlite":
        blob = stored_bytes(home)
        assert not [s for s in CALL_SECRETS if s.encode() in blob]


def test_redact_command_remakes_the_call_text(engine, home, tmp_path) -> None:
    home.config_path.write_text("store:\n  redact: false\n", encoding="utf-8")
    assert run(home, "sessions", "index", str(calls_transcript(tmp_path / "t.jsonl")))[0] == 0
    assert json.loads(run(home, "sessions", "search", "--json", CALL_SECRETS[0])[1])["results"]
    code, out = run(home, "redact", "--json")
    assert code == 0 and json.loads(out)["secrets"]["password"] == 2, out
    for secret in CALL_SECRETS:
        assert not json.loads(run(home, "sessions", "search", "--json", secret)[1])["results"], secret
    if engine == "sqlite":
        blob = stored_bytes(home)
        assert not [s for s in CALL_SECRETS if s.encode() in blob]
