"""``claude-code``: Claude Code transcripts ``~/.claude/projects/<project>/<session>.jsonl``.

Versions 1.0.x to 2.1.x. Each line has a ``type``:

* ``user`` / ``assistant``: ``uuid``, ``parentUuid``, ``sessionId``,
  ``timestamp``, ``cwd``, ``gitBranch``, ``version``, ``isSidechain`` and an
  Anthropic ``message`` whose ``content`` is a string or blocks (``text``,
  ``tool_use``, ``tool_result``, ``thinking``, ``redacted_thinking``,
  ``image``, ``connector_text`` -- the model's narration, text --, ``fallback``
  -- a retry on another model, a ``system`` notice);
  tool results may also carry a structured ``toolUseResult``.
  Tool results become ``tool`` rows linked by ``tool_call_id`` (web search hits
  as ``title url`` lines, ToolSearch's ``tool_reference`` blocks by the tool
  loaded); thinking text becomes ``reasoning`` rows (left out of default
  searches). ``user`` lines Claude Code wrote itself -- ``isMeta`` (command
  caveats, expanded slash commands and skills) and the ``isCompactSummary``
  summary that follows a ``compact_boundary`` -- are ``system`` rows, as are ``assistant``
  lines Claude Code wrote in the model's place (``isApiErrorMessage``, model ``<synthetic>``:
  "API Error: 529 Overloaded", "Please run /login", "No response requested.").
* top-level ``tool_use`` / ``tool_result`` lines (stream output): messages too.
* ``system``: ``content`` text (compaction notices, hook output, errors). A
  ``model_refusal_fallback`` line (2.1.170+: the model's safeguards flagged a reply, Claude
  Code withdrew it and retried on a fallback model) names the withdrawn lines in
  ``retractedMessageUuids``: those ``assistant`` lines are not stored, wherever they stand in
  the file (a retracted ``user`` line is kept: it holds the user's words, which the retry asks
  again). A reply retracted by a line appended after the file was read is left stored.
* titles: ``custom-title`` (``customTitle``, the user's rename) over
  ``ai-title`` (``aiTitle``) over ``summary`` (``summary`` + ``leafUuid``; no
  ``sessionId``: the title belongs to the session holding the ``leafUuid``
  message, which may be another file of the same project directory -- a file
  of summaries only creates no session).
* ``attachment`` lines of type ``queued_command`` (2.1.x): a prompt typed while
  the agent worked, folded into the running turn (``queue-operation`` ``remove``
  with ``reason: "absorbed_mid_turn"``) and written with no ``user`` line of its
  own. ``prompt`` (text or blocks) is the user's message; a queued item that is
  not the human's (``commandMode: "task-notification"``, an ``origin.kind`` other
  than ``human``, ``isMeta``) is a ``system`` row, as are ``user`` lines whose
  ``origin.kind`` says a finished background task or another session sent them.
  A hook's words put before the model or shown to the user (``hook_additional_context``,
  ``hook_system_message``, ``hook_stopped_continuation``, a non-Stop ``hook_blocking_error``,
  a ``hook_success`` of SessionStart / UserPromptSubmit with ``content``) are ``system`` rows
  ``[<hookName> hook <kind>] text``; other attachments (other hook results, reminders, file
  snapshots, listings) are bookkeeping.
* ``progress`` lines of type ``agent_progress`` (2.0.x-2.1.x) repeat a running
  subagent's messages (``data.message``); they are read into the subagent's
  child session only when its own file is absent (a transcript copied alone, a
  web export). Other progress lines are bookkeeping.
* bookkeeping without conversation: ``file-history-snapshot``,
  ``queue-operation``, ``permission-mode``, ``last-prompt``, ...

Subagent (sidechain) transcripts -- ``<session>/subagents/agent-<id>.jsonl``
(2.1.2+) or the older flat ``agent-<id>.jsonl`` -- carry the *parent's*
``sessionId``; each becomes a child session ``<sessionId>:agent-<id>`` (no ``/``: session_search reads ``a/b`` as profile/id) with
``parent_session_id`` set, so every file owns its own session and the result
does not depend on the order files are walked. 1.0.x wrote Task subagents into
the parent's file instead (``isSidechain: true``, no ``agentId``): each chain
(a sidechain line without parent, then its ``parentUuid`` descendants) is a
child session ``<sessionId>:sidechain-<first uuid, 8 chars>``. ``started_at``
is the earliest timestamp (lines are not always in time order).
"""

