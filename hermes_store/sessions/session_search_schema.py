"""The ``session_search`` tool's description, OpenAI function schema and reply texts (Hermes' text and
argument order: ``after``/``before``/``exclude_session_ids`` follow ``detail``)."""

from __future__ import annotations

from typing import Any

from hermes_store.sessions.session_search_bounds import BOUND_PROPERTIES
from hermes_store.tooling import ToolArgumentError, function_schema, get_choice, get_int, get_str

DESCRIPTION = (  # Hermes' text; our addition (past conversations of other agents) last
    "Recall past conversations: search or read old Hermes sessions (FTS5), or "
    "scroll inside one. Four shapes, picked by args: `query` = discovery "
    "(top-N matching sessions, top result fully hydrated); `session_id` + "
    "`around_message_id` = scroll (window of messages around an anchor); "
    "`session_id` alone = read a whole session — how you resolve an "
    "`@session:<profile>/<id>` link (split on '/' into profile + id); no "
    "args = browse recent sessions. Results are actual DB messages, no LLM. "
    "Searches conversation history ONLY — when the user gave a direct "
    "source (URL, file, contact, live system), inspect that first; never "
    "conclude 'not found' from history alone. Use for questions about past "
    "conversations: 'what did we do about X', 'where did we leave Y'. When "
    "referring the user to a session, write its `link` value verbatim "
    "inline (it renders as a titled link). "
    "The index also holds the imported sessions of other coding agents."
)

# The replies' fixed texts (Hermes' words).
SCROLL_HINT = ("Scroll forward: re-call with around_message_id = the LAST message's id; backward: the "
               "FIRST message's id (the boundary message repeats as an orientation marker). "
               "messages_before/messages_after < window means you've hit that end of the session.")
NO_MATCH_MESSAGE = ("No matching sessions found. FTS5 ANDs all terms by default — broaden with OR "
                    "(`alpha OR beta`), exact-match with quoted phrases, exclude with NOT, or "
                    "prefix-match with `deploy*`.")  # Hermes' _discover, word for word
LINK_HINT = ("When referring the user to a session, write its `link` value verbatim inline "
             "mid-sentence (it renders as a titled link) — never as markdown, in backticks, on its "
             "own line, or next to the title/id/date. To read more around a compact result, scroll: "
             "session_search(session_id=..., around_message_id=match_message_id).")
BROWSE_MESSAGE = ("Showing {n} most recent sessions. Pass a query= to search, or "
                  "session_id+around_message_id to scroll.")

#: Hermes' parameters, in Hermes' order, with its descriptions and defaults word for word
#: (``SESSION_SEARCH_SCHEMA`` in ``tools/session_search_tool.py``, zons 03d70b32).
PROPERTIES: dict[str, Any] = {
    "query": {"type": "string", "description": (
        "Search query (discovery shape). Keywords, phrases, or boolean expressions to find in past "
        "sessions. Omit to browse recent sessions. Ignored when session_id + around_message_id are "
        "set (scroll shape).")},
    "limit": {"type": "integer", "description": (
        "Discovery shape only. Max sessions to return (default 3, max 10). Bump to 5–10 when the "
        "topic likely spans several sessions and you want to pick the right one to scroll into."),
        "default": 3},
    "sort": {"type": "string", "enum": ["newest", "oldest"], "description": (
        "Discovery shape only. Temporal bias on top of FTS5 ranking: omit for relevance-only "
        "(exploratory recall), 'newest' for \"where did we leave X\", 'oldest' for \"how did X "
        "start\".")},
    "detail": {"type": "string", "enum": ["adaptive", "full"], "description": (
        "Discovery shape only. 'adaptive' (default) fully hydrates the top-ranked result and returns "
        "only the exact anchor message for lower-ranked results. 'full' returns bookends and the "
        "complete anchored window for every result."), "default": "adaptive"},
    **BOUND_PROPERTIES,
    "session_id": {"type": "string", "description": (
        "Scroll shape. Session to read inside. Use the session_id returned from a prior discovery "
        "call. Must be paired with around_message_id.")},
    "around_message_id": {"type": "integer", "description": (
        "Scroll shape. Message id to center the window on — use match_message_id from a discovery "
        "result, or any id from a prior window.")},
    "window": {"type": "integer", "description": (
        "Scroll shape only. Messages to return on each side of the anchor (anchor itself always "
        "included). Clamped to [1, 20]. Default 5."), "default": 5},
    "role_filter": {"type": "string", "description": (
        "Optional. Comma-separated roles to include. Discovery defaults to 'user,assistant' (tool "
        "output is usually noise). Pass 'user,assistant,tool' to include tool output (debugging "
        "tool behaviour) or 'tool' to search tool output only.")},
    "profile": {"type": "string", "description": (
        "Optional. Read sessions from another Hermes profile's database (read-only). Use when "
        "resolving an `@session:<profile>/<id>` link: pass the profile segment here with session_id "
        "as the id segment. Omit to use the current profile.")},
}

SESSION_SEARCH_SCHEMA = function_schema("session_search", DESCRIPTION, PROPERTIES)


# The arguments read as Hermes reads them.


def lenient_int(args: dict[str, Any], name: str, default: int, maximum: int) -> int:
    """``window`` / ``limit`` as Hermes reads them: clamped to [1, maximum]; not a number ⇒ default."""
    try:
        value = get_int(args, name, default=default, minimum=1, maximum=maximum, clamp=True)
    except ToolArgumentError:
        return default
    return default if value is None else value


def folded_choice(args: dict[str, Any], name: str, choices: tuple[str, ...], default: str | None) -> str | None:
    """``sort`` / ``detail`` as Hermes reads them (stripped, any case; "" means omitted); a value
    outside ``choices`` is refused, naming the argument."""
    value = get_str(args, name)
    value = value.strip().lower() if value is not None else ""
    return get_choice({name: value}, name, choices) if value else default
