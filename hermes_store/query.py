"""User text -> one compiled query plan, shared by every full-text index in the package.

:func:`compile_query` parses the text once into a :class:`QueryPlan`: engine-neutral
:class:`Match` trees (:class:`Term`, :class:`AllOf`, :class:`AnyOf`, :class:`Without`)
for the strict, relaxed and literal forms, plus the query's ``terms`` that title
matching and highlighting read. :func:`to_fts5` renders a match for SQLite FTS5
(``plan.strict`` etc. are those renderings); another engine renders the same
tree in its own syntax. :func:`run_plan` runs a plan through a ``fetch(match,
limit)``; :func:`run_match` is its FTS5-text form.

The rules, in one place:

* Valid FTS5 operators are honoured: ``"quoted phrases"``, ``OR``, ``NOT``,
  ``AND`` (upper case, as FTS5 spells them), ``prefix*`` and parentheses.
* Everything else is a literal word. A word is split the way the index's
  ``unicode61`` tokenizer splits text (letters, digits and private-use
  characters are token characters; everything else separates), and a word
  that splits into several tokens becomes a phrase: ``scripts/deploy.sh`` ->
  ``"scripts deploy sh"``, ``C:\\Users`` -> ``"c users"``, ``P2.2`` -> ``"p2 2"``.
  Characters that can never be indexed (punctuation) are dropped.
* CJK text has no spaces, so the index stores a *projection*
  (:func:`hermes_store.tokens.cjk_projection`: bigrams and unigrams of every CJK run, plus Latin
  glued to CJK); queries use the matching form (1 char -> unigram, 2 chars ->
  bigram, longer -> a phrase of consecutive bigrams).
* Emoji are separators to ``unicode61``, so the projection also carries one
  word per emoji code point (:func:`emoji_tokens`: ``🚀`` -> ``emoji1f680``;
  joiners, variation selectors and skin-tone modifiers left out) and a query
  emoji becomes that word (a ZWJ sequence a phrase of its parts).
* :func:`run_plan` never fails silently: an expression the engine rejects is
  retried all-literal with a ``note``; a natural-language question whose strict
  AND match yields fewer hits than asked is relaxed to OR over its content words
  (stopwords dropped) and the results are merged, strict hits first.
"""

from __future__ import annotations

import re
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import apsw

from hermes_store.budget import bounded_query, current_budget
from hermes_store.tokens import (
    emoji_tokens,
    has_cjk,
    is_emoji,
    split_cjk,
    tokenize,
)

Row = TypeVar("Row")

MAX_TERMS = 64  # bound on the number of terms compiled from one query
MAX_DEPTH = 32  # parentheses nested deeper than this: the query is searched literally
MIN_PREFIX_CHARS = 3  # a shorter prefix* would expand to a large part of the vocabulary
MAX_PREFIX_TERMS = 4  # prefix* terms honoured per query; further ones are searched as words
# Only this much of a query is compiled (far more than MAX_TERMS words need): a multi-megabyte
# query (a pasted log through recall or the provider's prefetch) compiled in seconds per kind.
MAX_QUERY_CHARS = 4_096

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


# --------------------------------------------------------------------------- matches


class Match(ABC):
    """A compiled full-text match, independent of any engine's syntax.

    The nodes are :class:`Term` (a word, or a phrase of consecutive index
    tokens), :class:`AllOf` (every part), :class:`AnyOf` (some part) and
    :class:`Without` (``keep`` but not ``drop``). :func:`to_fts5` renders one
    for SQLite FTS5; another engine's storage renders it in its own syntax.
    """

    __slots__ = ()

    @abstractmethod
    def terms(self) -> list[Term]:
        """Every :class:`Term` of the match, in order."""


@dataclass(frozen=True)
class Term(Match):
    """Consecutive index tokens (a phrase when more than one); ``prefix``: the last token is a
    prefix; ``cjk``: tokens of the CJK projection (bigrams/unigrams, see :func:`cjk_projection`)."""

    tokens: tuple[str, ...]
    prefix: bool = False
    cjk: bool = False

    def terms(self) -> list[Term]:
        """Itself."""
        return [self]


@dataclass(frozen=True)
class AllOf(Match):
    """Every part must match."""

    parts: tuple[Match, ...]

    def terms(self) -> list[Term]:
        """The terms of every part."""
        return [t for part in self.parts for t in part.terms()]


