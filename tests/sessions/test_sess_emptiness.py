"""Detection cannot import emptiness: every importer, fed a file of its own shape whose content is
hollowed out, is refused (parametrised over the registry, so a new importer is covered by adding
its fixtures); a refused claim gives way to the next candidate; an unclaimed file names what each
candidate found missing; generic JSONL with a few malformed lines is still claimed."""

from __future__ import annotations

import csv
import io
import itertools
import json
import shutil
from pathlib import Path

import apsw
import pytest
from sess_helpers import FIXTURES
from test_sess_detect import FILES

from hermes_store.db import Database
from hermes_store.sessions.importers import IMPORTERS, Head, detection
from hermes_store.sessions.importers.base import Notice, SourceState
from hermes_store.sessions.importers.detect import THRESHOLD, content_gap, describe_unknown
from hermes_store.sessions.loader import BulkLoader

# the words of a transcript (blanked); structure (roles, types, ids, times) is kept
TEXT_KEYS = {"text", "content", "thinking", "output", "summary", "prompt", "result", "display", "value",
             "body", "reasoning", "query", "question", "error", "stdout", "stderr", "message", "delta",
             "description", "reasoning_content", "aggregated_output", "formatted_output", "response", "think",
             "displayText", "filename", "file_name", "name", "url", "mime", "mimeType", "markdown", "parts", "images",
             "subject", "variableData", "contentReferences", "file", "fileName", "title", "displayContent",
             "finalText", "command", "rawCommand", "userText", "cmd", "detail"}
# tool calls and their arguments (removed: a call is content)
CALL_KEYS = {"data", "tool_calls", "toolCalls", "tool_use", "function_call", "functionCall", "toolInvocation",
             "calls", "input", "arguments", "args", "toolRequests", "tool_requests", "action", "recipient",
             "functionResponse", "function_response", "inlineData", "attachments",
             "outputHistoryItems"}  # and what a command showed (Qwen Code: every field of an item is its content)


def _is_call(value) -> bool:
    kind = (f"{value.get('type', '')} {value.get('kind', '')} {value.get('content_type', '')}".lower()
            if isinstance(value, dict) else "")
    return any(word in kind for word in ("tool", "function", "call", "command", "patch", "search",
                                         "action", "observation", "image", "file", "edit", "reference"))


def hollow(value, key: str | None = None):
    """``value`` with every text blanked and every tool call removed."""
    if isinstance(value, dict):
        if _is_call(value):
            return {"type": "hollowed"}
        if key == "error":
            return ""
        return {k: hollow(v, k) for k, v in value.items() if k not in CALL_KEYS}
    if isinstance(value, list):
        return [hollow(v, key) for v in value if not _is_call(v)]
    if isinstance(value, str) and key in TEXT_KEYS:
        return ""
    return value


def _hollow_file(path: Path) -> None:
    data = path.read_bytes()
    if data.startswith(b"SQLite format 3\x00"):
        conn = apsw.Connection(str(path))
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
        for name in names:
            try:
                conn.execute(f'DELETE FROM "{name}"')
            except apsw.Error:
                pass  # virtual tables' shadow tables
        conn.close()
        return
    text = data.decode("utf-8")
    if path.suffix in (".csv", ".tsv"):
        delimiter = "\t" if path.suffix == ".tsv" else ","
        rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
        out = io.StringIO()
        writer = csv.writer(out, delimiter=delimiter)
        writer.writerow(rows[0])
        for row in rows[1:]:
            writer.writerow(["" if rows[0][i].lower() in ("content", "text", "message", "body") else cell
                             for i, cell in enumerate(row)])
        path.write_text(out.getvalue(), encoding="utf-8")
        return
    if path.suffix == ".md":  # Aider: the headers stay, every turn is blank
        lines = [line for line in text.splitlines() if line.startswith("# aider chat started at")]
        path.write_text("\n\n".join(lines) + "\n\n", encoding="utf-8")
        return
    try:
        path.write_text(json.dumps(hollow(json.loads(text))), encoding="utf-8")
        return
    except ValueError:
        pass
    lines = []
    for line in text.splitlines():
        try:
            lines.append(json.dumps(hollow(json.loads(line))))
        except ValueError:
            continue  # a fixture's deliberately malformed line: dropped with its words
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _says_it_holds_nothing(cls, path: Path) -> bool:
    """True when the importer's read of ``path`` is a Notice (its format's, nothing to import)."""
    return any(type(event) is Notice for event in itertools.islice(cls(path).read(SourceState()), 100))


