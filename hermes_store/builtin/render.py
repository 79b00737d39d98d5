"""System-prompt blocks for the built-in stores, and what they cost.

``render_block`` produces the Hermes block byte-for-byte by default::

    ══════════════════════════════════════════════   (46 × U+2550)
    MEMORY (your personal notes) [67% — 1,474/2,200 chars]
    ══════════════════════════════════════════════
    entry 1
    §
    entry 2

The ``compact`` style keeps the same entries and usage but a one-line frame
(≤ 60 bytes for limits below 10 million chars). A store over its limit keeps the
Hermes header byte-for-byte in ``hermes`` style (Hermes shows the capped percentage
and nothing else); the compact frame marks it with ``⚠``, and ``memory show``,
``memory cost`` and ``status`` print :func:`over_budget_warning`. A content longer
than ``max(2 × limit, 4000)`` is cut to head + notice + tail so a file written
behind the tool's back cannot flood the context window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hermes_store.builtin.entries import ENTRY_DELIMITER, char_count, join_entries, usage_long

RULE = "\u2550" * 46
HEADERS: dict[str, str] = {
    "memory": "MEMORY (your personal notes)",
    "user": "USER PROFILE (who the user is)",
}
COMPACT_HEADERS: dict[str, str] = {"memory": "MEMORY", "user": "USER PROFILE"}
MEMORY_BLOCK_HEADERS: tuple[str, ...] = (HEADERS["memory"], HEADERS["user"])
COMPACT_OVER_BUDGET = " \u26a0"  # keeps the compact frame under 60 bytes up to 7-digit limits
RENDER_STYLES: tuple[str, ...] = ("hermes", "compact")


def header_for(target: str) -> str:
    """The Hermes block header of a target (``user`` or anything else = memory)."""
    return HEADERS["user" if target == "user" else "memory"]


def over_budget_warning(used: int, limit: int) -> str | None:
    """The warning the CLI prints for a store over its limit (None when within it)."""
    if used <= limit:
        return None
    return (f"\u26a0 OVER BUDGET: {used:,}/{limit:,} chars; every add is refused until entries "
            "are removed or shortened")


def render_cap(limit: int) -> int:
    """Largest content a block shows before it is truncated."""
    return max(2 * limit, 4000)


def _bounded_content(content: str, current: int, limit: int) -> str:
    cap = render_cap(limit)
    if len(content) <= cap:
        return content
    head = content[: int(cap * 0.7)]
    tail = content[len(content) - int(cap * 0.2):]
    omitted = len(content) - len(head) - len(tail)
    notice = (
        f"\n\n[... {omitted:,} chars truncated — memory over budget ({current:,}/{limit:,}); "
        "consolidate via memory(action=remove/replace) ...]\n\n"
    )
    return head + notice + tail


def block_parts(target: str, entries: list[str], limit: int, style: str = "hermes") -> tuple[str, str]:
    """``(frame, content)`` of a block: the block is ``frame + content``; both ``""`` when empty."""
    if not entries:
        return "", ""
    if style not in RENDER_STYLES:
        raise ValueError(f"unknown render style {style!r}; use one of {', '.join(RENDER_STYLES)}")
    current = char_count(entries)
    usage = usage_long(current, limit)
    over = current > limit
    content = _bounded_content(join_entries(entries), current, limit)
    if style == "compact":
        name = COMPACT_HEADERS["user" if target == "user" else "memory"]
        return f"{name} [{usage}{COMPACT_OVER_BUDGET if over else ''}]\n", content
    return f"{RULE}\n{header_for(target)} [{usage}]\n{RULE}\n", content


def render_block(target: str, entries: list[str], limit: int, style: str = "hermes") -> str:
    """The prompt block for already-sanitised ``entries``; ``""`` when there are none."""
    frame, content = block_parts(target, entries, limit, style)
    return frame + content


def estimate_tokens(text: str) -> int:
    """Rough token count: 4 ASCII chars per token, one token per non-ASCII char.

    The ASCII part matches the usual ``chars / 4`` rule of thumb; counting other
    characters one each keeps CJK and emoji from being underestimated.
    """
    if not text:
        return 0
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


@dataclass(frozen=True)
class TextCost:
    """Size of one piece of prompt text."""

    chars: int
    bytes: int
    tokens: int

    @classmethod
    def of(cls, text: str) -> TextCost:
        """Measure ``text``."""
        return cls(len(text), len(text.encode("utf-8")), estimate_tokens(text))

    def as_dict(self) -> dict[str, int]:
        """``{"chars", "bytes", "tokens"}``."""
        return {"chars": self.chars, "bytes": self.bytes, "tokens": self.tokens}


def block_cost(target: str, entries: list[str], limit: int, style: str = "hermes") -> dict:
    """Cost of one block: per entry, delimiters, frame overhead and the whole block.

    ``frame`` is everything in the block that is not entry text or delimiters
    (rules, header, usage bracket, newlines). ``entries`` are the sanitised
    entries the prompt really carries.
    """
    frame, content = block_parts(target, entries, limit, style)
    per_entry = [
        {"index": i, **TextCost.of(entry).as_dict()} for i, entry in enumerate(entries, start=1)
    ]
    delimiters = TextCost.of(ENTRY_DELIMITER * max(0, len(entries) - 1))
    return {
        "target": target,
        "style": style,
        "entry_count": len(entries),
        "limit": limit,
        "used_chars": char_count(entries),
        "entries": per_entry,
        "delimiters": delimiters.as_dict(),
        "frame": TextCost.of(frame).as_dict(),
        "block": TextCost.of(frame + content).as_dict(),
    }