@dataclass(frozen=True)
class AnyOf(Match):
    """At least one part must match."""

    parts: tuple[Match, ...]

    def terms(self) -> list[Term]:
        """The terms of every part."""
        return [t for part in self.parts for t in part.terms()]


@dataclass(frozen=True)
class Without(Match):
    """``keep`` matches and ``drop`` does not."""

    keep: Match
    drop: Match

    def terms(self) -> list[Term]:
        """The terms of ``keep`` then ``drop``."""
        return self.keep.terms() + self.drop.terms()


def _all_of(parts: Sequence[Match]) -> Match:
    return parts[0] if len(parts) == 1 else AllOf(tuple(parts))


def _any_of(parts: Sequence[Match]) -> Match:
    return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))


def _quote(text: str) -> str:
    """Double-quote an FTS5 string (embedded quotes doubled)."""
    return '"' + text.replace('"', '""') + '"'


def _fts5(match: Match, top: bool) -> str:
    if isinstance(match, Term):
        return _quote(" ".join(match.tokens)) + ("*" if match.prefix else "")
    if isinstance(match, Without):
        return f"({_fts5(match.keep, False)} NOT {_fts5(match.drop, False)})"
    if isinstance(match, (AllOf, AnyOf)):
        joined = (" AND " if isinstance(match, AllOf) else " OR ").join(
            _fts5(part, False) for part in match.parts)
        return joined if top else "(" + joined + ")"
    raise TypeError(f"not a match: {match!r}")


def to_fts5(match: Match | None) -> str | None:
    """The SQLite FTS5 expression for ``match`` (None for None)."""
    return None if match is None else _fts5(match, True)


class QueryRejected(ValueError):
    """The search engine refused a match expression (raised by storage implementations)."""


# --------------------------------------------------------------------------- terms


def _cjk_term(run: str) -> Term:
    run = unicodedata.normalize("NFKC", run)
    if len(run) <= 2:
        return Term((run,), cjk=True)
    return Term(tuple(run[i : i + 2] for i in range(len(run) - 1)), cjk=True)


def literal_match(word: str, *, prefix: bool = False) -> Match | None:
    """Translate one user word into a literal :class:`Match`, or None when nothing in it is
    indexable."""
    tokens = tokenize(word)
    emoji = emoji_tokens(word) if not word.isascii() else []
    if emoji:  # emoji words live in the projection column, like CJK bigrams
        term = Term(tuple(emoji), cjk=True)
        rest = literal_match("".join(c for c in word if not is_emoji(c)), prefix=prefix)
        return term if rest is None else _all_of([rest, term])
    if not tokens:
        return None
    if has_cjk(word):
        parts: list[Match] = []
        latin: list[str] = []
        for token in tokens:
            for flag, run in split_cjk(token):
                if flag:
                    if latin:
                        parts.append(Term(tuple(latin)))
                        latin = []
                    parts.append(_cjk_term(run))
                else:
                    latin.append(run)
        if latin:
            parts.append(Term(tuple(latin), prefix))
        return _all_of(parts)
    return Term(tuple(tokens), prefix)