from __future__ import annotations

import itertools
import json
import mmap
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers.anthropic_common import (
    SERVER_CALLS,
    TEXT_BLOCKS,
    is_result_block,
    notice_text,
    result_text,
)
from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    flatten_content,
    head_chars,
    json_text,
    opt_str,
    read_jsonl,
    safe_timestamp,
    said_if_empty,
)
from hermes_store.sessions.importers.cursor_stream import is_cursor_event
from hermes_store.sessions.importers.openai_common import ToolNames

# line types that carry no conversation (skipped silently); anything else unknown is reported once.
# Claude Code's own record types (its transcript-compaction table, as third-party readers transcribe it,
# and ``src/types/logs.ts``' ``Entry`` union): state, titles and sidecars; a status line a fork wrote
# (``task-summary``) is not the conversation either.
BOOKKEEPING = {"file-history-snapshot", "queue-operation", "progress", "permission-mode", "mode",
               "last-prompt", "agent-name", "attachment", "hook", "tag", "pr-link", "file-history-delta",
               "bridge-session", "atis-latch", "worktree-state",
               "agent-color", "agent-setting", "attribution-snapshot", "speculation-accept", "task-summary",
               "content-replacement", "marble-origami-snapshot", "marble-origami-reset", "continued-in",
               "fork-context-ref", "frame-link", "ended-by-model", "relocated", "history-suppression",
               "isolation-latch", "cost-state", "observer-ref", "artifact-comment-monitor",
               "artifact-autoreact-ledger"}
SYNTHETIC_MODEL = "<synthetic>"  # the model of an assistant line Claude Code wrote itself (API errors)
COLLAPSE_COMMIT = "marble-origami-commit"  # a context collapse: the summary the model saw for a span
_COLLAPSED = re.compile(r"</?collapsed[^>]*>")  # the wrapper of a collapse's ``summaryContent``
NOT_HUMAN = {"task-notification", "task_notification", "peer", "coordinator", "auto-continuation"}
CLAUDE_LINE_TYPES = {"system", "progress", "attachment", *BOOKKEEPING}
# a subagent's ``agent-<id>.meta.json`` description, then summary lines, ai-title, custom-title lines
TITLE_RANK = {"agent-meta": 0, "summary": 1, "ai-title": 2, "custom-title": 3}
_AGENT_META = re.compile(r"^agent-(.+)\.meta\.json$")  # a subagent's description beside its transcript
SUMMARY_PROBE_BYTES = 64 * 1024  # the head of each sibling file searched for summary lines
MAX_SIBLINGS = 5000
MAX_CHAIN_LINKS = 200  # sidechain message -> chain links kept for an appended line


