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
from collections.abc import Iterator
from dataclasses import dataclass

from hermes_store.redaction.rules import COMBINED, PREFILTER, value_is_secret
from hermes_store.redaction.settings import RedactionSettings

MARKER = re.compile(r"\[REDACTED:[a-z0-9_-]{1,40}:[0-9a-f]{6}\]")


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret in a text: its kind and where its value lies (``start``/``end``)."""

    kind: str
    start: int
    end: int


def _assignment_kind(name: str) -> str:
    name = name.lower()
    if "aws" in name and "secret" in name:
        return "aws-secret-key"
    for word, kind in (("private", "private-key"), ("passw", "password"), ("pwd", "password"),
                       ("secret", "secret"), ("access", "access-key"), ("api", "api-key"),
                       ("credential", "credential"), ("auth", "auth-key")):
        if word in name:
            return kind
    return "token"


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
        digest = hmac.new(self._key, secret.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
        return f"[REDACTED:{kind}:{digest[:6]}]"

    def findings(self, text: str) -> list[Finding]:
        """The secrets in ``text``, in order, not overlapping (empty when redaction is off)."""
        if not self.enabled or not text:
            return []
        found = list(self._builtin(text)) if PREFILTER.search(text.lower()) else []
        if self._extra:
            found.extend(Finding(kind, m.start(), m.end()) for kind, rx in self._extra
                         for m in rx.finditer(text) if m.end() > m.start())
            found.sort(key=lambda f: (f.start, -f.end))
            kept: list[Finding] = []
            for item in found:
                if not kept or item.start >= kept[-1].end:
                    kept.append(item)
            found = kept
        if self._allow:
            found = [f for f in found if not any(rx.search(text[f.start:f.end]) for rx in self._allow)]
        return [f for f in found if not MARKER.fullmatch(text[f.start:f.end])]

    def _builtin(self, text: str) -> Iterator[Finding]:
        for match in COMBINED.finditer(text):
            kind = match.lastgroup or "secret"
            value = match.group(f"{kind}_v") if f"{kind}_v" in COMBINED.groupindex else None
            if kind == "assignment":
                name = match.group("assignment_n")
                between = text[match.end("assignment_n"):match.start("assignment_v")]
                if not value_is_secret(name, value or "", "=" in between and ":" not in between):
                    continue
                start, end = match.span("assignment_v")
                if text[start] in "\"'" and end - start >= 2:
                    start, end = start + 1, end - 1
                inner = COMBINED.fullmatch(text, start, end)  # a known token: named by its own kind
                kind = inner.lastgroup if inner is not None and inner.lastgroup != "assignment" \
                    else _assignment_kind(name)
            elif value is not None:
                start, end = match.span(f"{match.lastgroup}_v")
            else:
                start, end = match.span()
            if end > start:
                yield Finding(kind.replace("_", "-"), start, end)

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
        if text is None or not self.enabled:
            return text
        if not PREFILTER.search(text.lower()) and not self._extra:
            return text
        return self.redact_counted(text)[0]

    def contains_secret(self, text: str) -> list[str]:
        """The kinds of secret ``text`` holds (empty: none, or redaction is off)."""
        return [f.kind for f in self.findings(text)]


def scan(text: str) -> list[str]:
    """The kinds of secret in ``text`` under the built-in rules (no store needed)."""
    return Redactor(b"scan").contains_secret(text)
