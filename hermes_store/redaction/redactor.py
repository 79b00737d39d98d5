"""Replace secrets by ``[REDACTED:<kind>:<6 hex>]`` markers (keyed hash: linkable, unrecoverable).

The hash is HMAC-SHA256 of the secret under a per-store key (``store_meta``, see
:mod:`hermes_store.redaction.storage`), cut to 6 hex digits: the same secret gives the same
marker within a store, so two mentions can still be linked; without the key nothing can be
tried against the marker, and with it 24 bits say nothing about a high-entropy secret.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from hermes_store.redaction.encoded import CHECKS
from hermes_store.redaction.prefilter import prefilter
from hermes_store.redaction.rules import (
    COMPILED,
    ESCAPE_LITERAL,
    FULL,
    NAME_CHARS,
    RULES,
    TRIGGERS,
    is_documentation_example,
    quote_widths,
    value_is_secret,
)
from hermes_store.redaction.settings import RedactionSettings

MARKER = re.compile(r"\[REDACTED:[a-z0-9_-]{1,40}:[0-9a-f]{6}\]")
_ESCAPE = re.compile(r"[nrtbf]|u[0-9A-Fa-f]{4}")  # what follows the backslash of a JSON escape
# a JSON ``\u<4 hex>`` escape of a character a token or password is made of (``sk-pr\u006fj-…`` is
# ``sk-proj-…`` to whoever reads the JSON): the rules read such text with these escapes undone
# (``\\u006f`` in JSON inside JSON: tool-call arguments)
_ESCAPED_TOKEN_CHAR = re.compile(r"\\{1,7}u00(?:2[b-fB-F]|3[0-9aAdD]|[4-7][0-9a-fA-F])")


def unescaped_token_chars(text: str) -> tuple[str, list[int] | None]:
    """``text`` with every :data:`_ESCAPED_TOKEN_CHAR` escape replaced by its character, and
    where each character of the result starts in ``text`` (one more entry: ``len(text)``);
    None when ``text`` holds no such escape."""
    if ESCAPE_LITERAL not in text:
        return text, None
    parts: list[str] = []
    where: list[int] = []
    at = 0
    for match in _ESCAPED_TOKEN_CHAR.finditer(text):
        char = chr(int(match.group()[-2:], 16))
        if not (char.isalnum() or char in "+-./:=@_"):
            continue
        parts.append(text[at:match.start()])
        where.extend(range(at, match.start()))
        parts.append(char)
        where.append(match.start())
        at = match.end()
    if not where:
        return text, None
    parts.append(text[at:])
    where.extend(range(at, len(text) + 1))
    return "".join(parts), where


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret in a text: its kind and where its value lies (``start``/``end``)."""

    kind: str
    start: int
    end: int


def _assignment_kind(name: str, word: str) -> str:
    """The kind of a key position's secret, from the secret word that ends the key name."""
    if "aws" in name.lower() and "secret" in name.lower():
        return "aws-secret-key"
    name = word.lower()
    for word, kind in (("private", "private-key"), ("pass", "password"), ("pwd", "password"),
                       ("secret", "secret"), ("access", "access-key"), ("api", "api-key"),
                       ("credential", "credential"), ("auth", "auth-key"), ("key", "private-key")):
        if word in name:
            return kind
    return "token"


def _matches(index: int, text: str, spans: list[tuple[int, int]] | None) -> Iterator[re.Match[str]]:
    """Rule ``index``'s matches in ``text``; with ``spans``, only those starting where the
    rule's trigger starts within them (the match itself may run past the span)."""
    pattern = COMPILED[index]
    if spans is None:
        yield from pattern.finditer(text)
        return
    last = 0
    for lo, hi in spans:
        for trigger in TRIGGERS[index].finditer(text, lo, hi):
            if trigger.start() < last:
                continue
            match = pattern.match(text, trigger.start())
            if match is not None:
                last = match.end()
                yield match


def _token_kind(value: str) -> str | None:
    """The kind of a value that is itself a known token (``OPENAI_API_KEY=sk-...``), else None."""
    if FULL.fullmatch(value) is None:
        return None
    for rule, pattern in zip(RULES, COMPILED, strict=True):
        if rule.kind != "assignment" and not rule.check and pattern.fullmatch(value):
            return rule.kind
    return None


