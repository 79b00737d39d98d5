"""Turning store rows into styled text for the screen (Rich ``Text``, never markup strings).

Stored text is neutralised first (:func:`hermes_store.cli.common.terminal_safe`: control
characters and bidi overrides shown as ``\\u<4 hex>``), then styled: a highlight is a style
span, so nothing from the store can inject an escape sequence or Textual markup.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

from hermes_store import timeutil
from hermes_store.cli.common import terminal_safe
from hermes_store.excerpts import highlight_excerpt
from hermes_store.query import QueryPlan
from hermes_store.tui.backend import SNIPPET_MARKS, message_reference

HIT_STYLE = "bold reverse"
PREVIEW_CHARS = 1200  # characters of one message shown in the preview pane
TOOL_ARGS_CHARS = 200


def safe(text: Any) -> str:
    """``text`` as a string with control characters neutralised (newlines and tabs kept)."""
    return terminal_safe("" if text is None else str(text))


def one_line(text: Any) -> str:
    """``text`` neutralised with all whitespace runs folded into single spaces."""
    return " ".join(safe(text).split())


def stamp(ts: float | None) -> str:
    """The time as all human output shows it (:func:`hermes_store.timeutil.shown_time`)."""
    return timeutil.shown_time(ts)


def highlighted(snippet: str) -> Text:
    """A snippet marked with :data:`~hermes_store.tui.backend.SNIPPET_MARKS` (the backend's
    searches) with each marked word turned into a :data:`HIT_STYLE` span."""
    open_mark, close_mark = SNIPPET_MARKS
    out = Text()
    rest = one_line(snippet)
    while rest:
        start = rest.find(open_mark)
        if start < 0:
            out.append(rest)
            break
        out.append(rest[:start])
        rest = rest[start + len(open_mark):]
        end = rest.find(close_mark)
        word, rest = (rest, "") if end < 0 else (rest[:end], rest[end + len(close_mark):])
        out.append(word, style=HIT_STYLE)
    return out


def hit_spans(text: str, query: str | QueryPlan) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of ``text`` holding a word ``query`` matches as the index
    matches it (:func:`hermes_store.excerpts.highlight_excerpt`: folded, stemmed, ``prefix*``,
    whole words): ``cafe`` finds ``café``, ``deploy*`` ``déploiement``. The excerpt's marks are
    two private-use characters the text does not hold, so nothing stored can pose as one."""
    if not text:
        return []
    pairs = (chr(code) for code in range(0xE000, 0xF8FF, 2))
    open_mark = next(a for a in pairs if a not in text and chr(ord(a) + 1) not in text)
    close_mark = chr(ord(open_mark) + 1)
    # a width three times the text's: the excerpt is the whole text, never cut or given "..."
    marked = highlight_excerpt(text, query, width=3 * len(text) + 3, open_mark=open_mark, close_mark=close_mark)
    spans: list[tuple[int, int]] = []
    at = start = 0
    for char in marked:
        if char == open_mark:
            start = at
        elif char == close_mark:
            spans.append((start, at))
        else:
            at += 1
    return spans


def terms_highlighted(text: str, query: str | QueryPlan) -> Text:
    """All of ``text`` (one line) with every word ``query`` matches in :data:`HIT_STYLE` (see
    :func:`hit_spans`), for text its index returns without marks (a fact), the way
    ``hermes-store recall`` bolds a fact."""
    return _marked(one_line(text), query)


def _marked(plain: str, query: str | QueryPlan | None) -> Text:
    """``plain`` (already neutralised) with the words ``query`` matches in :data:`HIT_STYLE`."""
    text = Text(plain)
    if query is not None:
        for lo, hi in hit_spans(plain, query):
            text.stylize(HIT_STYLE, lo, hi)
    return text


