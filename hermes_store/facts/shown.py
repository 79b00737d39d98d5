"""Stored facts on their way out: scanned again, whenever and however they were stored.

A fact or entity name stored before the threat scan existed, written into the database by
hand, or brought in from a hostile ``memory_store.db`` never passed ``fact_store add``'s
scan. So every fact that reaches a model (the ``fact_store`` tool's replies in Hermes and
over MCP, ``recall``, the prefetch) passes the one scan of recorded past,
:func:`hermes_store.threats.guard_past`: a flagged field becomes a ``[BLOCKED: …]`` notice
and the fact carries ``"flagged": [...]``. The CLI (``facts list`` and friends) shows the stored
text unchanged, marked with the same ``flagged`` findings (:func:`mark_reply`).
"""

from __future__ import annotations

from typing import Any

from hermes_store.threats import guard_past, past_findings

TEXT_FIELDS = ("content", "category", "tags", "author_id", "author_name")  # a fact's own text fields
NAME_FIELDS = ("entities", "related_entities")  # lists of entity names


def _is_fact(value: Any) -> bool:
    return isinstance(value, dict) and "fact_id" in value and "content" in value


def fact_findings(fact: dict[str, Any]) -> list[str]:
    """The threat findings of a stored fact's text, category, tags, author and entity names."""
    findings: list[str] = []
    texts = [fact.get(field) for field in TEXT_FIELDS]
    texts += [name for field in NAME_FIELDS for name in fact.get(field) or ()]
    for text in texts:
        if isinstance(text, str):
            findings += [f for f in past_findings(text) if f not in findings]
    return findings


def guard_fact(fact: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``fact`` as it may reach a model: every flagged field is a notice."""
    source = f"fact #{fact.get('fact_id')}"
    shown = dict(fact)
    for field in TEXT_FIELDS:
        if isinstance(shown.get(field), str):
            shown[field] = guard_past(
                shown[field], f"{field} of {source}" if field != "content" else source
            )
    for field in NAME_FIELDS:
        if isinstance(shown.get(field), list):
            shown[field] = [
                guard_past(n, f"an entity name of {source}") if isinstance(n, str) else n
                for n in shown[field]
            ]
    findings = fact_findings(fact)
    if findings:
        shown["flagged"] = findings
    return shown


def _walk(value: Any, on_fact: Any) -> Any:
    if _is_fact(value):
        value = on_fact(value)
    if isinstance(value, dict):
        return {k: _walk(v, on_fact) if isinstance(v, dict | list) else v for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, on_fact) for v in value]
    return value


def guard_reply(reply: dict[str, Any]) -> dict[str, Any]:
    """A ``fact_store`` reply as it may reach a model: every fact in it passes :func:`guard_fact`."""
    return _walk(reply, guard_fact)


def _mark(fact: dict[str, Any]) -> dict[str, Any]:
    findings = fact_findings(fact)
    return {**fact, "flagged": findings} if findings else fact


def mark_reply(reply: dict[str, Any]) -> dict[str, Any]:
    """A ``fact_store`` reply for the owner's own eyes: stored text unchanged, flagged facts marked."""
    return _walk(reply, _mark)