def literal_term(word: str, *, prefix: bool = False) -> str | None:
    """Translate one user word into a safe FTS5 term, or None when nothing in it is indexable."""
    match = literal_match(word, prefix=prefix)
    return None if match is None else _fts5(match, False)


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
    """Recursive descent over the lexed tokens; builds a :class:`Match` or raises."""

    def __init__(self, toks: list[_Tok]) -> None:
        self.toks = toks
        self.pos = 0
        self.terms: list[Match] = []
        self.depth = 0
        self.prefixes = 0
        self.notes: list[str] = []

    def peek(self) -> _Tok | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def take(self) -> _Tok:
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def parse(self) -> Match | None:
        expr = self.or_expr()
        if self.peek() is not None:
            raise _SyntaxProblem(f"unexpected {self.peek().kind}")
        return expr

    def or_expr(self) -> Match | None:
        parts = [self.and_expr()]
        while self.peek() is not None and self.peek().kind == "OR":
            self.take()
            parts.append(self.and_expr())
        kept = [p for p in parts if p]
        if not kept:
            return None
        return _any_of(kept)

    def and_expr(self) -> Match | None:
        parts = [self.not_expr()]
        while self.peek() is not None and self.peek().kind not in ("OR", "RP"):
            if self.peek().kind == "AND":
                self.take()
            parts.append(self.not_expr())
        kept = [p for p in parts if p]
        if not kept:
            return None
        return _all_of(kept)

    def not_expr(self) -> Match | None:
        left = self.primary()
        while self.peek() is not None and self.peek().kind == "NOT":
            self.take()
            right = self.primary()
            if left is None:
                raise _SyntaxProblem("NOT needs something before it")
            if right is not None:
                left = Without(left, right)
        return left

    def primary(self) -> Match | None:
        tok = self.peek()
        if tok is None:
            raise _SyntaxProblem("expression ends early")
        if tok.kind == "LP":
            self.take()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _SyntaxProblem(f"parentheses nested deeper than {MAX_DEPTH}")
            inner = self.or_expr()
            if self.peek() is None or self.peek().kind != "RP":
                raise _SyntaxProblem("unbalanced parenthesis")
            self.take()
            self.depth -= 1
            return inner
        if tok.kind in ("WORD", "PHRASE"):
            self.take()
            term = literal_match(tok.text, prefix=tok.prefix and self._prefix_allowed(tok.text))
            if term is not None:
                if len(self.terms) >= MAX_TERMS:
                    return None
                self.terms.append(term)
            return term
        raise _SyntaxProblem(f"operator {tok.kind} in the wrong place")

    def _prefix_allowed(self, text: str) -> bool:
        """Bound prefix expansion: a short stem or too many prefixes is searched as a word."""
        tokens = tokenize(text)
        if not tokens or len(tokens[-1]) < MIN_PREFIX_CHARS:
            self.notes.append(f"'{text}*' is shorter than {MIN_PREFIX_CHARS} characters; searched as a word")
            return False
        if self.prefixes >= MAX_PREFIX_TERMS:
            self.notes.append(f"more than {MAX_PREFIX_TERMS} prefix* terms; '{text}*' searched as a word")
            return False
        self.prefixes += 1
        return True


# --------------------------------------------------------------------------- plans


@dataclass
class QueryPlan:
    """What a user query compiles to, once, for every step of a search.

    ``strict_match``: the precise match (operators honoured, words AND-ed).
    ``relaxed_match``: OR over the content words, for natural-language queries only.
    ``literal_match``: every word taken literally and AND-ed (the fallback).
    ``words``: the whitespace words that hold something indexable.
    ``terms``: the query's index tokens, case kept, operator words left out -- what title
    matching and highlighting compare against.
    ``note``: set when the query's syntax could not be honoured as written.
    ``strict``/``relaxed``/``literal`` are the same matches as FTS5 text.
    """

    text: str
    strict_match: Match | None
    relaxed_match: Match | None
    literal_match: Match | None
    words: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    note: str | None = None

    @property
    def strict(self) -> str | None:
        """The strict match as an FTS5 expression."""
        return to_fts5(self.strict_match)

    @property
    def relaxed(self) -> str | None:
        """The relaxed match as an FTS5 expression."""
        return to_fts5(self.relaxed_match)

    @property
    def literal(self) -> str | None:
        """The literal match as an FTS5 expression."""
        return to_fts5(self.literal_match)

    @property
    def empty(self) -> bool:
        """True when nothing in the query can be searched."""
        return self.strict_match is None and self.literal_match is None

    def folded_terms(self) -> list[str]:
        """:attr:`terms` lower-cased (for case-insensitive comparisons such as title matching)."""
        return [t.lower() for t in self.terms]


# "Caroline's" -> "Caroline": the index splits the possessive into its own token "s", so kept it
# would be the phrase "caroline s" and miss every "Caroline" without one ("a gift from my
# grandma" for "grandma's gift")
_POSSESSIVE = re.compile(r"(?<=\w)['\u2019][sS](?=\W*$)")


