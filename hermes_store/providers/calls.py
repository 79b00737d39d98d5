"""Calling provider hooks whatever signature they were written with.

Older providers implement narrower hooks (``sync_turn(user, assistant)``, a 3-argument
``on_memory_write``, ``on_turn_start(turn, message)``). These helpers pass each provider
only the keyword arguments its method accepts, so new arguments never break old code.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Shape:
    """What a callable accepts: keyword names, ``**kwargs``, and positional capacity."""

    keywords: frozenset[str]
    var_keyword: bool
    positional: int  # number of positional parameters; -1 when *args is accepted


def shape_of(fn: Callable[..., Any]) -> Shape:
    """Inspect ``fn`` (a bound method or function); unknown signatures accept everything."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return Shape(frozenset(), True, -1)
    keywords: set[str] = set()
    var_keyword = False
    positional = 0
    var_positional = False
    for param in sig.parameters.values():
        if param.kind is param.VAR_KEYWORD:
            var_keyword = True
        elif param.kind is param.VAR_POSITIONAL:
            var_positional = True
        elif param.kind is param.KEYWORD_ONLY:
            keywords.add(param.name)
        elif param.kind is param.POSITIONAL_OR_KEYWORD:
            keywords.add(param.name)
            positional += 1
        else:  # positional-only
            positional += 1
    return Shape(frozenset(keywords), var_keyword, -1 if var_positional else positional)


def supported_kwargs(fn: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``kwargs`` that ``fn`` accepts."""
    shape = shape_of(fn)
    if shape.var_keyword:
        return dict(kwargs)
    return {k: v for k, v in kwargs.items() if k in shape.keywords}


def call_filtered(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn(*args, **accepted_kwargs)``, dropping keyword arguments it does not take."""
    return fn(*args, **supported_kwargs(fn, kwargs))


def call_memory_write(fn: Callable[..., Any], action: str, target: str, content: str,
                      metadata: dict[str, Any] | None) -> Any:
    """Call ``on_memory_write`` in the shape the provider wrote it.

    ``metadata=`` by keyword when accepted (or ``**kwargs``), positionally when the method
    takes four or more positional parameters, otherwise the legacy three-argument form.
    """
    shape = shape_of(fn)
    if "metadata" in shape.keywords or shape.var_keyword:
        return fn(action, target, content, metadata=metadata)
    if shape.positional == -1 or shape.positional >= 4:
        return fn(action, target, content, metadata)
    return fn(action, target, content)