def _name_before(text: str, at: int) -> str:
    """The rest of the key name that ends at the secret word starting at ``at``."""
    start = at
    while start > 0 and at - start < 60 and text[start - 1] in NAME_CHARS:
        start -= 1
    if start > 0 and text[start - 1] == "\\":  # a JSON escape ends right before the name: ``\nDB_PASSWORD``
        escape = _ESCAPE.match(text, start, at)
        if escape is not None:
            start = escape.end()
    return text[start:at]


class Redactor:
    """Finds and replaces secrets in text under one store's key and settings."""

    def __init__(self, key: bytes, settings: RedactionSettings | None = None) -> None:
        self.settings = settings or RedactionSettings()
        self.enabled = self.settings.enabled
        self._key = bytes(key)
        self._extra = self.settings.patterns
        self._allow = self.settings.allow

    def marker(self, kind: str, secret: str) -> str:
        """The marker that replaces ``secret`` of ``kind`` in this store."""
        secret = unescaped_token_chars(secret)[0]  # one secret, one marker, however it was escaped
        digest = hmac.new(self._key, secret.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
        return f"[REDACTED:{kind}:{digest[:6]}]"

    def findings(self, text: str) -> list[Finding]:
        """The secrets in ``text``, in order, not overlapping (empty when redaction is off)."""
        if not self.enabled or not text:
            return []
        plain, where = unescaped_token_chars(text)
        if where is not None:  # found in the text as a reader of the JSON sees it, replaced in the text as stored
            return [Finding(item.kind, where[item.start], where[item.end]) for item in self.findings(plain)]
        fired = prefilter().fired(text)
        found = list(self._builtin(text, fired)) if fired else []
        if self._extra:
            found.extend((Finding(kind, m.start(), m.end()), 0) for kind, rx in self._extra
                         for m in rx.finditer(text) if m.end() > m.start())
        if not found:
            return []
        # leftmost first; at one start the more specific rule (lower priority) wins over a longer
        # key-position value: ``token:ghp_…@github.com`` is a URL password, not a token up to ``.git``
        found.sort(key=lambda item: (item[0].start, item[1], -item[0].end))
        # a marker already in the text is never redacted again, nor anything inside it
        # (``[REDACTED:url-password:7743f1]`` reads as a ``password: value`` pair)
        markers = [m.span() for m in MARKER.finditer(text)] if "[REDACTED:" in text else []
        next_marker = 0  # findings come by start, markers too: one walk over both
        kept: list[Finding] = []
        for item, _priority in found:
            if kept and item.start < kept[-1].end:
                continue
            while next_marker < len(markers) and markers[next_marker][1] <= item.start:
                next_marker += 1
            if next_marker < len(markers) and markers[next_marker][0] < item.end:
                continue
            value = text[item.start:item.end]
            if any(rx.search(value) for rx in self._allow):
                continue
            kept.append(item)
        return kept

    def _builtin(self, text: str, fired: dict[int, list[tuple[int, int]] | None], inner: bool = False
                 ) -> Iterator[tuple[Finding, int]]:
        for index in sorted(fired):
            rule = RULES[index]
            if inner and rule.check:  # in decoded text: no second decoding
                continue
            for match in _matches(index, text, fired[index]):
                kind = rule.kind
                if kind == "assignment":
                    name = _name_before(text, match.start("n")) + match.group("n")
                    between = text[match.end("n"):match.start("v")]
                    env = match.group("sep") == "=" and not any(c.isspace() for c in between)
                    prose = match.group("sep").lower() in ("is", "was")  # "the password is hunter2"
                    if not value_is_secret(name, match.group("v"), env, text[match.end():match.end() + 1], prose):
                        continue
                    start, end = match.span("v")
                    lead, trail = quote_widths(match.group("v"))
                    start, end = start + lead, end - trail
                    kind = _token_kind(text[start:end]) or _assignment_kind(name, match.group("n"))
                elif rule.check:  # a value judged by what it holds (decoded): the kind of that
                    start, end = match.span("v") if "v" in match.re.groupindex else match.span()
                    kind = CHECKS[rule.check](text[start:end], self._inner_kind)
                    if kind is None:
                        continue
                elif "v" in match.re.groupindex:  # a value that is itself a known token keeps its kind
                    start, end = match.span("v")  # (one secret, one marker: ``https://x:ghp_…@host``)
                    if is_documentation_example(text[start:end]):  # ``Bearer YOUR_TOKEN_HERE``: documentation
                        continue
                    kind = _token_kind(text[start:end]) or kind
                else:
                    start, end = match.span()
                if end > start:
                    yield Finding(kind.replace("_", "-"), start, end), rule.priority

    def _inner_kind(self, text: str) -> str | None:
        """The kind of the first secret the rules (no decoding check) find in ``text``, else None."""
        fired = prefilter().fired(text)
        found = min(self._builtin(text, fired, inner=True), key=lambda item: (item[0].start, item[1]),
                    default=None) if fired else None
        return found[0].kind if found is not None else None

    def redact_counted(self, text: str | None) -> tuple[str | None, Counter[str]]:
        """``text`` with its secrets replaced, and how many of each kind were replaced."""
        counts: Counter[str] = Counter()
        if text is None:
            return None, counts
        found = self.findings(text)
        if not found:
            return text, counts
        parts: list[str] = []
        at = 0
        for item in found:
            parts.append(text[at:item.start])
            parts.append(self.marker(item.kind, text[item.start:item.end]))
            counts[item.kind] += 1
            at = item.end
        parts.append(text[at:])
        return "".join(parts), counts

    def redact(self, text: str | None) -> str | None:
        """``text`` with every secret replaced by its marker (None stays None)."""
        if not text or not self.enabled:
            return text
        found = self.findings(text)
        if not found:
            return text
        parts: list[str] = []
        at = 0
        for item in found:
            parts.append(text[at:item.start])
            parts.append(self.marker(item.kind, text[item.start:item.end]))
            at = item.end
        parts.append(text[at:])
        return "".join(parts)

    def redact_rows(self, rows: list[tuple[Any, ...]], columns: tuple[int, ...]) -> list[tuple[Any, ...]]:
        """``rows`` with the text at ``columns`` of each redacted: one prefilter scan over the
        whole batch (the bulk loader's), then the full rules on the few rows it flags."""
        if not self.enabled or not rows:
            return rows
        if self._extra:  # extra patterns have no trigger: every text is read
            cells: Iterable[tuple[int, int]] = ((index, column) for index in range(len(rows))
                                                for column in columns)
        else:  # only the texts a trigger occurs in: no other text can hold a finding
            texts: list[str] = []
            where: list[tuple[int, int]] = []
            for column in columns:
                present = [index for index, row in enumerate(rows) if row[column]]
                texts.extend([rows[index][column] for index in present])
                where.extend([(index, column) for index in present])
            cells = sorted(where[i] for i in prefilter().candidates(texts))
        out = list(rows)
        for index, column in cells:
            value = out[index][column]
            redacted = self.redact(value)
            if redacted is not value:
                row = list(out[index])
                row[column] = redacted
                out[index] = tuple(row)
        return out

    def contains_secret(self, text: str) -> list[str]:
        """The kinds of secret ``text`` holds (empty: none, or redaction is off)."""
        return [f.kind for f in self.findings(text)]


_CUT_READS = 8192  # characters past a cut read to see whether a secret spans it


def cut_outside_secrets(text: str, at: int) -> int:
    """Where to cut ``text`` to keep at most ``at`` characters without cutting a secret (or a
    marker) in two: ``at``, or the start of the secret that spans it. A title cut inside a token
    kept a piece too short for any rule to know (``ghp_R2d2C3p0B…``), stored as typed."""
    if at >= len(text):
        return len(text)
    window = text[:at + _CUT_READS]
    spans = [(f.start, f.end) for f in _CUTTER.findings(window)]
    spans += [m.span() for m in MARKER.finditer(window)] if "[REDACTED:" in window else []
    for start, end in sorted(spans):
        if start < at < end:
            return start
    return at


def scan(text: str) -> list[str]:
    """The kinds of secret in ``text`` under the built-in rules (no store needed)."""
    return Redactor(b"scan").contains_secret(text)


_CUTTER = Redactor(b"cut")  # the built-in rules only: where a secret lies, never its marker
