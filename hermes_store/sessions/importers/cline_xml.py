"""Cline / Roo Code / Kilo Code API histories of the XML-tool era, as native Anthropic blocks.

Before native tool calling (Cline until late 2025, Roo Code and Kilo Code before their native
tool protocol), the model wrote its tool use as XML inside its text, one element per tool with
one element per parameter (Cline's ``parseAssistantMessageV2``, Roo Code's
``AssistantMessageParser``)::

    <thinking>I need the parser first.</thinking>
    <read_file>
    <path>cli.py</path>
    </read_file>

and the extension answered in the next user turn with a text block ``[read_file for 'cli.py']
Result:`` (``toolDescription()`` + `` Result:``) followed by the result's blocks, before the
``<environment_details>`` it appends. :class:`XmlTurns` rewrites such messages into the native
shape (``thinking``, ``text``, ``tool_use`` blocks; ``tool_result`` blocks answering the
oldest open call of their tool) so :func:`~.anthropic_common.anthropic_rows` reads both eras
alike: the thinking a ``reasoning`` row, the call with its parameters, its result a ``tool``
row. A message already in the native shape is left as it is.
"""

from __future__ import annotations

import re
from typing import Any

from hermes_store.sessions.importers.openai_common import ToolNames

# the tools of the XML era (Cline's toolUseNames, Roo Code's and Kilo Code's additions)
TOOL_NAMES = frozenset((
    "execute_command", "read_file", "write_to_file", "replace_in_file", "search_files", "list_files",
    "list_code_definition_names", "browser_action", "use_mcp_tool", "access_mcp_resource",
    "ask_followup_question", "plan_mode_respond", "plan_mode_response", "load_mcp_documentation",
    "attempt_completion", "new_task", "condense", "summarize_task", "report_bug", "new_rule", "web_fetch",
    "apply_diff", "insert_content", "search_and_replace", "switch_mode", "codebase_search",
    "fetch_instructions", "update_todo_list", "run_slash_command", "generate_image", "edit_file",
))
# parameters whose value may itself hold tags: closed at their last closing tag in the element
_RAW_PARAMS = ("content", "diff")
_TAG = re.compile(r"<([a-z_]+)>")
_THINKING = re.compile(r"<thinking>(.*?)(?:</thinking>|\Z)", re.S)
_RESULT = re.compile(r"\A\[([a-z_]+)(?: for '.*')?\] Result:\s*\Z", re.S)


class XmlTurns:
    """Rewrites one task's XML-era messages in order (calls are answered by later turns)."""

    def __init__(self, task: str, tools: ToolNames) -> None:
        self.task = task
        self.tools = tools  # names the tool of a result whose call is gone
        self.count = 0
        self.open: list[tuple[str, str]] = []  # (tool name, call id) not answered yet

    def shape(self, message: Any) -> Any:
        """The message in the native shape (unchanged when it is not an XML-era message)."""
        if not isinstance(message, dict):
            return message
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list) or any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
                                               for b in blocks):
            return message
        role = message.get("role")
        if role == "assistant" and any(_is_xml_text(b) for b in blocks):
            return {**message, "content": [out for b in blocks for out in self._assistant_block(b)]}
        if role == "user" and any(_result_name(b) for b in blocks):
            return {**message, "content": self._user_blocks(blocks)}
        return message

    def _assistant_block(self, block: Any) -> list[dict[str, Any]]:
        if not _is_xml_text(block):
            return [block]
        text = str(block["text"])
        out: list[dict[str, Any]] = [{"type": "thinking", "thinking": m.group(1).strip()}
                                     for m in _THINKING.finditer(text) if m.group(1).strip()]
        text = _THINKING.sub("", text)
        kept: list[str] = []
        calls: list[dict[str, Any]] = []
        position = 0
        for match in _TAG.finditer(text):
            name = match.group(1)
            if match.start() < position or name not in TOOL_NAMES:
                continue
            end = text.find(f"</{name}>", match.end())
            body = text[match.end(): end if end >= 0 else len(text)]
            kept.append(text[position: match.start()])
            position = len(text) if end < 0 else end + len(name) + 3
            self.count += 1
            call_id = f"{self.task}:xml-{self.count}"
            self.open.append((name, call_id))
            calls.append({"type": "tool_use", "id": call_id, "name": name, "input": _params(body)})
        kept.append(text[position:])
        words = "\n".join(part.strip() for part in kept if part.strip())
        return out + ([{"type": "text", "text": words}] if words else []) + calls

    def _user_blocks(self, blocks: list[Any]) -> list[Any]:
        out: list[Any] = []
        result: dict[str, Any] | None = None
        for block in blocks:
            name = _result_name(block)
            if name:
                result = {"type": "tool_result", "tool_use_id": self._answer(name), "content": []}
                out.append(result)
            elif result is not None and not _is_environment(block):
                result["content"].append(block)
            else:
                result = None
                out.append(block)
        return out

    def _answer(self, name: str) -> str:
        """The id of the oldest open call of ``name`` (one of its own when the call is gone: Cline
        drops old turns of a long task from the history)."""
        for index, (open_name, call_id) in enumerate(self.open):
            if open_name == name:
                del self.open[index]
                return call_id
        self.count += 1
        call_id = f"{self.task}:xml-{self.count}"
        self.tools.remember([{"id": call_id, "name": name}])
        return call_id


def _is_xml_text(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
        return False
    text = block["text"]
    return "<thinking>" in text or any(m.group(1) in TOOL_NAMES for m in _TAG.finditer(text))


def _result_name(block: Any) -> str | None:
    if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
        return None
    match = _RESULT.match(block["text"].strip())
    return match.group(1) if match and match.group(1) in TOOL_NAMES else None


def _is_environment(block: Any) -> bool:
    return isinstance(block, dict) and str(block.get("text") or "").lstrip().startswith("<environment_details>")


def _params(body: str) -> dict[str, str]:
    """``{parameter: value}`` of one tool element's body (values trimmed of the newlines around them)."""
    params: dict[str, str] = {}
    position = 0
    while True:
        match = _TAG.search(body, position)
        if match is None:
            return params
        name = match.group(1)
        closing = f"</{name}>"
        end = body.rfind(closing) if name in _RAW_PARAMS else body.find(closing, match.end())
        if end < 0:  # cut off (a partial message): the rest is its value
            params[name] = body[match.end():].strip("\n")
            return params
        params[name] = body[match.end(): end].strip("\n")
        position = end + len(closing)
