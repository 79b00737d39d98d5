"""``pi`` and ``openclaw``: session trees of the Pi coding agent and of OpenClaw (built on Pi).

Pi: ``~/.pi/agent/sessions/--<cwd with / as ->--/<time>_<uuid>.jsonl``;
OpenClaw: ``~/.openclaw/agents/<agent>/sessions/*.jsonl``. The first line is a
header ``{type: "session", version, id, timestamp, cwd, parentSession?}`` (version 1:
no ``version``, the forked-from file in ``branchedFrom``); then
entries ``{type, id, parentId, timestamp}``: ``message`` (``message`` = ``{role:
"user" | "assistant" | "toolResult" | "bashExecution" | "custom", content,
timestamp (ms), ...}``; ``branchSummary`` / ``compactionSummary`` messages carry a
``summary``, kept as ``system`` rows; version 2 called ``custom`` ``hookMessage``), ``model_change``, ``thinking_level_change``,
``active_tools_change`` (``activeToolNames``: bookkeeping),
``compaction`` (``summary``), ``branch_summary``, ``custom`` (extension state, kept as a ``system`` row),
``custom_message``, ``label``, ``session_info`` (``name``: the title).

The pi-subagents extension keeps each subagent run twice: as a session of its own nested under
the parent's entry, ``<time>_<uuid>/<entry id>/run-<N>/session.jsonl`` (its parent the
``<uuid>`` of that folder), and as a transcript in ``subagent-artifacts/`` (read as a session
of its own, titled ``subagent-<agent>-<runId>``); the run's ``_meta.json`` and the global
``run-history.jsonl`` are left out of walks.

Entries form a tree (version 2+): navigating back and continuing starts a
branch, and the conversation is the path from the last entry to the root
(entries of abandoned branches are counted in ``meta``). Version 1 files
have no ids and are linear. Assistant content blocks are ``text``,
``thinking`` and ``toolCall`` (``{id, name, arguments}``); tool results are
``toolResult`` messages (``toolCallId``, ``toolName``, ``isError``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    MessageRecord,
    Notice,
    Problem,
    SessionRecord,
    SourceState,
    flatten_content,
    opt_str,
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    dumps,
    iter_json_lines,
    path_has_part,
    safe_rows,
    shape_guarded,
    tool_call,
)

MAX_ENTRIES = 2_000_000
# entries that carry no conversation: settings (the model, the thinking level, the tools the agent
# may use -- ``active_tools_change`` {activeToolNames}, persisted by Pi's harness), labels and the title
_BOOKKEEPING = {"model_change", "thinking_level_change", "active_tools_change", "label", "session_info"}


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _blocks(content: Any) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    """(texts, thoughts, tool calls) of Pi content blocks."""
    if isinstance(content, str):
        return [content], [], []
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "thinking":
            thoughts.append(str(block.get("thinking") or ""))
        elif kind == "toolCall":
            calls.append(tool_call(block.get("id"), block.get("name"), block.get("arguments") or {}))
        elif kind == "image":
            texts.append(f"[{block.get('mimeType') or 'image'}]")
    return texts, thoughts, calls


def entry_rows(entry: dict[str, Any], session_id: str, line: int, problems: list[Problem]) -> list[MessageRecord]:
    """Rows of one Pi / OpenClaw entry."""
    kind = entry.get("type")
    stamp = _stamp(entry.get("timestamp"))
    if kind in ("compaction", "branch_summary"):
        summary = opt_str(entry.get("summary"))
        return [MessageRecord(session_id, "system", summary, timestamp=stamp, line=line)] if summary else []
    if kind == "custom":  # an extension's entry: kept, named by its customType, its data as JSON
        data = entry.get("data")
        text = data if isinstance(data, str) else (dumps(data) if data not in (None, {}, []) else "")
        if not text:
            return []  # an entry without data carries nothing
        label = opt_str(entry.get("customType")) or "custom"
        return [MessageRecord(session_id, "system", f"[{label}] {text}", timestamp=stamp, line=line)]
    if kind == "custom_message":
        text = flatten_content(entry.get("content"))
        return [MessageRecord(session_id, "user", text, timestamp=stamp, line=line)] if text else []
    if kind != "message":
        if kind not in _BOOKKEEPING:
            problems.append(Problem(line, f"unknown entry type {kind!r} (skipped)"))
        return []
    message = entry.get("message")
    if not isinstance(message, dict):
        problems.append(Problem(line, "field 'message': missing or not an object"))
        return []
    role = message.get("role")
    stamp = _stamp(message.get("timestamp")) or stamp
    texts, thoughts, calls = _blocks(message.get("content"))
    text = "\n".join(t for t in texts if t)
    if role == "toolResult":
        return [MessageRecord(session_id, "tool", text, tool_name=opt_str(message.get("toolName")),
                              tool_call_id=opt_str(message.get("toolCallId")), timestamp=stamp, line=line)]
    if role == "bashExecution":
        command, result = str(message.get("command") or ""), str(message.get("output") or "")
        output = f"$ {command}\n{result}".rstrip() if command or result else ""
        return [MessageRecord(session_id, "tool", output, tool_name="bash", timestamp=stamp, line=line)]
    if role == "hookMessage":
        role = "custom"  # version 2 name of an extension's message (Pi renamed it in version 3)
    if role in ("branchSummary", "compactionSummary"):
        summary = opt_str(message.get("summary")) or text
        return [MessageRecord(session_id, "system", summary, timestamp=stamp, line=line)] if summary else []
    if role not in ("user", "assistant", "custom"):
        problems.append(Problem(line, f"unknown message role {role!r} (kept as system)"))
        summary = text or opt_str(message.get("summary")) or ""
        return [MessageRecord(session_id, "system", summary, timestamp=stamp, line=line)] if summary else []
    rows = [MessageRecord(session_id, "reasoning", t, timestamp=stamp, line=line) for t in thoughts if t.strip()]
    if role == "assistant" and not text and opt_str(message.get("errorMessage")):
        text = f"[error] {message['errorMessage']}"
    if text or calls:
        rows.append(MessageRecord(session_id, "user" if role == "custom" else role, text,
                                  tool_calls=dumps(calls) if calls else None, timestamp=stamp, line=line))
    return rows


class PiImporter(ReplacedWhenChanged, Importer):
    """A Pi coding-agent session file."""

    name = "pi"
    reader = 3  # 2: v1 and v2 roles (2026-12-06); 3: a subagent run's parent (2026-12-07)
    agent = "Pi (coding agent)"
    indexes = "the active branch of the entry tree, tool calls and results, summaries, titles"
    source: str | None = "pi"
    resumable_by_offset = False  # a branch changes which entries form the conversation
    snapshot = True
    # main sessions; the sessions of subagent runs (the pi-subagents extension) nested under their
    # parent's entry, ``<time>_<uuid>/<entry id>/run-<N>/session.jsonl``; its run transcripts
    default_locations = {"linux": ("~/.pi/agent/sessions/*/*.jsonl", "~/.pi/agent/sessions/*/*/*/run-*/session.jsonl",
                                   "~/.pi/agent/sessions/*/subagent-artifacts/*_transcript.jsonl"),
                         "darwin": ("~/.pi/agent/sessions/*/*.jsonl", "~/.pi/agent/sessions/*/*/*/run-*/session.jsonl",
                                    "~/.pi/agent/sessions/*/subagent-artifacts/*_transcript.jsonl")}
    # a run's task brief, result and metadata beside its transcript, and the global run log (task hashes)
    walk_skipped = (".pi/agent/sessions/*/subagent-artifacts/*_meta.json", ".pi/agent/run-history.jsonl")
    home_dir = ".openclaw"  # files under it belong to OpenClaw, not Pi

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A ``{type: "session", id, cwd}`` header followed by ``message`` entries, or a subagent
        run's transcript (``{recordType: "message", runId, agent, message}`` records)."""
        if head.is_sqlite or path_has_part(head.path, cls.home_dir):
            return 0.0
        objects = head.objects()
        if objects and all(isinstance(o.get("recordType"), str) and "runId" in o for o in objects):
            return 0.9 if path_has_part(head.path, "subagent-artifacts") else 0.7
        return _header_confidence(head)

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        first = next((obj for _line, obj, _problem in iter_json_lines(self.path) if isinstance(obj, dict)), {})
        if "recordType" in first and "runId" in first:
            yield from self._read_run_transcript()
            return
        entries: dict[str, tuple[int, dict[str, Any]]] = {}
        header: dict[str, Any] = {}
        last: str | None = None
        for line, obj, problem in iter_json_lines(self.path, self.hasher):
            if problem is not None:
                yield problem
                continue
            if not isinstance(obj, dict):
                yield Problem(line, "expected a JSON object")
                continue
            if obj.get("type") == "session" and not header:
                header = obj
                continue
            if len(entries) >= MAX_ENTRIES:
                yield Problem(line, f"more than {MAX_ENTRIES} entries: the rest is not imported")
                break
            key = opt_str(obj.get("id")) or f"#line{line}"  # version 1: no ids, linear
            if "parentId" not in obj and last is not None:
                obj = {**obj, "parentId": last}
            entries[key] = (line, obj)
            last = key
        if header and not entries:  # the session header alone: a session begun and left before its first prompt
            yield Notice(None, "the session holds no entries yet; nothing to import")
            return
        session_id = opt_str(header.get("id")) or self.path.stem
        path = _active_path(entries, last)
        on_path = set(path)
        abandoned = sum(1 for k, (_, e) in entries.items() if k not in on_path and e.get("type") == "message")
        title = model = None
        for key in path:
            entry = entries[key][1]
            if entry.get("type") == "session_info" and opt_str(entry.get("name")):
                title = str(entry["name"])
            elif entry.get("type") == "model_change" and opt_str(entry.get("modelId")):
                model = str(entry["modelId"])
            elif entry.get("type") == "message" and isinstance(entry.get("message"), dict) \
                    and entry["message"].get("role") == "assistant" and opt_str(entry["message"].get("model")):
                model = str(entry["message"]["model"])
        # ``branchedFrom``: version 1 headers named the session a branch was made from there
        parent = opt_str(header.get("parentSession")) or opt_str(header.get("branchedFrom"))
        if parent:
            parent = Path(parent).stem.rpartition("_")[2] or parent
        run = self.path.parent
        if not parent and self.path.name == "session.jsonl" and run.name.startswith("run-") \
                and "_" in run.parent.parent.name:  # a subagent run's session: <time>_<uuid>/<entry>/run-<N>/
            parent = run.parent.parent.name.rpartition("_")[2]
        meta: dict[str, Any] = {k: header[k] for k in ("version",) if header.get(k) is not None}
        if abandoned:
            meta["abandoned_branch_entries"] = abandoned
        if self.path.parent.parent.name and self.source == "openclaw":
            meta["agent"] = self.path.parent.parent.name
        yield SessionRecord(id=session_id, source=self.source, title=title, model=model,
                            workspace=opt_str(header.get("cwd")), started_at=_stamp(header.get("timestamp")),
                            parent_session_id=parent, meta=meta)
        for key in path:
            line, entry = entries[key]
            problems: list[Problem] = []
            yield from safe_rows(entry_rows, problems, line, f"line {line}", entry, session_id, line, problems)
            yield from problems
        yield Checkpoint(str(self.path.stat().st_size), 0)

    def _read_run_transcript(self) -> Iterator[Event]:
        """A subagent run's transcript (the pi-subagents extension,
        ``subagent-artifacts/<runId>_<agent>[_<child>]_transcript.jsonl``): records ``{recordType,
        runId, agent, childIndex, cwd, ts, timestamp, role, message}`` whose ``message`` is a Pi
        message; one session titled as Pi names the run's own session (``subagent-<agent>-<runId>[-<n>]``)."""
        session_id = self.path.stem
        started = False
        for line, obj, problem in iter_json_lines(self.path, self.hasher):
            if problem is not None:
                yield problem
                continue
            if not isinstance(obj, dict) or obj.get("recordType") != "message":
                continue  # the run's other records carry no message
            if not started:
                started = True
                name = "-".join(str(obj[k]) for k in ("agent", "runId", "childIndex") if obj.get(k) not in (None, ""))
                yield SessionRecord(id=session_id, source=self.source, title=f"subagent-{name}",
                                    workspace=opt_str(obj.get("cwd")), started_at=_stamp(obj.get("timestamp")),
                                    meta={"subagent": True, "run_id": obj.get("runId"), "agent": obj.get("agent")})
            problems: list[Problem] = []
            entry = {"type": "message", "timestamp": obj.get("timestamp"), "message": obj.get("message")}
            yield from safe_rows(entry_rows, problems, line, f"line {line}", entry, session_id, line, problems)
            yield from problems
        yield Checkpoint(str(self.path.stat().st_size), 0)


