"""Snippet marking for the PostgreSQL indexes (session messages, memory entries), in Python (no SQL).

``ts_headline`` marks word by word as its own parser reads the raw text: it keeps an e-mail
address, a URL or a path whole, folds no diacritics, stems the words the index keeps as they
are, and marks a phrase's words wherever they occur; FTS5's ``snippet()`` (what the SQLite
engine returns) marks the index's tokens, a phrase as one span. These helpers mark a
headline's window (or the message text) by the index's own tokens, each looked up with the
index's configuration (:mod:`hermes_store.storage_pg_marks`), so both engines' snippets mark
the same words; :mod:`hermes_store.sessions.storage_pg_snippets` and
:mod:`hermes_store.builtin.storage_pg` call them.
"""

from __future__ import annotations

import re

from hermes_store.pgquery import Term, positive_terms
from hermes_store.query import Match


def with_ellipses(headline: str, content: str, open_mark: str, close_mark: str,
                  ellipsis: str = "...") -> str:
    """``headline`` with ``ellipsis`` where it starts after / ends before the content (as FTS5's
    snippet marks a cut)."""
    plain = headline.replace(open_mark, "").replace(close_mark, "").strip()
    text = content.strip()
    if not plain or plain == text:
        return headline
    start = text.find(plain)
    prefix = ellipsis if start != 0 else ""
    suffix = ellipsis if start == -1 or start + len(plain) < len(text) else ""
    return prefix + headline.strip() + suffix


INDEX_TOKEN = re.compile(r"[^\W_]+")  # a token as the index splits text (unicode61, hermes_tokens)
# words joined by . / @ : - _ or a backslash (``login.spec.ts``, ``a@b.c``, ``src/x.py``): one token to
# ts_headline's parser, several to the index
PARSER_WHOLE = re.compile(r"[^\W_][./@:\\_-]+[^\W_]")
HIGHLIGHT_TOKENS = 4000  # distinct tokens of one message the highlighter looks up at most


def trusted_window(headline: str | None, content: str, open_mark: str, close_mark: str) -> bool:
    """True when ``ts_headline``'s excerpt can give the window shown: it marked something, every
    mark is one index token, and the text holds no path, address or URL its parser keeps whole
    (it chose its window by words it could see). Its marks are never kept as they are: see
    :func:`mark_text`."""
    return bool(headline) and open_mark in headline and marks_tokens(headline, open_mark, close_mark) \
        and not PARSER_WHOLE.search(content)


def marks_tokens(headline: str, open_mark: str, close_mark: str) -> bool:
    """True when every marked piece of ``headline`` is one index token (ts_headline marks a
    whole e-mail address or URL its parser saw as one word)."""
    pattern = re.escape(open_mark) + "(.*?)" + re.escape(close_mark)
    return all(INDEX_TOKEN.fullmatch(piece) for piece in re.findall(pattern, headline, re.S))


def strip_marks(headline: str, open_mark: str, close_mark: str) -> str:
    """``headline`` without its marks."""
    return headline.replace(open_mark, "").replace(close_mark, "")


def match_nodes(match: Match) -> tuple[list[Term], list[tuple[int, ...]]]:
    """The single tokens of ``match``'s positive terms (a prefix where the term's last token is
    one), each once, and every term as the indices of its tokens in that list: a word is marked
    where it is a one-token term, or where it and its neighbours are a phrase's tokens in order
    (as FTS5's ``snippet()`` marks a phrase, never its words alone). A CJK term's tokens are
    projected bigrams: they mark a word of the text only where one is the whole word (``北京``),
    as in SQLite, where the text's column holds the same word; the generic highlighter marks
    the others."""
    nodes: list[Term] = []
    shapes: list[tuple[int, ...]] = []
    for term in positive_terms(match):
        shape = []
        for i, token in enumerate(term.tokens):
            node = Term((token,), bool(term.prefix and i == len(term.tokens) - 1))
            if node not in nodes:
                nodes.append(node)
            shape.append(nodes.index(node))
        if tuple(shape) not in shapes:
            shapes.append(tuple(shape))
    return nodes, shapes


def _runs(tokens: list[str], found: dict[str, frozenset[int]],
          shapes: list[tuple[int, ...]]) -> list[tuple[int, int]]:
    """The ``[first, last)`` token ranges of ``tokens`` to mark, merged where they overlap:
    every run of consecutive tokens that matches one of ``shapes`` (``found``: the nodes each
    token matches, as the index folds and stems it)."""
    runs: list[tuple[int, int]] = []
    for shape in shapes:
        width = len(shape)
        for i in range(len(tokens) - width + 1):
            if all(node in found.get(tokens[i + j], ()) for j, node in enumerate(shape)):
                runs.append((i, i + width))
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(runs):
        if merged and lo < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def _marked(text: str, spans: list[tuple[int, int]], runs: list[tuple[int, int]], start: int, end: int,
            open_mark: str, close_mark: str) -> str:
    """``text[start:end]`` with each of ``runs`` (token ranges of ``spans``) inside it marked."""
    pieces, cursor = [], start
    for lo, hi in runs:
        left, right = spans[lo][0], spans[hi - 1][1]
        if left < cursor or right > end:
            continue
        pieces += [text[cursor:left], open_mark, text[left:right], close_mark]
        cursor = right
    pieces.append(text[cursor:end])
    return "".join(pieces)


def mark_text(text: str, found: dict[str, frozenset[int]], shapes: list[tuple[int, ...]],
              open_mark: str, close_mark: str) -> str | None:
    """All of ``text`` (``ts_headline``'s window, its marks removed) with the tokens the index
    matched marked (:func:`_runs`); None when none is. ``ts_headline`` reads the raw text with
    its own parser: it marks no folded word (``déploiement`` for ``deploy*``), no word kept
    unstemmed (``js``, a long identifier) and every word of a phrase alone, so its window is
    kept and its marks are not."""
    spans = [m.span() for m in INDEX_TOKEN.finditer(text)]
    runs = _runs([text[lo:hi] for lo, hi in spans], found, shapes)
    if not runs:
        return None
    return _marked(text, spans, runs, 0, len(text), open_mark, close_mark)


def marked_excerpt(content: str, found: dict[str, frozenset[int]], shapes: list[tuple[int, ...]],
                   open_mark: str, close_mark: str, words: int, ellipsis: str = "...") -> str | None:
    """An excerpt of ``words`` tokens of ``content`` from a little before its first marked run
    (:func:`_runs`), each run between the marks; None when there is none."""
    spans = [m.span() for m in INDEX_TOKEN.finditer(content)]
    runs = _runs([content[lo:hi] for lo, hi in spans], found, shapes)
    if not runs:
        return None
    # a message of up to ``words`` tokens comes back whole, a longer one as ``words`` tokens
    # from a little before the first match (as FTS5's snippet() cuts it)
    first = max(0, min(runs[0][0] - max(1, words // 4), len(spans) - words))
    last = min(len(spans), first + words) - 1
    start = spans[first][0] if first else 0
    end = spans[last][1] if last < len(spans) - 1 else len(content)
    body = _marked(content, spans, runs, start, end, open_mark, close_mark)
    return (ellipsis if start else "") + body + (ellipsis if end < len(content) else "")
