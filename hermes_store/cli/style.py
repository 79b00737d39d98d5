"""Our own terminal styling, kept apart from stored text.

Everything a command prints passes the terminal-safety filter (``common.terminal_safe``),
which writes every control character as ``\\u<4 hex>``: stored text can never move the cursor,
clear the screen or set the clipboard. Our own styling (bold hits, headings, the progress bar)
must still reach a terminal as real escape sequences, so it is never written as escape
characters at all. :func:`style` wraps text in *markers* made of a private-use character and
a random per-process token that stored text cannot know; the filter first neutralises the
whole write (stored text and all), then turns markers into SGR sequences when that stream
shows colour, or drops them when it does not. Order: neutralise first, style after.

Whether a stream shows colour (:func:`color_wanted`): ``--color always`` yes, ``--color
never`` no; ``auto`` (the default) yes only on a terminal, unless ``NO_COLOR`` is set to
anything non-empty (https://no-color.org) or ``TERM=dumb``.
"""

from __future__ import annotations

import os
import re
import secrets
from contextvars import ContextVar
from typing import Any

import click

from hermes_store.tokens import display_width

COLOR_MODES = ("auto", "always", "never")

_mode: ContextVar[str] = ContextVar("hermes_store_color_mode", default="auto")

_TOKEN = secrets.token_hex(8)
_OPEN, _CLOSE = "\ue000", "\ue001"
_MARKER = re.compile(re.escape(_OPEN) + _TOKEN + r"([0-9;]*)" + re.escape(_CLOSE))

# style name -> (SGR code that turns it on, SGR code that turns it off)
_SGR: dict[str, tuple[str, str]] = {
    "bold": ("1", "22"),
    "dim": ("2", "22"),
    "underline": ("4", "24"),
    "red": ("31", "39"),
    "green": ("32", "39"),
    "yellow": ("33", "39"),
    "cyan": ("36", "39"),
}


# Stored text (session ids and titles, messages, facts, memory entries) may hold ESC
# sequences: screen clears, window titles, OSC 52 clipboard writes. Everything a command
# prints passes through terminal_safe, which writes control characters as \u<4 hex>. That
# form is also a JSON escape of the same character, so --json output keeps exact data.
# Bidi embedding/override/isolate controls reorder what the terminal shows ("Trojan Source":
# ``invoice\u202eexe.pdf`` displays as ``invoicefdp.exe``), and line/paragraph separators break
# lines in some terminals: they are escaped the same way. So are the bidi marks (U+200E, U+200F,
# U+061C: a right-to-left mark moves the punctuation beside it) and the invisible zero-width
# space and byte-order mark (U+200B, U+FEFF: ``ab\u200bc`` would show as the id ``abc`` that a
# copy of it does not find). The zero-width (non-)joiners stay: emoji and several scripts need them.
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]")


