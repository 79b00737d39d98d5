"""Mis-detection: every fixture is claimed by its own importer only.

Each importer's ``sniff`` must give its own fixtures >= 0.5 and every other
format's fixtures (including the original six formats' files and a Hermes
``state.db``) < 0.5; ``detect_format`` must pick the fixture's own format.
"""

from __future__ import annotations

import pytest
from format_helpers import build_sqlite
from sess_helpers import FIXTURES

from hermes_store.sessions.importers import IMPORTERS
from hermes_store.sessions.importers.detect import Head, detect_format

# fixtures of the formats added for the wider coverage: directory -> format
OWN_FIXTURES: dict[str, str] = {
    "gemini/.gemini/tmp/4c9e1f0a8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e/chats/"
    "session-2025-09-14T10-02-3f2a9c1e.json": "gemini-cli",
    "gemini/.gemini/tmp/4c9e1f0a8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e/chats/"
    "session-2026-01-20T08-15-7c1d2e3f.jsonl": "gemini-cli",
    "gemini/.gemini/tmp/4c9e1f0a8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e/chats/"
    "7c1d2e3f-0a9b-4c8d-b7e6-f5a4b3c2d1e0/e5f6a7b8-1111-4222-8333-944455556666.jsonl": "gemini-cli",
    "gemini/.gemini/tmp/4c9e1f0a8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e/logs.json":
        "gemini-cli-logs",
    "gemini/.gemini/tmp/4c9e1f0a8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e/"
    "checkpoint-before%20refactor.json": "gemini-cli-checkpoint",
    "gemini/.gemini/tmp/4c9e1f0a8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e/"
    "checkpoint-old.json": "gemini-cli-checkpoint",
    "qwen/.qwen/projects/-home-li-shop/chats/5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d.jsonl": "qwen-code",
    "qwen/.qwen/tmp/0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2/chats/"
    "session-2025-08-02T12-00-c0ffee00.json": "qwen-code-legacy",
    "opencode/.local/share/opencode/storage/session/4b0ea68d7af9a6031a7ffda7ad66e0cb83315750/ses_5f1a2b3c4ffe8Hq1ZbX0aYcD2e.json":
        "opencode-json",
    "opencode/.local/share/opencode/storage/session/info/ses_0aa1bb2cc3ddOLDlayout.json": "opencode-json",
}
# formats whose fixture is an SQL script: built into a database for the test
SQL_FIXTURES: dict[str, str] = {
    "opencode/opencode_db.sql": "opencode-db",
}
# the original formats' fixtures: every new importer must refuse them
OTHER_FIXTURES: dict[str, str] = {
    "claude/projects/-home-ana-webapp/7f3c2a10-5b6d-4e8f-9a0b-1c2d3e4f5a6b.jsonl": "claude-code",
    "codex/sessions/2025/10/29/rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl":
        "codex",
    "hermes_home/sessions/20260105_101500_a1b2c3.jsonl": "hermes-jsonl",
    "hermes_home/sessions/session_20260106_090000_d4e5f6.json": "hermes-json",
    "openai/conversations.jsonl": "openai-jsonl",
    "openai/chat_log.jsonl": "openai-jsonl",
}
ALL = {**OWN_FIXTURES, **OTHER_FIXTURES}
SNIFFERS = {name: cls for name, cls in IMPORTERS.items() if hasattr(cls, "sniff")}


def _claims(path) -> dict[str, float]:
    head = Head.of(path)
    return {name: cls.sniff(head) for name, cls in SNIFFERS.items()}


def test_every_fixture_exists_and_every_new_format_has_one():
    for relpath in [*ALL, *SQL_FIXTURES]:
        assert (FIXTURES / relpath).is_file(), relpath
    assert set(OWN_FIXTURES.values()) <= set(SNIFFERS)
    assert set(SQL_FIXTURES.values()) <= set(SNIFFERS)


@pytest.mark.parametrize("relpath", sorted(SQL_FIXTURES))
def test_only_the_own_importer_claims_a_database(relpath, tmp_path):
    path = build_sqlite(FIXTURES / relpath, tmp_path / "db" / "x.db")
    expected = SQL_FIXTURES[relpath]
    claims = _claims(path)
    assert {n: v for n, v in claims.items() if n != expected and v >= 0.5} == {}
    assert claims[expected] >= 0.5
    assert detect_format(path) == expected


@pytest.mark.parametrize("relpath", sorted(ALL))
def test_only_the_own_importer_claims_a_fixture(relpath):
    expected = ALL[relpath]
    claims = _claims(FIXTURES / relpath)
    wrong = {name: value for name, value in claims.items() if name != expected and value >= 0.5}
    assert wrong == {}
    if expected in SNIFFERS:
        assert claims[expected] >= 0.5


@pytest.mark.parametrize("relpath", sorted(OWN_FIXTURES))
def test_detect_format_picks_the_own_format(relpath):
    assert detect_format(FIXTURES / relpath) == OWN_FIXTURES[relpath]


def test_state_db_and_text_are_refused(state_db, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("# notes\n\njust text\n")
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    for path in (state_db, notes, empty):
        assert {n: v for n, v in _claims(path).items() if v >= 0.5} == {}
