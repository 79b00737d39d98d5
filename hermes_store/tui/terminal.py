"""The TUI's size is the size of the terminal it draws on.

Textual's Linux driver draws on stderr but asks :func:`shutil.get_terminal_size` for its size,
which reads ``$COLUMNS`` and ``$LINES`` first and then stdout. In a 40x15 terminal with
``COLUMNS=80 LINES=24`` exported (a shell profile, a tmux server started with them, a script
setting ``COLUMNS`` for wide output), or with stdout redirected (``hermes-store tui > log``), the
app laid out an 80x24 screen: its right half and its footer cut off, and every later resize
answered with the same wrong size. :class:`TerminalSizeDriver` asks the terminal it draws on.
"""

from __future__ import annotations

import os

from textual.drivers.linux_driver import LinuxDriver


def terminal_size(fd: int) -> tuple[int, int] | None:
    """``(columns, lines)`` of the terminal open on ``fd``, or None when it is not one (or says 0)."""
    try:
        size = os.get_terminal_size(fd)
    except (OSError, ValueError):
        return None
    return (size.columns, size.lines) if size.columns > 0 and size.lines > 0 else None


class TerminalSizeDriver(LinuxDriver):
    """Textual's Linux driver, sized by the terminal it writes to (see the module)."""

    def _get_terminal_size(self) -> tuple[int, int]:
        output = getattr(self, "_file", None)
        fileno = getattr(output, "fileno", None)
        try:
            size = terminal_size(fileno()) if fileno is not None else None
        except (OSError, ValueError):  # a stream without a descriptor
            size = None
        return size or super()._get_terminal_size()
