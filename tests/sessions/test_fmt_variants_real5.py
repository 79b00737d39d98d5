"""Variants seen in real files, fifth round: Claude Code and OpenAI Codex (fixtures reproduce the
writers' structure, never real content)."""

from __future__ import annotations

from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format

CODEX_DAY = "codex_v160/sessions/2026/10/02"
CODEX_ROOT = "0199c0de-1111-7aaa-8bbb-00000000a001"
CODEX_FORK = "0199c0de-2222-7aaa-8bbb-00000000b002"
CODEX_CHILD = "0199c0de-3333-7aaa-8bbb-00000000c003"


def test_codex_newer_record_types_and_inter_agent_messages(store, format_fixtures):
    """Codex 0.15x+ rollouts add record types beside ``response_item``: ``inter_agent_communication``
    (a message between agents of one tree, also written as an ``agent_message`` item with the same
    ``id``), and ``token_usage_record``, ``world_state``, ``retained_context``,
    ``security_risk_score``, ``inter_agent_communication_metadata`` and the ``configuration_update``
    item, which hold no conversation. A message the thread's own agent wrote is its own words."""
    path = format_fixtures / CODEX_DAY / f"rollout-2026-10-02T11-00-00-{CODEX_ROOT}.jsonl"
    assert detect_format(path) == "codex"
    assert index(store, path)["errors"] == []
    rows = messages(store, CODEX_ROOT)
    assert roles(rows) == ["system", "user", "assistant", "assistant", "tool", "user", "reasoning", "assistant"]
    assert rows[1]["content"] == "reconcile the march ledger"
    assert rows[2]["calls"] == [("spawn_agent", {"task_name": "checker", "message": "sum the march rows"},
                                 "call_s1")]
    assert rows[3]["content"] == "sum the march rows"  # /root -> /root/checker, written by this thread
    assert rows[5]["content"] == "march rows sum to 4120.50"  # item and record of one delivery: once
    assert rows[7]["content"] == "March reconciles: 4120.50 on both sides."


def test_codex_subagent_sees_its_task_as_input(store, format_fixtures):
    """In the subagent's rollout the parent's ``inter_agent_communication`` is the task it was given
    (``user``) and the one it sends back is its own (``assistant``); its agent path comes from
    ``session_meta.agent_path``."""
    path = format_fixtures / CODEX_DAY / f"rollout-2026-10-02T11-00-04-{CODEX_CHILD}.jsonl"
    assert index(store, path)["errors"] == []
    rows = messages(store, CODEX_CHILD)
    assert [(r["role"], r["content"]) for r in rows if r["role"] != "tool" and not r["calls"]] == [
        ("user", "sum the march rows"), ("assistant", "march rows sum to 4120.50")]
    assert session(store, CODEX_CHILD)["parent_session_id"] == CODEX_ROOT


def test_codex_fork_keeps_its_own_header(store, format_fixtures):
    """A forked rollout starts with its own ``session_meta`` and then the copied history, which can
    hold the ancestor's ``session_meta``: that one does not replace the fork's start or workspace."""
    path = format_fixtures / CODEX_DAY / f"rollout-2026-10-03T12-00-00-{CODEX_FORK}.jsonl"
    assert index(store, path)["errors"] == []
    row = session(store, CODEX_FORK)
    assert row["started_at"] == ts("2026-10-03T10:00:00.000Z")
    assert row["workspace"] == "/srv/ledger"
    assert [r["content"] for r in messages(store, CODEX_FORK)] == [
        "reconcile the march ledger", "March reconciles: 4120.50 on both sides.", "now do april",
        "April is off by 12.00."]
