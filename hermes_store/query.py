"""User text -> safe FTS5 expressions, shared by every full-text index in the package.

The rules, in one place:

* Valid FTS5 operators are honoured: ``"quoted phrases"``, ``OR``, ``NOT``,
  ``AND`` (upper case, as FTS5 spells them), ``prefix*`` and parentheses.
* Everything else is a literal word. A word is split the way the index's
  ``unicode61`` tokenizer splits text (letters, digits and private-use
  characters are token characters; everything else separates), and a word
  that splits into several tokens becomes a phrase: ``scripts/deploy.sh`` ->
  ``"scripts deploy sh"``, ``C:\\Users`` -> ``"c users"``, ``P2.2`` -> ``"p2 2"``.
  Characters that can never be indexed (punctuation) are dropped.
* CJK text has no spaces, so the index stores a *projection* computed here
  (:func:`cjk_projection`: bigrams and unigrams of every CJK run, plus Latin
  glued to CJK); queries use the matching form (1 char -> unigram, 2 chars ->
  bigram, longer -> a phrase of consecutive bigrams).
* Emoji are separators to ``unicode61``, so the projection also carries one
  word per emoji code point (:func:`emoji_tokens`: ``🚀`` -> ``emoji1f680``;
  joiners, variation selectors and skin-tone modifiers left out) and a query
  emoji becomes that word (a ZWJ sequence a phrase of its parts).
* :func:`run_match` never fails silently: an expression the engine rejects is
  retried all-literal with a ``note``; a natural-language question whose strict
  AND match yields fewer hits than asked is relaxed to OR over its content words
  (stopwords dropped) and the results are merged, strict hits first.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import apsw

Row = TypeVar("Row")

MAX_TERMS = 64  # bound on the number of terms compiled from one query

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
    don't down during each few for from further had hadn't has hasn't have haven't having he he'd
    he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into
    is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only
    or other ought our ours ourselves out over own same shan't she she'd she'll she's should
    shouldn't so some such than that that's the their theirs them themselves then there there's
    these they they'd they'll they're they've this those through to too under until up very was
    wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while
    who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves also just did does ever get got really s t d ll m o re ve y""".split()
)

_OPERATORS = {"OR", "AND", "NOT"}


# --------------------------------------------------------------------------- characters


def is_cjk(char: str) -> bool:
    """True for Han, Hiragana, Katakana, Hangul and CJK compatibility characters."""
    code = ord(char)
    return (
        0x3040 <= code <= 0x30FF  # Hiragana, Katakana
        or 0x3100 <= code <= 0x312F  # Bopomofo
        or 0x3400 <= code <= 0x4DBF  # CJK Extension A
        or 0x4E00 <= code <= 0x9FFF  # CJK Unified Ideographs
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables
        or 0x1100 <= code <= 0x11FF  # Hangul Jamo
        or 0x3130 <= code <= 0x318F  # Hangul compatibility Jamo
        or 0xF900 <= code <= 0xFAFF  # CJK compatibility ideographs
        or 0xFF66 <= code <= 0xFF9F  # half-width Katakana
        or 0x20000 <= code <= 0x3FFFF  # CJK Extensions B..
    )


def is_emoji(char: str) -> bool:
    """True for an emoji code point (pictographs, dingbats, symbols, regional indicators)."""
    code = ord(char)
    if not (0x1F000 <= code <= 0x1FAFF or 0x2600 <= code <= 0x27BF or 0x2300 <= code <= 0x23FF
            or 0x2B00 <= code <= 0x2BFF or code in (0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x3030)):
        return False
    return unicodedata.category(char) == "So"


def emoji_tokens(text: str) -> list[str]:
    """One index word per emoji code point of ``text``, in order (``🚀`` -> ``emoji1f680``)."""
    return [f"emoji{ord(char):x}" for char in text if is_emoji(char)]


def is_token_char(char: str) -> bool:
    """True when the ``unicode61`` tokenizer keeps ``char`` inside a token."""
    category = unicodedata.category(char)
    return category[0] in "LN" or category in ("Co", "Mn", "Mc")