def result_text(row: dict[str, Any]) -> Text:
    """One result: ``source  title  time  role`` then the highlighted snippet (two lines)."""
    title = one_line(row.get("title")) or "(untitled)"
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(one_line(row.get("source")) or "?", style="bold cyan")
    text.append("  ")
    text.append(title, style="bold")
    text.append(f"  {stamp(row.get('timestamp'))}  {one_line(row.get('role'))}", style="dim")
    text.append("\n")
    text.append_text(highlighted(str(row.get("snippet") or "")))
    return text


def tool_call_lines(raw: Any) -> list[str]:
    """``name(arguments)`` for each tool call of a message (``tool_calls`` JSON text or list)."""
    if not raw:
        return []
    calls = raw
    if isinstance(raw, str):
        try:
            calls = json.loads(raw)
        except ValueError:
            return [one_line(raw)[:TOOL_ARGS_CHARS]]
    if isinstance(calls, dict):
        calls = [calls]
    if not isinstance(calls, list):
        return [one_line(calls)[:TOOL_ARGS_CHARS]]
    lines = []
    for call in calls:
        if not isinstance(call, dict):
            lines.append(one_line(call)[:TOOL_ARGS_CHARS])
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        name = call.get("name") or function.get("name") or call.get("type") or "tool"
        args = call.get("arguments", call.get("input", function.get("arguments", "")))
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        args = one_line(args)
        if len(args) > TOOL_ARGS_CHARS:
            args = args[:TOOL_ARGS_CHARS] + "…"
        lines.append(f"{one_line(name)}({args})")
    return lines


def message_text(message: dict[str, Any], *, hit_seq: int | None = None, query: str | QueryPlan | None = None,
                 max_chars: int | None = PREVIEW_CHARS) -> Text:
    """A message as ``[seq] ROLE:tool  time`` then its content and tool calls.

    The hit (``seq == hit_seq``) is marked; the words ``query`` matches are highlighted in
    every message's content and tool calls as the index matches them (:func:`hit_spans`);
    content longer than ``max_chars`` is cut (None: shown whole).
    """
    is_hit = hit_seq is not None and message.get("seq") == hit_seq
    head = one_line(message.get("role")).upper() or "?"
    if message.get("tool_name"):
        head += ":" + one_line(message["tool_name"])
    text = Text()
    text.append("▶ " if is_hit else "  ", style="bold yellow")
    text.append(f"[{message.get('seq')}] {head}", style="bold yellow" if is_hit else "bold")
    text.append(f"  {stamp(message.get('timestamp'))}\n", style="dim")
    body = safe(message.get("content")).strip()
    cut = ""
    if max_chars is not None and len(body) > max_chars:
        body, cut = body[:max_chars], f" … ({len(body) - max_chars} more characters: Enter shows all)"
    if body:
        text.append_text(_marked(body, query))
        text.append(cut + "\n")
    for line in tool_call_lines(message.get("tool_calls")):
        text.append("  ⚙ tool call ", style="magenta")
        text.append_text(_marked(line, query))
        text.append("\n")
    text.rstrip()
    return text


def session_header(session: dict[str, Any], row: dict[str, Any] | None, resume: str | None,
                   width: int | None = None) -> Text:
    """The top lines of a session: source, title, id, times, the hit's reference, resume command.

    The source and title take one line, cut with ``…`` to ``width`` cells when given: a long
    title (up to 300 characters) wrapped over the whole header and hid the hit's reference and
    the resume command below it."""
    text = Text()
    text.append(one_line(session.get("source")) or "?", style="bold cyan")
    text.append("  ")
    text.append(one_line(session.get("title")) or "(untitled)", style="bold")
    if width is not None:
        text.truncate(max(1, width), overflow="ellipsis")
    text.append(f"\n{one_line(session.get('id'))}  [{one_line(session.get('origin_format'))}]"
                f"  started {stamp(session.get('started_at'))}"
                f"  {session.get('message_count') or 0} messages", style="dim")
    if row is not None:
        text.append(f"\nhit: {message_reference(safe(row['session_id']), int(row['seq']))}")
    text.append(f"\nresume: {safe(resume)}" if resume else "\nresume: (no resume command for this agent)",
                style="green" if resume else "dim")
    return text
