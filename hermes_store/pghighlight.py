"""Snippet marking for the PostgreSQL indexes (session messages, memory entries), in Python (no SQL).

``ts_headline`` marks word by word, and its parser keeps an e-mail address, a URL or a path
whole; FTS5's ``snippet()`` (what the SQLite engine returns) marks index tokens and a phrase as
one span. These helpers turn a headline (or the message text) into the FTS5 form, so both
engines' snippets read alike; :mod:`hermes_store.sessions.storage_pg_snippets` and
:mod:`hermes_store.builtin.storage_pg` call them.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from hermes_store.pgquery import Op, Term, positive_terms
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


def _fold(text: str) -> str:
    """``text`` lower-cased with Latin diacritics removed, character for character (offsets kept)."""
    out = []
    for char in text:
        parts = unicodedata.normalize("NFD", char)
        base = parts[0]
        if len(parts) > 1 and base.isascii() and base.isalpha() and all(
                unicodedata.category(p) == "Mn" for p in parts[1:]):
            out.append(base.lower())
        else:
            low = char.lower()
            out.append(low if len(low) == 1 else char)
    return "".join(out)


INDEX_TOKEN = re.compile(r"[^\W_]+")  # a token as the index splits text (unicode61, hermes_tokens)
# words joined by . / @ : - _ or a backslash (``login.spec.ts``, ``a@b.c``, ``src/x.py``): one token to
# ts_headline's parser, several to the index
PARSER_WHOLE = re.compile(r"[^\W_][./@:\\_-]+[^\W_]")
HIGHLIGHT_TOKENS = 4000  # distinct tokens of one message the highlighter looks up at most


def marked_excerpt(content: str, marked: set[str], open_mark: str, close_mark: str,
                    words: int, ellipsis: str = "...") -> str | None:
    """An excerpt of ``words`` tokens of ``content`` from a little before its first token in
    ``marked``, each such token between the marks; None when none occurs."""
    tokens = INDEX_TOKEN.findall(content)
    hits = [i for i, token in enumerate(tokens) if token in marked]
    if not hits:
        return None
    # a message of up to ``words`` tokens comes back whole, a longer one as ``words`` tokens
    # from a little before the first match (as FTS5's snippet() cuts it)
    first = max(0, min(hits[0] - max(1, words // 4), len(tokens) - words))
    last = min(len(tokens), first + words) - 1
    spans = [m.span() for m in itertools.islice(INDEX_TOKEN.finditer(content), last + 1)]  # those shown
    start = spans[first][0] if first else 0
    end = spans[last][1] if last < len(tokens) - 1 else len(content)
    pieces, cursor = [], start
    for i in hits:
        if i > last:
            break
        if i >= first:
            lo, hi = spans[i]
            pieces += [content[cursor:lo], open_mark, content[lo:hi], close_mark]
            cursor = hi
    pieces.append(content[cursor:end])
    return (ellipsis if start else "") + "".join(pieces) + (ellipsis if end < len(content) else "")


def marks_tokens(headline: str, open_mark: str, close_mark: str) -> bool:
    """True when every marked piece of ``headline`` is one index token (ts_headline marks a
    whole e-mail address or URL its parser saw as one word)."""
    pattern = re.escape(open_mark) + "(.*?)" + re.escape(close_mark)
    return all(INDEX_TOKEN.fullmatch(piece) for piece in re.findall(pattern, headline, re.S))


def token_match(match: Match) -> Op | Term | None:
    """Any single token of ``match``'s positive, non-CJK terms (a prefix where the term's
    last token is one): what marks a word of a snippet."""
    nodes: list[Op | Term] = []
    for term in positive_terms(match):
        if getattr(term, "cjk", False):
            continue  # projected bigrams: the generic highlighter marks CJK words
        for i, token in enumerate(term.tokens):
            node = Term((token,), bool(term.prefix and i == len(term.tokens) - 1))
            if node not in nodes:
                nodes.append(node)
    if not nodes:
        return None
    tree = nodes[0]
    for node in nodes[1:]:
        tree = Op("OR", tree, node)
    return tree


def _marked_spans(headline: str, open_mark: str, close_mark: str) -> tuple[str, list[tuple[int, int]]]:
    """``headline`` without its marks, and the marked ``(start, end)`` spans of that text."""
    plain: list[str] = []
    spans: list[tuple[int, int]] = []
    length, cursor = 0, 0
    while True:
        lo = headline.find(open_mark, cursor)
        hi = headline.find(close_mark, lo + len(open_mark)) if lo >= 0 else -1
        if lo < 0 or hi < 0:
            plain.append(headline[cursor:])
            break
        before, inside = headline[cursor:lo], headline[lo + len(open_mark):hi]
        plain += [before, inside]
        length += len(before)
        spans.append((length, length + len(inside)))
        length += len(inside)
        cursor = hi + len(close_mark)
    return "".join(plain), spans


def join_phrases(headline: str, match: Match, open_mark: str, close_mark: str) -> str:
    """``headline`` with each multi-token term (a phrase, ``ask-codex``, ``src/auth.py``) marked
    as one span from its first to its last token, as FTS5's ``snippet()`` marks it
    (``ts_headline`` marks word by word, and not at all inside what its parser keeps whole)."""
    phrases = [t for t in positive_terms(match)
               if len(getattr(t, "tokens", ())) > 1 and not getattr(t, "cjk", False)]
    if not phrases or open_mark not in headline:
        return headline
    plain, spans = _marked_spans(headline, open_mark, close_mark)
    folded = _fold(plain)
    found: list[tuple[int, int]] = []
    for term in phrases:
        body = r"[\W_]+".join(re.escape(_fold(token)) for token in term.tokens)
        tail = r"[^\W_]*" if term.prefix else r"(?![^\W_])"
        found += [m.span() for m in re.finditer(r"(?<![^\W_])" + body + tail, folded)]
    if not found:
        return headline
    kept = [s for s in spans if not any(lo < s[1] and s[0] < hi for lo, hi in found)]
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(kept + found):
        if merged and lo < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    pieces, cursor = [], 0
    for lo, hi in merged:
        pieces += [plain[cursor:lo], open_mark, plain[lo:hi], close_mark]
        cursor = hi
    pieces.append(plain[cursor:])
    return "".join(pieces)
