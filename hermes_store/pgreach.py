"""PostgreSQL servers that did not answer, remembered for a while (lowest layer).

Opening a store on a server that does not answer costs ``connect_timeout`` seconds (5 by
default). A long-lived process (the MCP server, the Hermes plug-in, the TUI) opens the store
again for each call while the server is away, so every hook and tool call of an agent's turn
paid that wait again (a turn of prefetch, ``recall`` and a memory write: 20 s). A server that
did not answer is remembered for :data:`RETRY_AFTER` seconds: opening it again within that time
fails at once with the same reason; the first open after it tries the server again. A server
that answered, even with a refusal, is never remembered: it fails fast on its own.
"""

from __future__ import annotations

import threading
import time

RETRY_AFTER = 30.0  # seconds a silent server is not tried again
SILENT_AFTER = 1.0  # an open that failed after this long waited for an answer (not a refusal)

_lock = threading.Lock()
_silent: dict[str, tuple[float, str]] = {}  # URL -> (monotonic time it was found silent, reason)


def remember_silent(url: str, reason: str) -> None:
    """The server of ``url`` did not answer (``reason``: the driver's words, secrets removed)."""
    with _lock:
        _silent[url] = (time.monotonic(), reason)


def forget(url: str) -> None:
    """The server of ``url`` answered: open it normally from now on."""
    with _lock:
        _silent.pop(url, None)


def recent_silence(url: str) -> str | None:
    """Why the server of ``url`` was found silent, with when, if that was less than
    :data:`RETRY_AFTER` seconds ago; None when it may be tried now."""
    with _lock:
        found = _silent.get(url)
        if found is None:
            return None
        age = time.monotonic() - found[0]
        if age >= RETRY_AFTER:
            del _silent[url]
            return None
    return (f"{found[1]} ({age:.0f}s ago; not tried again for {RETRY_AFTER - age:.0f}s, so this "
            "call does not wait for it)")
