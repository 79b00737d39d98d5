"""``--format auto``: every registered importer sniffs the file; the most confident one reads it.

An importer claims a file with a confidence >= :data:`THRESHOLD` *and* when what it
reads carries content: its first :data:`PROBE_MESSAGES` messages are read (bounded)
and a claim that finds no messages, or messages mostly empty with no tool call, is
refused -- the next candidate is tried -- unless its read said, with a :class:`Notice`,
that the file is its format's and holds nothing to import. Two importers whose claims stand with the
same top confidence is an error (a format signature must be unique), and a file
nobody claims is ``unknown format`` with the closest candidates named and what
each found missing.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_store.foreign_db import ForeignDBError
from hermes_store.sessions.importers.base import (
    Event,
    Importer,
    MessageRecord,
    Notice,
    Problem,
    SourceState,
)
from hermes_store.sessions.importers.head import SQLITE_MAGIC, Head
from hermes_store.sessions.importers.registry import IMPORTERS

THRESHOLD = 0.5
PROBE_MESSAGES = 200  # messages a claim reads to show it carries content
PROBE_EVENTS = 20_000  # events (lines, checkpoints, problems) read at most while probing

__all__ = ["PROBE_MESSAGES", "SQLITE_MAGIC", "THRESHOLD", "Detection", "Head", "Probe", "candidates",
           "content_gap", "detect", "detect_format", "detection"]


class AmbiguousFormat(ValueError):
    """Two importers claim a file with the same confidence."""


@dataclass
class Probe:
    """The content check's read of a claim, paused where the check stopped: an import that
    starts from the beginning continues it (:meth:`replay`) instead of reading the file's
    first messages a second time. ``state`` is the read's own (importers keep resume data in it)."""

    importer: Importer
    state: SourceState
    events: list[Event]  # what the check read, in order
    rest: Iterator[Event]  # the read itself, paused after ``events``

    def replay(self) -> Iterator[Event]:
        """Every event of the read from the start: the checked ones, then the rest of it."""
        events, self.events = self.events, []
        yield from events
        yield from self.rest

    def close(self) -> None:
        """Stop the paused read (its file or database handle is released)."""
        self.events = []
        close = getattr(self.rest, "close", None)
        if close is not None:
            close()


@dataclass
class Detection:
    """What detection found: the winner (or None), every candidate, and why claims were refused.

    ``probe`` (only when :func:`detection` was asked to keep it): the winner's content check,
    to be continued by the import or closed."""

    name: str | None
    ranked: list[tuple[str, float]]
    head: Head
    refused: dict[str, str] = field(default_factory=dict)  # format -> what its read found missing
    probe: Probe | None = None


def _sniff(cls: type[Importer], head: Head) -> float:
    try:
        value = float(cls.sniff(head))
    except Exception:  # a third-party sniff must never stop detection
        return 0.0
    return min(max(value, 0.0), 1.0)


def candidates(path: Path | Head, importers: Mapping[str, type[Importer]] | None = None,
               options: dict[str, Any] | None = None) -> list[tuple[str, float]]:
    """Every importer's confidence > 0 for ``path``, best first (``options``: see :class:`Head`)."""
    head = path if isinstance(path, Head) else Head.read(Path(path), options)
    registry = IMPORTERS if importers is None else importers
    if head.is_sqlite:
        head.sqlite_tables()  # a database its writer keeps locked: ForeignDBError "locked", not "unknown format"
    scores = [(name, _sniff(cls, head)) for name, cls in registry.items()]
    return sorted(((n, s) for n, s in scores if s > 0), key=lambda item: -item[1])


def content_gap(cls: type[Importer], head: Head) -> str | None:
    """None when ``cls`` reads content from ``head.path``; else what it found missing.

    Reads at most :data:`PROBE_MESSAGES` messages (and :data:`PROBE_EVENTS` events):
    no message at all, or messages more than half empty with no tool call, is a gap.
    """
    gap, probe = _content_probe(cls, head, keep=False)
    return gap