def terminal_safe(text: str) -> str:
    """``text`` with every C0/C1 control character except newline and tab, every bidi
    override, isolate or mark, and the zero-width space and BOM, shown as ``\\u<4 hex>``."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


TAB_STOP = 8

# the columns a progress line leaves free at its end: the terminal echoes a Ctrl-C typed under it
# as ``^C`` at the cursor. With only the cursor's column free, the ``C`` wrapped to a line of its
# own: clearing "the" line then cleared that one, and the bar stayed above "Interrupted." with
# a stray ``^`` at its end.
PROGRESS_MARGIN = 3


def shown_column(text: str, start: int = 0) -> int:
    """The terminal column the cursor reaches printing ``text`` from column ``start``, measured
    on ``text`` as the output filter shows it: our style marks take no column, a control
    character its six-column ``\\u<4 hex>`` form, a CJK character two, a combining mark none, and a
    tab moves to the next multiple of :data:`TAB_STOP`. Every width the CLI lays out by (padding,
    cutting, wrapping) is this one, so stored text that the filter escapes or a tab can never
    make a line wider than the terminal (the terminal then broke it inside a word)."""
    column = start
    for char in terminal_safe(strip_styles(text)):
        if char == "\t":
            column += TAB_STOP - column % TAB_STOP
        elif char == "\n":
            column = 0
        else:
            column += display_width(char)
    return column


def shown_width(text: str) -> int:
    """The terminal columns one line ``text`` takes once printed (see :func:`shown_column`)."""
    return shown_column(text)


def pad(text: str, width: int) -> str:
    """``text`` followed by the spaces that make it ``width`` terminal columns wide (by
    :func:`shown_width`, so a CJK or escaped value lines up with an ASCII one); a wider ``text``
    is kept whole."""
    return text + " " * max(0, width - shown_width(text))


def set_color_mode(mode: str) -> None:
    """Choose ``auto``, ``always`` or ``never`` for the rest of this command."""
    if mode not in COLOR_MODES:
        raise ValueError(f"unknown colour mode {mode!r} (valid: {', '.join(COLOR_MODES)})")
    _mode.set(mode)


def color_wanted(stream: Any) -> bool:
    """Whether styling written to ``stream`` should become real escape sequences."""
    mode = _mode.get()
    if mode != "auto":
        return mode == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def style(text: str, *names: str) -> str:
    """``text`` marked with our styles (``bold``, ``dim``, ``underline``, ``red``, ``green``,
    ``yellow``, ``cyan``); the output filter renders or drops the marks."""
    if not names or not text:
        style_marks(*names)  # an unknown name is an error even here
        return text
    on, off = style_marks(*names)
    return f"{on}{text}{off}"


def style_marks(*names: str) -> tuple[str, str]:
    """The marks that open and close :func:`style`'s ``names`` (for a caller that marks spans
    itself, e.g. ``excerpts.highlight_excerpt``'s ``open_mark``/``close_mark``); ``("", "")`` for
    no names."""
    unknown = [n for n in names if n not in _SGR]
    if unknown:
        raise ValueError(f"unknown style {unknown[0]!r} (valid: {', '.join(_SGR)})")
    if not names:
        return "", ""
    on = ";".join(_SGR[n][0] for n in names)
    off = ";".join(dict.fromkeys(_SGR[n][1] for n in names))
    return f"{_OPEN}{_TOKEN}{on}{_CLOSE}", f"{_OPEN}{_TOKEN}{off}{_CLOSE}"


def strip_styles(text: str) -> str:
    """``text`` without our style marks."""
    return _MARKER.sub("", text)


def has_styles(text: str) -> bool:
    """Whether ``text`` carries any of our style marks."""
    return _MARKER.search(text) is not None


def render_styles(text: str, color: bool) -> str:
    """Marks become ``ESC[…m`` when ``color``, else vanish. Call on already neutralised text."""
    if color:
        return _MARKER.sub(lambda m: f"\x1b[{m.group(1)}m", text)
    return strip_styles(text)


def raw_stream(stream: Any) -> Any:
    """The real stream under our filtering wrappers (for the progress bar's own escapes)."""
    while hasattr(stream, "_inner"):
        stream = stream._inner
    return stream


class Progress:
    """A progress bar on stderr when stderr is a terminal that shows our styling
    (:func:`progress_shown`: not with ``--color never``, ``NO_COLOR`` or ``TERM=dumb``);
    otherwise nothing is printed.

    Use as a context manager; :meth:`update` adds to the count (a no-op off a terminal).
    The bar is click's, written to the real stderr: its text is ours, never stored text.
    Leaving the context clears the bar, as :class:`StatusLine` clears its line: what is printed
    next (the command's summary) starts on a clean line, and no finished bar is left behind.
    The bar fits one line of the terminal stderr is (a wrapped bar cannot be redrawn: each
    update left a line behind on a narrow terminal); one too narrow for a bar shows none.
    """

    # what click draws around the bar: two blanks, ``[``, ``]``, two blanks, ``100%``, two
    # blanks and the ``hh:mm:ss`` ETA, plus room for the cursor and an echoed ``^C``
    _CLUTTER = 2 + 2 + 2 + 4 + 2 + 8 + PROGRESS_MARGIN
    _MIN_BAR = 10

    def __init__(self, length: int, label: str) -> None:
        import sys

        self._bar: Any = None
        err = raw_stream(sys.stderr)
        width = terminal_columns(err) - len(label) - self._CLUTTER
        if _progress_on(err) and width >= self._MIN_BAR:
            self._file = _BarFile(err)
            self._bar = click.progressbar(length=max(length, 1), label=label, file=self._file, width=width)

    @property
    def shown(self) -> bool:
        """Whether a bar is drawn."""
        return self._bar is not None

    def __enter__(self) -> Progress:
        if self._bar is not None:
            try:
                self._bar.__enter__()  # draws the bar, the cursor hidden
            except BaseException:  # Ctrl-C or SIGTERM after the first draw: ``with`` calls no __exit__
                self.__exit__()
                raise
        return self

    def update(self, steps: int) -> None:
        """Advance the bar by ``steps``."""
        if self._bar is not None:
            self._bar.update(steps)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._file.finishing = True
            self._bar.__exit__(None, None, None)


class _BarFile:
    """The stream click's progress bar writes to: ``stream`` itself, except that once
    :attr:`finishing`, the newline click ends a finished bar with clears the line instead
    (``\\r`` and erase to its end; the cursor is shown again as click does)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.finishing = False

    def write(self, text: str) -> int:
        if self.finishing:
            text = text.replace("\n", "\r\x1b[K")
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, flush, encoding, ...
        return getattr(self._stream, name)


def terminal_columns(stream: Any, default: int = 80) -> int:
    """The width of the terminal ``stream`` writes to (``default`` when it is none or will not
    say), read from the stream itself: stdout may be a file while stderr is the terminal."""
    import os

    try:
        return os.get_terminal_size(stream.fileno()).columns or default
    except (AttributeError, ValueError, OSError):
        return default


def echo_after_ctrl_c(text: str) -> None:
    """Print the line ``text`` on stderr after Ctrl-C. On a terminal a carriage return goes
    first, straight to the terminal (the stored-text filter would show it as ``\\u000d``), so
    the line replaces the ``^C`` the terminal echoed at the cursor ("^CInterrupted." before)."""
    import sys

    err = raw_stream(sys.stderr)
    if _stream_is_tty(err):
        err.write("\r")
        err.flush()
    click.echo(text, err=True)


def output_columns(err: bool = False) -> int | None:
    """The width of the terminal standard output (``err``: standard error) is shown on; None
    when it goes to a file or a pipe, where a table keeps each row on one line whatever its
    width (for grep, cut, scripts)."""
    import sys

    stream = raw_stream(sys.stderr if err else sys.stdout)
    return terminal_columns(stream) if _stream_is_tty(stream) else None


def clip(text: str, columns: int | None) -> str:
    """``text`` cut to ``columns`` terminal columns, ending in ``…`` where it was cut (whole when
    ``columns`` is None: not on a terminal)."""
    if columns is None or shown_width(text) <= columns:
        return text
    return _fit(text, max(0, columns - 1)) + "…"


def fill(text: str, columns: int | None, indent: str = "", then: str | None = None) -> str:
    """The one-line prose ``text`` wrapped at spaces to ``columns`` (one line when ``columns``
    is None: not on a terminal), its first line after ``indent``, the others after ``then``
    (default: ``indent``), so a narrow terminal never splits a word. Widths are terminal columns
    of the text as shown (:func:`shown_column`: our style marks take none, a CJK character two,
    a control character its ``\\u<4 hex>`` form, a tab up to its tab stop). Text without spaces
    (Chinese, Japanese) also breaks beside a wide character, as those languages wrap
    (:func:`_break_units`); any other word wider than the line gets a line of its own."""
    if columns is None:
        return indent + text
    then = indent if then is None else then
    lines: list[str] = []
    line, column, fresh = indent, shown_width(indent), True
    for at, word in enumerate(text.split(" ")):
        whole = shown_column(word if fresh else " " + word, column)
        # a word that fits on this line or the next is kept whole; a longer one breaks where it may
        units = [word] if whole <= columns or shown_column(word, shown_width(then)) <= columns \
            else _break_units(word)
        for index, unit in enumerate(units):
            glue = " " if index == 0 and at > 0 and not fresh else ""
            after = shown_column(glue + unit, column)
            if not fresh and after > columns:
                lines.append(line)
                line, fresh, glue = then, True, ""
                after = shown_column(unit, shown_width(then))
            line, column, fresh = line + glue + unit, after, False
    lines.append(line)
    return "\n".join(lines)


_UNIT_TOKEN = re.compile(_MARKER.pattern + "|.", re.DOTALL)
# CJK closing punctuation never starts a line (kinsoku): it stays with the character before it
_NO_BREAK_BEFORE = set("、。，．：；！？）」』】〕〉》〗〙〛ー々ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ")


def _break_units(word: str) -> list[str]:
    """``word`` cut where a line may break inside it: before and after each wide (CJK) character
    (except before closing punctuation), never inside one of our style marks (a mark stays with
    the text before it). A word without wide characters is one unit."""
    units: list[str] = []
    current, wide_end = "", False
    for token in (match.group() for match in _UNIT_TOKEN.finditer(word)):
        visible = _MARKER.fullmatch(token) is None
        wide = visible and display_width(token) == 2
        if visible and (wide or wide_end) and token not in _NO_BREAK_BEFORE and strip_styles(current):
            units.append(current)
            current = ""
        current += token
        if visible:
            wide_end = wide
    units.append(current)
    return units


def _stream_is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _progress_on(stream: Any) -> bool:
    """Progress (a bar or a status line, drawn with ``\\r`` and escape sequences) is styling: only
    on a terminal, and only where that terminal shows our styling (``--color never``,
    ``NO_COLOR`` and ``TERM=dumb`` turn it off, as they turn off bold hits)."""
    return _stream_is_tty(stream) and color_wanted(stream)


def progress_shown() -> bool:
    """Whether progress is drawn on the real stderr (see :func:`_progress_on`)."""
    import sys

    return _progress_on(raw_stream(sys.stderr))


def _fit(text: str, columns: int) -> str:
    """The longest start of ``text`` that takes at most ``columns`` terminal columns (as shown:
    :func:`shown_column`; a control character is cut whole, never inside its ``\\u<4 hex>``)."""
    column = 0
    for at, char in enumerate(text):
        column = shown_column(char, column)
        if column > columns:
            return text[:at]
    return text


class StatusLine:
    """One self-overwriting line of progress on stderr when stderr is a terminal that shows our
    styling (:func:`progress_shown`), else silent.

    :meth:`show` replaces the line (its text is neutralised like stored text, since it may
    name a table or file from the store); leaving the context clears it.
    """

    def __init__(self) -> None:
        import sys

        self._err = raw_stream(sys.stderr)
        self._on = _progress_on(self._err)
        self._drawn = False

    def __enter__(self) -> StatusLine:
        return self

    def show(self, text: str) -> None:
        """Replace the status line by ``text``, cut to one line of the terminal (a wrapped line
        cannot be overwritten: each update would leave one behind)."""
        if not self._on:
            return
        self._err.write("\r" + _fit(terminal_safe(text), terminal_columns(self._err) - PROGRESS_MARGIN) + "\x1b[K")
        self._err.flush()
        self._drawn = True

    def __exit__(self, *exc: object) -> None:
        if self._drawn:
            self._err.write("\r\x1b[K")
            self._err.flush()


class HelpFormatter(click.HelpFormatter):
    """Click's help layout, as wide as the terminal however narrow it is.

    Click lays help out at least 50 columns wide and keeps a 30-column option column: on a
    40-column terminal every ``--help`` line was wider than the screen, broken by the terminal
    inside words (``Hermes ho`` / ``me``), and descriptions were squeezed into 17 columns. Here
    the width follows the terminal down to :data:`HELP_MIN_WIDTH`, and under 60 columns the term
    column narrows to a third of the line (a longer option gets its description on the next line,
    as click does for any term wider than the column)."""

    def __init__(self, indent_increment: int = 2, width: int | None = None,
                 max_width: int | None = None) -> None:
        if width is None:
            import shutil

            width = max(min(shutil.get_terminal_size().columns, max_width or 80) - 2, HELP_MIN_WIDTH)
        super().__init__(indent_increment, width, max_width)

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        """Click's definition list, its term column narrowed on a narrow terminal."""
        if self.width < 60:
            col_max = min(col_max, self.width // 3)
        super().write_dl(rows, col_max, col_spacing)


HELP_MIN_WIDTH = 20


class HelpContext(click.Context):
    """A click context whose help is laid out by :class:`HelpFormatter`."""

    formatter_class = HelpFormatter


def narrow_help(command: click.Command) -> click.Command:
    """``command`` and every sub-command under it, their help laid out by :class:`HelpFormatter`
    (click makes a sub-command's context from the sub-command's own ``context_class``)."""
    command.context_class = HelpContext
    for sub in getattr(command, "commands", {}).values():
        narrow_help(sub)
    return command
