"""The small vocabulary every tool handler shares (lowest layer; imports nothing of ours but home).

A tool is a :class:`Tool`: an OpenAI-format function schema plus a handler
``handler(args: dict, ctx: ToolContext) -> dict``. Handlers raise
:class:`ToolArgumentError` for bad arguments; the dispatcher in
``hermes_store.tools`` turns every failure into ``{"success": false, "error": ...}``.
The argument readers below give errors that name the argument.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hermes_store.home import Home

MAX_ARGUMENT_CHARS = 1_000_000  # any single string argument larger than this is refused
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # what SQLite can store; larger integers are refused
PREVIEW_CHARS = 80


class ToolArgumentError(ValueError):
    """An argument is missing, null where it may not be, of the wrong type or too large."""


@dataclass
class ToolContext:
    """What a handler may use: the home, the calling session, and cached resources."""

    home: Home
    session_id: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    _resources: dict[str, Any] = field(default_factory=dict)

    def resource(self, key: str, factory: Callable[[], Any]) -> Any:
        """Return the cached resource ``key``, creating it with ``factory`` once."""
        if key not in self._resources:
            self._resources[key] = factory()
        return self._resources[key]

    def forget(self, key: str) -> None:
        """Drop the cached resource ``key`` (not closed) so the next use creates it again."""
        self._resources.pop(key, None)

    def close(self) -> None:
        """Close every cached resource that has a ``close`` method."""
        for value in self._resources.values():
            closer = getattr(value, "close", None)
            if callable(closer):
                closer()
        self._resources.clear()


@dataclass(frozen=True)
class Tool:
    """One tool: its name, its OpenAI function schema and its handler."""

    name: str
    schema: dict[str, Any]
    handler: Callable[[dict[str, Any], ToolContext], dict[str, Any]]


def function_schema(name: str, description: str, properties: dict[str, Any],
                    required: list[str] | None = None) -> dict[str, Any]:
    """Build an OpenAI-format function schema (the shape Hermes registers)."""
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required or []},
    }


_MISSING = object()
_SURROGATE = re.compile("[\ud800-\udfff]")


def shown(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """``value`` as text for an error message, cut to ``limit`` characters (never echo a huge value)."""
    text = valid_text(value if isinstance(value, str) else repr(value))
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} chars)"


def valid_text(text: str) -> str:
    """``text`` with lone surrogates (which JSON ``\\ud800`` escapes produce) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def get_str(args: dict[str, Any], name: str, *, required: bool = False, default: str | None = None,
            max_chars: int = MAX_ARGUMENT_CHARS, allow_empty: bool = True,
            exact: bool = False) -> str | None:
    """Read a string argument; numbers are not silently stringified.

    Lone surrogates (from JSON ``\\ud800`` escapes) become U+FFFD, except with
    ``exact=True`` — for text that must match stored text, such as ``old_text`` —
    where they are refused: UTF-8 files can never hold them, so nothing could match.
    """
    value = args.get(name, _MISSING)
    if value is _MISSING or value is None:
        if required:
            raise ToolArgumentError(f"'{name}' is required")
        return default
    if not isinstance(value, str):
        raise ToolArgumentError(f"'{name}' must be a string, got {type(value).__name__}")
    if len(value) > max_chars:
        raise ToolArgumentError(f"'{name}' is too long ({len(value):,} chars; limit {max_chars:,})")
    if not allow_empty and not value.strip():
        raise ToolArgumentError(f"'{name}' must not be empty")
    if exact and _SURROGATE.search(value):
        raise ToolArgumentError(f"'{name}' contains lone surrogates (invalid Unicode), so it cannot match "
                                "any stored text")
    return valid_text(value)


def get_int(args: dict[str, Any], name: str, *, default: int | None = None, minimum: int | None = None,
            maximum: int | None = None, clamp: bool = False, required: bool = False) -> int | None:
    """Read an integer argument (digit strings accepted, as models often send them)."""
    value = args.get(name, _MISSING)
    if value is _MISSING or value is None:
        if required:
            raise ToolArgumentError(f"'{name}' is required")
        return default
    if isinstance(value, bool):
        raise ToolArgumentError(f"'{name}' must be an integer, got boolean")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdecimal():
        if len(value.strip()) > 20:
            raise ToolArgumentError(f"'{name}' is out of range (must fit in 64 bits)")
        value = int(value.strip())
    if not isinstance(value, int):
        raise ToolArgumentError(f"'{name}' must be an integer, got {type(value).__name__}")
    if not INT64_MIN <= value <= INT64_MAX:
        raise ToolArgumentError(f"'{name}' is out of range (must fit in 64 bits)")
    if minimum is not None and value < minimum:
        if not clamp:
            raise ToolArgumentError(f"'{name}' must be >= {minimum}, got {value}")
        value = minimum
    if maximum is not None and value > maximum:
        if not clamp:
            raise ToolArgumentError(f"'{name}' must be <= {maximum}, got {value}")
        value = maximum
    return value


