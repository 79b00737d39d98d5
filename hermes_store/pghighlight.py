"""Snippets for the PostgreSQL indexes (session messages, memory entries), in Python (no SQL):
FTS5's ``snippet()`` replayed, so both engines show the same excerpt of the same text.

SQLite's ``snippet()`` (ext/fts5/fts5_aux.c: ``fts5SnippetFunction``, ``fts5SnippetScore``,
``fts5SentenceFinderCb``, ``fts5HighlightCb``) works on the column's index tokens and the
query's phrase instances (every place a phrase's tokens occur one after the other):

* each instance proposes a window of ``words`` tokens, scored 1000 per distinct phrase in it
  plus 1 per repeat, and centred on the instances it holds; a window starting at the start of
  the sentence holding the instance (a token after ``.`` or ``:`` and white space) scores 100
  more (120 at the text's start) when the text is longer than the window; the first best wins;
* overlapping instances are marked as one span, a phrase from its first to its last token, and
  only whole tokens (``load_config`` is ``load`` + ``config``: a query ``parse_config`` marks
  neither there);
* ``...`` where the window starts after the first token or ends before the last.

:mod:`hermes_store.storage_pg_marks` finds which tokens of a text the index folds or stems to
each query token (in PostgreSQL, with the index's own configuration); this module does the rest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

INDEX_TOKEN = re.compile(r"[^\W_]+")  # a token as the index splits text (unicode61, hermes_tokens)
HIGHLIGHT_TOKENS = 4000  # distinct tokens of one message the highlighter looks up at most
_BLANK = " \t\n\r"


def sentence_starts(content: str, spans: Sequence[tuple[int, int]]) -> list[int]:
    """Token positions that start a sentence as FTS5's snippet() sees one: the first token, and
    each token preceded by white space after a ``.`` or ``:``."""
    starts = [0] if spans else []
    for position in range(1, len(spans)):
        i = spans[position][0] - 1
        while i >= 0 and content[i] in _BLANK:
            i -= 1
        if i != spans[position][0] - 1 and i >= 0 and content[i] in ".:":
            starts.append(position)
    return starts


def _score(instances: Sequence[tuple[int, int]], sizes: Sequence[int], start: int, words: int,
           length: int) -> tuple[int, int]:
    """``fts5SnippetScore``: the score of the window of ``words`` tokens from ``start`` and the
    start of the window centred on the instances it holds."""
    seen: set[int] = set()
    score, first, last = 0, -1, 0
    for position, phrase in instances:
        if start <= position < start + words:
            score += 1 if phrase in seen else 1000
            seen.add(phrase)
            if first < 0:
                first = position
            last = position + sizes[phrase]
    adjusted = first - int((words - (last - first)) / 2)  # C's division: towards zero
    if adjusted + words > length:
        adjusted = length - words
    return score, max(adjusted, 0)


def best_window(content: str, spans: Sequence[tuple[int, int]], instances: Sequence[tuple[int, int]],
                sizes: Sequence[int], words: int) -> int:
    """The first token of the window FTS5's snippet() shows (``instances``: ``(position,
    phrase)`` in position order, ``sizes``: each phrase's token count)."""
    length = len(spans)
    starts = sentence_starts(content, spans)
    best_score, best_start = 0, 0
    for position, _ in instances:
        score, adjusted = _score(instances, sizes, position, words, length)
        if score > best_score:
            best_score, best_start = score, adjusted
        if starts and length > words:
            sentence = max(s for s in starts if s <= position)
            if sentence < position:
                score, _ = _score(instances, sizes, sentence, words, length)
                score += 120 if sentence == 0 else 100
                if score > best_score:
                    best_score, best_start = score, sentence
    return best_start


def _coalesced(instances: Sequence[tuple[int, int]], sizes: Sequence[int]) -> list[tuple[int, int]]:
    """Overlapping instances as one ``(first token, last token)`` span (``fts5CInstIterNext``)."""
    spans: list[tuple[int, int]] = []
    for position, phrase in instances:
        end = position + sizes[phrase] - 1
        if spans and position <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((position, end))
    return spans


def fts5_snippet(content: str, instances: Sequence[tuple[int, int]], sizes: Sequence[int],
                 open_mark: str, close_mark: str, words: int, ellipsis: str = "...") -> str | None:
    """FTS5's ``snippet(..., open_mark, close_mark, ellipsis, words)`` of ``content`` for the
    phrase ``instances`` (``(token position, phrase)``, positions of :data:`INDEX_TOKEN` tokens);
    None when there is none."""
    if not instances:
        return None
    instances = sorted(instances)
    spans = [m.span() for m in INDEX_TOKEN.finditer(content)]
    words = max(1, int(words))
    first = best_window(content, spans, instances, sizes, words)
    last = first + words - 1
    out = [ellipsis] if first > 0 else []
    cursor = spans[first][0] if first > 0 else 0
    for lo, hi in _coalesced(instances, sizes):
        if hi < first or lo > last:
            continue
        lo, hi = max(lo, first), min(hi, last)
        out += [content[cursor:spans[lo][0]], open_mark, content[spans[lo][0]:spans[hi][1]], close_mark]
        cursor = spans[hi][1]
    if last >= len(spans) - 1:
        out.append(content[cursor:])
    else:
        out += [content[cursor:spans[last][1]], ellipsis]
    return "".join(out)