def tokenize(text: str) -> list[str]:
    """Split ``text`` into index tokens the way ``unicode61`` does (case kept)."""
    tokens: list[str] = []
    current: list[str] = []
    for char in text:
        if is_token_char(char):
            current.append(char)
        elif current:
            tokens.append("".join(current))
            current = []
    if current:
        tokens.append("".join(current))
    return tokens


def _split_cjk(token: str) -> list[tuple[bool, str]]:
    """Split one token into runs ``(is_cjk, text)``."""
    runs: list[tuple[bool, str]] = []
    for char in token:
        flag = is_cjk(char)
        if runs and runs[-1][0] == flag:
            runs[-1] = (flag, runs[-1][1] + char)
        else:
            runs.append((flag, char))
    return runs


def cjk_projection(text: str | None) -> str | None:
    """The index-side CJK projection of ``text``, or None when it holds no CJK.

    For every token that contains CJK characters: the bigrams of each CJK run
    (in order, so consecutive bigrams are adjacent positions), then its
    unigrams, then any Latin/digit part glued to the CJK, all space separated.
    Stored in a ``cjk`` FTS column tokenized by stock ``unicode61``. Emoji
    words (:func:`emoji_tokens`) follow, so emoji are searchable too.
    """
    if not text:
        return None
    emoji = emoji_tokens(text) if not text.isascii() else []
    if not emoji and not any(is_cjk(c) for c in text):
        return None
    text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    for token in tokenize(text):
        if not any(is_cjk(c) for c in token):
            continue
        for flag, run in _split_cjk(token):
            if flag:
                out.extend(run[i : i + 2] for i in range(len(run) - 1))
                out.extend(run)
            else:
                out.append(run)
    out.extend(emoji)
    return " ".join(out) if out else None


# --------------------------------------------------------------------------- terms


def _quote(text: str) -> str:
    """Double-quote an FTS5 string (embedded quotes doubled)."""
    return '"' + text.replace('"', '""') + '"'


def _cjk_term(run: str) -> str:
    run = unicodedata.normalize("NFKC", run)
    if len(run) <= 2:
        return _quote(run)
    return _quote(" ".join(run[i : i + 2] for i in range(len(run) - 1)))


def literal_term(word: str, *, prefix: bool = False) -> str | None:
    """Translate one user word into a safe FTS5 term, or None when nothing in it is indexable."""
    tokens = tokenize(word)
    emoji = emoji_tokens(word) if not word.isascii() else []
    if emoji:
        term = _quote(" ".join(emoji))
        rest = literal_term("".join(c for c in word if not is_emoji(c)), prefix=prefix)
        return term if rest is None else f"({rest} AND {term})"
    if not tokens:
        return None
    if any(is_cjk(c) for c in word):
        parts: list[str] = []
        latin: list[str] = []
        for token in tokens:
            for flag, run in _split_cjk(token):
                if flag:
                    if latin:
                        parts.append(_quote(" ".join(latin)))
                        latin = []
                    parts.append(_cjk_term(run))
                else:
                    latin.append(run)
        if latin:
            parts.append(_quote(" ".join(latin)) + ("*" if prefix else ""))
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"
    return _quote(" ".join(tokens)) + ("*" if prefix else "")


# --------------------------------------------------------------------------- parsing


@dataclass
class _Tok:
    kind: str  # WORD, PHRASE, OR, AND, NOT, LP, RP
    text: str = ""
    prefix: bool = False