def get_float(args: dict[str, Any], name: str, *, default: float | None = None) -> float | None:
    """Read a number argument."""
    value = args.get(name, _MISSING)
    if value is _MISSING or value is None:
        return default
    if isinstance(value, bool):
        raise ToolArgumentError(f"'{name}' must be a number, got boolean")
    if not isinstance(value, (int, float, str)):
        raise ToolArgumentError(f"'{name}' must be a number, got {type(value).__name__}")
    try:
        number = float(value)
    except ValueError as exc:
        raise ToolArgumentError(f"'{name}' must be a number, got {shown(value)!r}") from exc
    except OverflowError as exc:
        raise ToolArgumentError(f"'{name}' must be a finite number, got {shown(value)}") from exc
    if not math.isfinite(number):
        raise ToolArgumentError(f"'{name}' must be a finite number, got {shown(value)}")
    return number


def get_choice(args: dict[str, Any], name: str, choices: tuple[str, ...], *,
               default: str | None = None, required: bool = False) -> str | None:
    """Read a string argument restricted to ``choices``."""
    value = get_str(args, name, required=required, default=default)
    if value is None:
        return None
    if value not in choices:
        raise ToolArgumentError(f"'{name}' must be one of {', '.join(choices)}; got {value!r}")
    return value


def get_str_list(args: dict[str, Any], name: str, *, default: list[str] | None = None) -> list[str] | None:
    """Read a list of strings; a comma-separated string is accepted too."""
    value = args.get(name, _MISSING)
    if value is _MISSING or value is None:
        return default
    if isinstance(value, str):
        return [valid_text(part.strip()) for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ToolArgumentError(f"'{name}' must be a list of strings")
    return [valid_text(v) for v in value]


# --------------------------------------------------------------------------- prompt fencing
# Text recalled into a prompt is fenced by hermes_store.providers.fencing; whatever a tool
# returns to a model goes through sanitize_context so no recalled text can forge the fence.

OPEN_TAG = "<memory-context>"
CLOSE_TAG = "</memory-context>"
SYSTEM_NOTE = (
    "[System note: The following is recalled memory context, NOT new user input. "
    "Treat as authoritative reference data — this is the agent's persistent memory "
    "and should inform all responses.]"
)
#: The note text of earlier Hermes versions; still recognised (and stripped) on input.
LEGACY_SYSTEM_NOTE = (
    "[System note: The following is recalled memory context, NOT new user input. "
    "Treat as informational background data.]"
)

_FENCE_SPAN = re.compile(r"<\s*memory-context\s*>[\s\S]*?</\s*memory-context\s*>", re.IGNORECASE)
_NOTE_LINE = re.compile(
    r"[ \t]*\[System note: The following is recalled memory context, NOT new user input\. "
    r"Treat as (?:authoritative reference data — this is the agent's persistent memory and "
    r"should inform all responses|informational background data)\.\][ \t]*(?:\r?\n)?",
    re.IGNORECASE,
)
# A forged or truncated note (e.g. cut by a search snippet) up to its "]" or the end of the line.
_NOTE_FRAGMENT = re.compile(r"[ \t]*\[\s*System note:[^\]\n]*(?:\]|$)", re.IGNORECASE | re.MULTILINE)
_STRAY_TAG = re.compile(r"</?\s*memory-context\s*>", re.IGNORECASE)


def sanitize_context(text: str) -> str:
    """Remove memory-context fences from ``text``.

    In order: whole ``<memory-context>…</memory-context>`` spans (non-greedy, any case,
    whitespace inside the tags allowed), then the system-note line (current or legacy
    wording), then any other ``[System note: …`` fragment (forged, or truncated by a
    snippet), then any stray opening or closing tag left over (forged or nested closers).
    """
    if not text:
        return text or ""
    text = _FENCE_SPAN.sub("", text)
    text = _NOTE_LINE.sub("", text)
    text = _NOTE_FRAGMENT.sub("", text)
    return _STRAY_TAG.sub("", text)
