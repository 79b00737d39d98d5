"""Background threads that carry their starter's context variables.

Hermes isolates profiles through a ContextVar (its ``HERMES_HOME`` override) and scopes
per-turn secrets the same way; a thread started with :class:`threading.Thread` begins with an
empty context, so a sync or prefetch job would silently land on the default profile. Every
background job of the drop-in (provider prefetch, the ordered worker, the ``state.db`` sync)
goes through :func:`spawn_context_thread` or :func:`ctx_bound`, as upstream's
``agent/memory_provider.py`` requires of memory providers.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any


def ctx_bound(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` bound to the CALLER's context variables (a copy taken now), for another thread."""
    context = contextvars.copy_context()

    def bound(*args: Any, **kwargs: Any) -> Any:
        return context.run(fn, *args, **kwargs)

    return bound


def spawn_context_thread(target: Callable[..., Any], *, name: str, daemon: bool = True,
                         args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> threading.Thread:
    """An unstarted thread running ``target`` under the spawner's context variables."""
    return threading.Thread(target=ctx_bound(target), args=args, kwargs=kwargs, name=name, daemon=daemon)
