"""Variants seen in real files, seventh round: Claude Code's record types beyond the conversation
(fixtures reproduce the writer's structure, never real content)."""

from __future__ import annotations

import json

from format_helpers import index, messages

SESSION = "11111111-2222-4333-8444-555555555555"
ENVELOPE = {"sessionId": SESSION, "cwd": "/srv/parser", "version": "2.1.90", "userType": "external",
            "isSidechain": False}
# Claude Code's record types that hold no conversation (its transcript-compaction table and the
# ``Entry`` union of ``src/types/logs.ts``, as third-party readers of its transcripts transcribe them)
STATE_LINES = [
    {"type": "task-summary", "sessionId": SESSION, "summary": "Refactoring the parser", "timestamp": "2026-05-01T10:00:06Z"},
    {"type": "agent-color", "sessionId": SESSION, "agentColor": "blue"},
    {"type": "agent-setting", "sessionId": SESSION, "agentSetting": "reviewer"},
    {"type": "attribution-snapshot", "messageId": "a1", "surface": "cli", "fileStates": {}},
    {"type": "speculation-accept", "timestamp": "2026-05-01T10:00:07Z", "timeSavedMs": 1200},
    {"type": "content-replacement", "sessionId": SESSION, "replacements": [{"toolUseId": "t1"}]},
    {"type": "marble-origami-snapshot", "sessionId": SESSION, "staged": [], "armed": False, "lastSpawnTokens": 0},
    {"type": "marble-origami-reset", "sessionId": SESSION},
    {"type": "continued-in", "sessionId": SESSION},
    {"type": "ended-by-model", "sessionId": SESSION},
    {"type": "cost-state", "sessionId": SESSION},
]


def test_claude_code_state_records_and_a_context_collapse(store, tmp_path):
    """Before: every one of these lines was reported as ``unknown line type`` (an error on a file
    Claude Code wrote) and the collapse's summary -- what the model read in place of the span it
    archived -- was lost. Now the state lines are skipped silently and the ``marble-origami-commit``
    summary is a ``system`` row where it was written."""
    lines = [
        {**ENVELOPE, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-05-01T10:00:00Z",
         "message": {"role": "user", "content": "refactor the parser"}},
        {**ENVELOPE, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-05-01T10:00:05Z",
         "message": {"id": "m1", "role": "assistant", "model": "claude-opus-4-6",
                     "content": [{"type": "text", "text": "Refactoring."}]}},
        *STATE_LINES,
        {"type": "marble-origami-commit", "sessionId": SESSION, "collapseId": "1", "summaryUuid": "s1",
         "summaryContent": '<collapsed id="1">Read parser.py; the tokenizer is duplicated</collapsed>',
         "summary": "Read parser.py; the tokenizer is duplicated", "firstArchivedUuid": "u1", "lastArchivedUuid": "a1"},
        {"type": "marble-origami-commit", "sessionId": SESSION, "collapseId": "2", "summaryUuid": "s2",
         "summaryContent": '<collapsed id="2">Merged the two tokenizers</collapsed>',
         "firstArchivedUuid": "u1", "lastArchivedUuid": "a1"},
        {**ENVELOPE, "type": "user", "uuid": "u2", "parentUuid": "a1", "timestamp": "2026-05-01T10:01:00Z",
         "message": {"role": "user", "content": "thanks"}},
    ]
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    summary = index(store, path)
    assert summary["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, SESSION)] == [
        ("user", "refactor the parser"), ("assistant", "Refactoring."),
        ("system", "Read parser.py; the tokenizer is duplicated"), ("system", "Merged the two tokenizers"),
        ("user", "thanks")]
