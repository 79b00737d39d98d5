"""``session_search``'s discovery narrowing, as Hermes reads it: ``after`` (inclusive) and
``before`` (exclusive) bounds on a session's start, and ``exclude_session_ids`` (at most 20),
which leaves out those sessions and their lineage roots; ``role_filter`` (at most 32 distinct
roles). Parsing is
:func:`hermes_store.timeutil.parse_bound` (the one reader of Hermes' bound grammar)."""

from __future__ import annotations

from typing import Any

from hermes_store import timeutil
from hermes_store.sessions.search import Lineage
from hermes_store.tooling import ToolArgumentError, get_str_list

EXCLUDE_CAP = 20  # exclude_session_ids: at most this many ids (Hermes' cap)
MAX_ROLES = 32  # distinct roles a role_filter may name (each is one SQL parameter)
BOUND_MAX_CHARS = 100  # an after/before longer than this is refused, naming the argument

#: The tool schema's properties for the three arguments (Hermes' descriptions).
BOUND_PROPERTIES: dict[str, Any] = {
    "after": {"type": "string", "description": (
        "Discovery shape only. Inclusive lower bound on session start time. ISO date/datetime "
        "(e.g. 2026-06-01) or relative duration (7d, 24h, 2w = within the last N). Use only when "
        "the user names a time frame. sort is a ranking bias, not a bound.")},
    "before": {"type": "string", "description": (
        "Discovery shape only. Exclusive upper bound on session start time. ISO date/datetime "
        "(a date-only value is midnight UTC that day) or relative duration (7d = older than a "
        "week). Use only when the user names a time frame.")},
    "exclude_session_ids": {"type": "array", "items": {"type": "string"}, "description": (
        "Discovery shape only. Session ids already inspected this task. Those sessions and "
        "their lineage are omitted so a later query explores instead of repeating the same "
        "hit. Cap 20.")},
}


class Bounds:
    """Discovery's narrowing (Hermes' ``after``/``before``/``exclude_session_ids``): a window on
    the session's start and the ids left out with their lineage roots."""

    def __init__(self, after: int | None = None, before: int | None = None,
                 excluded: frozenset[str] = frozenset()) -> None:
        self.after, self.before, self.excluded = after, before, excluded

    @classmethod
    def read(cls, lineage: Lineage | None, args: dict[str, Any]) -> Bounds:
        """Parse the arguments; a bad bound raises :class:`timeutil.TimeParseError` (Hermes'
        message). Each excluded id also excludes its lineage root."""
        after, before = (timeutil.parse_bound(None if args.get(k) is None else str(args[k]))
                         for k in ("after", "before"))
        excluded: set[str] = set()
        for sid in normalize_exclude_ids(args.get("exclude_session_ids")):
            excluded.update((sid, lineage.root(sid) if lineage is not None else sid))
        return cls(after, before, frozenset(excluded))

    def started_ok(self, started: Any) -> bool:
        """True when a session that started at ``started`` is inside the window."""
        return timeutil.in_bounds(timeutil.to_epoch(started), self.after, self.before)


def normalize_exclude_ids(raw: Any) -> list[str]:
    """Hermes' reading of ``exclude_session_ids``: a string or a list; stripped, deduplicated,
    non-strings and blanks dropped, at most :data:`EXCLUDE_CAP` ids."""
    items = [raw] if isinstance(raw, str) else list(raw) if isinstance(raw, (list, tuple)) else []
    out: list[str] = []
    for item in items:
        sid = item.strip() if isinstance(item, str) else ""
        if sid and sid not in out:
            out.append(sid)
        if len(out) >= EXCLUDE_CAP:
            break
    return out


def read_roles(args: dict[str, Any], default: tuple[str, ...]) -> tuple[str, ...]:
    """``role_filter`` as distinct lower-case roles (``default`` when absent). More than
    :data:`MAX_ROLES` distinct roles is refused naming the argument: 40,000 roles used to fail
    the call on SQLite with 'too many SQL variables', and a role repeated 100,000 times too."""
    roles = tuple(dict.fromkeys(r.lower() for r in (get_str_list(args, "role_filter") or default)))
    if len(roles) > MAX_ROLES:
        raise ToolArgumentError(f"'role_filter' names {len(roles):,} distinct roles (at most {MAX_ROLES})")
    return roles
