"""Detection: every importer sniffs its own format and refuses every other format's files.

Fixture convention (tests/sessions/fixtures): every file below a directory named
after a format (``gemini-cli/`` or ``gemini_cli/``) is a file of that format, so a
new importer's fixtures join these tests by being added. The older directories
are mapped in ``LEGACY``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sess_helpers import FIXTURES

from hermes_store.db import Database
from hermes_store.sessions.importers import (
    IMPORTERS,
    Head,
    candidates,
    detect_format,
    importer_for,
)
from hermes_store.sessions.importers.base import Importer
from hermes_store.sessions.importers.registry import BUNDLED, load_registry

LEGACY = {"claude": "claude-code", "openai": "openai-jsonl", "codex_rollouts": "codex", "codex_early": "codex",
          "codex_threads": "codex"}
NOT_TRANSCRIPTS = {"hermes_state.sql"}


def _format_of(path: Path) -> str | None:
    rel = path.relative_to(FIXTURES)
    top = rel.parts[0]
    if top == "hermes_home":
        return "hermes-json" if path.suffix == ".json" else "hermes-jsonl"
    if top in LEGACY:
        return LEGACY[top]
    for name in IMPORTERS:
        if top in (name, name.replace("-", "_")):
            return name
    return None


def _fixture_files() -> list[tuple[Path, str]]:
    found = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.name not in NOT_TRANSCRIPTS:
            fmt = _format_of(path)
            assert fmt is not None, f"fixture {path} is below no format directory"
            found.append((path, fmt))
    return found


FILES = _fixture_files()


@pytest.fixture(scope="module")
def state_db_head(tmp_path_factory) -> Head:
    path = tmp_path_factory.mktemp("hermes") / "state.db"
    db = Database(path, migrate=False)
    db.execute((FIXTURES / "hermes_state.sql").read_text(encoding="utf-8"))
    db.close()
    return Head.read(path)


@pytest.mark.parametrize("path, fmt", FILES, ids=[str(p.relative_to(FIXTURES)) for p, _ in FILES])
def test_other_importers_refuse_a_format_s_files(path, fmt):
    head = Head.read(path)
    for name, cls in IMPORTERS.items():
        if name != fmt:
            assert cls.sniff(head) < 0.5, f"{name} claims {path.relative_to(FIXTURES)} ({fmt})"
    assert detect_format(path) in (fmt, None)


def test_every_fixture_directory_has_a_file_detected_as_its_format():
    detected: dict[str, int] = {}
    for path, fmt in FILES:
        if detect_format(path) == fmt:
            detected[fmt] = detected.get(fmt, 0) + 1
    for _path, fmt in FILES:
        assert detected.get(fmt), f"no fixture of {fmt} is detected as {fmt}"


def test_every_bundled_importer_has_fixtures():
    covered = {fmt for _, fmt in FILES} | {"hermes-db"}  # hermes-db: built from hermes_state.sql
    missing = [cls.name for cls in BUNDLED if cls.name not in covered]
    assert missing == []


def test_state_db_claimed_by_hermes_db_only(state_db_head):
    assert [name for name, score in candidates(state_db_head) if score >= 0.5] == ["hermes-db"]


def test_own_store_database_is_not_a_state_db(store):
    assert detect_format(Path(store.path)) is None


def test_unknown_and_empty_files(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert detect_format(notes) is None and detect_format(empty) is None
    assert candidates(notes) == []


@pytest.mark.parametrize("lines, name", [
    # (Qwen Code chats, Claude's envelope with Gemini-style messages, are now claimed by
    # qwen-code: tests/sessions/test_fmt_gemini.py::test_qwen_look_alike_is_qwen_not_claude)
    # (Kimi CLI context files are now claimed by kimi-cli: tests/sessions/test_fmt_factory_kimi.py)
    # (Goose lines are now claimed by goose-jsonl: tests/sessions/test_fmt_goose.py)
    # near misses of the newer formats, which no importer may take:
    ('{"type": "message", "content": "x"}\n', "a.jsonl"),  # Factory's entry type without its message
    ('{"type": "user.message", "content": "hi"}\n', "events.jsonl"),  # a Copilot CLI type, no data/timestamp
    ('{"id": "T-1", "title": "x"}', "T-1.json"),  # an Amp thread id without messages
])
def test_look_alike_lines_are_not_claimed(tmp_path, lines, name):
    path = tmp_path / name
    path.write_text(lines, encoding="utf-8")
    assert detect_format(path) is None


def test_gemini_style_json_with_messages_is_not_a_hermes_snapshot(tmp_path):
    path = tmp_path / "session-2025-09-01T10-00-abc.json"
    path.write_text('{"sessionId": "abc", "projectHash": "f00", "startTime": "2025-09-01T10:00:00Z",'
                    ' "messages": [{"id": "1", "type": "user", "content": "hi"}]}', encoding="utf-8")
    assert detect_format(path) == "gemini-cli"  # claimed by its own importer, not hermes-json
    assert dict(candidates(path)).get("hermes-json", 0) < 0.5


def test_unknown_format_names_the_closest_candidates(run, tmp_path):
    from sess_helpers import index_json

    copy = tmp_path / "another-index.db"  # a hermes-store index looks like a state.db, a little
    Database(copy).close()
    code, summary = index_json(run, copy)
    assert code == 1
    assert summary["errors"][0]["error"].startswith("unknown format (closest: hermes-db 0.20")


class _Fake(Importer):
    name = "fake-format"

    @classmethod
    def sniff(cls, head):
        return 0.99 if head.path.suffix == ".fake" else 0.0

    def read(self, state):
        yield from ()


class _Point:
    def __init__(self, name, value, target):
        self.name, self.value, self._target = name, value, target

    def load(self):
        if isinstance(self._target, Exception):
            raise self._target
        return self._target


def test_entry_points_join_the_registry_and_broken_ones_are_reported():
    points = [_Point("fake", "pkg:Fake", _Fake), _Point("broken", "pkg:Gone", ImportError("no pkg")),
              _Point("clash", "pkg:Clash", type("Clash", (_Fake,), {"name": "codex"})),
              _Point("notone", "pkg:Obj", object)]
    importers, problems, origins = load_registry(entry_points=points)  # type: ignore[arg-type]
    assert importers["fake-format"] is _Fake and origins["codex"] == "bundled"
    assert importers["codex"].__name__ == "CodexImporter"  # bundled names win a clash
    assert len(problems) == 3
    assert any("broken" in p and "no pkg" in p for p in problems)


def test_forced_format_bypasses_detection(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text('{"role": "user", "content": "hi"}\n')
    assert detect_format(path) is None
    assert importer_for(path, "openai-jsonl").name == "openai-jsonl"


def test_claude_file_starting_with_bookkeeping_lines_is_detected(tmp_path):
    path = tmp_path / "0a6afc57-2f31-4cb4-8ff0-01247f50c64c.jsonl"
    envelope = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/w",
                "sessionId": "0a6afc57-2f31-4cb4-8ff0-01247f50c64c", "version": "2.1.30"}
    lines = [{"type": "permission-mode", "permissionMode": "default", "sessionId": envelope["sessionId"]}]
    lines += [{**envelope, "type": "progress", "uuid": f"p{i}", "toolUseID": "toolu_1",
               "data": {"type": "hook_progress"}} for i in range(8)]
    lines += [{**envelope, "type": "system", "subtype": "stop_hook_summary", "uuid": "s1", "content": "hooks ran"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert detect_format(path) == "claude-code"


@pytest.mark.parametrize(("text", "document"), [
    ('{"a": 1}\n{"b": 2}\n', None),                     # JSONL: two values
    ('{"a": 1}\n\n  \n', {"a": 1}),                      # one value, blank lines after it
    ('{\n  "a": [1,\n 2]\n}\n', {"a": [1, 2]}),          # pretty-printed document
    ('[1, 2]\nnot json\n', None),                        # a value, then text
    ('{"a": 1\n{"b": 2}\n', None),                       # line 1 incomplete, whole file invalid
    ('{"a": "x\u0001y"}\n', {"a": "x\u0001y"}),          # control characters allowed, as in the lines
])
def test_head_document_of_lines_and_documents(tmp_path, text, document):
    path = tmp_path / "f.json"
    path.write_text(text, encoding="utf-8")
    assert Head.read(path).document() == document


def test_head_of_large_jsonl_never_reads_the_whole_file(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    line = json.dumps({"role": "user", "content": "x" * 4000}) + "\n"
    path.write_text(line * 200, encoding="utf-8")  # 800 KB: past the probe
    reads: list[Path] = []
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(self) or b"")
    head = Head.read(path)
    assert head.document() is None and len(head.objects()) == 8
    assert reads == []  # known not to be one document from its first line
