"""The ``memory`` tool: Hermes' schema and dispatcher order over :class:`MemoryStore`.

Dispatcher order (Hermes ``memory_tool``): store unavailable → ``new_text``
alias → null target means ``memory`` → target validation and per-target
enable flags → ``operations`` batch → single action → pre-write validation
(recoverable ``old_text`` errors carry ``current_entries``) → write-approval gate
(``memory.write_approval``: stage instead of writing, unless the caller is the
user, ``ctx.options["user_approved"]``; origin ``background_review`` always stages
replace/remove as proposals) → store call.
Limits, enable flags and the render style come from the home's config.
"""

from __future__ import annotations

import copy
from typing import Any

from hermes_store.builtin import approval
from hermes_store.builtin.entries import TARGETS
from hermes_store.builtin.messages import ALL_OR_NOTHING
from hermes_store.builtin.store import MemoryStore, check_content
from hermes_store.home import ConfigError, MemoryConfig
from hermes_store.tooling import Tool, ToolContext, function_schema, get_str, shown

ACTIONS: tuple[str, ...] = ("add", "replace", "remove")
STORE_RESOURCE = "builtin.memory_store"
BACKGROUND_REVIEW = "background_review"  # origin of unattended memory review calls

NOT_AVAILABLE = "Memory is not available. It may be disabled in config or this environment."
MISSING_ACTION = (
    "Missing required parameter: 'action' (one of add, replace, remove) for a single change, or "
    "'operations' (a list of {action, content?, old_text?} objects) for a batch."
)

DESCRIPTION = (
    "Save durable facts to persistent memory that is injected into the system prompt of every "
    "future session. Put ALL changes of one turn into a single call with 'operations' (a list of "
    "{action, content, old_text}); the char limit is checked only on the final result, so you can "
    "remove or merge entries and add new ones together. Save only what will matter in every "
    "session: user preferences, environment facts, conventions, corrections. Do not save task "
    "progress, one-off results or anything easy to rediscover; procedures belong in skills.\n\n"
    "TARGETS: 'memory' is your own notes (environment, project conventions, lessons); 'user' is "
    "the user profile (who they are, how they like to work).\n\n"
    "ACTIONS: add (content), replace (old_text identifies one entry by a short unique substring; "
    "content is the COMPLETE new entry), remove (old_text). If memory is full, reissue one batch "
    "that frees room and adds in the same call."
)

_OP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "content": {"type": "string", "description": "Entry text for add; COMPLETE new entry for replace."},
        "new_text": {"type": "string", "description": "Alias of content."},
        "old_text": {"type": "string",
                     "description": "Short unique substring identifying the entry (replace/remove)."},
    },
    "required": ["action"],
}

MEMORY_SCHEMA: dict[str, Any] = function_schema(
    "memory",
    DESCRIPTION,
    {
        "action": {"type": "string", "enum": list(ACTIONS),
                   "description": "Single-op shape. Omit when using 'operations'."},
        "target": {"type": "string", "enum": list(TARGETS),
                   "description": "'memory' (your notes) or 'user' (user profile)."},
        "content": {"type": "string",
                    "description": "Entry text for add. For replace it is the COMPLETE new entry."},
        "old_text": {"type": "string",
                     "description": "REQUIRED for 'replace' and 'remove': a short unique substring "
                                    "IDENTIFYING the existing entry."},
        "new_text": {"type": "string", "description": "Alias of 'content' (content wins if both are set)."},
        "operations": {"type": "array", "items": _OP_SCHEMA,
                       "description": "Batch shape: several add/replace/remove operations applied "
                                      "all-or-nothing; the limit is checked on the final state."},
    },
    required=["target"],
)


def memory_schema(cfg: MemoryConfig) -> dict[str, Any] | None:
    """The schema narrowed to the enabled stores (None when neither is enabled: no tool)."""
    enabled = [t for t, on in (("memory", cfg.memory_enabled), ("user", cfg.user_profile_enabled)) if on]
    if not enabled:
        return None
    schema = copy.deepcopy(MEMORY_SCHEMA)
    if len(enabled) == 1:
        only = enabled[0]
        schema["parameters"]["properties"]["target"]["enum"] = enabled
        start = schema["description"].index("TARGETS:")
        end = schema["description"].index("\n\n", start)
        schema["description"] = (schema["description"][:start]
                                 + f"TARGET: only '{only}' is enabled in this configuration."
                                 + schema["description"][end:])
    return schema


def memory_config(ctx: ToolContext) -> MemoryConfig:
    """The home's ``memory:`` config (defaults when config.yaml is unreadable)."""
    try:
        return ctx.home.memory_config()
    except ConfigError:
        return MemoryConfig()


def store_for(ctx: ToolContext) -> MemoryStore | None:
    """The context's MemoryStore (created once per context), or None when both stores are off.

    An agent that already holds a loaded store passes it as ``ctx.options["store"]``;
    writes always re-read the files under their lock, so no load is needed here.
    """
    cfg = memory_config(ctx)
    if not (cfg.memory_enabled or cfg.user_profile_enabled):
        return None

    def factory() -> MemoryStore:
        store = ctx.options.get("store")
        if not isinstance(store, MemoryStore):
            store = MemoryStore(ctx.home, cfg.memory_char_limit, cfg.user_char_limit,
                                render=cfg.render, session_id=ctx.session_id)
        return store

    return ctx.resource(STORE_RESOURCE, factory)


