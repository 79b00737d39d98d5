"""Memory-context fencing: wrap recalled memory so the model never mistakes it for user input.

``build_memory_context_block`` wraps provider output in a ``<memory-context>`` fence with
the Hermes system note; ``sanitize_context`` strips any fence a provider (or an attacker
writing into memory) already put in the text, so fences can never nest or be forged;
``StreamingContextScrubber`` removes fenced spans from streamed model output even when a
tag is split across chunks.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator

# The tags, notes and sanitiser live in the lowest layer so every store's tool output
# (session snippets included) goes through the very same sanitiser; re-exported here.
from hermes_store.tooling import (  # noqa: F401 - public names of this module
    CLOSE_TAG,
    LEGACY_SYSTEM_NOTE,
    OPEN_TAG,
    SYSTEM_NOTE,
    sanitize_context,
)

logger = logging.getLogger(__name__)

PREWRAPPED_WARNING = "memory provider returned pre-wrapped context; stripped"

# A Markdown bullet at column 0: a marker, whitespace, then content (the whitespace keeps
# ``**Heading**`` and ``*emphasis*`` out). Numbered items are left as written.
_BULLET = re.compile(r"[-*+]\s+\S")


def _drop_repeated_bullets(text: str) -> str:
    """Drop a bullet line that exactly repeats an earlier self-contained bullet of its section.

    Hermes' rule (``_drop_repeated_recall_lines``): a section starts at any non-blank line at
    column 0 that is not a bullet (a heading of any style, a bold label, a rule, prose). An
    indented line belongs to the bullet above it and is never dropped; a bullet followed by
    one is not self-contained, so it is always kept and never hides a later one (two entries
    may share a headline and differ in what is indented under it).
    """
    lines = text.split("\n")
    seen: set[str] = set()
    out: list[str] = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped and line[0].isspace():
            out.append(line)
            continue
        if not _BULLET.match(stripped):
            if stripped:
                seen = set()
            out.append(line)
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if not (following.strip() and following[0].isspace()):
            if stripped in seen:
                continue
            seen.add(stripped)
        out.append(line)
    return "\n".join(out)


def build_memory_context_block(raw: str | None) -> str:
    """Wrap recalled memory in the ``<memory-context>`` fence ("" for empty input).

    Pre-wrapped input is sanitised first (with a warning) so a provider can never nest or
    close the fence early; exact repeated bullet lines within a section are dropped.
    """
    if raw is None or not str(raw).strip():
        return ""
    raw = str(raw)
    clean = sanitize_context(raw)
    if clean != raw:
        logger.warning(PREWRAPPED_WARNING)
    clean = _drop_repeated_bullets(clean)  # kept as written (Hermes: f"{clean}\n"), not stripped
    if not clean.strip():  # ours: nothing left once the fence syntax is gone, no empty fence
        return ""
    return f"{OPEN_TAG}\n{SYSTEM_NOTE}\n\n{clean}\n{CLOSE_TAG}"


def inject_memory_context(user_content: str, raw: str | None) -> str:
    """Return ``user_content`` with the fenced block appended (``content + "\\n\\n" + block``)."""
    block = build_memory_context_block(raw)
    if not block:
        return user_content
    return f"{user_content}\n\n{block}"


# ---------------------------------------------------------------------------------------------
# Streaming scrubber


def _tag_prefix_state(text: str, closing: bool, need_newline: bool) -> str:
    """Classify ``text`` against a fence tag: ``"full"``, ``"partial"`` (could still become
    one with more input) or ``"no"``. ``need_newline`` requires a ``\\r``/``\\n`` after ``>``."""
    i, n = 0, len(text)
    # opening tags: '<', blanks, word, blanks, '>', line break; closing: '</', any space, word, any space, '>'
    blank = (lambda c: c.isspace()) if closing else (lambda c: c in " \t")
    expected = ["<", "/"] if closing else ["<"]
    for ch in expected:
        if i >= n:
            return "partial"
        if text[i] != ch:
            return "no"
        i += 1
    while i < n and blank(text[i]):
        i += 1
    for ch in "memory-context":
        if i >= n:
            return "partial"
        if text[i].lower() != ch:
            return "no"
        i += 1
    while i < n and blank(text[i]):
        i += 1
    if i >= n:
        return "partial"
    if text[i] != ">":
        return "no"
    i += 1
    if not need_newline:
        return "full"
    if i >= n:
        return "partial"
    return "full" if text[i] in "\r\n" else "no"


_OPEN_AT_LINE = re.compile(r"(?:^|(?<=\n))[ \t]*<[ \t]*memory-context[ \t]*>(?:\r\n|\n|\r)", re.IGNORECASE)
_CLOSE_ANY = re.compile(r"</\s*memory-context\s*>(?:\r?\n)?", re.IGNORECASE)


class StreamingContextScrubber:
    """Remove ``<memory-context>`` spans from a model's streamed output, chunk by chunk.

    An opening tag counts only at the start of a line (optionally indented) and followed by
    a line break, so prose that mentions the tag inline is left alone. Text that might be the
    start of a tag is held back until the next chunk decides it. A stray closing tag outside a
    span is dropped. ``flush()`` ends the response: an unterminated span is discarded, held
    text that never became a tag is released. Use one scrubber per response or ``reset()``.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget all state (start a new response)."""
        self._buf = ""
        self._in_span = False
        self._at_line_start = True
        self._eat_newline = False
        self.spans_removed = 0

    @property
    def in_span(self) -> bool:
        """True while inside a fenced span (its text is being discarded)."""
        return self._in_span

    def feed(self, delta: str) -> str:
        """Accept the next chunk and return the text that is safe to show now."""
        if not delta:
            return ""
        self._buf += delta
        out: list[str] = []
        while True:
            if self._eat_newline and self._buf:
                if self._buf == "\r":
                    break
                if self._buf.startswith("\r\n"):
                    self._buf = self._buf[2:]
                elif self._buf.startswith(("\n", "\r")):
                    self._buf = self._buf[1:]
                self._eat_newline = False
            if self._in_span:
                match = _CLOSE_ANY.search(self._buf)
                if match is None:
                    self._buf = self._hold_tail(self._buf, closing=True)
                    break
                self._buf = self._buf[match.end():]
                self._eat_newline = not match.group(0).endswith("\n")
                self._in_span = False
                self._at_line_start = True
                self.spans_removed += 1
                continue
            text = self._buf
            # a boundary at position 0 only when the previous output ended a line
            search_from = 0 if self._at_line_start else self._first_line_start(text)
            open_match = _OPEN_AT_LINE.search(text, search_from) if search_from >= 0 else None
            close_match = _CLOSE_ANY.search(text)
            candidates = [m for m in (open_match, close_match) if m is not None]
            if candidates:
                first = min(candidates, key=lambda m: m.start())
                self._emit(out, text[:first.start()])
                self._buf = text[first.end():]
                if first is open_match:
                    self._in_span = True
                else:
                    self._at_line_start = first.group(0).endswith("\n") or self._at_line_start
                continue
            keep_from = self._hold_start(text)
            self._emit(out, text[:keep_from])
            self._buf = text[keep_from:]
            break
        return "".join(out)

    def flush(self) -> str:
        """End of the response: return held text (nothing if a span never closed)."""
        rest = "" if self._in_span else self._buf
        self.reset()
        return rest

    # -- helpers ---------------------------------------------------------------------------

    def _emit(self, out: list[str], text: str) -> None:
        if text:
            out.append(text)
            self._at_line_start = text.endswith("\n")

    @staticmethod
    def _first_line_start(text: str) -> int:
        index = text.find("\n")
        return -1 if index < 0 else index + 1

    def _hold_start(self, text: str) -> int:
        """Index from which ``text`` must be held back because a tag may be starting there."""
        for start in range(len(text)):
            ch = text[start]
            if ch == "<" and _tag_prefix_state(text[start:], closing=True, need_newline=False) == "partial":
                return start
            line_start = (start == 0 and self._at_line_start) or (start > 0 and text[start - 1] == "\n")
            if line_start:
                rest = text[start:].lstrip(" \t")
                if _tag_prefix_state(rest, closing=False, need_newline=True) == "partial":
                    return start
        return len(text)

    @staticmethod
    def _hold_tail(text: str, closing: bool) -> str:
        """Inside a span: keep only a tail that may be the start of the closing tag."""
        index = text.rfind("<")
        while index >= 0:
            if _tag_prefix_state(text[index:], closing=closing, need_newline=False) == "partial":
                return text[index:]
            index = text.rfind("<", 0, index)
        return ""


def scrub_stream(chunks: Iterable[str]) -> Iterator[str]:
    """Yield ``chunks`` with memory-context spans removed (non-empty pieces only)."""
    scrubber = StreamingContextScrubber()
    for chunk in chunks:
        piece = scrubber.feed(chunk)
        if piece:
            yield piece
    tail = scrubber.flush()
    if tail:
        yield tail
