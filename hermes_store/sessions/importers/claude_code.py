"""``claude-code``: Claude Code transcripts ``~/.claude/projects/<project>/<session>.jsonl``.

Each line has a ``type``: ``user``/``assistant`` lines carry ``message.role``
and ``message.content`` (a string or blocks: ``text``, ``tool_use``,
``tool_result``, ``thinking``, ``image``), plus ``sessionId``, ``timestamp``,
``cwd``, ``gitBranch``; ``summary`` lines carry a session title. Tool results
become ``tool`` rows linked by ``tool_call_id``; thinking blocks are not indexed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hermes_store.sessions.importers.base import (
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    flatten_content,
    opt_str,
    read_jsonl,
    safe_timestamp,
)
from hermes_store.sessions.importers.openai_common import ToolNames


class ClaudeCodeImporter(Importer):
    """Claude Code per-session JSONL."""

    name = "claude-code"
    agent = "Claude Code"
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
        for obj in head.objects():
            kind = obj.get("type")
            if kind in ("user", "assistant"):
                message = obj.get("message")
                if not isinstance(message, dict):
                    continue
                if "parts" in message or message.get("role") not in (None, "user", "assistant"):
                    return 0.0  # Qwen Code / Gemini-style messages share the envelope
                if "content" in message and "sessionId" in obj and "uuid" in obj:
                    score = max(score, 0.95)
            elif kind == "summary" and "leafUuid" in obj and "summary" in obj:
                score = max(score, 0.9)
            elif ((kind == "custom-title" and "customTitle" in obj)
                  or (kind == "ai-title" and "aiTitle" in obj)) and "sessionId" in obj:
                score = max(score, 0.9)
            elif kind == "file-history-snapshot" and "messageId" in obj and "snapshot" in obj:
                score = max(score, 0.9)
            elif kind == "queue-operation" and "operation" in obj and "sessionId" in obj:
                score = max(score, 0.8)
        return score

    def read(self, state: SourceState) -> Iterator[Event]:
        tools = ToolNames()
        known: dict[str, dict[str, Any]] = {}
        stem = self.default_session_id()

        def handle(obj: dict[str, Any], line: int) -> Iterator[Event]:
            problems: list[Problem] = []
            kind = obj.get("type")
            if kind == "summary":
                title = opt_str(obj.get("summary"))
                if title:
                    yield SessionRecord(id=opt_str(obj.get("sessionId")) or stem, title=title[:200])
                return
            if kind not in ("user", "assistant", "system"):
                return  # snapshots, progress and other bookkeeping lines carry no conversation
            if kind != "system" and not isinstance(obj.get("message"), dict):
                yield Problem(line, "field 'message': missing or not an object")
                return
            session_id = opt_str(obj.get("sessionId")) or stem
            timestamp = safe_timestamp(obj.get("timestamp"), line, problems)
            seen = known.get(session_id)
            if seen is None:
                seen = known[session_id] = {}
                yield SessionRecord(
                    id=session_id,
                    source="claude-code",
                    workspace=opt_str(obj.get("cwd")),
                    started_at=timestamp,
                    meta={k: obj[k] for k in ("gitBranch", "version") if obj.get(k)},
                )
            if kind == "system":
                content = opt_str(obj.get("content"))
                if content:
                    yield MessageRecord(session_id, "system", content, timestamp=timestamp, line=line)
                yield from problems
                return
            message = obj["message"]
            model = opt_str(message.get("model"))
            if model and seen.get("model") != model and not model.startswith("<"):
                seen["model"] = model
                yield SessionRecord(id=session_id, model=model)
            yield from _message_events(message, session_id, timestamp, line, tools)
            yield from problems

        yield from read_jsonl(self, state, handle)


def _message_events(
    message: dict[str, Any], session_id: str, timestamp: float | None, line: int, tools: ToolNames
) -> Iterator[Event]:
    role = opt_str(message.get("role")) or "user"
    content = message.get("content")
    if isinstance(content, str) or content is None:
        yield MessageRecord(session_id, role, content or "", timestamp=timestamp, line=line)
        return
    if not isinstance(content, list):
        yield Problem(line, "field 'message.content': expected a string or a list of blocks")
        return
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[MessageRecord] = []
    for block in content:
        if not isinstance(block, dict):
            texts.append(flatten_content(block))
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            calls.append({
                "id": block.get("id"),
                "type": "function",
                "function": {"name": block.get("name"),
                             "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False)},
            })
        elif kind == "tool_result":
            call_id = opt_str(block.get("tool_use_id"))
            results.append(MessageRecord(
                session_id, "tool", flatten_content(block.get("content")),
                tool_name=tools.lookup(call_id), tool_call_id=call_id,
                timestamp=timestamp, line=line))
        elif kind in ("thinking", "redacted_thinking"):
            continue
        else:
            texts.append(f"[{kind}]" if kind else "")
    text = "\n".join(t for t in texts if t)
    if calls:
        tools.remember(calls)
    if text or calls:
        yield MessageRecord(
            session_id, role, text,
            tool_calls=json.dumps(calls, ensure_ascii=False) if calls else None,
            timestamp=timestamp, line=line)
    yield from results
