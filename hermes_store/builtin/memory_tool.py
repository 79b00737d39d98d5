"""The ``memory`` tool: Hermes' schema and dispatcher order over :class:`MemoryStore`.

Dispatcher order (Hermes ``memory_tool``): store unavailable → ``new_text``
alias → null target means ``memory`` → target validation and per-target
enable flags → ``operations`` batch, or single action with pre-write validation
(recoverable ``old_text`` errors carry ``current_entries``) → unattended-review
gate (origin ``background_review``: a replace/remove is only proposed — staged
with ``proposal_staged`` — while a batch's independent additions are saved now,
``additions_saved``; with ``memory.review_literal_auto`` a change that keeps every
entry's text is applied) → write-approval gate (``memory.write_approval``: stage
instead of writing, unless the caller is the user, ``ctx.options["user_approved"]``)
→ store call. A call with neither ``action`` nor a non-empty ``operations`` gets the
"Missing required parameter" error Hermes' tests require (#64291).
Limits, enable flags and the render style come from the home's config.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from typing import Any

from hermes_store.builtin import approval
from hermes_store.builtin import messages as msg
from hermes_store.builtin.entries import TARGETS
from hermes_store.builtin.operations import check_content
from hermes_store.builtin.store import MemoryStore
from hermes_store.home import ConfigError, MemoryConfig, coerce_bool
from hermes_store.tooling import (
    Tool,
    ToolContext,
    bound_error_text,
    function_schema,
    get_str,
    tool_error,
    valid_text,
)

logger = logging.getLogger(__name__)

ACTIONS: tuple[str, ...] = ("add", "replace", "remove")
STORE_RESOURCE = "builtin.memory_store"
BACKGROUND_REVIEW = "background_review"  # origin of unattended memory review calls

NOT_AVAILABLE = "Memory is not available. It may be disabled in config or this environment."
REVIEW_DENIED = ("Background review may not delete memory entries ('replace'/'remove', including in a "
                 "batch); 'add' is still available.")
MISSING_ACTION = (  # the newest Hermes' wording (tools/memory_tool.py, #64291)
    "Missing required parameter: provide 'action' (add/replace/remove) "
    "or 'operations' (batch list). Got neither."
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


#: The ``target`` description when one store only is enabled (Hermes' words): the other store is
#: not named, as the model cannot write it.
SINGLE_TARGET_DESCRIPTIONS = {
    "memory": "The enabled built-in store: 'memory' for personal notes.",
    "user": "The enabled built-in store: 'user' for user profile.",
}


def memory_schema(cfg: MemoryConfig) -> dict[str, Any] | None:
    """The schema narrowed to the enabled stores (None when neither is enabled: no tool)."""
    enabled = [t for t, on in (("memory", cfg.memory_enabled), ("user", cfg.user_profile_enabled)) if on]
    if not enabled:
        return None
    schema = copy.deepcopy(MEMORY_SCHEMA)
    if len(enabled) == 1:
        only = enabled[0]
        target = schema["parameters"]["properties"]["target"]
        target["enum"] = enabled
        target["description"] = SINGLE_TARGET_DESCRIPTIONS[only]  # Hermes' _SINGLE_TARGET_TEXT
        start = schema["description"].index("TARGETS:")
        end = schema["description"].index("\n\n", start)
        schema["description"] = (schema["description"][:start]
                                 + f"TARGET: only '{only}' is enabled in this configuration."
                                 + schema["description"][end:])
    return schema


def memory_config(ctx: ToolContext) -> MemoryConfig:
    """The home's ``memory:`` config, key by key; problems are in ``errors`` (writes refused)."""
    return ctx.home.read_memory_config()


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
        return tool_error(NOT_AVAILABLE, success=False)
    origin = str(ctx.options.get("origin") or "tool")
    session_id = ctx.session_id
    action = args.get("action")
    content = get_str(args, "content")
    new_text = get_str(args, "new_text")
    old_text = get_str(args, "old_text", exact=True)
    operations = args.get("operations")
    if not content and new_text:  # Hermes (#90468): an omitted optional string can arrive as ""
        content = new_text
    target = args.get("target")
    if target is None:
        target = "memory"
    if target not in TARGETS:
        return {"success": False,  # Hermes: the value in full, the message bounded like any tool error
                "error": bound_error_text(f"Invalid memory target '{valid_text(str(target))}'. Use 'memory' or 'user'.")}
    cfg = memory_config(ctx)
    if cfg.write_refusal:  # fail closed: never write with settings we could not read
        return {"success": False, "error": cfg.write_refusal, "target": target}
    disabled = _disabled_error(cfg, target)
    if disabled is not None:
        return disabled
    call = _Call(store, cfg, target, origin, session_id,
                 gated=cfg.write_approval and not ctx.options.get("user_approved"))
    if operations:
        if not isinstance(operations, list):
            return tool_error("operations must be a list of {action, content?, old_text?} objects.",
                              success=False)
        if len(operations) > msg.MAX_BATCH_OPERATIONS:  # before staging, scanning or locking
            return {"success": False, "error": msg.BATCH_TOO_LARGE.format(count=len(operations))}
        payload = {"action": "batch", "target": target, "operations": operations}
        held = call.hold(payload)
        if held is not None:
            return held
        return store.apply_batch(target, operations, origin=origin, session_id=session_id)
    if action is None or action == "":
        return tool_error(MISSING_ACTION, success=False)
    if action not in ACTIONS:
        return tool_error(f"Unknown action '{valid_text(str(action))}'. Use: add, replace, remove", success=False)
    invalid = _validate_single(store, action, target, content, old_text)
    if invalid is not None:
        return invalid
    held = call.hold({"action": action, "target": target, "content": content, "old_text": old_text})
    if held is not None:
        return held
    if action == "add":
        return store.add(target, content, origin=origin, session_id=session_id)
    if action == "replace":
        return store.replace(target, old_text, content, origin=origin, session_id=session_id)
    return store.remove(target, old_text, origin=origin, session_id=session_id)


