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

Server tools (run by the API, not the client) write a call block, ``server_tool_use`` (or
``mcp_tool_use`` for the MCP connector), and a result block of their own type in the same
assistant message: ``web_search_tool_result``, ``web_fetch_tool_result``,
``advisor_tool_result`` (Claude Code's advisor: ``advisor_result`` text, an encrypted
``advisor_redacted_result``, or an error), ``code_execution_tool_result`` and its
``bash_`` / ``text_editor_`` kin, ``mcp_tool_result``. Any ``*_tool_result`` block is read as
the ``tool`` row answering its ``tool_use_id`` (:func:`is_result_block`, :func:`result_text`).
A ``fallback`` block (the request was retried on another model) is a ``system`` row
(:func:`notice_text`), never the assistant's words.
"""

from __future__ import annotations

from typing import Any

from hermes_store.sessions.importers.base import MessageRecord, Problem, flatten_content, opt_str
from hermes_store.sessions.importers.doc_common import dumps, tool_call
from hermes_store.sessions.importers.openai_common import ToolNames

SERVER_CALLS = frozenset({"server_tool_use", "mcp_tool_use"})  # a call the API (or its MCP connector) runs
# block type -> the key holding its words: the model's text, and its narration between a connector's calls
# (``{type: "connector_text", connector_text, signature}``)
TEXT_BLOCKS = {"text": "text", "connector_text": "connector_text"}


def notice_text(block: dict[str, Any]) -> str | None:
    """The notice a content block that is no one's words stands for, or None for any other block:
    ``fallback`` (``{from: {model}, to: {model}}``, Claude Code 2.1.19x+ when it retried a refused
    request on another model) is ``[model fallback: <from> -> <to>]``."""
    if block.get("type") != "fallback":
        return None
    models = [m.get("model") if isinstance(m, dict) else m for m in (block.get("from"), block.get("to"))]
    return f"[model fallback: {models[0] or '?'} -> {models[1] or '?'}]"


def is_result_block(kind: Any) -> bool:
    """A block answering a call: ``tool_result`` or a server tool's ``*_tool_result``."""
    return isinstance(kind, str) and kind.endswith("tool_result")


def _tool_label(kind: Any) -> str:
    """``web_search_tool_result`` -> ``web search`` (the tool a result block belongs to)."""
    base = kind[:-len("_tool_result")] if isinstance(kind, str) and kind.endswith("_tool_result") else "tool"
    return base.replace("_", " ") or "tool"


def _result_item(item: Any) -> str:
    """The readable text of one item of a result's content."""
    kind = item.get("type") if isinstance(item, dict) else None
    if kind == "web_search_result":
        return " ".join(str(item[k]) for k in ("title", "url") if item.get(k)) or "[web_search_result]"
    if kind == "tool_reference" and opt_str(item.get("tool_name")):
        return f"[tool loaded: {item['tool_name']}]"
    if isinstance(item, dict) and isinstance(item.get("tool_references"), list):  # the tool search tool's
        return "\n".join(p for p in (_result_item(ref) for ref in item["tool_references"]) if p)
    if kind == "web_fetch_result":  # {url, content: {type: document, title, source: {type: text, data}}}
        doc = item.get("content") if isinstance(item.get("content"), dict) else {}
        source = doc.get("source") if isinstance(doc.get("source"), dict) else {}
        body = source.get("data") if source.get("type") == "text" else None
        return "\n".join(str(v) for v in (item.get("url"), doc.get("title"), body) if v)
    if kind == "advisor_redacted_result" or kind == "encrypted_content":
        return ""  # encrypted: nothing readable
    if isinstance(kind, str) and kind.endswith("code_execution_result"):
        parts = [str(item[k]) for k in ("stdout", "stderr") if item.get(k)]
        code = item.get("return_code")
        if isinstance(code, int) and code != 0:
            parts.append(f"[exit {code}]")
        return "\n".join(parts) or flatten_content(item.get("content"))
    return flatten_content(item)


def result_text(kind: Any, content: Any) -> str:
    """Text of a result block's ``content``: a string or items (web search hits as ``title url``,
    ToolSearch's ``tool_reference`` by the tool it loaded, a fetched page as its URL, title and
    text, an advisor's advice, code execution output), an error object by its ``error_code``."""
    if isinstance(content, dict):
        error = content.get("type")
        if isinstance(error, str) and error.endswith("_error"):
            return f"[{_tool_label(kind)} error: {content.get('error_code')}]"
        return _result_item(content)
    if isinstance(content, list):
        return "\n".join(p for p in (_result_item(item) for item in content) if p)
    return flatten_content(content)


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
        if kind in TEXT_BLOCKS:
            texts.append(str(block.get(TEXT_BLOCKS[kind]) or ""))
        elif kind in ("thinking", "reasoning"):
            thought = block.get("thinking") if kind == "thinking" else block.get("text")
            if isinstance(thought, str) and thought.strip():
                rows.append(MessageRecord(session_id, "reasoning", thought, timestamp=stamp))
        elif kind in ("redacted_thinking", "thoughtSignature"):
            continue  # encrypted / an opaque signature, nothing readable
        elif kind == "tool_use" or kind in SERVER_CALLS:
            calls.append(tool_call(block.get("id"), block.get("name"), block.get("input") or {}))
        elif is_result_block(kind):
            call_id = opt_str(block.get("tool_use_id"))
            results.append(MessageRecord(session_id, "tool", result_text(kind, block.get("content")),
                                         tool_name=tools.lookup(call_id), tool_call_id=call_id, timestamp=stamp))
        elif kind == "fallback":
            rows.append(MessageRecord(session_id, "system", notice_text(block) or "", timestamp=stamp))
        elif kind == "image":
            texts.append("[image]")
        elif kind == "document":
            texts.append("[document]")
        else:
            problems.append(Problem(None, f"{where}: unknown content block {kind!r} (skipped)"))
    if calls:
        tools.remember(calls)
    text = "\n".join(t for t in texts if t)
    if role == "user":
        rows.extend(results)  # a user turn's tool results answer the previous turn's calls
    if text or calls:
        rows.append(MessageRecord(session_id, role, text, tool_calls=dumps(calls) if calls else None,
                                  timestamp=stamp))
    if role == "assistant":
        rows.extend(results)  # a server tool's results follow the calls of the same message
    return rows