class OpenClawImporter(PiImporter):
    """An OpenClaw agent session file (Pi's format under ``~/.openclaw``)."""

    name = "openclaw"
    agent = "OpenClaw"
    indexes = "Pi's session format, per OpenClaw agent"
    source: str | None = "openclaw"
    default_locations = {"linux": ("~/.openclaw/agents/*/sessions/*.jsonl",),
                         "darwin": ("~/.openclaw/agents/*/sessions/*.jsonl",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """Pi's session header, in a file under ``.openclaw``."""
        if head.is_sqlite or not path_has_part(head.path, ".openclaw"):
            return 0.0
        return _header_confidence(head)


def _header_confidence(head: Head) -> float:
    objects = head.objects()
    if not objects:
        return 0.0
    first = objects[0]
    if first.get("type") == "session" and isinstance(first.get("id"), str) and "cwd" in first:
        return 0.95
    return 0.0


def _active_path(entries: dict[str, tuple[int, dict[str, Any]]], leaf: str | None) -> list[str]:
    """Entry keys from the root to ``leaf`` along ``parentId`` (all entries if the chain breaks)."""
    path: list[str] = []
    seen: set[str] = set()
    key = leaf
    while key is not None and key in entries and key not in seen:
        seen.add(key)
        path.append(key)
        parent = entries[key][1].get("parentId")
        key = parent if isinstance(parent, str) else None
    if key is not None and key not in entries:
        return list(entries)  # a parent missing from the file: keep everything in file order
    path.reverse()
    return path
