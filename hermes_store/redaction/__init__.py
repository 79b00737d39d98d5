"""Redaction at the door: secrets are replaced by keyed markers before anything is stored.

Every write path of the store (session messages, tool calls, titles, facts, memory
provenance and history, on both engines) passes its text through the :class:`Redactor`
that :func:`redactor_for` gives for its database: the store's key, the home's
``store.redact*`` settings (attached to the database by ``Home.open_db``; a database opened
directly redacts with the defaults).
"""

from __future__ import annotations

from typing import Any

from hermes_store.redaction.redactor import MARKER, Finding, Redactor, scan
from hermes_store.redaction.settings import RedactionConfigError, RedactionSettings

__all__ = ["MARKER", "Finding", "RedactionConfigError", "RedactionSettings", "Redactor", "redactor_for",
           "scan"]


def redactor_for(db: Any) -> Redactor:
    """The redactor of the store ``db`` (cached on the database object)."""
    cached = getattr(db, "_hermes_redactor", None)
    if cached is not None:
        return cached
    from hermes_store.redaction.storage import store_key

    settings = getattr(db, "redaction_settings", None) or RedactionSettings()
    key, stored = store_key(db) if settings.enabled else (b"", True)
    redactor = Redactor(key, settings)
    if stored:  # a key for this call only is not kept: the next write tries to store one
        try:
            db._hermes_redactor = redactor
        except AttributeError:  # a database object without a __dict__: computed per call
            pass
    return redactor