class ClaudeCodeImporter(Importer):
    """Claude Code per-session JSONL."""

    name = "claude-code"
    # 2: isMeta / compact-summary lines as system rows, queued prompts; 3: hook texts; 4: context-collapse
    # summaries (2026-12-07); 5: server tool results (advisor, web fetch) as tool rows, API errors
    # and other <synthetic> assistant lines as system rows; 6: a model-fallback block a system notice,
    # connector_text blocks the assistant's words, a user line's tool results before its words
    reader = 6
    agent = "Claude Code"
    indexes = ("user/assistant text, tool calls and results (also top-level tool lines), thinking "
               "(role reasoning), system notices and Claude Code's own user lines (meta, compaction "
               "summary) as system; subagent files, 1.0 in-file sidechains and progress-only subagents "
               "as child sessions; titles from "
               "custom-title, ai-title and summary lines")
    # Claude Code writes its transcripts as .jsonl only: every .json under .claude is its settings, caches,
    # to-do lists, task lists, running-session registry (sessions/<pid>.json) or a subagent's meta file
    walk_skipped = (".claude/*.json", ".claude/history.jsonl", ".claude/plugins/*")
    default_locations = {"linux": ("~/.claude/projects/*/*.jsonl",
                                   "~/.claude/projects/*/*/subagents/*.jsonl",
                                   "~/.config/claude/projects/*/*.jsonl"),
                         "darwin": ("~/.claude/projects/*/*.jsonl",
                                    "~/.claude/projects/*/*/subagents/*.jsonl")}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Claude Code lines: user/assistant envelopes with ``uuid`` and ``sessionId`` and an
        Anthropic ``message`` (``content``, never Gemini-style ``parts``), or its bookkeeping lines."""
        score = 0.0
        if _agent_meta_owner(head.path) is not None:
            return 0.6  # a subagent's ``agent-<id>.meta.json``: a member of its transcript
        if head.data.lstrip()[:1] == b"{" and b'"loglines"' in head.data[:4096]:
            doc = head.document()
            if isinstance(doc, dict) and "loglines" in doc:
                return 0.0  # a web session document holding these lines: claude-code-web
        for obj in head.objects():
            kind = obj.get("type")
            if str(obj.get("session_id") or "").startswith("T-"):
                return 0.0  # an Amp thread's stream JSON (Claude Code compatible): amp-stream
            if "parent_tool_use_id" in obj and "sessionId" not in obj:
                return 0.0  # headless stream-json (claude -p, the Agent SDK): claude-stream
            if is_cursor_event(obj):
                return 0.0  # Cursor's headless stream (cursor-agent -p): cursor-stream
            if kind in ("user", "assistant"):
                message = obj.get("message")
                if not isinstance(message, dict):
                    continue
                if "parts" in message or message.get("role") not in (None, "user", "assistant"):
                    return 0.0  # Qwen Code / Gemini-style messages share the envelope
                if "content" in message and "sessionId" in obj and "uuid" in obj:
                    score = max(score, 0.95)
                elif "content" in message and message.get("role") in ("user", "assistant") and (
                        {"timestamp", "sessionId", "session_id", "uuid", "parentUuid"} & obj.keys()):
                    score = max(score, 0.8)  # another writer's Claude Code lines (fewer envelope fields)
            elif kind == "summary" and "leafUuid" in obj and "summary" in obj:
                score = max(score, 0.9)
            elif ((kind == "custom-title" and "customTitle" in obj)
                  or (kind == "ai-title" and "aiTitle" in obj)) and "sessionId" in obj:
                score = max(score, 0.9)
            elif kind == "file-history-snapshot" and "messageId" in obj and "snapshot" in obj:
                score = max(score, 0.9)
            elif kind == "queue-operation" and "operation" in obj and "sessionId" in obj:
                score = max(score, 0.8)
            elif kind in CLAUDE_LINE_TYPES and ("isSidechain" in obj or "userType" in obj):
                score = max(score, 0.9)  # the Claude Code envelope on a system/progress/... line
            elif kind in ("permission-mode", "last-prompt", "agent-name") and "sessionId" in obj:
                score = max(score, 0.8)
            elif kind == "progress" and "sessionId" in obj and "toolUseID" in obj:
                score = max(score, 0.8)
        return score

    @classmethod
    def member_of(cls, head: Head) -> Path | None:
        """A file of ``summary`` lines only titles its siblings' sessions: a member of the folder. A
        subagent's ``agent-<id>.meta.json`` (2.1.x) describes the transcript beside it: its member."""
        owner = _agent_meta_owner(head.path)
        if owner is not None:
            return owner
        objects = head.objects()
        if objects and all(o.get("type") == "summary" and "leafUuid" in o for o in objects):
            return head.path.parent
        return None

    def read(self, state: SourceState) -> Iterator[Event]:
        if _agent_meta_owner(self.path) is not None:  # read through the subagent's transcript
            yield Checkpoint(str(self.path.stat().st_size), 0)
            return
        reader = _Reader(self, state)
        reader.retracted = _retracted_uuids(self.path)
        yield from said_if_empty(itertools.chain(read_jsonl(self, state, reader.handle), reader.finish()), state,
                                 "the transcript", lambda: not reader.spoken)


