"""The ``fact_store`` and ``fact_feedback`` tools (Hermes holographic tool shapes).

Replies keep the Hermes keys (``fact_id/status``, ``results/count``,
``facts/count``, ``updated``, ``removed``, ``{fact_id, old_trust, new_trust,
helpful_count}``) and add ``"success": true``. Errors carry both shapes at once:
``{"success": false, "error": "..."}`` — the Hermes ``{"error": ...}`` key plus
this package's ``success`` flag — with the Hermes messages
(``Missing required argument: 'query'``, ``Unknown action: X``,
``content must not be empty``, ``reason requires 'entities' list``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_store.facts.config import load_fact_config
from hermes_store.facts.shown import guard_reply
from hermes_store.facts.store import MAX_FACT_ENTITIES, FactNotFound, FactStore, FactStoreError
from hermes_store.tooling import (
    Tool,
    ToolArgumentError,
    ToolContext,
    function_schema,
    get_choice,
    get_float,
    get_int,
    get_str,
    get_str_list,
    shown,
)

ACTIONS = ("add", "search", "probe", "related", "reason", "contradict", "update", "remove", "list")
CATEGORIES = ("user_pref", "project", "tool", "general")
MAX_LIMIT = 100

FACT_STORE_DESCRIPTION = (
    "Structured long-term memory of facts with entity links, trust scores and holographic "
    "(HRR) vectors. Use it next to the built-in `memory` tool for facts worth keeping. "
    "Actions, simplest first: add (store a fact; a duplicate returns the existing id with "
    "status 'exists'), search (keyword search ranked by relevance × trust), probe (every fact "
    "about one entity, by name or alias), related (what connects to an entity), reason (facts "
    "where several entities occur together), contradict (pairs of facts that disagree), update "
    "(edit content/tags/category or adjust trust with trust_delta), remove, list. "
    "After using a fact, rate it with fact_feedback. "
    "IMPORTANT: Before answering questions about the user, ALWAYS probe or reason first."
)

FACT_STORE_SCHEMA = function_schema(
    "fact_store",
    FACT_STORE_DESCRIPTION,
    {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "content": {"type": "string", "description": "Fact text (add, update)."},
        "query": {"type": "string", "description": "Search text (search)."},
        "entity": {"type": "string", "description": "Entity name or alias (probe, related)."},
        "entities": {"type": "array", "items": {"type": "string"},
                     "description": "Entities that must occur together (reason)."},
        "fact_id": {"type": "integer", "description": "Fact id (update, remove)."},
        "category": {"type": "string", "enum": list(CATEGORIES)},
        "tags": {"type": "string", "description": "Comma-separated tags."},
        "trust_delta": {"type": "number", "description": "Trust adjustment (update), clamped to [0, 1]."},
        "min_trust": {"type": "number", "description": "Minimum trust (default: 0.3)."},
        "limit": {"type": "integer", "description": "Maximum results (default: 10)."},
    },
    ["action"],
)

FACT_FEEDBACK_SCHEMA = function_schema(
    "fact_feedback",
    "Rate a fact after using it: 'helpful' if it was accurate (+0.05 trust), 'unhelpful' if it "
    "was wrong or outdated (−0.10 trust). Facts below the trust threshold stop being recalled.",
    {
        "action": {"type": "string", "enum": ["helpful", "unhelpful"]},
        "fact_id": {"type": "integer", "description": "The fact to rate (the #id shown with it)."},
    },
    ["action", "fact_id"],
)


# fact_store actions that only read: on a home without a store they answer empty, creating nothing
READ_ACTIONS = frozenset({"search", "probe", "related", "reason", "contradict", "list"})


def answered_without_a_store(args: dict[str, Any]) -> bool:
    """Whether a ``fact_store`` / ``fact_feedback`` call is answered from the empty reader when
    the home has no store yet, creating none: a read, or a call naming a stored fact
    (``update``, ``remove``, feedback: with no store there is no such fact to change)."""
    action = args.get("action")
    return (isinstance(action, str) and action in READ_ACTIONS) or args.get("fact_id") is not None


def store_for(ctx: ToolContext, *, reads: bool = False) -> FactStore:
    """The FactStore of the context's home (opened once per context, closed with it); for a
    read (``reads``) on a home that has no store yet, an empty one in memory (no file made)."""
    if reads and not ctx.home.store_exists():
        return ctx.resource("facts.reader", lambda: FactStore(ctx.home.open_reader(), owns_db=True,
                                                              config=load_fact_config(ctx.home)))
    return ctx.resource("facts.store", lambda: FactStore(ctx.home.ensure(),
                                                         config=load_fact_config(ctx.home)))


def _error(message: str) -> dict[str, Any]:
    return {"success": False, "error": message}


def _required_str(args: dict[str, Any], name: str) -> str | None:
    value = get_str(args, name)
    return value if value is not None and value.strip() else None


def _results(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"success": True, "results": items, "count": len(items)}


def run_fact_store(args: dict[str, Any], store: FactStore, *,
                   author: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Execute one ``fact_store`` call against ``store`` and return the reply dict.

    ``author`` (``{"id", "name", "is_bot"}``: who wrote the current turn, never taken from the
    model's arguments) is recorded on a fact ``add`` stores."""
    action = args.get("action")
    if action is None or (isinstance(action, str) and not action.strip()):
        return _error("Missing required argument: 'action'")
    if action not in ACTIONS:
        return _error(f"Unknown action: {shown(action)}")
    limit = get_int(args, "limit", default=10, minimum=1, maximum=MAX_LIMIT, clamp=True)
    category = get_str(args, "category") or None
    min_trust = get_float(args, "min_trust")
    try:
        if action == "add":
            content = get_str(args, "content")
            if content is None:
                return _error("Missing required argument: 'content'")
            reply = store.add_fact(content, category or "general", get_str(args, "tags") or "",
                                   entities=get_str_list(args, "entities", max_items=MAX_FACT_ENTITIES),
                                   author=author)
            return {"success": True, **reply}
        if action == "search":
            query = _required_str(args, "query")
            if query is None:
                return _error("Missing required argument: 'query'")
            return _results(store.search(query, category=category, min_trust=min_trust, limit=limit))
        if action in ("probe", "related"):
            entity = _required_str(args, "entity")
            if entity is None:
                return _error("Missing required argument: 'entity'")
            method = store.probe if action == "probe" else store.related
            return _results(method(entity, category=category, limit=limit, min_trust=min_trust or 0.0))
        if action == "reason":
            # as many as one fact can be given (each costs lookups: 100,000 took minutes)
            entities = get_str_list(args, "entities", max_items=MAX_FACT_ENTITIES) or []
            entities = [e for e in entities if e.strip()]
            if not entities:
                return _error("reason requires 'entities' list")
            return _results(store.reason(entities, category=category, limit=limit,
                                         min_trust=min_trust or 0.0))
        if action == "contradict":
            report = store.contradict_report(category=category, limit=limit)
            reply = _results(report.results)
            if report.note:
                reply["query_note"] = report.note
            return reply
        if action == "list":
            facts = store.list_facts(category=category, min_trust=min_trust or 0.0, limit=limit)
            return {"success": True, "facts": facts, "count": len(facts)}
        fact_id = get_int(args, "fact_id")
        if fact_id is None:
            return _error("Missing required argument: 'fact_id'")
        if action == "update":
            updated = store.update_fact(fact_id, content=get_str(args, "content"), category=category,
                                        tags=get_str(args, "tags"), trust_delta=get_float(args, "trust_delta"))
            return {"success": True, "updated": updated}
        return {"success": True, "removed": store.remove_fact(fact_id)}
    except FactStoreError as exc:
        return _error(str(exc))


