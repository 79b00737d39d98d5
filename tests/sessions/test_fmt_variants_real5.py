"""Variants seen in real files, fifth round: Claude Code and OpenAI Codex (fixtures reproduce the
writers' structure, never real content)."""

from __future__ import annotations

from format_helpers import index, messages, roles, session, ts

from hermes_store.sessions import detect_format

CODEX_DAY = "codex_threads/sessions/2026/10/02"
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


CLAUDE_LEDGER = "claude-code/projects/-home-li-ledger"
CLAUDE_SESSION = "5e6f7a8b-0c1d-4e2f-8a3b-4c5d6e7f8091"
CLAUDE_OLD = "claude-code/projects/-home-li-oldtool/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl"
CLAUDE_OLD_SESSION = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


def test_claude_code_text_it_wrote_itself_is_not_the_user_s(store, format_fixtures):
    """``isMeta`` user lines (the local-command caveat, an expanded command or skill) and the
    ``isCompactSummary`` user line after a ``compact_boundary`` are Claude Code's words: ``system``
    rows. The typed ``/compact`` command stays the user's."""
    path = format_fixtures / CLAUDE_LEDGER / f"{CLAUDE_SESSION}.jsonl"
    assert detect_format(path) == "claude-code"
    assert index(store, path)["errors"] == []
    rows = messages(store, CLAUDE_SESSION)
    assert [(r["role"], r["content"][:28]) for r in rows[:5]] == [
        ("system", "Caveat: The messages below w"), ("user", "<command-name>/compact</comm"),
        ("system", "Conversation compacted"), ("system", "This session is being contin"),
        ("user", "find the april rate and chec")]
    assert [r["content"] for r in rows if r["role"] == "user"][1:] == ["find the april rate and check the totals"]


def test_claude_code_tool_search_and_web_search_results_keep_their_text(store, format_fixtures):
    """ToolSearch answers with ``tool_reference`` blocks (the tool it loaded) and a server-side web
    search with ``web_search_result`` items (title, url, encrypted page): both were stored as bare
    ``[tool_reference]`` / ``[web_search_result]`` markers."""
    assert index(store, format_fixtures / CLAUDE_LEDGER / f"{CLAUDE_SESSION}.jsonl")["errors"] == []
    rows = messages(store, CLAUDE_SESSION)
    tools = [(r["tool_call_id"], r["content"]) for r in rows if r["role"] == "tool"]
    assert tools[:2] == [("toolu_ts1", "[tool loaded: mcp__sheets__read]"),
                         ("srvtoolu_1", "Base rate decisions 2026 https://rates.example/2026")]
    assert rows[-1]["content"] == "April: 5310.25 at 3.75%."


def test_claude_code_subagent_known_only_from_progress_lines(store, format_fixtures):
    """2.0.x-2.1.x write each message of a running subagent into the parent's file as an
    ``agent_progress`` line. Without the subagent's own file (a transcript copied alone, a web
    export) they are its only copy: read into the child session ``<session>:agent-<id>``."""
    assert index(store, format_fixtures / CLAUDE_LEDGER / f"{CLAUDE_SESSION}.jsonl")["errors"] == []
    child = f"{CLAUDE_SESSION}:agent-a7c91e2"
    rows = messages(store, child)
    assert roles(rows) == ["user", "assistant", "tool", "assistant"]
    assert rows[0]["content"] == "Sum the april rows of ledger.csv"
    assert rows[1]["calls"][0][0] == "Bash" and rows[2]["content"] == "5310.25"
    assert rows[3]["content"] == "April rows sum to 5310.25."
    row = session(store, child)
    assert row["parent_session_id"] == CLAUDE_SESSION and row["model"] == "claude-haiku-4-5"


def test_claude_code_progress_lines_yield_to_the_subagent_file(store, tmp_path, format_fixtures):
    """With the subagent's file beside the transcript, the progress lines are not read again."""
    project = tmp_path / "-home-li-ledger"
    project.mkdir()
    main = project / f"{CLAUDE_SESSION}.jsonl"
    main.write_bytes((format_fixtures / CLAUDE_LEDGER / main.name).read_bytes())
    sub = project / CLAUDE_SESSION / "subagents" / "agent-a7c91e2.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text(
        '{"parentUuid":null,"isSidechain":true,"userType":"external","cwd":"/home/li/ledger","sessionId":"'
        + CLAUDE_SESSION + '","version":"2.1.47","agentId":"a7c91e2","type":"user","message":{"role":"user",'
        '"content":"Sum the april rows of ledger.csv"},"uuid":"sa1","timestamp":"2026-02-19T02:01:07.000Z"}\n',
        encoding="utf-8")
    assert index(store, project)["errors"] == []
    assert [r["content"] for r in messages(store, f"{CLAUDE_SESSION}:agent-a7c91e2")] == [
        "Sum the april rows of ledger.csv"]