class _Reader:
    """Per-file reading state (sessions announced, titles, uuids seen, tool names)."""

    def __init__(self, importer: ClaudeCodeImporter, state: SourceState) -> None:
        self.importer = importer
        self.state = state
        self.spoken = False  # a line of the conversation was met (not only Claude Code's own records)
        self.tools = ToolNames(state.meta)
        self.stem = importer.default_session_id()
        self.agent_file = self.stem.startswith("agent-")
        self.announced: set[str] = set()
        self.models: dict[str, str] = {}
        self.uuids: dict[str, str] = {}  # message uuid -> session id (for summaries)
        self.summaries: dict[str, str] = {}  # leafUuid -> title, from this file
        self.titles: dict[str, tuple[int, str]] = {}  # session id -> (rank, title)
        self.ranks: dict[str, int] = dict(state.meta.get("title_rank", {}))
        self.unknown: set[str] = set()
        self.queued: set[str] = set()  # source uuids of queued prompts already stored
        # in-file sidechains (1.0.x, no agentId): message uuid -> uuid of its chain's first message
        self.chains: dict[str, str] = dict(state.meta.get("sidechain_roots", {}))
        self.progress_seen: set[str] = set()  # uuids of subagent messages read from progress lines
        self.retracted: set[str] = set()  # uuids of replies Claude Code withdrew (retractedMessageUuids)

    # -- sessions ------------------------------------------------------------------

    def session_of(self, obj: dict[str, Any]) -> tuple[str, str | None]:
        """``(session id, parent id)``: subagent lines go to the child session of their parent."""
        session_id = opt_str(obj.get("sessionId")) or self.stem
        agent_id = opt_str(obj.get("agentId"))
        if self.agent_file or (agent_id and obj.get("isSidechain") is True):
            agent = f"agent-{agent_id}" if agent_id else self.stem
            if session_id == self.stem:  # no sessionId at all: the file is all we know
                return self.stem, None
            return f"{session_id}:{agent}", session_id
        if obj.get("isSidechain") is True and opt_str(obj.get("uuid")):
            return f"{session_id}:sidechain-{self.chain_root(obj)[:8]}", session_id
        return session_id, None

    def chain_root(self, obj: dict[str, Any]) -> str:
        """The first message of the in-file sidechain ``obj`` continues (a Task subagent's
        conversation, written into the parent's file before subagent files existed)."""
        uuid = str(obj["uuid"])
        root = self.chains.get(opt_str(obj.get("parentUuid")) or "", uuid)
        self.chains[uuid] = root
        return root

    def announce(self, obj: dict[str, Any], session_id: str, parent: str | None) -> Iterator[Event]:
        if session_id in self.announced:
            return
        self.announced.add(session_id)
        meta = {k: obj[k] for k in ("gitBranch", "version", "userType") if obj.get(k)}
        if parent is not None:
            agent_id = opt_str(obj.get("agentId")) or (self.stem[len("agent-"):] if self.agent_file else None)
            if agent_id:
                meta["agentId"] = agent_id
                described = _agent_meta(self.importer.path.parent / f"agent-{agent_id}.meta.json")
                meta.update({k: described[k] for k in ("agentType", "spawnDepth") if described.get(k) is not None})
                self.title(session_id, "agent-meta", described.get("description"))
            meta["sidechain"] = True
        yield SessionRecord(id=session_id, source="claude-code", workspace=opt_str(obj.get("cwd")),
                            parent_session_id=parent, meta=meta)

    def title(self, session_id: str, kind: str, text: Any) -> None:
        title = opt_str(text)
        if not title:
            return
        rank = TITLE_RANK[kind]
        if rank >= self.titles.get(session_id, (0, ""))[0] and rank >= self.ranks.get(session_id, 0):
            self.titles[session_id] = (rank, head_chars(" ".join(title.split()), 200))

    # -- lines ---------------------------------------------------------------------

    def handle(self, obj: dict[str, Any], line: int) -> Iterator[Event]:
        kind = obj.get("type")
        if kind not in BOOKKEEPING and kind not in TITLE_RANK:
            self.spoken = True
        if kind == "summary":
            leaf = opt_str(obj.get("leafUuid"))
            if leaf and opt_str(obj.get("summary")):
                self.summaries[leaf] = str(obj["summary"])
            return
        if kind in ("custom-title", "ai-title"):
            session_id, _parent = self.session_of(obj)
            self.title(session_id, kind, obj.get("customTitle" if kind == "custom-title" else "aiTitle"))
            return
        if kind == "attachment":
            yield from self.attachment(obj, line)
            return
        if kind == "progress":
            yield from self.progress(obj, line)
            return
        if kind in BOOKKEEPING:
            return
        if kind == COLLAPSE_COMMIT:
            yield from self.collapse(obj, line)
            return
        if kind not in ("user", "assistant", "system", "tool_use", "tool_result"):
            if kind not in self.unknown:
                self.unknown.add(str(kind))
                yield Problem(line, f"unknown line type {kind!r} (skipped; later lines of this type "
                                    "are not reported)")
            return
        problems: list[Problem] = []
        session_id, parent = self.session_of(obj)
        timestamp = safe_timestamp(obj.get("timestamp"), line, problems)
        yield from self.announce(obj, session_id, parent)
        uuid = opt_str(obj.get("uuid"))
        if uuid:
            if kind == "user" and uuid in self.queued:
                return  # the queued prompt this line repeats is stored already
            self.uuids[uuid] = session_id
            if kind == "assistant" and uuid in self.retracted:
                return  # a reply withdrawn (model_refusal_fallback): never an answer
        if kind == "system":
            content = flatten_content(obj.get("content"))
            if content:
                yield MessageRecord(session_id, "system", content, timestamp=timestamp, line=line)
        elif kind == "tool_use":
            yield from _blocks([obj], "assistant", session_id, timestamp, line, self.tools, None)
        elif kind == "tool_result":
            yield from _blocks([obj], "user", session_id, timestamp, line, self.tools,
                               obj.get("toolUseResult"))
        elif not isinstance(obj.get("message"), dict):
            problems.append(Problem(line, "field 'message': missing or not an object"))
        else:
            message = obj["message"]
            model = opt_str(message.get("model"))
            if model and self.models.get(session_id) != model and not model.startswith("<"):
                self.models[session_id] = model
                yield SessionRecord(id=session_id, model=model)
            if kind == "user" and (_not_human(obj.get("origin")) or obj.get("isCompactSummary") is True
                                   or obj.get("isMeta") is True):
                # a task's notice, another session's message, the compaction summary, or text Claude
                # Code added itself (command caveats, an expanded slash command or skill)
                message = {**message, "role": "system"}
            elif kind == "assistant" and (obj.get("isApiErrorMessage") is True or model == SYNTHETIC_MODEL):
                # written in the model's place by Claude Code itself: an API error ("API Error: 529
                # Overloaded", "Please run /login"), "No response requested." after an interrupt
                message = {**message, "role": "system"}
            yield from _message_events(message, session_id, timestamp, line, self.tools,
                                       obj.get("toolUseResult"))
        yield from problems

    def collapse(self, obj: dict[str, Any], line: int) -> Iterator[Event]:
        """A ``marble-origami-commit`` line: Claude Code collapsed a span of the conversation
        (``firstArchivedUuid`` .. ``lastArchivedUuid``, still in the file) into a summary the model
        sees in its place, like a compaction summary: a ``system`` row (no time of its own)."""
        summary = opt_str(obj.get("summary")) or _COLLAPSED.sub("", opt_str(obj.get("summaryContent")) or "")
        if summary.strip():
            session_id, parent = self.session_of(obj)
            yield from self.announce(obj, session_id, parent)
            yield MessageRecord(session_id, "system", summary.strip(), line=line)

    def progress(self, obj: dict[str, Any], line: int) -> Iterator[Event]:
        """An ``agent_progress`` line (2.0.x-2.1.x) carries one message of a running subagent. The
        subagent's own file holds them all; without it (a file copied alone, a web export) these
        lines are the only copy, read into the child session the file would have made."""
        data = obj.get("data")
        if not isinstance(data, dict) or data.get("type") != "agent_progress":
            return
        inner = data.get("message")
        agent_id = opt_str(data.get("agentId")) or opt_str(obj.get("agentId"))
        session_id = opt_str(obj.get("sessionId"))
        if not (isinstance(inner, dict) and isinstance(inner.get("message"), dict) and agent_id and session_id):
            return
        uuid = opt_str(inner.get("uuid"))
        if (uuid and uuid in self.progress_seen) or self.has_agent_file(session_id, agent_id):
            return
        if uuid:
            self.progress_seen.add(uuid)
        problems: list[Problem] = []
        child = f"{session_id}:agent-{agent_id}"
        timestamp = safe_timestamp(inner.get("timestamp") or obj.get("timestamp"), line, problems)
        yield from self.announce({**obj, "agentId": agent_id}, child, session_id)
        message = inner["message"]
        model = opt_str(message.get("model"))
        if model and self.models.get(child) != model and not model.startswith("<"):
            self.models[child] = model
            yield SessionRecord(id=child, model=model)
        if not message.get("role") and inner.get("type") in ("user", "assistant"):
            message = {**message, "role": inner["type"]}
        yield from _message_events(message, child, timestamp, line, self.tools, inner.get("toolUseResult"))
        yield from problems

    def has_agent_file(self, session_id: str, agent_id: str) -> bool:
        """Whether the subagent's own transcript lies where Claude Code writes it."""
        folder = self.importer.path.parent
        name = f"agent-{agent_id}.jsonl"
        return (folder / session_id / "subagents" / name).is_file() or (folder / name).is_file()

    def attachment(self, obj: dict[str, Any], line: int) -> Iterator[Event]:
        """A ``queued_command`` attachment (a prompt typed mid-turn, stored nowhere else), or a hook's
        words the model or the user was shown (:data:`HOOK_TEXTS`), a ``system`` row."""
        attached = obj.get("attachment")
        if not isinstance(attached, dict):
            return
        hook = HOOK_TEXTS.get(str(attached.get("type")))
        if hook is not None:
            text = hook(attached)
            if text.strip():
                problems: list[Problem] = []
                session_id, parent = self.session_of(obj)
                yield from self.announce(obj, session_id, parent)
                name = opt_str(attached.get("hookName")) or opt_str(attached.get("hookEvent")) or "hook"
                what = str(attached["type"]).removeprefix("hook_").replace("_", " ")
                yield MessageRecord(session_id, "system", f"[{name} hook {what}] {text.strip()}",
                                    timestamp=safe_timestamp(obj.get("timestamp"), line, problems), line=line)
                yield from problems
            return
        if attached.get("type") != "queued_command":
            return
        text = flatten_content(attached.get("prompt"))
        source = opt_str(attached.get("source_uuid"))
        if not text.strip() or (source and source in self.uuids):
            return  # empty, or the user line it repeats was read first
        problems: list[Problem] = []
        session_id, parent = self.session_of(obj)
        timestamp = safe_timestamp(obj.get("timestamp"), line, problems)
        yield from self.announce(obj, session_id, parent)
        if source:
            self.queued.add(source)
        uuid = opt_str(obj.get("uuid"))
        if uuid:
            self.uuids[uuid] = session_id
        human = not (_not_human(attached.get("origin")) or attached.get("isMeta") is True
                     or attached.get("commandMode") in ("task-notification", "task_notification"))
        yield MessageRecord(session_id, "user" if human else "system", text, timestamp=timestamp, line=line)
        yield from problems

    def finish(self) -> Iterator[Event]:
        """Titles, once the whole file is read: summaries resolve through their leaf message."""
        leaves = dict(_sibling_summaries(self.importer.path))
        leaves.update(self.summaries)
        for uuid, session_id in self.uuids.items():
            if uuid in leaves:
                self.title(session_id, "summary", leaves[uuid])
        for session_id, (rank, title) in self.titles.items():
            self.ranks[session_id] = rank
            yield SessionRecord(id=session_id, title=title)
        if self.ranks:
            self.state.meta["title_rank"] = self.ranks
        if self.chains:  # the latest sidechain messages, so an appended line finds its chain
            self.state.meta["sidechain_roots"] = dict(list(self.chains.items())[-MAX_CHAIN_LINKS:])


