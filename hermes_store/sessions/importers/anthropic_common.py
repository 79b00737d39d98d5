"""Rows of Anthropic ``MessageParam``-style messages (``{role, content: [blocks]}``).

Shared by the formats that store the Anthropic message shape as is (Cline /
Roo Code, Factory Droid): ``text``, ``image``, ``document``, ``thinking`` /
``reasoning`` (indexed as ``reasoning``), ``tool_use`` (tool calls) and
``tool_result`` (``tool`` rows linked by ``tool_use_id``).

Roo Code keeps thinking of non-Anthropic models outside the blocks too: a message's
``reasoning_details`` (OpenRouter's list of ``reasoning.text`` / ``reasoning.summary`` /
``reasoning.encrypted`` items; Roo then writes no reasoning block), ``reasoning_content``
(DeepSeek-style text), and reasoning items of their own in the history (``{type:
"reasoning", summary: [{text}], encrypted_content}``, no role). ``thoughtSignature``
blocks (Gemini's opaque signature) hold nothing readable.
"""

from __future__ import annotations

from typing import Any

from hermes_store.sessions.importers.base import MessageRecord, Problem, flatten_content, opt_str
from hermes_store.sessions.importers.doc_common import dumps, tool_call
from hermes_store.sessions.importers.openai_common import ToolNames


def _detail_text(details: Any) -> str:
    """The readable text of OpenRouter ``reasoning_details`` (encrypted items hold none)."""
    pieces = []
    for item in details if isinstance(details, list) else []:
        if isinstance(item, dict):
            text = item.get("text") if isinstance(item.get("text"), str) else item.get("summary")
            if isinstance(text, str) and text.strip():
                pieces.append(text)
    return "\n".join(pieces)


def _summary_text(summary: Any) -> str:
    """The text of a Responses-API reasoning ``summary`` (``[{type: "summary_text", text}]``)."""
    if isinstance(summary, str):
        return summary
    return "\n".join(str(s.get("text")) for s in summary if isinstance(s, dict) and isinstance(s.get("text"), str)
                     and s["text"].strip()) if isinstance(summary, list) else ""


def is_reasoning_item(message: Any) -> bool:
    """A reasoning item stored in the history on its own (``type: "reasoning"``, no role)."""
    return isinstance(message, dict) and message.get("type") == "reasoning" and "role" not in message


def anthropic_rows(message: dict[str, Any], session_id: str, stamp: float | None, where: str,
                   tools: ToolNames, problems: list[Problem]) -> list[MessageRecord]:
    """Rows of one Anthropic-style message: reasoning, text with tool calls, tool results."""
    role = message.get("role")
    if is_reasoning_item(message):
        thought = message.get("text") if isinstance(message.get("text"), str) and message["text"].strip() \
            else _summary_text(message.get("summary"))
        return [MessageRecord(session_id, "reasoning", thought, timestamp=stamp)] if thought.strip() else []
    if role not in ("user", "assistant"):
        problems.append(Problem(None, f"{where}: unknown role {role!r} (skipped)"))
        return []
    content = message.get("content")
    outside = _detail_text(message.get("reasoning_details"))
    if not outside and isinstance(message.get("reasoning_content"), str):
        outside = message["reasoning_content"]
    rows: list[MessageRecord] = []
    if outside.strip() and role == "assistant":
        rows.append(MessageRecord(session_id, "reasoning", outside, timestamp=stamp))
    if isinstance(content, str):
        return rows + ([MessageRecord(session_id, role, content, timestamp=stamp)] if content else [])
    if not isinstance(content, list):
        problems.append(Problem(None, f"{where}: 'content' is neither text nor a list of blocks"))
        return rows
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[MessageRecord] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind in ("thinking", "reasoning"):
            thought = block.get("thinking") if kind == "thinking" else block.get("text")
            if isinstance(thought, str) and thought.strip():
                rows.append(MessageRecord(session_id, "reasoning", thought, timestamp=stamp))
        elif kind in ("redacted_thinking", "thoughtSignature"):
            continue  # encrypted / an opaque signature, nothing readable
        elif kind == "tool_use":
            calls.append(tool_call(block.get("id"), block.get("name"), block.get("input") or {}))
        elif kind == "tool_result":
            call_id = opt_str(block.get("tool_use_id"))
            results.append(MessageRecord(session_id, "tool", flatten_content(block.get("content")),
                                         tool_name=tools.lookup(call_id), tool_call_id=call_id, timestamp=stamp))
        elif kind == "image":
            texts.append("[image]")
        elif kind == "document":
            texts.append("[document]")
        else:
            problems.append(Problem(None, f"{where}: unknown content block {kind!r} (skipped)"))
    if calls:
        tools.remember(calls)
    text = "\n".join(t for t in texts if t)
    rows.extend(results)  # a user turn's tool results answer the previous turn's calls
    if text or calls:
        rows.append(MessageRecord(session_id, role, text, tool_calls=dumps(calls) if calls else None,
                                  timestamp=stamp))
    return rows