def _sources_by_format() -> dict[str, list[Path]]:
    """Each format's fixture files that are sources of their own (not members of another) and
    carry content (not a Notice that the file holds nothing, e.g. a Cline task's metadata alone)."""
    found: dict[str, list[Path]] = {}
    for path, fmt in FILES:
        cls = IMPORTERS[fmt]
        head = Head.read(path)
        if (cls.sniff(head) >= THRESHOLD and cls.member_of(head) is None and content_gap(cls, head) is None
                and not _says_it_holds_nothing(cls, path)):
            found.setdefault(fmt, []).append(path)
    return found


SOURCES = _sources_by_format()


def test_every_importer_has_a_fixture_that_carries_content():
    missing = sorted(set(IMPORTERS) - set(SOURCES) - {"hermes-db"})  # hermes-db: built from SQL below
    assert missing == []


@pytest.mark.parametrize("fmt", sorted(SOURCES))
def test_a_hollow_file_of_each_format_is_refused(tmp_path, fmt):
    cls = IMPORTERS[fmt]
    for original in SOURCES[fmt]:
        copy_root = tmp_path / original.relative_to(FIXTURES).parts[0]
        if not copy_root.exists():
            shutil.copytree(FIXTURES / original.relative_to(FIXTURES).parts[0], copy_root)
        path = copy_root / original.relative_to(FIXTURES / original.relative_to(FIXTURES).parts[0])
        for member in [p for p in copy_root.rglob("*") if p.is_file() and not p.is_symlink()]:
            _hollow_file(member)
        head = Head.read(path)
        gap = content_gap(cls, head)
        assert gap is not None, f"{fmt} imports the hollowed {original.relative_to(FIXTURES)}"
        found = detection(path)
        assert found.name is None or found.name != fmt
        if cls.sniff(head) >= THRESHOLD:
            assert fmt in found.refused


def test_a_hollow_state_db_is_refused(state_db):
    with Database(state_db, migrate=False) as db:
        db.execute("DELETE FROM messages")
    found = detection(state_db)
    assert found.name is None and "hermes-db" in found.refused
    assert found.refused["hermes-db"] == "it read no messages"


def _lines(path: Path, objects) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def test_a_refused_claim_gives_way_to_the_next_candidate(tmp_path):
    """Cursor agent lines once went to the generic chat reader with every message empty."""
    path = _lines(tmp_path / "chat.jsonl", [
        {"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>\nhi\n</user_query>"}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "hello"}]}}])
    found = detection(path)
    assert found.name == "cursor-agent"
    assert IMPORTERS["openai-jsonl"].sniff(Head.read(path)) < THRESHOLD


def test_unknown_file_names_what_each_candidate_found_missing(tmp_path, run):
    from sess_helpers import index_json

    path = _lines(tmp_path / "log.jsonl", [{"role": "user", "content": ""}, {"role": "assistant", "content": ""},
                                           {"role": "user", "content": "  "}])
    found = detection(path)
    assert found.name is None
    assert found.refused == {"openai-jsonl": "3 of the first 3 messages it read are empty and none has a tool call"}
    message = describe_unknown(found.ranked, found.refused)
    assert "openai-jsonl 0.60: 3 of the first 3 messages it read are empty" in message
    code, summary = index_json(run, path)
    assert code == 1 and "openai-jsonl 0.60: 3 of the first 3" in summary["errors"][0]["error"]
    code, summary = index_json(run, path, "--format", "openai-jsonl")  # forcing one still reads it
    assert summary["messages_added"] == 3