def run_fact_feedback(args: dict[str, Any], store: FactStore) -> dict[str, Any]:
    """Execute one ``fact_feedback`` call: ``{fact_id, old_trust, new_trust, helpful_count}``."""
    if args.get("action") in (None, ""):
        return _error("Missing required argument: 'action'")
    action = get_choice(args, "action", ("helpful", "unhelpful"))
    fact_id = get_int(args, "fact_id")
    if fact_id is None:
        return _error("Missing required argument: 'fact_id'")
    try:
        return {"success": True, **store.record_feedback(fact_id, action)}
    except FactNotFound as exc:
        return _error(str(exc))


def _fact_store_handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    try:
        reads = answered_without_a_store(args)
        return guard_reply(run_fact_store(args, store_for(ctx, reads=reads)))  # stored facts re-scanned
    except ToolArgumentError as exc:
        return _error(str(exc))


def _fact_feedback_handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    try:
        # no store yet: no fact to rate, and the answer (fact not found) needs no file
        return run_fact_feedback(args, store_for(ctx, reads=True))
    except ToolArgumentError as exc:
        return _error(str(exc))


FACT_STORE_TOOL = Tool("fact_store", FACT_STORE_SCHEMA, _fact_store_handler)
FACT_FEEDBACK_TOOL = Tool("fact_feedback", FACT_FEEDBACK_SCHEMA, _fact_feedback_handler)