def _content_probe(cls: type[Importer], head: Head, *, keep: bool) -> tuple[str | None, Probe | None]:
    """:func:`content_gap`, and with ``keep`` the paused read when the claim stands."""
    messages = empty = calls = 0
    noticed = False  # the read said the file is its format's and holds nothing to import
    problem: str | None = None  # the first problem the read reported (e.g. a --map column missing)
    probe: Probe | None = None
    try:
        if cls.member_of(head) is not None:
            return None, None  # read through its source, which is asked for content in its own turn
        importer = cls(head.path, head.options)
        importer.head = head
        state = SourceState()
        events = importer.read(state)
        seen: list[Event] = []
        keep_event = seen.append if keep else None
        try:
            for event in itertools.islice(events, PROBE_EVENTS):
                if keep_event is not None:
                    keep_event(event)
                if event.__class__ is Problem and problem is None:
                    problem = event.error
                elif event.__class__ is Notice:
                    noticed = True
                if event.__class__ is MessageRecord:
                    messages += 1
                    if event.tool_calls:
                        calls += 1
                    elif not (event.content or "").strip():
                        empty += 1
                    if messages >= PROBE_MESSAGES:
                        break
            if keep:
                probe = Probe(importer, state, seen, events)
        finally:
            if probe is None:
                close = getattr(events, "close", None)
                if close is not None:
                    close()
    except Exception as exc:  # a third-party read must never stop detection
        if probe is not None:
            probe.close()
        return f"its read failed ({type(exc).__name__}: {exc})", None
    gap = None
    if not messages and not noticed:
        gap = f"it read no messages ({problem})" if problem else "it read no messages"
    elif not calls and empty * 2 > messages:
        gap = f"{empty} of the first {messages} messages it read are empty and none has a tool call"
    if gap is not None and probe is not None:
        probe.close()
        probe = None
    return gap, probe


def detection(path: Path | Head, importers: Mapping[str, type[Importer]] | None = None,
              options: dict[str, Any] | None = None, *, keep_probe: bool = False) -> Detection:
    """Detect the format of ``path``: claims are sniffed, then checked for content.

    With ``keep_probe`` the winner's content check is kept paused in ``Detection.probe``
    (the caller continues or closes it). Raises :class:`AmbiguousFormat` when two claims
    that carry content tie at the top.
    """
    head = path if isinstance(path, Head) else Head.read(Path(path), options)
    registry = IMPORTERS if importers is None else importers
    ranked = candidates(head, registry)
    found = Detection(None, ranked, head)
    standing: list[tuple[str, float]] = []
    probes: list[Probe] = []
    for name, score in ranked:
        if score < THRESHOLD or (standing and score < standing[0][1]):
            break
        gap, probe = _content_probe(registry[name], head, keep=keep_probe)
        if gap is None:
            standing.append((name, score))
            if probe is not None:
                probes.append(probe)
        else:
            found.refused[name] = gap
    if len(standing) > 1:
        for probe in probes:
            probe.close()
        tied = ", ".join(f"{n} ({s:.2f})" for n, s in standing)
        raise AmbiguousFormat(f"ambiguous format: {tied} claim it equally; pass --format")
    if standing:
        found.name = standing[0][0]
        found.probe = probes[0] if probes else None
    return found


def detect(path: Path | Head, importers: Mapping[str, type[Importer]] | None = None,
           options: dict[str, Any] | None = None) -> tuple[str | None, list[tuple[str, float]]]:
    """``(format or None, candidates)``; raises :class:`AmbiguousFormat` on a tie at the top."""
    found = detection(path, importers, options)
    return found.name, found.ranked


def detect_format(path: Path) -> str | None:
    """The importer name for ``path``, or None when no importer claims it (or two tie)."""
    try:
        return detect(path)[0]
    except (AmbiguousFormat, ForeignDBError):
        return None


def describe_unknown(ranked: list[tuple[str, float]], refused: Mapping[str, str] | None = None) -> str:
    """``unknown format`` naming the closest candidates and what each found missing."""
    if not ranked:
        return "unknown format (no importer recognises anything in it)"
    refused = refused or {}
    parts = []
    for name, score in ranked[:3]:
        why = refused.get(name) or (f"its sniff found too little of the format (needs {THRESHOLD:.2f})"
                                    if score < THRESHOLD else "")
        parts.append(f"{name} {score:.2f}: {why}" if why else f"{name} {score:.2f}")
    return f"unknown format (closest: {'; '.join(parts)}; pass --format to force one)"
