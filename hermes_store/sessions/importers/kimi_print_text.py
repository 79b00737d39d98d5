"""``kimi-print-text``: a saved ``kimi --print`` run in its default text output.

``kimi --print`` (``--output-format text``, the default; MoonshotAI/kimi-cli
``src/kimi_cli/ui/print/visualize.py``, ``TextPrinter``) prints every wire message of the
run with ``rich.print``: the Python repr of each pydantic object, one after another, pretty
printed by rich at the console width (80 columns when the output is a file)::

    TurnBegin(user_input='count the lines')
    StepBegin(n=1)
    ThinkPart(
        type='think',
        think='The user wants line counts. I will run wc -l over the python files in
    src and sort the output ',
        encrypted=None
    )
    ToolCall(type='function', id='tool_1', function=FunctionBody(name='Shell', arguments='{}'), extras=None)
    ToolResult(tool_call_id='tool_1', return_value=ToolOk(is_error=False, output='...', ...))
    TurnEnd()

    To resume this session: kimi -r 1f0c...

A repr that does not fit on one line is expanded (one field a line, indented); a string
literal longer than the line is wrapped by rich at a word boundary (the space kept at the
line's end, or dropped when the line is full) or folded inside a word. Each object is
re-joined (a wrap inside a string is undone, a dropped space put back: the line is as wide as
the widest line of the file and holds a space; a run of spaces cut there comes back as one), parsed with :mod:`ast` as a literal
expression (never evaluated) and handed, as the ``{type, payload}`` envelope Kimi CLI's own
``wire.jsonl`` holds, to that log's reader (:class:`~.kimi_cli_wire.CliWireReader`):
the prompt (``TurnBegin`` / ``SteerInput``), the reply (``TextPart``), thinking
(``ThinkPart``), calls (``ToolCall``, with ``ToolCallPart`` pieces joined to it) and their
results (``ToolResult``), subagents (``SubagentEvent``) and notifications. Parts printed in
pieces are joined as the JSON printer joins them. The resume hint (stderr, saved with
``2>&1``) names the session; without it the session is named after the file. The output has
no times (a notification's ``created_at`` aside). Another line between objects (a log line,
an error message) is reported with its number and skipped.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    Problem,
    SessionRecord,
    SourceState,
    head_chars,
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import ReplacedWhenChanged, load_text, shape_guarded
from hermes_store.sessions.importers.kimi_cli import KimiCliImporter
from hermes_store.sessions.importers.kimi_cli_wire import CliWireReader
from hermes_store.tokens import display_width

MAX_FILE_BYTES = 256 * 1024 * 1024
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_START = re.compile(r"^([A-Z][A-Za-z]*)\(")
_RESUME = re.compile(r"^To resume this session: kimi -r (\S+)\s*$")
# the wire messages a run prints first (the sniff wants one of them on the first line)
_OPENERS = ("TurnBegin", "StepBegin", "TextPart", "ThinkPart", "ToolCall", "SteerInput", "Notification")
_FOLLOWERS = (*_OPENERS, "TurnEnd", "ToolResult", "StatusUpdate", "StepInterrupted")
_QUIET = {"StepRetry", "BtwBegin", "BtwEnd"}  # printed, nothing of the conversation in them


class _Obj(dict[str, Any]):
    """The fields of one printed pydantic object, and its class name."""

    def __init__(self, cls: str, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self.cls = cls


def _value(node: ast.AST) -> Any:
    """A repr's literal value: constants, containers, objects as :class:`_Obj` (anything else
    as its source text)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_value(item) for item in node.elts]
    if isinstance(node, ast.Dict) and all(key is not None for key in node.keys):
        pairs = [(_value(key), _value(item)) for key, item in zip(node.keys, node.values, strict=True)]  # type: ignore[arg-type]
        return {key if isinstance(key, (str, int, float, bool)) or key is None else str(key): item
                for key, item in pairs}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)):
        return -node.operand.value
    if isinstance(node, ast.Call) and not node.args and all(k.arg for k in node.keywords):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        return _Obj(name, {str(k.arg): _value(k.value) for k in node.keywords})
    return ast.unparse(node)


def _envelope(obj: _Obj) -> dict[str, Any]:
    """The ``{type, payload}`` envelope of a wire message (a subagent's event nested the same way)."""
    payload = {key: _envelope(value) if key == "event" and isinstance(value, _Obj) else value
               for key, value in obj.items()}
    return {"type": obj.cls, "payload": payload}


class _Scan:
    """Joins the lines of one printed object: a break inside a string literal is rich's wrap
    (removed; a space put back where a full line lost it), parentheses counted outside strings."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.parts: list[str] = []
        self.quote = ""
        self.depth = 0

    def feed(self, line: str) -> None:
        """Adds a line (after the previous one, joined as its end of line says)."""
        if self.parts:
            previous = self.parts[-1]
            if not self.quote:
                self.parts.append("\n")
            elif not previous[-1:].isspace() and display_width(previous) >= self.width \
                    and any(c.isspace() for c in previous.strip()):
                self.parts.append(" ")
        escaped = False
        for char in line:
            if self.quote:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == self.quote:
                    self.quote = ""
            elif char in "'\"":
                self.quote = char
            elif char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth -= 1
        self.parts.append(line)

    @property
    def closed(self) -> bool:
        """True once the object's parentheses are closed outside a string."""
        return not self.quote and self.depth <= 0

    def parsed(self) -> _Obj | None:
        """The object (None when its text is not a repr of fields)."""
        try:
            tree = ast.parse("".join(self.parts).strip(), mode="eval")
        except (SyntaxError, ValueError, RecursionError):
            return None
        value = _value(tree.body) if isinstance(tree.body, ast.Call) else None
        return value if isinstance(value, _Obj) else None