def _lex(text: str) -> list[_Tok]:
    """Lex user text into words, quoted phrases, operators and parentheses."""
    toks: list[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char.isspace():
            i += 1
        elif char == '"':
            end = text.find('"', i + 1)
            if end == -1:  # unbalanced quote: the rest is ordinary words
                toks.extend(_Tok("WORD", w) for w in text[i + 1 :].split())
                break
            prefix = end + 1 < n and text[end + 1] == "*"
            toks.append(_Tok("PHRASE", text[i + 1 : end], prefix))
            i = end + (2 if prefix else 1)
        elif char in "()":
            toks.append(_Tok("LP" if char == "(" else "RP"))
            i += 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '()"':
                j += 1
            word = text[i:j]
            i = j
            if word in _OPERATORS:
                toks.append(_Tok(word))
            elif word.endswith("*") and word.rstrip("*"):
                toks.append(_Tok("WORD", word.rstrip("*"), True))
            else:
                toks.append(_Tok("WORD", word))
    return toks


class _SyntaxProblem(Exception):
    pass


class _Parser:
    """Recursive descent over the lexed tokens; builds a safe expression or raises."""

    def __init__(self, toks: list[_Tok]) -> None:
        self.toks = toks
        self.pos = 0
        self.terms: list[str] = []

    def peek(self) -> _Tok | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def take(self) -> _Tok:
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def parse(self) -> str | None:
        expr = self.or_expr()
        if self.peek() is not None:
            raise _SyntaxProblem(f"unexpected {self.peek().kind}")
        return expr

    def or_expr(self) -> str | None:
        parts = [self.and_expr()]
        while self.peek() is not None and self.peek().kind == "OR":
            self.take()
            parts.append(self.and_expr())
        kept = [p for p in parts if p]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else "(" + " OR ".join(kept) + ")"

    def and_expr(self) -> str | None:
        parts = [self.not_expr()]
        while self.peek() is not None and self.peek().kind not in ("OR", "RP"):
            if self.peek().kind == "AND":
                self.take()
            parts.append(self.not_expr())
        kept = [p for p in parts if p]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else "(" + " AND ".join(kept) + ")"

    def not_expr(self) -> str | None:
        left = self.primary()
        while self.peek() is not None and self.peek().kind == "NOT":
            self.take()
            right = self.primary()
            if left is None:
                raise _SyntaxProblem("NOT needs something before it")
            if right is not None:
                left = f"({left} NOT {right})"
        return left

    def primary(self) -> str | None:
        tok = self.peek()
        if tok is None:
            raise _SyntaxProblem("expression ends early")
        if tok.kind == "LP":
            self.take()
            inner = self.or_expr()
            if self.peek() is None or self.peek().kind != "RP":
                raise _SyntaxProblem("unbalanced parenthesis")
            self.take()
            return inner
        if tok.kind in ("WORD", "PHRASE"):
            self.take()
            term = literal_term(tok.text, prefix=tok.prefix)
            if term is not None:
                if len(self.terms) >= MAX_TERMS:
                    return None
                self.terms.append(term)
            return term
        raise _SyntaxProblem(f"operator {tok.kind} in the wrong place")


# --------------------------------------------------------------------------- plans


@dataclass
class QueryPlan:
    """What a user query compiles to.

    ``strict``: the precise expression (operators honoured, words AND-ed).
    ``relaxed``: OR over the content words, for natural-language queries only.
    ``literal``: every word taken literally and AND-ed (the fallback).
    ``note``: set when the query's syntax could not be honoured as written.
    """

    text: str
    strict: str | None
    relaxed: str | None
    literal: str | None
    words: list[str] = field(default_factory=list)
    note: str | None = None

    @property
    def empty(self) -> bool:
        """True when nothing in the query can be searched."""
        return self.strict is None and self.literal is None


def _literal_terms(text: str, *, drop_stopwords: bool) -> list[str]:
    """Every whitespace word of ``text`` as a literal term (quotes and operators made plain)."""
    words = [w for w in text.replace('"', " ").replace("(", " ").replace(")", " ").split()]
    content = [w for w in words if tokenize(w) and w.lower().strip("'*?!.,;:") not in STOPWORDS]
    chosen = content if (drop_stopwords and content) else words
    terms: list[str] = []
    for word in chosen:
        term = literal_term(word.rstrip("*"))
        if term is not None and term not in terms:
            terms.append(term)
        if len(terms) >= MAX_TERMS:
            break
    return terms


def compile_query(text: str) -> QueryPlan:
    """Compile user text into a :class:`QueryPlan` (never raises)."""
    text = "".join(" " if unicodedata.category(c) == "Cc" else c for c in str(text or ""))
    toks = _lex(text)
    has_syntax = any(t.kind != "WORD" or t.prefix for t in toks)
    content_terms = _literal_terms(text, drop_stopwords=True)
    literal = " AND ".join(content_terms) if content_terms else None
    words = [w for w in text.split() if tokenize(w)]
    if not has_syntax:
        strict = " AND ".join(content_terms) if content_terms else None
        relaxed = " OR ".join(content_terms) if len(content_terms) > 1 else None
        return QueryPlan(text, strict, relaxed, literal, words)
    try:
        strict = _Parser(toks).parse()
    except _SyntaxProblem as exc:
        return QueryPlan(
            text, literal, None, literal, words,
            note=f"query syntax not understood ({exc}); searched the words literally",
        )
    return QueryPlan(text, strict, None, literal, words)


# --------------------------------------------------------------------------- running


@dataclass
class MatchOutcome:
    """Rows found by :func:`run_match`, how they were found, and any note for the user."""

    rows: list[Any]
    mode: str  # "strict", "relaxed", "literal" or "empty"
    note: str | None = None
    plan: QueryPlan | None = None


def is_query_error(exc: BaseException) -> bool:
    """True when an engine error is about the MATCH expression (not the database)."""
    if not isinstance(exc, apsw.SQLError):
        return False
    message = str(exc).lower()
    return any(s in message for s in ("fts5", "no such column", "syntax error", "unterminated", "unknown special query"))


def run_match(
    fetch: Callable[[str, int], Sequence[Row]],
    text: str,
    limit: int,
    *,
    key: Callable[[Row], Hashable] = lambda row: row[0],
    relax: bool = True,
) -> MatchOutcome:
    """Run a user query through ``fetch(expression, limit)`` with fallback and relaxation.

    ``fetch`` executes the FTS5 MATCH and returns ranked rows; ``key`` gives
    each row's identity for merging. Engine rejections of the expression are
    answered by an all-literal retry (reported in ``note``), never by an empty
    result or an exception.
    """
    plan = compile_query(text)
    if plan.empty:
        note = "the query has no searchable words" if text and text.strip() else None
        return MatchOutcome([], "empty", note, plan)
    mode, note = "strict", plan.note
    expression = plan.strict or plan.literal
    try:
        rows = list(fetch(expression, limit))
    except apsw.SQLError as exc:
        if not is_query_error(exc) or plan.literal is None or expression == plan.literal:
            if is_query_error(exc):
                return MatchOutcome([], "empty", f"the search engine rejected the query ({exc})", plan)
            raise
        rows = list(fetch(plan.literal, limit))
        mode, note = "literal", f"query syntax not understood ({exc}); searched the words literally"
    if relax and len(rows) < limit and plan.relaxed and mode == "strict":
        seen = {key(r) for r in rows}
        strict_count = len(rows)
        for row in fetch(plan.relaxed, limit):
            if key(row) not in seen:
                seen.add(key(row))
                rows.append(row)
                if len(rows) >= limit:
                    break
        if len(rows) > strict_count:
            mode = "relaxed"
            note = note or (
                f"{strict_count} result(s) matched every word; "
                f"added {len(rows) - strict_count} matching some of the words"
            )
    return MatchOutcome(rows[:limit], mode, note, plan)


# --------------------------------------------------------------------------- highlighting

HIGHLIGHT_OPEN, HIGHLIGHT_CLOSE = ">>>", "<<<"


def highlight_excerpt(content: str, query: str, width: int = 160, *, open_mark: str = HIGHLIGHT_OPEN,
                      close_mark: str = HIGHLIGHT_CLOSE) -> str:
    """An excerpt of ``content`` around the first query word found, every query word marked.

    For when FTS5's ``snippet()`` cannot mark the match (e.g. it was found
    through the CJK projection column): query words are matched
    case-insensitively, and CJK words longer than two characters also by their
    bigrams.
    """
    words = sorted({t for t in tokenize(query) if t.upper() not in _OPERATORS}, key=len, reverse=True)
    pieces = []
    for word in words:
        pieces.append(re.escape(word))
        if any(is_cjk(c) for c in word) and len(word) > 2:
            pieces.extend(re.escape(word[i : i + 2]) for i in range(len(word) - 1))
    pattern = re.compile("|".join(pieces), re.IGNORECASE) if pieces else None
    match = pattern.search(content) if pattern else None
    if match is None:
        text = content[:width]
        return text + ("..." if len(content) > width else "")
    start = max(0, match.start() - width // 3)
    end = min(len(content), start + width)
    excerpt = pattern.sub(lambda m: f"{open_mark}{m.group(0)}{close_mark}", content[start:end])
    return ("..." if start else "") + excerpt + ("..." if end < len(content) else "")