def test_generic_jsonl_with_a_few_malformed_lines_is_claimed_and_they_are_reported(tmp_path, store):
    path = tmp_path / "chat.jsonl"
    good = [json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"}) for i in range(6)]
    path.write_text("\n".join([good[0], "{not json", good[1], good[2], '{"role": "user", "content": ', good[3],
                               good[4], good[5]]) + "\n", encoding="utf-8")
    assert detection(path).name == "openai-jsonl"
    from hermes_store.sessions import index_paths

    summary = index_paths(store, [path])
    assert summary["messages_added"] == 6
    assert sorted(e["line"] for e in summary["errors"]) == [2, 5]
    assert all(e["error"].startswith("malformed JSON") for e in summary["errors"])


def test_a_whole_document_is_parsed_once(tmp_path, monkeypatch):
    """The document the detector parsed is handed to the importer, not read again."""
    source = FIXTURES / "chatgpt-export/.downloads/chatgpt-export-2025-11-02/conversations.json"
    path = tmp_path / "conversations.json"
    shutil.copy(source, path)
    reads: list[Path] = []
    original = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(self) or original(self))
    with Database(tmp_path / "store.db") as db:
        summary = BulkLoader(db).run([path])
    assert summary.messages_added > 0 and summary.errors == []
    assert reads.count(path) <= 1  # the probe's read (files under 256 KiB: not even that)


def test_a_forced_format_that_reads_only_empty_messages_says_so(tmp_path, store):
    """``--format`` skips detection's content check: a file whose every message reads as empty
    (no text, no tool call) is imported as read but reported, naming the file and the first such
    line, never a silent success."""
    from format_helpers import index

    path = tmp_path / "chat.jsonl"
    path.write_text('{"role": "user", "body": "where is the tide table"}\n'
                    '{"role": "assistant", "body": "in the harbour log"}\n', encoding="utf-8")
    summary = index(store, path, fmt="openai-jsonl")
    assert [(e["path"], e["line"]) for e in summary["errors"]] == [(str(path), 1)]
    assert "all 2 messages read as openai-jsonl are empty" in summary["errors"][0]["error"]
    good = tmp_path / "good.jsonl"
    good.write_text('{"role": "user", "content": "where is the tide table"}\n'
                    '{"role": "assistant", "content": ""}\n', encoding="utf-8")
    assert index(store, good, fmt="openai-jsonl")["errors"] == []


def _window_state(path: Path, keys: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    for key, value in keys.items():
        conn.execute("INSERT INTO ItemTable VALUES (?, ?)", (key, value))
    conn.close()
    return path


def test_discovered_windows_that_never_chatted_are_notes_not_problems(tmp_path, monkeypatch):
    """`sessions index --discover` on a machine with Cursor and VS Code exited 1 with one
    "unknown format" problem per workspace window that never chatted (each keeps its layout in
    a state.vscdb of its own). Such a file is now a note ("nothing to import"), exit 0; a
    state.vscdb with an empty ItemTable is still refused (the hollow-file rule above)."""
    from click.testing import CliRunner

    from hermes_store.cli import cli

    fake = tmp_path / "fakehome"
    layout = {"workbench.panel.markers.hidden": "[]", "memento/workbench.parts.editor": "{}"}
    cursor = _window_state(fake / ".config/Cursor/User/workspaceStorage/1a2b/state.vscdb", layout)
    code = _window_state(fake / ".config/Code/User/workspaceStorage/3c4d/state.vscdb", layout)
    monkeypatch.setenv("HOME", str(fake))
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "h"), "sessions", "index", "--discover"])
    assert result.exit_code == 0, result.output
    assert "0 problems, 2 with nothing to import" in result.output
    assert f"note: {cursor}: " in result.output and f"note: {code}: " in result.output
    empty = _window_state(tmp_path / "Code/User/workspaceStorage/5e6f/state.vscdb", {})
    found = detection(empty)
    assert found.name is None
