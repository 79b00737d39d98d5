"""FTS5 match expressions -> PostgreSQL ``tsquery`` SQL with bound parameters.

:func:`hermes_store.query.compile_query` turns user text into safe FTS5 expressions (the
strict, relaxed and literal forms of a :class:`~hermes_store.query.QueryPlan`). Those
expressions have a small, regular grammar: quoted terms (tokens exactly as the index
tokenizer splits them, already CJK-projected), an optional ``*`` prefix mark, ``AND``,
``OR``, ``NOT`` and parentheses. This module parses that same form and compiles it into a
SQL expression of type ``tsquery`` in which every term is a bound parameter:

* ``"a b c"`` -> ``phraseto_tsquery(cfg, hermes_tokens(%s))`` (adjacent positions, as an
  FTS5 phrase; ``hermes_tokens`` folds the term exactly as the index folds stored text);
* ``"a b*"`` -> the phrase followed by ``hermes_prefix_query(...)`` (schema/pg/0014: the
  folded token as a prefix, stemmed only where FTS5's porter stems it, 3 to 64 bytes);
* ``X AND Y`` -> ``(X && Y)``, ``X OR Y`` -> ``(X || Y)``, ``X NOT Y`` -> ``(X && !!Y)``.

Nothing from the user is ever pasted into SQL text: the SQL skeleton is made only of the
operators above and ``%s`` placeholders. Because the running logic (strict match, literal
fallback, relaxation to OR) lives in :func:`hermes_store.query.run_match`, a PostgreSQL
``fetch`` callback compiles whatever expression it is handed and both engines answer the
same query the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SEARCH_CONFIG = "hermes_search"  # the text search configuration made by schema/pg/0001
TERM_CAP = 4096  # characters of one term passed through hermes_tokens (the index-side folding)
_OPERATORS = ("AND", "OR", "NOT")


class TsQueryError(ValueError):
    """The expression is not in the form :func:`hermes_store.query.compile_query` produces."""


@dataclass(frozen=True)
class Term:
    """One quoted term: its tokens (space separated) and whether the last one is a prefix."""

    tokens: tuple[str, ...]
    prefix: bool = False


@dataclass(frozen=True)
class Op:
    """A binary operator node (``AND``, ``OR`` or ``NOT`` = and-not)."""

    kind: str
    left: Term | Op
    right: Term | Op


Node = Term | Op


def _lex(expression: str) -> list[tuple[str, object]]:
    """Split an FTS5 expression into ('TERM', Term), ('OP', name), ('LP'|'RP', None)."""
    out: list[tuple[str, object]] = []
    i, n = 0, len(expression)
    while i < n:
        char = expression[i]
        if char.isspace():
            i += 1
        elif char == '"':
            j, buf = i + 1, []
            while True:
                if j >= n:
                    raise TsQueryError("unterminated quoted term")
                if expression[j] == '"':
                    if j + 1 < n and expression[j + 1] == '"':
                        buf.append('"')
                        j += 2
                        continue
                    break
                buf.append(expression[j])
                j += 1
            i = j + 1
            prefix = i < n and expression[i] == "*"
            if prefix:
                i += 1
            tokens = tuple("".join(buf).split())
            if not tokens:
                raise TsQueryError("empty quoted term")
            out.append(("TERM", Term(tokens, prefix)))
        elif char in "()":
            out.append(("LP" if char == "(" else "RP", None))
            i += 1
        else:
            j = i
            while j < n and not expression[j].isspace() and expression[j] not in '()"':
                j += 1
            word = expression[i:j]
            if word not in _OPERATORS:
                raise TsQueryError(f"unexpected bare word {word!r} (terms are always quoted)")
            out.append(("OP", word))
            i = j
    return out


class _Parser:
    """FTS5 precedence: NOT binds tighter than AND, AND tighter than OR."""

    def __init__(self, toks: list[tuple[str, object]]) -> None:
        self.toks = toks
        self.pos = 0

    def _peek(self, kind: str, value: object = None) -> bool:
        if self.pos >= len(self.toks):
            return False
        tok_kind, tok_value = self.toks[self.pos]
        return tok_kind == kind and (value is None or tok_value == value)

    def parse(self) -> Node:
        node = self._or()
        if self.pos != len(self.toks):
            raise TsQueryError(f"unexpected {self.toks[self.pos][0]} at position {self.pos}")
        return node

    def _or(self) -> Node:
        node = self._and()
        while self._peek("OP", "OR"):
            self.pos += 1
            node = Op("OR", node, self._and())
        return node

    def _and(self) -> Node:
        node = self._not()
        while self._peek("OP", "AND") or self._peek("TERM") or self._peek("LP"):
            if self._peek("OP", "AND"):
                self.pos += 1
            node = Op("AND", node, self._not())
        return node

    def _not(self) -> Node:
        node = self._primary()
        while self._peek("OP", "NOT"):
            self.pos += 1
            node = Op("NOT", node, self._primary())
        return node

    def _primary(self) -> Node:
        if self.pos >= len(self.toks):
            raise TsQueryError("expression ends early")
        kind, value = self.toks[self.pos]
        self.pos += 1
        if kind == "TERM":
            return value  # type: ignore[return-value]
        if kind == "LP":
            node = self._or()
            if not self._peek("RP"):
                raise TsQueryError("unbalanced parenthesis")
            self.pos += 1
            return node
        raise TsQueryError(f"{kind} {value or ''} in the wrong place".strip())


def parse_expression(expression: str) -> Node:
    """Parse an FTS5 expression made by :func:`hermes_store.query.compile_query`."""
    if not expression or not expression.strip():
        raise TsQueryError("empty expression")
    return _Parser(_lex(expression)).parse()


def _term_sql(term: Term, config: str, params: list[str]) -> str:
    phrase = term.tokens[:-1] if term.prefix else term.tokens
    parts: list[str] = []
    if phrase:
        params.append(" ".join(phrase))
        parts.append(f"phraseto_tsquery('{config}', hermes_tokens(%s, {TERM_CAP}))")
    if term.prefix:
        params.append(term.tokens[-1])
        parts.append("hermes_prefix_query(%s)")  # the index's configuration (schema/pg/0014)
    if len(parts) == 1:
        return parts[0]
    return f"tsquery_phrase({parts[0]}, {parts[1]})"


_SQL_OPS = {"AND": "&&", "OR": "||"}


def _node_sql(node: Any, config: str, params: list[str]) -> str:
    if isinstance(node, Term) or hasattr(node, "tokens"):  # ours, or hermes_store.query.Term
        return _term_sql(node, config, params)
    if hasattr(node, "keep"):  # hermes_store.query.Without
        keep = _node_sql(node.keep, config, params)
        return f"({keep} && !!{_node_sql(node.drop, config, params)})"
    if hasattr(node, "parts"):  # hermes_store.query.AllOf / AnyOf
        joiner = " && " if type(node).__name__ == "AllOf" else " || "
        return "(" + joiner.join(_node_sql(part, config, params) for part in node.parts) + ")"
    if not isinstance(node, Op):
        raise TsQueryError(f"not a match: {node!r}")
    left = _node_sql(node.left, config, params)
    right = _node_sql(node.right, config, params)
    if node.kind == "NOT":
        return f"({left} && !!{right})"
    return f"({left} {_SQL_OPS[node.kind]} {right})"


def tsquery_sql(expression: Any, *, config: str = SEARCH_CONFIG) -> tuple[str, list[str]]:
    """``(sql, params)``: a ``tsquery``-valued SQL expression for ``expression``.

    ``expression`` is FTS5 text as :func:`hermes_store.query.compile_query` makes it, or an
    already parsed match tree (``Term`` / ``AllOf`` / ``AnyOf`` / ``Without`` nodes).

    ``config`` must be a trusted configuration name (a constant of the storage code), never
    user input; every term of ``expression`` travels as a bound parameter.
    """
    if not config.replace("_", "").isalnum():
        raise TsQueryError(f"invalid text search configuration name {config!r}")
    params: list[str] = []
    node = parse_expression(expression) if isinstance(expression, str) else expression
    sql = _node_sql(node, config, params)
    return sql, params


def positive_terms(expression: Any) -> list[Any]:
    """The terms that must or may match (not those under ``NOT``), in order, without repeats
    (for scoring and highlighting); accepts what :func:`tsquery_sql` accepts."""
    found: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, Term) or hasattr(node, "tokens"):
            if node not in found:
                found.append(node)
        elif hasattr(node, "keep"):
            walk(node.keep)
        elif hasattr(node, "parts"):
            for part in node.parts:
                walk(part)
        else:
            walk(node.left)
            if node.kind != "NOT":
                walk(node.right)

    walk(parse_expression(expression) if isinstance(expression, str) else expression)
    return found


def required_phrases(expression: Any) -> list[str]:
    """The phrases of two or more tokens that every row matching ``expression`` contains (the
    terms of its top-level conjunction and of the kept side of ``NOT``; a prefix term's last
    token left out), each as its tokens joined by spaces; accepts what :func:`tsquery_sql`
    accepts. Nothing under ``OR`` is required."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, Term) or hasattr(node, "tokens"):
            tokens = node.tokens[:-1] if node.prefix else node.tokens
            text = " ".join(tokens)
            if len(tokens) >= 2 and text not in found:
                found.append(text)
        elif hasattr(node, "keep"):
            walk(node.keep)
        elif hasattr(node, "parts"):
            if type(node).__name__ == "AllOf":
                for part in node.parts:
                    walk(part)
        elif node.kind == "AND":
            walk(node.left)
            walk(node.right)
        elif node.kind == "NOT":
            walk(node.left)

    walk(parse_expression(expression) if isinstance(expression, str) else expression)
    return found


def pair_keys_sql(phrases: list[str], *, config: str = SEARCH_CONFIG) -> tuple[str, list[str]]:
    """``(sql, params)``: an ``integer[]``-valued SQL expression, the keys of schema/pg/0006's
    ``hermes_pair_keys`` that every row containing each of ``phrases`` holds (the hashes of
    the phrases' adjacent lexeme pairs, folded and stemmed as the index folds stored text);
    ``'{}'`` for none. Every phrase travels as a bound parameter."""
    if not config.replace("_", "").isalnum():
        raise TsQueryError(f"invalid text search configuration name {config!r}")
    if not phrases:
        return "'{}'::integer[]", []
    parts = [f"hermes_pair_keys(to_tsvector('{config}', hermes_tokens(%s, {TERM_CAP})))" for _ in phrases]
    return "(" + " || ".join(parts) + ")", list(phrases)