def _disabled_error(cfg: MemoryConfig, target: str) -> dict[str, Any] | None:
    enabled = cfg.user_profile_enabled if target == "user" else cfg.memory_enabled
    if enabled:
        return None
    name = "USER.md" if target == "user" else "MEMORY.md"
    return {"success": False, "error": f"Built-in {name} writes are disabled in memory config.",
            "target": target}


def memory_tool(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Handle one ``memory`` tool call (returns the result dict the agent sees as JSON)."""
    store = store_for(ctx)
    if store is None:
        return {"error": NOT_AVAILABLE, "success": False}
    origin = str(ctx.options.get("origin") or "tool")
    session_id = ctx.session_id
    action = args.get("action")
    content = get_str(args, "content")
    new_text = get_str(args, "new_text")
    old_text = get_str(args, "old_text", exact=True)
    operations = args.get("operations")
    if content is None and new_text is not None:
        content = new_text
    target = args.get("target")
    if target is None:
        target = "memory"
    if target not in TARGETS:
        return {"success": False, "error": f"Invalid memory target '{shown(target)}'. Use 'memory' or 'user'."}
    disabled = _disabled_error(memory_config(ctx), target)
    if disabled is not None:
        return disabled
    gated = memory_config(ctx).write_approval and not ctx.options.get("user_approved")
    review = origin == BACKGROUND_REVIEW  # unattended: may add, only proposes replace/remove
    if operations:
        if not isinstance(operations, list):
            return {"success": False,
                    "error": "operations must be a list of {action, content?, old_text?} objects."}
        destructive = any(isinstance(op, dict) and op.get("action") in ("replace", "remove")
                          for op in operations)
        if gated or (review and destructive):
            return _proposal(_stage_batch(store, target, operations, origin, session_id), not gated)
        return store.apply_batch(target, operations, origin=origin, session_id=session_id)
    if action is None or action == "":
        return {"success": False, "error": MISSING_ACTION}
    if action not in ACTIONS:
        return {"success": False, "error": f"Unknown action '{shown(action)}'. Use: add, replace, remove"}
    if action == "add":
        if not content:
            return {"success": False, "error": "Content is required for 'add' action."}
        if gated:
            return _stage_single(store, "add", target, {"content": content}, origin, session_id)
        return store.add(target, content, origin=origin, session_id=session_id)
    if not old_text:
        return _missing_old_text(store, target, action)
    if action == "replace":
        if not content:
            return {"success": False, "error": "content is required for 'replace' action."}
        if gated or review:
            return _proposal(_stage_single(store, "replace", target,
                                           {"old_text": old_text, "content": content}, origin, session_id),
                             not gated)
        return store.replace(target, old_text, content, origin=origin, session_id=session_id)
    if gated or review:
        return _proposal(_stage_single(store, "remove", target, {"old_text": old_text}, origin, session_id),
                         not gated)
    return store.remove(target, old_text, origin=origin, session_id=session_id)


def _proposal(result: dict[str, Any], review_only: bool) -> dict[str, Any]:
    """Mark a write staged only because it came from unattended background review."""
    if review_only and result.get("staged"):
        result["proposal_staged"] = True
    return result


def _stage_single(store: MemoryStore, action: str, target: str, payload: dict[str, Any], origin: str,
                  session_id: str) -> dict[str, Any]:
    """Validate like the store would, then save a pending record instead of writing."""
    if "content" in payload:
        content = payload["content"].strip()
        if not content:
            return {"success": False, "error": "Content cannot be empty." if action == "add"
                    else "new_content cannot be empty. Use 'remove' to delete entries."}
        refusal = check_content(content)
        if refusal:
            return {"success": False, "error": refusal}
        payload["content"] = content
    return approval.stage(store, action, target, {**payload, "session_id": session_id}, origin=origin)


def _stage_batch(store: MemoryStore, target: str, operations: list[Any], origin: str,
                 session_id: str) -> dict[str, Any]:
    if not operations:
        return {"success": False, "error": "operations list is empty."}
    for index, op in enumerate(operations, start=1):
        if isinstance(op, dict) and op.get("action") in ("add", "replace"):
            content = str(op.get("content") or op.get("new_text") or "").strip()
            refusal = check_content(content) if content else None
            if refusal:
                return {"success": False,
                        "error": f"Operation {index}: {refusal}{ALL_OR_NOTHING}"}
    return approval.stage(store, "batch", target, {"operations": operations, "session_id": session_id},
                          origin=origin)


def _missing_old_text(store: MemoryStore, target: str, action: str) -> dict[str, Any]:
    error = (
        f"'{action}' needs old_text -- a short unique substring of the entry to {action}. None was "
        f"provided. Reissue the {action} with old_text set to part of one of the current_entries below."
    )
    if action == "replace":
        error += (" For 'replace', content is the COMPLETE new entry -- the whole matched entry is "
                  "overwritten, not just the old_text span.")
    entries = store.fresh_entries(target)
    return {"success": False, "error": error, "current_entries": store.current_entries(target),
            "usage": store.usage(target, entries)}


MEMORY_TOOL = Tool(name="memory", schema=MEMORY_SCHEMA, handler=memory_tool)
