"""``amp``: Sourcegraph Amp threads, one JSON file per thread.

``~/.local/share/amp/threads/T-<uuid>.json`` (earlier, the VS Code extension's
``<User>/globalStorage/sourcegraph.amp/threads3/``): ``{v, id, created (ms),
title, agentMode, env: {initial: {cwd?, trees: [{uri, displayName}]}},
messages: [...]}``. A message is ``{role: "user" | "assistant" | "info",
messageId, content: [...], state: {type, stopReason}, usage: {model},
meta: {sentAt (ms)}}``; content blocks are Anthropic-like: ``text``,
``thinking``, ``tool_use`` (``{id, name, input}``), ``tool_result``
(``{toolUseID, run: {status, result | progress}}``), ``image``, and on ``info``
messages ``summary`` (a compaction summary) blocks: ``{type: "message", summary:
text}``, or ``{type: "thread", thread: id}`` naming the thread that holds it. A
tree's ``uri`` may be a VS Code Uri object (``fsPath`` / ``path``), not a string.
``info`` messages also carry ``manual_bash_invocation`` blocks (a command the user
ran: ``{args: {cmd}, toolRun: {status, result}, hidden}``), kept as ``bash`` tool rows
``$ cmd`` and its output; ``server_tool_use`` blocks (a provider-run tool such as web
search) are calls; a ``tool_result`` may hold its ``output`` flat instead of a ``run``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urlparse

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
    load_document,
    safe_rows,
    shape_guarded,
    tool_call,
)
from hermes_store.sessions.importers.openai_common import ToolNames

_EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _workspace(thread: dict[str, Any]) -> str | None:
    env = thread.get("env") if isinstance(thread.get("env"), dict) else {}
    initial = env.get("initial") if isinstance(env.get("initial"), dict) else {}
    if opt_str(initial.get("cwd")):
        return str(initial["cwd"])
    trees = initial.get("trees")
    for tree in trees if isinstance(trees, list) else []:
        uri = tree.get("uri") if isinstance(tree, dict) else None
        if isinstance(uri, dict):  # a VS Code Uri object rather than its string
            uri = opt_str(uri.get("fsPath")) or opt_str(uri.get("path"))
            if uri:
                return uri
        if isinstance(uri, str) and uri:
            parsed = urlparse(uri)
            return unquote(parsed.path) if parsed.scheme == "file" else uri
    return None


def _result_text(block: dict[str, Any], key: str = "run") -> str:
    run = block.get(key) if isinstance(block.get(key), dict) else {}
    if not run and block.get("output") not in (None, "", []):  # a result written flat
        run = {"result": block["output"], "status": block.get("status")}
    for key in ("result", "progress"):
        value = run.get(key)
        if value not in (None, "", []):
            if isinstance(value, dict) and isinstance(value.get("output"), str):
                return value["output"]
            return value if isinstance(value, str) else flatten_content(value) or dumps(value)
    return f"[{run.get('status') or 'no result'}]"


class AmpImporter(ReplacedWhenChanged, Importer):
    """One Amp thread file."""

    name = "amp"
    reader = 2  # manual bash, server tools, flat outputs (2026-12-06)
    agent = "Amp"
    indexes = "text, thinking, tool_use / tool_result with run status, commands the user ran, compaction summaries"
    source: str | None = "amp"
    resumable_by_offset = False
    snapshot = True
    default_locations = {
        "linux": ("~/.local/share/amp/threads/*.json",
                  *(f"~/.config/{e}/User/globalStorage/sourcegraph.amp/threads3/*.json" for e in _EDITORS)),
        "darwin": ("~/.local/share/amp/threads/*.json",
                   *(f"~/Library/Application Support/{e}/User/globalStorage/sourcegraph.amp/threads3/*.json"
                     for e in _EDITORS)),
    }

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A ``T-`` thread object with ``messages`` (or any thread object under ``threads``/``threads3``)."""
        if head.is_sqlite or head.suffix != ".json":
            return 0.0
        doc = head.document()
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            return 0.0
        if str(doc.get("id", "")).startswith("T-") and ("created" in doc or "v" in doc):
            return 0.95
        if head.path.parent.name in ("threads", "threads3") and "env" in doc:
            return 0.7
        return 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if doc is None:
            return
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            yield Problem(1, "expected a thread object with a 'messages' list")
            return
        if not doc["messages"]:  # a thread Amp opened (a new thread is saved at once) with nothing said yet
            yield Notice(None, "the thread holds no messages yet; nothing to import")
            return
        session_id = opt_str(doc.get("id")) or self.path.stem
        models = [m["usage"].get("model") for m in doc["messages"]
                  if isinstance(m, dict) and isinstance(m.get("usage"), dict) and m["usage"].get("model")]
        yield SessionRecord(id=session_id, source=self.source, title=opt_str(doc.get("title")),
                            model=opt_str(models[-1]) if models else None, workspace=_workspace(doc),
                            started_at=_stamp(doc.get("created")),
                            meta={k: doc[k] for k in ("agentMode", "v") if doc.get(k) is not None})
        tools = ToolNames()
        for index, message in enumerate(doc["messages"]):
            problems = []
            if not isinstance(message, dict):
                yield Problem(None, f"messages[{index}]: expected an object")
                continue
            where = f"messages[{index}]"
            yield from safe_rows(self._message, problems, None, where, message, session_id, where, tools, problems)
            yield from problems
        yield Checkpoint(str(self.path.stat().st_size), 0)

    @staticmethod
    def _message(message: dict[str, Any], session_id: str, where: str, tools: ToolNames,
                 problems: list[Problem]) -> Iterator[MessageRecord]:
        role = message.get("role")
        meta = message.get("meta") if isinstance(message.get("meta"), dict) else {}
        stamp = _stamp(meta.get("sentAt"))
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if role not in ("user", "assistant", "info") or not isinstance(content, list):
            problems.append(Problem(None, f"{where}: unknown role {role!r} or content (skipped)"))
            return
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[MessageRecord] = []
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                texts.append(str(block.get("text") or ""))
            elif kind == "thinking":
                if opt_str(block.get("thinking")):
                    yield MessageRecord(session_id, "reasoning", str(block["thinking"]), timestamp=stamp)
            elif kind == "tool_use":
                calls.append(tool_call(block.get("id"), block.get("name"), block.get("input") or {}))
            elif kind == "tool_result":
                call_id = opt_str(block.get("toolUseID")) or opt_str(block.get("tool_use_id"))
                results.append(MessageRecord(session_id, "tool", _result_text(block),
                                             tool_name=tools.lookup(call_id), tool_call_id=call_id, timestamp=stamp))
            elif kind == "server_tool_use":  # a tool the model provider ran (web search)
                calls.append(tool_call(block.get("id"), block.get("name"), block.get("input") or {}))
            elif kind == "manual_bash_invocation":  # a command the user ran ($ in the prompt)
                args = block.get("args") if isinstance(block.get("args"), dict) else {}
                output = _result_text(block, "toolRun")
                command = str(args.get("cmd") or "")
                shown = f"$ {command}\n{output}".rstrip() if command or output else ""
                results.append(MessageRecord(session_id, "tool", shown, tool_name="bash", timestamp=stamp))
            elif kind == "image":
                texts.append("[image]")
            elif kind == "summary":
                summary = block.get("summary") if isinstance(block.get("summary"), dict) else {}
                text = opt_str(summary.get("summary"))
                if summary.get("type") == "thread" and opt_str(summary.get("thread")):
                    text = f"[summary in thread {summary['thread']}]"  # the summary lives in that thread
                if text:
                    texts.append(text)
            elif kind not in ("redacted_thinking",):
                problems.append(Problem(None, f"{where}: unknown content block {kind!r} (skipped)"))
        if calls:
            tools.remember(calls)
        yield from results
        text = "\n".join(t for t in texts if t)
        if text or calls:
            yield MessageRecord(session_id, "system" if role == "info" else role, text,
                                tool_calls=dumps(calls) if calls else None, timestamp=stamp)
