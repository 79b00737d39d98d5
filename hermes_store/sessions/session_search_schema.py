"""The ``session_search`` tool's description and OpenAI function schema (Hermes' text and
argument order: ``after``/``before``/``exclude_session_ids`` follow ``detail``)."""

from __future__ import annotations

from hermes_store.sessions.session_search_bounds import BOUND_PROPERTIES
from hermes_store.tooling import function_schema

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

SESSION_SEARCH_SCHEMA = function_schema(
    "session_search",
    DESCRIPTION,
    {
        "query": {"type": "string", "description": "Discover: keywords, \"phrases\", OR, NOT, prefix*. "
                  "Omit to browse recent sessions."},
        "limit": {"type": "integer", "description": "Discover/browse: sessions to return (1-10, default 3)."},
        "sort": {"type": "string", "enum": ["newest", "oldest"],
                 "description": "Discover: order by time instead of relevance."},
        "detail": {"type": "string", "enum": ["adaptive", "full"],
                   "description": "adaptive (default) hydrates only the top result; full hydrates all."},
        "session_id": {"type": "string", "description": "Scroll (with around_message_id, or as a ref ID#N) or read."},
        "around_message_id": {"type": "integer", "description": "Scroll anchor message id."},
        "window": {"type": "integer", "description": "Scroll: messages either side (1-20, default 5)."},
        "role_filter": {"type": "string", "description": "Comma-separated roles (default user,assistant; "
                        "add tool to include tool output)."},
        "profile": {"type": "string", "description": "Read another profile's store (read-only)."},
        **BOUND_PROPERTIES,
    },
)