def _literal_terms(text: str, *, drop_stopwords: bool) -> list[Match]:
    """Every whitespace word of ``text`` as a literal match (quotes and operators made plain)."""
    words = [w for w in text.replace('"', " ").replace("(", " ").replace(")", " ").split()]
    content = [w for w in words if tokenize(w) and w.lower().strip("'*?!.,;:") not in STOPWORDS]
    chosen = content if (drop_stopwords and content) else words
    terms: list[Match] = []
    for word in chosen:
        term = literal_match(_POSSESSIVE.sub("", word.rstrip("*")))
        if term is not None and term not in terms:
            terms.append(term)
        if len(terms) >= MAX_TERMS:
            break
    return terms


def query_terms(text: str) -> list[str]:
    """The index tokens of ``text`` (case kept) without the operator words AND/OR/NOT."""
    return [t for t in tokenize(text or "") if t.upper() not in _OPERATORS]


def bounded_query_text(text: str) -> str:
    """``text`` cut to at most ``MAX_QUERY_CHARS`` characters (at a space when one is near the end).

    Every search that looks at the query's words itself (not only through the compiled
    plan) cuts it first, so a multi-megabyte query costs what a long one does. NUL characters
    become spaces: no stored text holds one (importers and the live API remove them) and
    PostgreSQL text cannot carry one, so both engines read such a query alike.
    """
    text = text.replace("\x00", " ")
    if len(text) <= MAX_QUERY_CHARS:
        return text
    head = text[:MAX_QUERY_CHARS]
    space = max(head.rfind(" "), head.rfind("\n"))
    return head[:space] if space > MAX_QUERY_CHARS // 2 else head


def clean_query_text(text: str) -> str:
    """``text`` with every control character (NUL included) as a space: what every engine is
    given for a query, so NUL (which PostgreSQL text cannot hold) and other controls are read
    alike everywhere -- the compiled plan and the raw-text look-ups (titles) both use this."""
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)


def compile_query(text: str | QueryPlan) -> QueryPlan:
    """Compile user text into a :class:`QueryPlan` (never raises; a plan is returned as is)."""
    if isinstance(text, QueryPlan):
        return text
    text = str(text or "")
    cut_note = None
    if len(text) > MAX_QUERY_CHARS:
        cut_note = f"query cut to its first {MAX_QUERY_CHARS:,} characters (it had {len(text):,})"
        text = bounded_query_text(text)
    plan = _compile(clean_query_text(text))
    if cut_note is not None:
        plan.note = f"{plan.note}; {cut_note}" if plan.note else cut_note
    return plan


def _compile(text: str) -> QueryPlan:
    """:func:`compile_query` on text already cut and cleaned."""
    toks = _lex(text)
    has_syntax = any(t.kind != "WORD" or t.prefix for t in toks)
    content_terms = _literal_terms(text, drop_stopwords=True)
    literal = _all_of(content_terms) if content_terms else None
    words = [w for w in text.split() if tokenize(w)]
    terms = query_terms(text)
    if not has_syntax:
        relaxed = AnyOf(tuple(content_terms)) if len(content_terms) > 1 else None
        return QueryPlan(text, literal, relaxed, literal, words, terms)
    if _reads_as_prose(toks):
        return _prose_plan(text, toks, content_terms, words, terms)
    parser = _Parser(toks)
    try:
        strict = parser.parse()
    except _SyntaxProblem as exc:
        return QueryPlan(
            text, literal, None, literal, words, terms,
            note=f"query syntax not understood ({exc}); searched the words literally",
        )
    notes = list(dict.fromkeys(parser.notes))
    if len(notes) > 3:
        notes = [*notes[:3], f"and {len(notes) - 3} more"]
    return QueryPlan(text, strict, None, literal, words, terms, note="; ".join(notes) or None)


PROSE_MIN_WORDS = 5  # bare words that make a query with quotes or parentheses read as prose


def _reads_as_prose(toks: list[_Tok]) -> bool:
    """True for a natural-language question that merely holds "a quoted title" or (an aside):
    no operator and no prefix*, and at least :data:`PROSE_MIN_WORDS` words outside quotes."""
    if any(t.kind in _OPERATORS or t.prefix for t in toks):
        return False
    return sum(1 for t in toks if t.kind == "WORD") >= PROSE_MIN_WORDS


