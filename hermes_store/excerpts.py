"""Marked excerpts: the marks around a query's words in a snippet, cutting a marked excerpt, and
marking the words where the engine's own snippet cannot (both engines).

The searches (:mod:`hermes_store.sessions.search`, :mod:`hermes_store.builtin.search`,
:mod:`hermes_store.recall`) mark what they return with :data:`HIGHLIGHT_MARKS` unless the caller
passes marks of its own; :mod:`hermes_store.pghighlight` replays FTS5's ``snippet()`` on
PostgreSQL, and this module marks a text found without either (by
position, through the CJK column, or by meaning).
"""

from __future__ import annotations

import re

from hermes_store.query import QueryPlan, compile_query
from hermes_store.tokens import folded, has_cjk, index_spans

HIGHLIGHT_OPEN, HIGHLIGHT_CLOSE = ">>>", "<<<"
#: The marks of a highlighted excerpt, ``(open, close)``: ``>>>``/``<<<`` in what a model or
#: ``--json`` reads. A front end that turns marks into styling passes marks of its own that stored
#: text cannot hold (``>>>`` is a Python prompt, ``<<<<<<<`` a merge conflict) to the searches.
HIGHLIGHT_MARKS: tuple[str, str] = (HIGHLIGHT_OPEN, HIGHLIGHT_CLOSE)


def cap_marked(text: str, limit: int, marks: tuple[str, str] = HIGHLIGHT_MARKS) -> str:
    """``text`` (an excerpt marked with ``marks``) cut to about ``limit`` characters, ending in
    ``…``, never inside a mark and never leaving a span open."""
    if len(text) <= limit:
        return text
    open_mark, close_mark = marks
    cut = text[:limit - 1]
    for mark in marks:  # a mark cut in two is dropped
        for size in range(len(mark) - 1, 0, -1):
            if text.startswith(mark, len(cut) - size):
                cut = cut[:-size]
                break
    if cut.count(open_mark) > cut.count(close_mark):
        cut += close_mark
    return cut + "\u2026"


def highlight_excerpt(content: str, query: str | QueryPlan, width: int = 160, *,
                      open_mark: str = HIGHLIGHT_OPEN, close_mark: str = HIGHLIGHT_CLOSE) -> str:
    """An excerpt of ``content`` around the first query word found, every query word marked.

    For when FTS5's ``snippet()`` cannot mark the match (found through the CJK projection
    column, by position as a context neighbour, or by meaning): a word is marked when its
    index token (:func:`hermes_store.tokens.index_spans`: folded and stemmed, as the index
    matched it) is one of the query's (a plan's :attr:`QueryPlan.terms`), or starts with a
    ``prefix*`` term's; CJK words longer than two characters also by their bigrams. A query
    word is never marked inside another word (``i`` in ``edited``).
    """
    spans = _term_spans(content, compile_query(query))
    if not spans:
        excerpt = content[:width]
        return excerpt + ("..." if len(content) > width else "")
    start = max(0, spans[0][0] - width // 3)
    end = min(len(content), start + width)
    out, at = [], start
    for lo, hi in spans:
        if lo < at or hi > end:
            continue
        out += [content[at:lo], open_mark, content[lo:hi], close_mark]
        at = hi
    out.append(content[at:end])
    return ("..." if start else "") + "".join(out) + ("..." if end < len(content) else "")


def _term_spans(content: str, plan: QueryPlan) -> list[tuple[int, int]]:
    """The ``(start, end)`` character spans of ``content`` to mark, in order, not overlapping."""
    terms = plan.terms
    wanted = {token for term in terms if not has_cjk(term)
              for _lo, _hi, token in index_spans(term, query=True)}
    # the plan's prefix* terms (those it honours) match words as written (folded, not stemmed)
    # and as the index matches them (the stored token begins with the prefix stemmed as a
    # query's: ``deploy*`` is ``deploi*``, which ``déploiement`` begins with)
    written = {term.tokens[-1] for match in (plan.strict_match, plan.literal_match)
               if match is not None for term in match.terms() if term.prefix and not term.cjk}
    prefixes = tuple(folded(word) for word in written)
    stems = tuple(token for word in written for _lo, _hi, token in index_spans(word, query=True))
    spans = [(lo, hi) for lo, hi, token in index_spans(content) if token in wanted or (
        prefixes and (folded(content[lo:hi]).startswith(prefixes) or token.startswith(stems)))]
    pieces = []
    for word in sorted({t for t in terms if has_cjk(t)}, key=len, reverse=True):
        pieces.append(re.escape(word))
        if len(word) > 2:
            pieces.extend(re.escape(word[i : i + 2]) for i in range(len(word) - 1))
    if pieces:
        spans += [m.span() for m in re.finditer("|".join(pieces), content, re.IGNORECASE)]
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo < merged[-1][1]:
            continue
        merged.append((lo, hi))
    return merged