RETRACTED_KEY = b'"retractedMessageUuids"'


def _retracted_uuids(path: Path) -> set[str]:
    """The uuids every ``retractedMessageUuids`` list of the file names (its lines holding the
    key, found without reading the others into Python; a line that is no JSON object is left to
    the reading, which reports it)."""
    found: set[str] = set()
    try:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            at = data.find(RETRACTED_KEY)
            while at >= 0:
                start, end = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at)
                end = len(data) if end < 0 else end
                try:
                    obj = json.loads(data[start:end])
                except ValueError:
                    obj = None
                uuids = obj.get("retractedMessageUuids") if isinstance(obj, dict) else None
                if isinstance(uuids, list):
                    found.update(u for u in uuids if isinstance(u, str))
                at = data.find(RETRACTED_KEY, end)
    except (OSError, ValueError):  # unreadable or empty (mmap refuses 0 bytes): nothing retracted
        return found
    return found


def _agent_meta_owner(path: Path) -> Path | None:
    """The subagent transcript ``agent-<id>.jsonl`` an ``agent-<id>.meta.json`` beside it describes
    (in a ``subagents`` folder, also before the transcript is written)."""
    match = _AGENT_META.match(path.name)
    if match is None:
        return None
    owner = path.with_name(f"agent-{match.group(1)}.jsonl")
    return owner if owner.is_file() or path.parent.name == "subagents" else None


