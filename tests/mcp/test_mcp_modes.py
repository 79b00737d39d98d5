"""``--read-only``, ``--tools`` and bad start-up options, each against a real server."""

from __future__ import annotations

import hashlib

import pytest
from click.testing import CliRunner
from mcp_helpers import build_home, served

from hermes_store.cli import cli
from hermes_store.home import Home


def _digest(home) -> str:
    """A fingerprint of what a write could change: the memory files and the fact rows."""
    h = hashlib.sha256()
    for name in ("MEMORY.md", "USER.md"):
        h.update((home / "memories" / name).read_bytes())
    with Home(home).open_db() as db:
        for row in db.query("SELECT fact_id, content, tags, trust_score FROM facts ORDER BY fact_id"):
            h.update(repr(sorted(row.items())).encode())
    return h.hexdigest()


@pytest.fixture(scope="module")
def read_only(tmp_path_factory):
    root = tmp_path_factory.mktemp("ro") / "home"
    build_home(root)
    with served(root, "--read-only") as s:
        yield s


def test_read_only_lists_no_writing_tool(read_only):
    listed = {t.name: t for t in read_only.tools()}
    assert sorted(listed) == ["fact_store", "recall", "session_search"]
    actions = listed["fact_store"].input_schema["properties"]["action"]["enum"]
    assert not {"add", "update", "remove"} & set(actions) and "search" in actions
    assert all(t.annotations.read_only_hint and not t.annotations.destructive_hint for t in listed.values())


@pytest.mark.parametrize(("name", "args"), [
    ("memory", {"action": "add", "target": "memory", "content": "should not be written"}),
    ("memory", {"action": "remove", "target": "user", "old_text": "Alice"}),
    ("memory", {"target": "memory", "operations": [{"action": "add", "content": "batch"}]}),
    ("fact_store", {"action": "add", "content": "should not be stored"}),
    ("fact_store", {"action": "update", "fact_id": 1, "trust_delta": 0.3}),
    ("fact_store", {"action": "remove", "fact_id": 1}),
    ("fact_feedback", {"action": "unhelpful", "fact_id": 1}),
])
def test_read_only_refuses_every_writing_action(read_only, name, args):
    before = _digest(read_only.home)
    result = read_only.call(name, args)
    assert result.is_error is True
    assert "read-only" in result.structured_content["error"]
    assert _digest(read_only.home) == before


def test_read_only_still_reads(read_only):
    assert read_only.call("fact_store", {"action": "search", "query": "postgres"}).structured_content["count"] == 1
    assert read_only.call("recall", {"query": "billing"}).is_error is False
    assert "billing" in read_only.read("memory://MEMORY.md")


def test_tool_subset(tmp_path):
    root = tmp_path / "home"
    build_home(root)
    with served(root, "--tools", "recall,memory") as s:
        assert [t.name for t in s.tools()] == ["memory", "recall"]
        refused = s.call("fact_store", {"action": "list"})
        assert refused.is_error and "not served here" in refused.structured_content["error"]
        assert s.call("memory", {"action": "add", "target": "memory", "content": "subset works"}).is_error is False


def test_unknown_tool_in_subset_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "mcp", "--tools", "recall,nonsense"])
    assert result.exit_code == 2
    assert "nonsense" in result.output and "available" in result.output


def test_legacy_handshake_client(tmp_path):
    """Clients that still send ``initialize`` (2025-11-25 and earlier) get the same server."""
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS

    root = tmp_path / "home"
    build_home(root)
    with served(root, mode="legacy", client_name="claude-code") as s:
        assert s.client.protocol_version not in MODERN_PROTOCOL_VERSIONS
        assert len(s.tools()) == 5 and "billing" in s.read("memory://MEMORY.md")
        added = s.call("memory", {"action": "add", "target": "user", "content": "Uses a legacy client"})
        assert added.is_error is False
    history = CliRunner().invoke(cli, ["--home", str(root), "memory", "history", "--json"])
    assert '"origin": "mcp:claude-code"' in history.stdout