def _validate_single(store: MemoryStore, action: str, target: str, content: str | None,
                     old_text: str | None) -> dict[str, Any] | None:
    """Refuse an invalid single op before any gate, so it is never staged."""
    if action == "add" and not content:
        return tool_error("Content is required for 'add' action.", success=False)
    if action != "add" and not old_text:
        return _missing_old_text(store, target, action)
    if action == "replace" and not content:
        return tool_error("content is required for 'replace' action.", success=False)
    if content is not None and action in ("add", "replace"):
        stripped = content.strip()
        if not stripped:
            return {"success": False, "error": "Content cannot be empty." if action == "add"
                    else "new_content cannot be empty. Use 'remove' to delete entries."}
        refusal = check_content(stripped, store.secret_scanner)  # ours: poison or a secret is refused, never staged
        if refusal:
            return {"success": False, "error": refusal}
    return None


@dataclass
class _Call:
    """One memory tool call's gates: unattended background review, then write approval."""

    store: MemoryStore
    cfg: MemoryConfig
    target: str
    origin: str
    session_id: str
    gated: bool

    def hold(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The reply when the write must not run now (proposed or staged), None to run it."""
        if self.origin == BACKGROUND_REVIEW and approval.destructive_ops(payload):
            try:
                return self._propose(payload)
            except OSError:
                logger.warning("staging a background-review consolidation failed; denying", exc_info=True)
                return tool_error(REVIEW_DENIED, success=False)
        if self.gated:
            return approval.stage(self.store, payload, origin=_record_origin(self.origin),
                                  session_id=self.session_id)
        return None

    def _propose(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Hermes' unattended-review path: apply only literal-preserving changes (when opted in),
        otherwise stage the destructive write and save the batch's independent additions now."""
        store, target, batch = self.store, self.target, payload["action"] == "batch"
        approval_required = self.cfg.write_approval
        literal_auto = not approval_required and _literal_auto(self.cfg)
        if literal_auto:
            result = store.apply_batch(target, payload["operations"] if batch else [payload],
                                       preserve_existing=True, origin=self.origin, session_id=self.session_id)
            if result.get("success"):
                if not batch:
                    plural, singular = (("replaced_entries", "replaced_entry") if payload["action"] == "replace"
                                        else ("removed_entries", "removed_entry"))
                    result[singular] = result.pop(plural)[1]
                return result
            if not result.get("requires_approval"):
                return result
        refused = approval.pin(store, payload)
        if refused is not None:
            return refused
        record = approval.stage_record(store.home, payload, summary=approval.review_summary(payload),
                                       origin=BACKGROUND_REVIEW, session_id=self.session_id)
        saved = 0
        if batch and not approval_required:
            saved = self._save_independent_additions(payload["operations"])
        reason = ("Memory write approval is on. " if approval_required else
                  "Background review could not retain all existing memory text verbatim. " if literal_auto
                  else "Automatic literal-preserving review is not enabled. ")
        note = (f"{saved} add operation(s) saved independently; approval will replay them idempotently. "
                if saved else "")
        what = "batch" if batch else payload["action"]
        return {"success": True, "staged": True, "proposal_staged": True, "pending_id": record["id"],
                "additions_saved": saved,
                "message": (f"{note}{reason}The proposed {what} was staged for your approval — review it "
                            "with /memory pending (approve to apply, discard to drop).")}

    def _save_independent_additions(self, pinned_ops: list[Any]) -> int:
        """Save the adds that no replace produces and no pinned entry is (replay stays idempotent)."""
        ops = [op for op in pinned_ops if isinstance(op, dict)]

        def text(op: dict[str, Any]) -> str:
            return str(op.get("content") or op.get("new_text") or "").strip()

        dependent = ({text(op) for op in ops if op.get("action") == "replace"}
                     | {op["matched_entry"] for op in ops if op.get("matched_entry")})
        independent = [text(op) for op in ops if op.get("action") == "add" and text(op) not in dependent]
        if not independent:
            return 0
        result = self.store.add_independent_entries(self.target, independent, origin=self.origin,
                                                    session_id=self.session_id)
        return int(result.get("additions_saved", 0)) if result.get("success") else 0


def _literal_auto(cfg: MemoryConfig) -> bool:
    """``memory.review_literal_auto``: let unattended review apply literal-preserving changes."""
    try:
        return coerce_bool(cfg.raw.get("review_literal_auto"), False, name="memory.review_literal_auto")
    except ConfigError:
        return False


def _record_origin(origin: str) -> str:
    """The pending-record origin Hermes knows: ``background_review`` or ``foreground``."""
    return BACKGROUND_REVIEW if origin == BACKGROUND_REVIEW else "foreground"


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
