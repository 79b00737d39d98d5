"""``--format auto``: every registered importer sniffs the file; the most confident one reads it.

An importer claims a file with a confidence >= :data:`THRESHOLD`; two
importers claiming it with the same top confidence is an error (a format
signature must be unique), and a file nobody claims is ``unknown format``
with the closest candidates named.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_store.foreign_db import ForeignDBError
from hermes_store.sessions.importers.base import Importer
from hermes_store.sessions.importers.head import SQLITE_MAGIC, Head
from hermes_store.sessions.importers.registry import IMPORTERS

THRESHOLD = 0.5

__all__ = ["SQLITE_MAGIC", "THRESHOLD", "Head", "candidates", "detect", "detect_format"]


class AmbiguousFormat(ValueError):
    """Two importers claim a file with the same confidence."""


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


def detect(path: Path | Head, importers: Mapping[str, type[Importer]] | None = None,
           options: dict[str, Any] | None = None) -> tuple[str | None, list[tuple[str, float]]]:
    """``(format or None, candidates)``; raises :class:`AmbiguousFormat` on a tie at the top."""
    ranked = candidates(path, importers, options)
    if not ranked or ranked[0][1] < THRESHOLD:
        return None, ranked
    if len(ranked) > 1 and ranked[1][1] == ranked[0][1]:
        tied = ", ".join(f"{n} ({s:.2f})" for n, s in ranked if s == ranked[0][1])
        raise AmbiguousFormat(f"ambiguous format: {tied} claim it equally; pass --format")
    return ranked[0][0], ranked


def detect_format(path: Path) -> str | None:
    """The importer name for ``path``, or None when no importer claims it (or two tie)."""
    try:
        return detect(path)[0]
    except (AmbiguousFormat, ForeignDBError):
        return None


def describe_unknown(ranked: list[tuple[str, float]]) -> str:
    """``unknown format`` naming the closest candidates."""
    if not ranked:
        return "unknown format (no importer recognises anything in it)"
    closest = ", ".join(f"{name} {score:.2f}" for name, score in ranked[:3])
    return f"unknown format (closest: {closest}; pass --format to force one)"