def _agent_meta(path: Path) -> dict[str, Any]:
    """A subagent's ``agent-<id>.meta.json`` (``{agentType, description, spawnDepth}``), or ``{}``."""
    try:
        if path.stat().st_size > SUMMARY_PROBE_BYTES:
            return {}
        value = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _hook_lines(value: Any) -> str:
    """A hook's text: a string, or a list of strings (``hook_additional_context``'s ``content``)."""
    if isinstance(value, list):
        return "\n".join(str(v) for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _blocking(attached: dict[str, Any]) -> str:
    """A blocking hook error's text, except a Stop hook's (its feedback follows as an ``isMeta``
    user line, stored already)."""
    if attached.get("hookEvent") in ("Stop", "SubagentStop"):
        return ""
    error = attached.get("blockingError")
    return _hook_lines(error.get("blockingError") if isinstance(error, dict) else error)


# attachment type -> the words a hook put before the model or the user (Claude Code renders these
# into the model's context as system reminders, or shows them; other hook results are bookkeeping)
HOOK_TEXTS: dict[str, Callable[[dict[str, Any]], str]] = {
    "hook_additional_context": lambda a: _hook_lines(a.get("content")),
    "hook_system_message": lambda a: _hook_lines(a.get("content")),
    "hook_stopped_continuation": lambda a: _hook_lines(a.get("message")),
    "hook_blocking_error": _blocking,
    "hook_success": lambda a: _hook_lines(a.get("content")) if a.get("hookEvent") in (
        "SessionStart", "UserPromptSubmit", "UserPromptExpansion") else "",
}


def _not_human(origin: Any) -> bool:
    """An ``origin`` (2.1.x) naming a sender other than the person at the keyboard."""
    return isinstance(origin, dict) and origin.get("kind") in NOT_HUMAN


def _message_events(message: dict[str, Any], session_id: str, timestamp: float | None, line: int,
                    tools: ToolNames, use_result: Any) -> Iterator[Event]:
    role = opt_str(message.get("role")) or "user"
    content = message.get("content")
    if isinstance(content, str) or content is None:
        if content:
            yield MessageRecord(session_id, role, content, timestamp=timestamp, line=line)
        return
    if not isinstance(content, list):
        yield Problem(line, "field 'message.content': expected a string or a list of blocks")
        return
    yield from _blocks(content, role, session_id, timestamp, line, tools, use_result)


def _blocks(content: list[Any], role: str, session_id: str, timestamp: float | None, line: int,
            tools: ToolNames, use_result: Any) -> Iterator[Event]:
    """Anthropic content blocks: text (+ tool calls) as one row, thinking and results as their own."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    after: list[MessageRecord] = []
    notes: list[MessageRecord] = []  # blocks that are no one's words (a model fallback)
    for block in content:
        if not isinstance(block, dict):
            texts.append(flatten_content(block))
            continue
        kind = block.get("type")
        notice = notice_text(block)
        if notice is not None:
            notes.append(MessageRecord(session_id, "system", notice, timestamp=timestamp, line=line))
        elif kind in TEXT_BLOCKS:
            texts.append(str(block.get(TEXT_BLOCKS[kind]) or ""))
        elif kind == "tool_use" or kind in SERVER_CALLS:
            calls.append({"id": block.get("id"), "type": "function",
                          "function": {"name": block.get("name"),
                                       "arguments": json_text(block.get("input") or {}) or "{}"}})
        elif is_result_block(kind):  # a tool's result, or a server tool's (web search, advisor, ...)
            call_id = opt_str(block.get("tool_use_id"))
            text = result_text(kind, block.get("content"))
            if not text and use_result is not None:
                text = _use_result_text(use_result)
            after.append(MessageRecord(session_id, "tool", text, tool_name=tools.lookup(call_id),
                                       tool_call_id=call_id, timestamp=timestamp, line=line))
        elif kind == "thinking":
            thought = str(block.get("thinking") or "")
            if thought.strip():
                after.insert(0, MessageRecord(session_id, "reasoning", thought,
                                              timestamp=timestamp, line=line))
        elif kind == "redacted_thinking":
            continue  # encrypted: no text to index
        else:
            texts.append(f"[{kind}]" if kind else "")
    text = "\n".join(t for t in texts if t)
    reasoning = [r for r in after if r.role == "reasoning"]
    yield from reasoning
    yield from notes
    if calls:
        tools.remember(calls)
    results = [r for r in after if r.role != "reasoning"]
    for record in results:
        if record.tool_name is None:
            record.tool_name = tools.lookup(record.tool_call_id)
    if role == "user":
        yield from results  # a user turn's results answer the calls before it; its words follow them
    if text or calls:
        yield MessageRecord(session_id, role, text,
                            tool_calls=json.dumps(calls, ensure_ascii=False) if calls else None,
                            timestamp=timestamp, line=line)
    if role != "user":
        yield from results  # a server tool's results follow the calls of the same message


def _use_result_text(value: Any) -> str:
    """Text of a structured ``toolUseResult`` (stdout/stderr, file content, or JSON)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        parts = [str(value[k]) for k in ("stdout", "stderr", "content", "output") if value.get(k)]
        if isinstance(value.get("file"), dict) and value["file"].get("content"):
            parts.append(str(value["file"]["content"]))
        if parts:
            return "\n".join(parts)
    return json_text(value) or ""


# --------------------------------------------------------------------------- summaries of siblings

_SUMMARY_CACHE: dict[str, tuple[int, dict[str, str]]] = {}


def _sibling_summaries(path: Path) -> dict[str, str]:
    """``leafUuid -> summary`` from the heads of the ``.jsonl`` files beside ``path``.

    Claude Code writes a continued conversation's summaries at the top of a new
    file, so the head of each sibling (64 KiB) is read, once per directory state.
    """
    folder = path.parent
    try:
        stamp = folder.stat().st_mtime_ns
    except OSError:
        return {}
    key = str(folder)
    cached = _SUMMARY_CACHE.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    found: dict[str, str] = {}
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".jsonl"))[:MAX_SIBLINGS]
    except OSError:
        names = []
    for name in names:
        found.update(_head_summaries(folder / name))
    if len(_SUMMARY_CACHE) > 256:
        _SUMMARY_CACHE.clear()
    _SUMMARY_CACHE[key] = (stamp, found)
    return found


def _head_summaries(path: Path) -> dict[str, str]:
    try:
        with open(path, "rb") as handle:
            head = handle.read(SUMMARY_PROBE_BYTES)
    except OSError:
        return {}
    if b'"summary"' not in head:
        return {}
    found: dict[str, str] = {}
    for raw in head.split(b"\n"):
        if b'"summary"' not in raw:
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and obj.get("type") == "summary" and obj.get("leafUuid") and obj.get("summary"):
            found[str(obj["leafUuid"])] = str(obj["summary"])
    return found
