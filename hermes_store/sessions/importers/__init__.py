"""Transcript importers, one module per format, behind the :class:`Importer` interface.

``IMPORTERS`` (built in :mod:`.registry` from the bundled classes and the
``hermes_store.importers`` entry points) maps a format name to its class;
:mod:`.detect` lets every importer sniff a file and picks the most confident.
"""

from __future__ import annotations

from pathlib import Path

from hermes_store.sessions.importers.base import Importer
from hermes_store.sessions.importers.detect import (
    AmbiguousFormat,
    Detection,
    Head,
    candidates,
    describe_unknown,
    detect,
    detect_format,
    detection,
)
from hermes_store.sessions.importers.registry import IMPORTERS, ORIGINS, REGISTRY_PROBLEMS

FORMATS: tuple[str, ...] = tuple(IMPORTERS)


def importer_for(path: Path, fmt: str) -> Importer | None:
    """An importer instance for ``path`` (``fmt`` may be ``"auto"``); None if undetectable."""
    name = detect_format(path) if fmt == "auto" else fmt
    cls = IMPORTERS.get(name or "")
    return cls(path) if cls else None


__all__ = ["FORMATS", "IMPORTERS", "ORIGINS", "REGISTRY_PROBLEMS", "AmbiguousFormat", "Detection", "Head",
           "Importer", "candidates", "describe_unknown", "detect", "detect_format", "detection",
           "importer_for"]
