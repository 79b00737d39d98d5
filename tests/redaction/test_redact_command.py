"""``hermes-store redact``: an existing store's secrets rewritten, indexes rebuilt, no old copy left."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from redaction_corpus import PLANTED

from hermes_store.cli import cli
from hermes_store.home import Home
from hermes_store.sessions.live import SessionIndex

SECRET_TEXT, SECRET = PLANTED["github"]
KEY_TEXT, KEY = PLANTED["aws-access-key-id"]


def run(home: Home, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--home", str(home.root), *args], catch_exceptions=False)
    return result.exit_code, result.output


def fill_unredacted(home: Home) -> str:
    """A store written with redaction off (as an older release wrote it)."""
    home.config_path.write_text("store:\n  redact: false\n", encoding="utf-8")
    with SessionIndex(home) as index:
        sid = index.create_session(title=f"deploy {SECRET_TEXT}")
        index.append_message(sid, "user", f"okapi {SECRET_TEXT} and {KEY_TEXT}")
        index.append_message(sid, "assistant", "", tool_calls=[{"id": "c", "type": "function", "function": {
            "name": "shell", "arguments": json.dumps({"cmd": f"export GITHUB_TOKEN={SECRET}"})}}])
    assert run(home, "facts", "add", f"okapi ci uses {SECRET}")[0] == 0
    return sid


def test_redact_rewrites_and_purges(engine, home, tmp_path) -> None:
    sid = fill_unredacted(home)
    assert json.loads(run(home, "sessions", "search", "--json", "ghp_R2d2C3p0Bb8Yoda4Luke6Leia8Han0Solo2Xy")[1])["results"]
    code, out = run(home, "redact", "--dry-run", "--json")
    dry = json.loads(out)
    assert code == 0 and dry["dry_run"] and dry["secrets"]["github-token"] == 4
    assert dry["secrets"]["aws-access-key-id"] == 1
    assert SECRET in run(home, "sessions", "show", "--json", sid)[1]  # nothing changed yet
    code, out = run(home, "redact", "--json")
    done = json.loads(out)
    assert code == 0 and done["rows_changed"] == 4 and done["secrets"] == dry["secrets"]
    assert done["indexes_rebuilt"]
    assert not json.loads(run(home, "sessions", "search", "--json", SECRET)[1])["results"]
    assert json.loads(run(home, "sessions", "search", "--json", "okapi")[1])["results"]
    for args in (("sessions", "show", "--json", sid), ("facts", "search", "--json", "okapi"),
                 ("recall", "--json", "okapi")):
        out = run(home, *args)[1]
        assert SECRET not in out and KEY not in out, args
    assert json.loads(run(home, "redact", "--json")[1])["rows_changed"] == 0  # idempotent
    if engine == "sqlite":
        backup = tmp_path / "after.db"
        assert run(home, "backup", str(backup))[0] == 0
        for path in (home.db_path, Path(f"{home.db_path}-wal"), backup):
            if path.exists():
                blob = path.read_bytes()
                assert SECRET.encode() not in blob and KEY.encode() not in blob, path
                assert b"R2d2C3p0Bb8Yoda4Luke6Leia8" not in blob, path  # not even a token of it


def test_redact_deletes_the_embeddings_of_what_it_rewrote(engine, home) -> None:
    """A message's vector was made from the secret's text: it goes with the rewrite (the
    others stay), and the next embed embeds the redacted text."""
    import zlib

    import numpy as np

    from hermes_store.sessions.embeddings import Embedder
    from hermes_store.sessions.storage import open_session_storage
    from hermes_store.sessions.vectors import VectorStore, embed_pending

    seen: list[str] = []

    def words(texts: list[str]) -> np.ndarray:
        seen.extend(texts)
        out = np.ones((len(texts), 16), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, zlib.crc32(text.encode()) % 16] += 5
        return out

    sid = fill_unredacted(home)
    with SessionIndex(home) as index:
        index.append_message(sid, "user", "a plain question about okapis")

    def embed() -> dict:
        vectors, db = VectorStore.for_home(home), home.open_db()
        try:
            return embed_pending(open_session_storage(db), vectors, Embedder("w16", 16, words))
        finally:
            db.close()
            vectors.close()

    assert embed()["embedded"] == 2
    assert run(home, "redact", "--json")[0] == 0
    vectors = VectorStore.for_home(home)
    try:
        assert vectors.count("w16") == 1  # the plain question's vector stays
    finally:
        vectors.close()
    seen.clear()
    assert embed()["embedded"] == 1
    assert len(seen) == 1 and SECRET not in seen[0] and "okapi" in seen[0]
