"""Variants seen in real files, sixth round: Codex reverted threads and voice transcripts, Factory
Droid, Amp ``--stream-json`` and OpenCode storage/export (fixtures reproduce the writers' structure,
never real content)."""

from __future__ import annotations

from format_helpers import index, messages, session

from hermes_store.sessions import detect_format

REVERT_DAY = "codex_threads/sessions/2026/11/04"
THREAD = "019a7e00-aaaa-7bbb-8ccc-0000000000d1"
REVERT_1 = "019a7e10-bbbb-7ccc-8ddd-0000000000e2"
REVERT_2 = "019a7e20-cccc-7ddd-8eee-0000000000f3"


def _said(rows: list[dict]) -> list[tuple[str, str]]:
    return [(r["role"], r["content"]) for r in rows]


def test_codex_reverted_rollout_is_its_own_session_linked_to_the_original(store, format_fixtures):
    """``thread/revert`` writes ``…-<thread>_<rollout>.jsonl`` with the same thread id and a
    ``history_base`` naming the prefix it keeps in the original file: the original keeps its two turns,
    the revert's new turn is a session of its own whose parent is the original -- no message is lost
    and none is stored twice."""
    day = format_fixtures / REVERT_DAY
    original = day / f"rollout-2026-11-04T08-00-00-{THREAD}.jsonl"
    reverted = day / f"rollout-2026-11-04T08-10-00-{THREAD}_{REVERT_1}.jsonl"
    assert detect_format(reverted) == "codex"
    assert index(store, original)["errors"] == []
    summary = index(store, reverted)
    assert summary["errors"] == []
    assert _said(messages(store, THREAD)) == [
        ("user", "map the tide tables"), ("assistant", "Tide tables mapped for the north pier."),
        ("user", "now chart the reef soundings"), ("assistant", "Reef soundings charted at two metres.")]
    child = f"{THREAD}_{REVERT_1}"
    assert _said(messages(store, child)) == [
        ("user", "chart the harbour soundings instead"), ("user", "and mark the buoys"),
        ("assistant", "Marking the buoys on the harbour chart."),
        ("assistant", "Harbour soundings charted with buoys marked.")]
    row = session(store, child)
    assert row["parent_session_id"] == THREAD
    assert row["workspace"] == "/srv/atlas"


def test_codex_second_revert_continues_the_first(store, format_fixtures):
    """A revert of a reverted thread names the first revert's rollout as its base: its parent is that
    session. The adjacently tagged ``realtime_item`` shape (``data: {role, text}``) is read too."""
    day = format_fixtures / REVERT_DAY
    summary = index(store, day)
    assert summary["errors"] == []
    child = f"{THREAD}_{REVERT_2}"
    assert _said(messages(store, child)) == [
        ("user", "list the lighthouse bearings"), ("user", "read the bearings aloud"),
        ("assistant", "Lighthouse bearings: 042, 117 and 301.")]
    assert session(store, child)["parent_session_id"] == f"{THREAD}_{REVERT_1}"


def test_codex_revert_with_a_leading_rollout_reference(store, tmp_path):
    """Versions that wrote the kept prefix as a leading ``rollout_reference`` record (instead of a
    ``history_base``) link the revert to the rollout it names; the record is bookkeeping, no problem."""
    import json

    rollout = "019a7e30-dddd-7eee-8fff-000000000104"
    path = tmp_path / f"rollout-2026-11-05T09-00-00-{THREAD}_{rollout}.jsonl"
    lines = [
        {"timestamp": "2026-11-05T09:00:00Z", "type": "session_meta",
         "payload": {"id": THREAD, "timestamp": "2026-11-05T09:00:00Z", "cwd": "/srv/atlas"}},
        {"timestamp": "2026-11-05T09:00:00Z", "type": "rollout_reference",
         "payload": {"rollout_path": "/home/u/.codex/sessions/x.jsonl", "thread_id": THREAD, "rollout_id": REVERT_1,
                     "max_depth": 8, "nth_user_message": None}},
        {"timestamp": "2026-11-05T09:00:01Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "redo the pier"}]}},
    ]
    path.write_text("".join(json.dumps(obj) + "\n" for obj in lines), encoding="utf-8")
    summary = index(store, path)
    assert summary["errors"] == []
    child = f"{THREAD}_{rollout}"
    assert _said(messages(store, child)) == [("user", "redo the pier")]
    assert session(store, child)["parent_session_id"] == f"{THREAD}_{REVERT_1}"


OPENCODE_EXPORT = "opencode-export/exports/ses_4b1c2d3e4ffeA1b2C3d4E5f6G7.json"
OPENCODE_V2 = "opencode-json/.local/share/opencode/project/home-ines-kiln/storage/session"


def test_opencode_export_document_is_imported(store, format_fixtures):
    """``opencode export`` prints one pretty-printed ``{info, messages: [{info, parts}], todos}``
    document: its messages are imported with their text, reasoning, tool call and output."""
    path = format_fixtures / OPENCODE_EXPORT
    assert detect_format(path) == "opencode-export"
    summary = index(store, path)
    assert summary["errors"] == []
    sid = "ses_4b1c2d3e4ffeA1b2C3d4E5f6G7"
    rows = messages(store, sid)
    assert [(r["role"], r["content"]) for r in rows if not r["calls"]] == [
        ("user", "which pear rows need pruning this week"), ("reasoning", "check the row log first"),
        ("tool", "row 4: pear, last pruned march"), ("assistant", "Row 4 pears are due for pruning.")]
    assert [c[:2] for r in rows for c in r["calls"]] == [("read", {"filePath": "/home/kai/orchard/rows.md"})]
    row = session(store, sid)
    assert row["title"] == "Prune the orchard schedule" and row["workspace"] == "/home/kai/orchard"


def test_opencode_messagev2_layout_reads_parts_from_session_part(store, format_fixtures):
    """The summer-2025 layout under ``project/<project>/storage/session/``: ``info/``, headers in
    ``message/<session>/`` and the parts in ``part/<session>/<message>/`` -- the parts are read, not
    left out (the session used to be refused as holding no messages)."""
    info = format_fixtures / OPENCODE_V2 / "info/ses_7c8d9e0f1ffeK2l3M4n5O6p7Q8.json"
    assert detect_format(info) == "opencode-json"
    summary = index(store, format_fixtures / OPENCODE_V2)
    assert summary["errors"] == []
    rows = messages(store, "ses_7c8d9e0f1ffeK2l3M4n5O6p7Q8")
    assert [(r["role"], r["content"]) for r in rows if not r["calls"]] == [
        ("user", "log the cone six glaze firing"), ("tool", ""), ("assistant", "Logged the cone six glaze firing.")]
    assert [c[0] for r in rows for c in r["calls"]] == ["write"]
