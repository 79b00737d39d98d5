"""recall kinds are objects: one registry, one validity check, and a new kind is one class."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from hermes_store import recall as recall_module
from hermes_store.cli import cli
from hermes_store.recall import (
    KIND_BY_NAME,
    KINDS,
    RECALL_KINDS,
    Kind,
    RecallItem,
    RecallRequest,
    recall,
    render_item,
    unknown_kinds_problem,
)
from hermes_store.tools import handle_tool_call

pytestmark = pytest.mark.usefixtures("engine")  # every test on both storage engines


class NotesKind(Kind):
    """A made-up kind: every request yields two fixed items."""

    name = "notes"
    title = "Notes"
    weight = 2.0

    def candidates(self, request: RecallRequest) -> list[RecallItem]:
        return [RecallItem(kind=self.name, id=i, text=f"note {i} about {request.text}", kind_score=1.0 / i)
                for i in (1, 2)][: request.limit]

    def label(self, item: RecallItem) -> str:
        return f"[note {item.id}]"

    def describe(self, fields: dict[str, Any]) -> tuple[str, str]:
        return f"  note {fields['id']}", fields["text"]


@pytest.fixture
def with_notes(monkeypatch):
    kinds = (*RECALL_KINDS, NotesKind())
    monkeypatch.setattr(recall_module, "RECALL_KINDS", kinds)
    monkeypatch.setattr(recall_module, "KIND_BY_NAME", {k.name: k for k in kinds})
    monkeypatch.setattr(recall_module, "KINDS", tuple(k.name for k in kinds))


def test_registry_names_the_four_kinds_in_order():
    assert KINDS == ("memory", "user", "facts", "sessions")
    assert [k.name for k in RECALL_KINDS] == list(KINDS) and set(KIND_BY_NAME) == set(KINDS)
    assert all(k.title for k in RECALL_KINDS)


def test_one_class_adds_a_kind(home, with_notes):
    result = recall("billing", home=home, kinds=["notes", "memory"])
    assert result.kinds_searched == ["memory", "notes"]
    assert [(i.kind, i.id) for i in result.results] == [("notes", 1), ("notes", 2)]
    assert result.results[0].why == "notes rank 1 (relevance 1.000)"
    assert result.results[0].score == pytest.approx(2.0 / 21)
    assert render_item(result.results[0]) == "- [note 1] note 1 about billing"
    assert recall("billing", home=home, kinds=["notes"], budget_tokens=200).rendered.splitlines()[1:] == [
        "- [note 1] note 1 about billing", "- [note 2] note 2 about billing"]


def test_a_failing_kind_is_reported_not_raised(home, monkeypatch, with_notes):
    def boom(self, request):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(NotesKind, "candidates", boom)
    result = recall("billing", home=home, kinds=["notes"])
    assert result.errors == {"notes": "RuntimeError: disk on fire"} and result.kinds_searched == []


def test_one_message_for_unknown_kinds_everywhere(home):
    problem = unknown_kinds_problem(["facts", "nope", "nope", "zap"])
    assert problem == "unknown kinds nope, zap; choose from memory, user, facts, sessions"
    assert unknown_kinds_problem(KINDS) is None
    with pytest.raises(ValueError, match="^kinds: unknown kind nope;"):
        recall("x", home=home, kinds=["nope"])
    reply = handle_tool_call("recall", {"query": "x", "kinds": ["nope"]}, home=home)
    assert "'kinds' has unknown kind nope; choose from memory, user, facts, sessions" in reply
    out = CliRunner().invoke(cli, ["--home", str(home.root), "recall", "x", "--kinds", "nope"])
    # the option quoted as click quotes every other one ("Invalid value for '--role': ..."), the
    # count read as English: a newcomer's `--kinds memroy` said "Invalid value for --kinds:
    # unknown kind(s) memroy"
    assert out.exit_code == 2 and "Invalid value for '--kinds': unknown kind nope; choose from" in out.output
