"""Redaction at the door: secrets are replaced by keyed markers before anything is stored.

Every write path of the store (session messages, tool calls, titles, facts, memory
provenance and history, on both engines) passes its text through the :class:`Redactor`
that :func:`redactor_for` gives for its database: the store's key, the home's
``store.redact*`` settings (attached to the database by ``Home.open_db``; a database opened
directly redacts with the defaults).
"""

from __future__ import annotations

from typing import Any

from hermes_store.redaction.redactor import MARKER, Finding, Redactor, cut_outside_secrets, scan
from hermes_store.redaction.settings import RedactionConfigError, RedactionSettings

__all__ = ["MARKER", "Finding", "RedactionConfigError", "RedactionSettings", "Redactor", "cut_outside_secrets",
           "redactor_for", "rules_redactor", "scan"]


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


def rules_redactor(db: Any) -> Redactor:
    """The store's rules applied whatever ``store.redact`` says: :func:`redactor_for` when
    redaction is on, else a redactor with the store's key, extra patterns and allowlist (what
    ``hermes-store redact`` rescans with, and what a tombstone is compared in)."""
    settings = getattr(db, "redaction_settings", None) or RedactionSettings()
    if settings.enabled:
        return redactor_for(db)
    from hermes_store.redaction.storage import store_key

    return Redactor(store_key(db)[0], RedactionSettings(patterns=settings.patterns, allow=settings.allow))
