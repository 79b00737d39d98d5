"""A cut never keeps part of a secret: titles, labels and the line quoted in an index problem
are cut at a length, and a cut inside a token left a piece too short for any rule to know
(``ghp_R2d2C3p0B…`` was stored and shown). The cut now falls before the secret (or its marker)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli
from hermes_store.redaction import MARKER, Redactor
from hermes_store.sessions.importers.base import MAX_TITLE_CHARS, cap_title, head_chars
from hermes_store.sessions.live import SessionIndex

GH = "ghp_R2d2C3p0Bb8Yoda4Luke6Leia8Han0Solo2Xy"
PIECE = GH[:8]  # what a cut inside the token kept


def titles(home) -> list[str]:
    with SessionIndex(home) as index:
        return [row["title"] or "" for row in index.storage.db.portable.query("SELECT title FROM sessions")]


@pytest.mark.parametrize("at", range(len(GH) + 2))
def test_head_chars_never_ends_inside_a_secret_or_a_marker(at: int) -> None:
    text = "deploy with " + GH + " now"
    cut = head_chars(text, len("deploy with ") + at)
    assert PIECE not in cut or GH in cut
    marked = Redactor(b"k").redact(text)
    cut = head_chars(marked, len("deploy with ") + at)
    assert "[REDACTED" not in cut or MARKER.search(cut)
    assert cap_title("x" * (MAX_TITLE_CHARS - 20) + " " + GH).endswith(" \u2026")


def test_live_titles_and_labels_cut_across_a_token_keep_none_of_it(engine, home) -> None:
    with SessionIndex(home) as index:
        sid = index.create_session(title="x" * (MAX_TITLE_CHARS - 20) + " " + GH, source="cli",
                                   model="m" * 290 + " " + GH)
        index.set_title(sid, "y" * (MAX_TITLE_CHARS - 15) + " " + GH)
        other = index.create_session(title="short " + GH)
        row = index.storage.db.portable.query_one("SELECT model FROM sessions WHERE id = ?", (sid,))
    assert PIECE not in row["model"]
    stored = titles(home)
    assert len(stored) == 2 and not any(PIECE in title for title in stored), stored
    assert any(title.startswith("short [REDACTED:github-token:") for title in stored), other


def test_imported_titles_cut_across_a_token_keep_none_of_it(engine, home, tmp_path) -> None:
    """A Claude Code summary title cut at 200 characters and a Codex thread name."""
    transcript = tmp_path / "claude.jsonl"
    lines = [{"type": "summary", "summary": "z" * 185 + " " + GH, "leafUuid": "u1"},
             {"type": "user", "sessionId": "s1", "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/tmp",
              "message": {"role": "user", "content": "okapi hello"}}]
    transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "index", "--json", str(transcript)])
    assert result.exit_code == 0 and json.loads(result.output)["sessions_added"] == 1, result.output
    stored = titles(home)
    assert stored and not any(PIECE in title for title in stored), stored


def test_a_problem_quoting_a_transcript_line_is_redacted(home, tmp_path) -> None:
    """``sessions index`` reports a stray line of a ``kimi --print`` file by quoting it: the quote
    showed the token (whole, or cut inside it) on the terminal, an agent's tool output."""
    saved = tmp_path / "kimi-run.txt"
    saved.write_text("TurnBegin(user_input='okapi count the lines')\n"
                     f"GH={GH}\n"
                     f"a stray log line of fifty characters before it: {GH}\n"
                     "TurnEnd()\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "index", "--json",
                                      "--format", "kimi-print-text", str(saved)])
    errors = json.loads(result.output)["errors"]
    assert len(errors) == 2 and all("not a printed wire message" in e["error"] for e in errors), result.output
    assert PIECE not in result.output and "[REDACTED:github-token:" in result.output


def test_message_content_cut_at_its_limit_keeps_none_of_a_token(home) -> None:
    """A message longer than the content limit is truncated; a token across the cut went in part."""
    from hermes_store.sessions.importers.base import MAX_CONTENT_CHARS

    with SessionIndex(home) as index:
        sid = index.create_session(title="okapi")
        index.append_message(sid, "user", "w " * ((MAX_CONTENT_CHARS - 20) // 2) + GH)
        content = index.storage.db.portable.query_one("SELECT content FROM messages WHERE session_id = ?",
                                                      (sid,))["content"]
    assert len(content) <= MAX_CONTENT_CHARS and PIECE not in content
