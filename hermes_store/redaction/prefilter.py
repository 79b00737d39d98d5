"""Which rules may match a text: every rule's trigger scanned in one pass.

With Hyperscan (the ``hyperscan`` package, a dependency) the triggers are compiled into one
database and a text costs a few microseconds whatever the number of rules; without it (a
platform without its wheels) each trigger is searched with Python's ``re``, slower but
finding the same rules.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import threading
from typing import Any

from hermes_store.redaction.rules import ESCAPE_LITERAL, ESCAPE_TRIGGER, RULES


class Prefilter:
    """``fired(text)``: the indexes of the rules in :data:`RULES` whose trigger occurs."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._hs: Any = None
        try:
            import hyperscan
        except ImportError:
            hyperscan = None
        if hyperscan is not None:
            database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            flags = [(hyperscan.HS_FLAG_SINGLEMATCH if rule.window is None else 0)
                     | (hyperscan.HS_FLAG_CASELESS if rule.caseless else 0) for rule in RULES]
            database.compile(expressions=[rule.trigger.encode() for rule in RULES],
                             ids=list(range(len(RULES))), flags=flags)
            self._hs, self._database = hyperscan, database
            every = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)  # every match: for many texts at once
            every.compile(expressions=[rule.trigger.encode() for rule in RULES] + [ESCAPE_TRIGGER.encode()],
                          ids=list(range(len(RULES) + 1)),
                          flags=[hyperscan.HS_FLAG_CASELESS if rule.caseless else 0 for rule in RULES] + [0])
            self._every = every
        self._triggers = tuple(re.compile(rule.trigger, re.IGNORECASE if rule.caseless else 0) for rule in RULES)
        # ASCII text: the literal pre-check (str.lower and re's IGNORECASE agree on ASCII)
        self._literals = tuple(dict.fromkeys(literal for rule in RULES for literal in rule.literals))
        self._checked = tuple((trigger, rule.literals, rule.anchored)
                              for trigger, rule in zip(self._triggers, RULES, strict=True))

    @property
    def engine(self) -> str:
        """``hyperscan`` or ``re``: what scans the triggers."""
        return "hyperscan" if self._hs is not None else "re"

    def _scratch(self, name: str = "scratch") -> Any:
        scratch = getattr(self._local, name, None)
        if scratch is None:  # a Hyperscan scratch space may be used by one thread at a time
            scratch = self._hs.Scratch(self._database if name == "scratch" else self._every)
            setattr(self._local, name, scratch)
        return scratch

    def candidates(self, texts: list[str]) -> set[int]:
        """The indexes of ``texts`` in which some trigger occurs, or a JSON escape of a token
        character (:data:`~hermes_store.redaction.rules.ESCAPE_TRIGGER`: the rules read the text
        with it undone): one scan for all of them (joined by NUL, which no stored text holds),
        so a batch of messages costs one call.
        A trigger match is attributed to the text it ends in; one that spans a separator
        only adds a candidate that the full rules then clear."""
        if self._hs is None:
            return self._re_candidates(texts)
        found: set[int] = set()
        for start in range(0, len(texts), CANDIDATE_CHUNK):  # bounded memory: a few MB per scan
            found.update(start + i for i in self._candidates(texts[start:start + CANDIDATE_CHUNK]))
        return found

    def _re_candidates(self, texts: list[str]) -> set[int]:
        """:meth:`candidates` without Hyperscan: ASCII texts are joined and lower-cased, every
        rule literal is looked for in the chunk, and only the texts holding one are checked
        with :meth:`fired`; other texts are checked one by one."""
        found = {i for i, text in enumerate(texts) if not text.isascii() and (self.fired(text) or ESCAPE_LITERAL in text)}
        plain = [i for i, text in enumerate(texts) if text.isascii()]
        for start in range(0, len(plain), CANDIDATE_CHUNK):
            chunk = plain[start:start + CANDIDATE_CHUNK]
            pieces = [texts[i] for i in chunk]
            ends = list(itertools.accumulate(len(piece) + 1 for piece in pieces))
            low = "\x00".join(pieces).lower()
            maybe: set[int] = set()
            for literal in (*self._literals, ESCAPE_LITERAL):
                at = low.find(literal)
                while at >= 0:
                    k = bisect.bisect_right(ends, at)
                    maybe.add(k)
                    at = low.find(literal, ends[k]) if k < len(ends) else -1
            found.update(chunk[k] for k in maybe if ESCAPE_LITERAL in pieces[k] or self.fired(pieces[k]))
        return found

    def _candidates(self, texts: list[str]) -> set[int]:
        # each text encoded on its own: joining first would widen the whole chunk to the widest
        # character in it (one CJK message makes it 4 bytes a character) before encoding it back
        pieces = [text.encode("utf-8", "surrogatepass") for text in texts]
        ends = list(itertools.accumulate(len(piece) + 1 for piece in pieces))
        blob = b"\x00".join(pieces)
        hits: set[int] = set()

        def on_match(rule: int, start: int, end: int, flags: int, context: Any) -> None:
            hits.add(bisect.bisect_right(ends, end - 1))

        self._every.scan(blob, match_event_handler=on_match, scratch=self._scratch("every"))
        return {i for i in hits if i < len(texts)}

    def fired(self, text: str) -> dict[int, list[tuple[int, int]] | None]:
        """The rules whose trigger occurs in ``text`` (empty: none can match), each with the
        spans of ``text`` its expression needs to read (None: the whole text).

        A rule with a :attr:`~hermes_store.redaction.rules.Rule.window` gets the spans that
        hold its trigger's matches (``window`` characters before each match end): its full
        expression is tried only where the trigger starts in them, which keeps a long tool
        output that mentions ``token:`` once from being read whole by the slower expression;
        offsets are exact for ASCII text, so other text is read whole.
        """
        if self._hs is None:
            if text.isascii():  # a trigger can match only where one of its rule's literals occurs
                low = text.lower()
                return {i: None for i, (trigger, literals, anchored) in enumerate(self._checked)
                        if any(literal in low for literal in literals)
                        and (_starts_at(trigger, text, low, literals) if anchored else trigger.search(text))}
            return {i: None for i, trigger in enumerate(self._triggers) if trigger.search(text)}
        ends: dict[int, list[int]] = {}

        def on_match(rule: int, start: int, end: int, flags: int, context: Any) -> bool | None:
            hits = ends.setdefault(rule, [])
            if len(hits) < MAX_WINDOWS:
                hits.append(end)
            return None

        self._database.scan(text.encode("utf-8", "surrogatepass"), match_event_handler=on_match,
                            scratch=self._scratch())
        if not ends:
            return {}
        exact = text.isascii()
        return {rule: _windows(hits, RULES[rule].window, len(text)) if exact and len(hits) < MAX_WINDOWS
                else None for rule, hits in ends.items()}


def _starts_at(trigger: re.Pattern[str], text: str, low: str, literals: tuple[str, ...]) -> bool:
    """Whether ``trigger`` matches ``text`` at an occurrence of one of ``literals`` in ``low``
    (``text`` lower-cased, same length): all its matches start with one."""
    for literal in literals:
        at = low.find(literal)
        while at >= 0:
            if trigger.match(text, at):
                return True
            at = low.find(literal, at + 1)
    return False


CANDIDATE_CHUNK = 2000  # texts joined into one scan
MAX_WINDOWS = 64  # a text with more trigger matches for one rule is read whole


def _windows(ends: list[int], window: int | None, size: int) -> list[tuple[int, int]] | None:
    """Merged ``(start, end)`` spans that hold the trigger matches (None: read the whole text)."""
    if window is None:
        return None
    spans: list[tuple[int, int]] = []
    for end in sorted(ends):
        lo, hi = max(0, end - window), min(size, end)
        if spans and lo <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], hi))
        else:
            spans.append((lo, hi))
    return spans


@functools.cache
def prefilter() -> Prefilter:
    """The process's prefilter (compiled once, on first use)."""
    return Prefilter()