def printed_objects(text: str) -> Iterator[tuple[int, _Obj | None, str]]:
    """``(line, object, "")`` per printed wire message; ``(line, None, what)`` for a resume hint
    (``what`` is ``resume:<id>``) or a line that is neither (``what`` says why)."""
    lines = [_ANSI.sub("", line.rstrip("\r")) for line in text.split("\n")]
    width = max((display_width(line) for line in lines), default=0)
    scan: _Scan | None = None
    begun = 0
    for number, line in enumerate(lines, 1):
        start = _START.match(line)
        if scan is not None and start is not None and not scan.quote:  # an object left open: a new one starts
            yield begun, None, "an object not closed before the next one (skipped)"
            scan = None
        if scan is None:
            if start is None:
                hint = _RESUME.match(line.strip())
                if hint:
                    yield number, None, f"resume:{hint.group(1)}"
                elif line.strip():
                    yield number, None, f"not a printed wire message ({head_chars(line.strip(), 60)!r}; skipped)"
                continue
            scan, begun = _Scan(width), number
        scan.feed(line)
        if scan.closed:
            obj = scan.parsed()
            yield (begun, obj, "") if obj is not None else (begun, None, "not a printed object of fields (skipped)")
            scan = None
    if scan is not None:
        yield begun, None, "an object cut off at the end of the file (skipped)"


def _merged(objects: list[tuple[int, _Obj]]) -> list[tuple[int, _Obj]]:
    """Parts printed in pieces joined as the JSON printer joins them: consecutive ``TextPart`` /
    ``ThinkPart`` (not encrypted) texts, and ``ToolCallPart`` arguments onto the call before."""
    out: list[tuple[int, _Obj]] = []
    for line, obj in objects:
        last = out[-1][1] if out else None
        if last is not None and obj.cls == last.cls == "TextPart":
            last["text"] = f"{last.get('text') or ''}{obj.get('text') or ''}"
        elif last is not None and obj.cls == last.cls == "ThinkPart" and not last.get("encrypted"):
            last["think"] = f"{last.get('think') or ''}{obj.get('think') or ''}"
            if obj.get("encrypted"):
                last["encrypted"] = obj["encrypted"]
        elif obj.cls == "ToolCallPart":
            calls = [o for _, o in out if o.cls == "ToolCall"]
            function = calls[-1].get("function") if calls else None
            if isinstance(function, dict):
                function["arguments"] = f"{function.get('arguments') or ''}{obj.get('arguments_part') or ''}"
        else:
            out.append((line, obj))
    return out


class KimiPrintTextImporter(ReplacedWhenChanged, Importer):
    """A saved ``kimi --print`` run in its text output (the printed wire messages)."""

    name = "kimi-print-text"
    agent = "Kimi CLI (kimi --print, text output)"
    indexes = "the prompt, replies, think parts, tool calls with arguments and their results, notifications"
    source: str | None = KimiCliImporter.source
    resumable_by_offset = False
    snapshot = True
    derives_end_time = False

    @classmethod
    def sniff(cls, head: Head) -> float:
        """The first line is the repr of a wire message a run opens with, and a second printed
        wire message (or the resume hint) follows."""
        if head.is_sqlite:
            return 0.0
        lines = [_ANSI.sub("", line) for line in head.text().splitlines() if line.strip()]
        first = _START.match(lines[0]) if lines else None
        if first is None or first.group(1) not in _OPENERS:
            return 0.0
        later = (_START.match(line) for line in lines[1:64])
        if any(found and found.group(1) in _FOLLOWERS for found in later):
            return 0.9
        return 0.9 if any(_RESUME.match(line.strip()) for line in lines[1:]) else 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        loaded = load_text(self, problems, MAX_FILE_BYTES, "file")
        yield from problems
        if loaded is None:
            return
        text, size = loaded
        session_id = self.default_session_id()
        objects: list[tuple[int, _Obj]] = []
        for line, obj, what in printed_objects(text):
            if obj is not None:
                objects.append((line, obj))
            elif what.startswith("resume:"):
                session_id = what.split(":", 1)[1]
            else:
                yield Problem(line, what)
        yield SessionRecord(id=session_id, source=self.source, meta={"output": "text"})
        reader = CliWireReader(session_id, self.source)
        for line, obj in _merged(objects):
            if obj.cls in _QUIET:
                continue
            stamp = None
            if obj.cls == "Notification" and isinstance(obj.get("created_at"), (int, float)):
                try:
                    stamp = parse_timestamp(obj["created_at"])
                except ValueError as exc:  # NaN, or outside the years 1 to 9999
                    yield Problem(line, f"field 'created_at': {exc}")
            yield from reader.message(_envelope(obj), stamp, line)
        yield Checkpoint(str(size), text.count("\n"))