def test_claude_code_1_0_sidechains_in_the_parent_file(store, format_fixtures):
    """Claude Code 1.0.x wrote Task subagents into the parent's file, each line ``isSidechain: true``
    with no ``agentId``; a chain starts at a sidechain line without parent and goes on by
    ``parentUuid``. Two subagents run side by side interleave. Each chain is a child session: its
    prompt was stored as the user's words in the parent and the two conversations were mixed."""
    path = format_fixtures / CLAUDE_OLD
    assert index(store, path)["errors"] == []
    parent = messages(store, CLAUDE_OLD_SESSION)
    assert [r["content"] for r in parent if r["role"] == "user"] == [
        "where are the parsers and the exporters defined"]
    assert parent[-1]["content"] == "Parsers are in src/parse.py; there are no exporters yet."
    first = messages(store, f"{CLAUDE_OLD_SESSION}:sidechain-x1")
    second = messages(store, f"{CLAUDE_OLD_SESSION}:sidechain-y1")
    assert [r["content"] for r in first if not r["calls"]] == [
        "Find where parsers are defined", "src/parse.py", "Parsers live in src/parse.py."]
    assert [r["content"] for r in second if not r["calls"]] == [
        "Find where exporters are defined", "No files found", "No exporters exist yet."]
    assert session(store, f"{CLAUDE_OLD_SESSION}:sidechain-x1")["parent_session_id"] == CLAUDE_OLD_SESSION


def test_claude_code_hook_words_are_kept_as_system_rows(store, tmp_path):
    """Hook attachments whose words reach the model or the user (additional context, a system
    message, a blocking error of a tool hook, a SessionStart hook's content) are ``system`` rows;
    a Stop hook's blocking error is not (its feedback follows as an isMeta user line) and other
    hook results and listings stay bookkeeping. Before, all were dropped as bookkeeping."""
    import json

    sid = "7e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
    base = {"sessionId": sid, "cwd": "/srv/depot", "version": "2.1.266", "isSidechain": False, "userType": "external"}

    def line(n: int, kind: str, **fields) -> dict:
        return {**base, "type": kind, "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n > 1 else None,
                "timestamp": f"2026-11-04T08:00:{n:02d}Z", **fields}

    def attach(n: int, **attached) -> dict:
        return line(n, "attachment", attachment=attached)

    lines = [
        attach(1, type="hook_success", hookName="SessionStart:startup", hookEvent="SessionStart",
               content="branch main is 3 commits ahead", stdout="branch main is 3 commits ahead\n", exitCode=0),
        line(2, "user", message={"role": "user", "content": "tidy the depot module"}),
        attach(3, type="hook_additional_context", hookName="UserPromptSubmit", hookEvent="UserPromptSubmit",
               content=["house style: no wildcard imports"]),
        line(4, "assistant", message={"role": "assistant", "model": "claude-opus-5", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ruff check depot"}}]}),
        attach(5, type="hook_success", hookName="PreToolUse:Bash", hookEvent="PreToolUse", content="", exitCode=0),
        line(6, "user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "All checks passed!"}]}),
        attach(7, type="hook_blocking_error", hookName="PostToolUse:Bash", hookEvent="PostToolUse", toolUseID="toolu_1",
               blockingError={"blockingError": "[lint.sh]: depot/io.py has a wildcard import", "command": "lint.sh"}),
        attach(8, type="hook_system_message", hookName="PostToolUse:Bash", hookEvent="PostToolUse",
               content="lint guard ran in 0.4 s"),
        line(9, "assistant", message={"role": "assistant", "model": "claude-opus-5", "content": [
            {"type": "text", "text": "Removed the wildcard import."}]}),
        attach(10, type="hook_blocking_error", hookName="Stop", hookEvent="Stop",
               blockingError={"blockingError": "add a changelog entry", "command": "stop.sh"}),
        line(11, "user", isMeta=True, message={"role": "user", "content": "Stop hook feedback:\nadd a changelog entry"}),
        attach(12, type="skill_listing", skillCount=2, names=["a", "b"], content="- a\n- b"),
    ]
    path = tmp_path / "projects" / "-srv-depot" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(obj) + "\n" for obj in lines), encoding="utf-8")
    assert index(store, path)["errors"] == []
    assert [(r["role"], r["content"]) for r in messages(store, sid)] == [
        ("system", "[SessionStart:startup hook success] branch main is 3 commits ahead"),
        ("user", "tidy the depot module"),
        ("system", "[UserPromptSubmit hook additional context] house style: no wildcard imports"),
        ("assistant", ""),
        ("tool", "All checks passed!"),
        ("system", "[PostToolUse:Bash hook blocking error] [lint.sh]: depot/io.py has a wildcard import"),
        ("system", "[PostToolUse:Bash hook system message] lint guard ran in 0.4 s"),
        ("assistant", "Removed the wildcard import."),
        ("system", "Stop hook feedback:\nadd a changelog entry"),
    ]