def _prose_plan(text: str, toks: list[_Tok], content_terms: list[Match], words: list[str],
                terms: list[str]) -> QueryPlan:
    """The plan of a question read as prose: strict = every content word and each quoted
    phrase; relaxed = any of them (a quoted phrase counts as one term, so a session holding
    the title ranks high), stop words dropped as for any question."""
    parts: list[Match] = []
    for tok in toks:
        if tok.kind == "PHRASE":
            match = literal_match(tok.text)
            if match is not None and match not in parts:
                parts.append(match)
    for match in content_terms:
        if match not in parts:
            parts.append(match)
    parts = parts[:MAX_TERMS]
    strict = _all_of(parts) if parts else None
    relaxed = AnyOf(tuple(parts)) if len(parts) > 1 else None
    return QueryPlan(text, strict, relaxed, strict, words, terms,
                     note="read as a question: quotes and parentheses are not search syntax here")


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
    if isinstance(exc, QueryRejected):
        return True
    if not isinstance(exc, apsw.SQLError):
        return False
    message = str(exc).lower()
    return any(s in message for s in ("fts5", "no such column", "syntax error", "unterminated", "unknown special query"))


def relaxed_note(exact: int, added: int) -> str:
    """The note of a search relaxed to some of the words: how many results matched every word
    and how many were added (worded for any count: "1 matched", never "1 result(s)"; "none
    matched", never "only 0 matched")."""
    if exact == 0:
        return f"none matched every word; found {added} matching some of the words"
    return f"only {exact} matched every word; added {added} matching some of the words"


def run_plan(
    fetch: Callable[[Match, int], Sequence[Row]],
    plan: QueryPlan,
    limit: int,
    *,
    key: Callable[[Row], Hashable] = lambda row: row[0],
    relax: bool = True,
) -> MatchOutcome:
    """Run a compiled query through ``fetch(match, limit)`` with fallback and relaxation.

    ``fetch`` executes one :class:`Match` and returns ranked rows; ``key`` gives
    each row's identity for merging. Engine rejections of the match
    (:class:`QueryRejected`, or an FTS5 error) are answered by an all-literal
    retry (reported in ``note``), never by an empty result or an exception.
    """
    if plan.empty:
        note = "the query has no searchable words" if plan.text and plan.text.strip() else None
        return MatchOutcome([], "empty", note, plan)
    mode, note = "strict", plan.note
    expression = plan.strict_match or plan.literal_match
    rows: list[Any] = []
    try:
        with bounded_query():  # the time budget, enforced inside SQLite (budget.query_budget)
            try:
                rows = list(fetch(expression, limit))
            except (apsw.SQLError, QueryRejected) as exc:
                literal = plan.literal_match
                if not is_query_error(exc) or literal is None or expression == literal:
                    if is_query_error(exc):
                        return MatchOutcome([], "empty", f"the search engine rejected the query ({exc})", plan)
                    raise
                rows = list(fetch(literal, limit))
                mode, note = "literal", f"query syntax not understood ({exc}); searched the words literally"
            if relax and len(rows) < limit and plan.relaxed_match and mode == "strict":
                strict_count = len(rows)
                relaxed_rows = list(fetch(plan.relaxed_match, limit))
                seen = {key(r) for r in rows}
                for row in relaxed_rows:
                    if key(row) not in seen:
                        seen.add(key(row))
                        rows.append(row)
                        if len(rows) >= limit:
                            break
                if len(rows) > strict_count:
                    mode = "relaxed"
                    note = note or relaxed_note(strict_count, len(rows) - strict_count)
    except apsw.InterruptError:
        stopped = (f"the search stopped at its {current_budget() or 0:.1f} s time budget; "
                   f"results are partial ({len(rows)} found before it)")
        return MatchOutcome(rows[:limit], mode, "; ".join(filter(None, [note, stopped])), plan)
    return MatchOutcome(rows[:limit], mode, note, plan)


def run_match(
    fetch: Callable[[str, int], Sequence[Row]],
    text: str | QueryPlan,
    limit: int,
    *,
    key: Callable[[Row], Hashable] = lambda row: row[0],
    relax: bool = True,
) -> MatchOutcome:
    """Run a user query through ``fetch(fts5_expression, limit)`` with fallback and relaxation.

    The FTS5-text form of :func:`run_plan` (``text`` is compiled once with
    :func:`compile_query`; a :class:`QueryPlan` is used as is).
    """
    return run_plan(lambda match, count: fetch(_fts5(match, True), count), compile_query(text),
                    limit, key=key, relax=relax)
