"""Helpers shared by the CLI commands: JSON output and error reporting."""

from __future__ import annotations

import functools
import io
import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from hermes_store.cli.style import (
    color_wanted,
    fill,
    has_styles,
    output_columns,
    render_styles,
    strip_styles,
    style_marks,
    terminal_safe,
)
from hermes_store.home import Home
from hermes_store.tooling import PREVIEW_CHARS, SURROGATES, fence_reply, sanitize_context


def get_home(ctx: click.Context) -> Home:
    """The Home chosen by the root ``--home/--profile`` options."""
    obj = ctx.find_root().obj
    return obj if isinstance(obj, Home) else Home()


def echo_json(data: Any) -> None:
    """Print ``data`` as indented JSON (UTF-8, non-ASCII kept readable).

    Within :func:`fenced_output` (a model-facing command without ``--raw``) every string of
    ``data`` is sanitised first (``tooling.fence_reply``), so the JSON stays valid and fenced.
    """
    stream = sys.stdout
    if isinstance(stream, _FencedTextStream):
        data, stream = fence_reply(data), stream.inner
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str), file=stream)


def explain_failure(exc: BaseException, home: Home | None) -> str:
    """One line for a person: what failed and where (never a traceback).

    Our own errors already name their file; an SQLite error is about the home's database
    (a damaged or foreign file, a missing table); an OS error names its path.
    """
    import apsw

    text = str(exc) or type(exc).__name__
    if isinstance(exc, apsw.Error):
        where = home.store_location() if home is not None else "the database"
        hint = " (run `hermes-store doctor`)" if not isinstance(exc, apsw.BusyError) else ""
        return f"{where}: {text}{hint}"
    if isinstance(exc, OSError) and exc.filename and str(exc.filename) not in text:
        return f"{exc.filename}: {text}"
    if isinstance(exc, RecursionError):
        return "input nested too deeply to process"
    if isinstance(exc, UnicodeEncodeError) and isinstance(exc.object, str) and SURROGATES.search(exc.object):
        # an argument given as bytes that are not UTF-8 (the shell passes them as lone surrogates)
        value = exc.object if len(exc.object) <= PREVIEW_CHARS else f"{exc.object[:PREVIEW_CHARS]}…"
        return f"{value!r} holds bytes that are not valid UTF-8, so it cannot be stored or looked up; give it as text"
    return text


def store_home(ctx: click.Context) -> Home:
    """:func:`get_home` for a command that reads the store: a bad store setting
    (``store.database_url`` in config.yaml, ``$HERMES_STORE_DATABASE_URL``) raises
    :class:`~hermes_store.home.ConfigError` now, before anything is done or printed (the
    command group reports it as ``Error: <where>: <problem>``, exit 1)."""
    home = get_home(ctx)
    home.store_engine()
    return home


def bold_terms(text: str, query: str) -> str:
    """All of ``text`` with every word ``query`` matches in our bold style, as session and memory
    hits are shown (a terminal only), for text the index returns without marks (a fact). Words are
    matched as the index matches them (``excerpts.highlight_excerpt``: folded, stemmed, prefix*)."""
    from hermes_store.excerpts import highlight_excerpt

    if not text:
        return text
    on, off = style_marks("bold")
    # a width three times the text's: the excerpt is the whole text, never cut or given "..."
    return highlight_excerpt(text, query, width=3 * len(text) + 3, open_mark=on, close_mark=off)


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """``number`` and ``noun``, plural unless it is one: ``1 file``, ``0 files``, ``2 entities``
    (``plural`` when the noun does not just take an ``s``). What every count a command prints
    says, rather than ``file(s)``."""
    return f"{number} {noun if number == 1 else (plural or noun + 's')}"


# where the command group keeps the command line (click's ``ctx.meta`` is shared by every
# context of one run), so a failure can answer ``--json`` in JSON
ARGS_KEY = "hermes_store.args"


def asked_for_json(args: list[str]) -> bool:
    """Whether the command line ``args`` holds the ``--json`` option (not after ``--``, where it
    is text)."""
    return "--json" in (args[:args.index("--")] if "--" in args else args)


def _json_wanted() -> bool:
    """Whether the running command was given ``--json`` (False outside a click command)."""
    ctx = click.get_current_context(silent=True)
    return ctx is not None and asked_for_json(ctx.meta.get(ARGS_KEY, []))


def echo_error(message: str) -> None:
    """Print ``Error: message`` on stderr (through the output filter, never click's), one line
    for each line of ``message``: the terminal wraps a long one, so a screen read with its soft
    wraps joined (``tmux capture-pane -J``) or a copied path holds the whole text, where
    inserted line breaks and indents cut it."""
    click.echo(f"Error: {message}", err=True, color=True)  # the output filter escapes, never click


class LaidOutUsageError(click.UsageError):
    """A usage error of click's shown as click shows it, with its ``Try '… --help' for help.``
    hint laid out for the terminal: on one line where it fits, else wrapped at words with the
    quoted command kept whole (a 40-column terminal cut it inside the quote: ``…search --help`` /
    ``' for help.``). The message itself stays one line (:func:`echo_error`)."""

    def __init__(self, error: click.UsageError) -> None:
        super().__init__(error.message, error.ctx)
        self.exit_code = error.exit_code
        self.error = error

    def format_message(self) -> str:
        """The message as the original error formats it (a parameter's error names the parameter)."""
        return self.error.format_message()

    def show(self, file: Any = None) -> None:
        """Usage, the hint and ``Error: …`` on stderr (``file`` is ignored: stderr, filtered)."""
        from hermes_store.cli.style import fill, output_columns

        ctx = self.ctx
        if ctx is not None:
            hint = ""
            if ctx.command.get_help_option(ctx) is not None:
                option = max(ctx.command.get_help_option_names(ctx), key=len)
                command = f"'{ctx.command_path} {option}'".replace(" ", "\u00a0")  # one unbreakable word
                hint = fill(f"Try {command} for help.", output_columns(err=True)).replace("\u00a0", " ") + "\n"
            click.echo(f"{ctx.get_usage()}\n{hint}", err=True, color=ctx.color)
        echo_error(self.format_message())


def fail(message: str, code: int = 1) -> None:
    """Print ``Error: message`` to stderr and exit with ``code``. A failure (1) of a command run
    with ``--json`` also prints ``{"success": false, "error": message}`` on stdout, as
    docs/cli.md ("Exit codes") promises a JSON reader; a usage error (2) does not."""
    echo_error(message)
    if code == 1 and _json_wanted():
        echo_json({"success": False, "error": message})
    sys.exit(code)


def nothing_indexed_note(home: Home) -> str:
    """The ``note:`` a read prints when no session is indexed at all: the store it looked in
    (saying when there is none yet) and the command that fills it, so a first run on an empty
    home does not leave the reader guessing where we looked or what to do."""
    from hermes_store.sessions.discovery import HOW_TO_INDEX

    where = home.store_location() + ("" if home.store_exists() else " (no store there yet)")
    return f"note: no sessions are indexed in {where}; {HOW_TO_INDEX}"


# --------------------------------------------------------------------------- terminal safety
# Stored text may hold ESC sequences: everything a command prints passes style.terminal_safe
# (re-exported here), and our own styling is rendered after it (see style.py).


def one_line(text: str) -> str:
    """``text`` for one line of output: :func:`terminal_safe`, and newlines and tabs shown as
    ``\\n``/``\\r``/``\\t`` (a file name holding a newline cannot split a problem line)."""
    return terminal_safe(text).replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


class _SafeTextStream(io.TextIOBase):
    """A text stream that escapes control characters before writing to ``inner``.

    Our own styling (``style.style`` marks) is rendered after the escaping: real SGR
    sequences when ``inner`` shows colour (``style.color_wanted``), nothing otherwise.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._inner, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._inner, "errors", None)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:  # type: ignore[override]
        if not isinstance(text, str):
            raise TypeError("text stream")
        try:
            self._inner.write(render_styles(terminal_safe(text), color_wanted(self._inner)))
        except BrokenPipeError:
            _reader_gone()
        return len(text)

    def flush(self) -> None:
        try:
            self._inner.flush()
        except BrokenPipeError:
            _reader_gone()

    def isatty(self) -> bool:
        return bool(getattr(self._inner, "isatty", lambda: False)())

    def fileno(self) -> int:
        return self._inner.fileno()

    @property
    def buffer(self) -> Any:
        """The underlying binary stream, unfiltered: protocol output (e.g. the MCP server's
        JSON-RPC, whose JSON never holds a raw control character) passes byte for byte."""
        return self._inner.buffer

    def __getattr__(self, name: str) -> Any:  # anything else a text stream offers
        return getattr(self._inner, name)


class _WarningEcho(logging.Handler):
    """A warning logged where no handler was set up (the CLI sets none), shown on stderr as every
    other line of ours: through the stored-text filter and wrapped at words to the terminal's
    width, later lines indented. Python's own last-resort handler wrote it as one raw line that
    the terminal broke inside words (``withheld from the model: in`` / ``visible_unicode_U+202E``).
    A warning is shown once a command (a search hitting ten messages of a session with a flagged
    title repeated the same line ten times)."""

    def __init__(self, level: int) -> None:
        super().__init__(level)
        self.shown: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
        except Exception:  # a bad format string is logging's problem to report, as it does
            self.handleError(record)
            return
        if text in self.shown:
            return
        self.shown.add(text)
        for line in text.splitlines() or [""]:
            click.echo(fill(line, output_columns(err=True), "", "  "), err=True)


@contextmanager
def unhandled_warnings_echoed() -> Iterator[None]:
    """Within: the warnings no logging handler takes (``logging.lastResort``, the one Python
    meant for programs that configure no logging) are shown as :class:`_WarningEcho` does."""
    saved = logging.lastResort
    logging.lastResort = _WarningEcho(logging.WARNING)
    try:
        yield
    finally:
        logging.lastResort = saved


class ReaderGone(Exception):
    """The reader of stdout or stderr closed its end (``… | head -1``)."""


def _reader_gone() -> None:
    """Point stdout/stderr at /dev/null (nothing more can be shown) and stop the command."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        try:
            os.dup2(devnull, fd)
        except OSError:
            pass
    os.close(devnull)
    raise ReaderGone()


@contextmanager
def terminal_safe_output() -> Iterator[None]:
    """Within: ``sys.stdout`` and ``sys.stderr`` escape control characters (see terminal_safe)."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, _SafeTextStream):
        sys.stdout = _SafeTextStream(sys.stdout)
    if not isinstance(sys.stderr, _SafeTextStream):
        sys.stderr = _SafeTextStream(sys.stderr)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, _SafeTextStream):
                stream.flush()
        sys.stdout, sys.stderr = saved


# --------------------------------------------------------------------------- model-facing output
# What search, recall, list and show commands print is also what an agent reads when it
# shells out to hermes-store: like a tool reply, it passes the one sanitiser (no forged
# memory-context fence or system note). ``--raw`` prints the exact stored text instead;
# exports (facts export, memory history --json, backup) are always exact.


class _FencedTextStream(_SafeTextStream):
    """A text stream that removes fence tags and system notes (``tooling.sanitize_context``)
    from each write before passing it on (one ``click.echo`` is one write: a whole line)."""

    @property
    def inner(self) -> Any:
        """The stream written to."""
        return self._inner

    def write(self, text: str) -> int:  # type: ignore[override]
        if not isinstance(text, str):
            raise TypeError("text stream")
        if has_styles(text):
            # sanitise what a reader sees, without our marks; keep the styling only when
            # nothing had to be removed (a mark inside a forged tag cannot hide it)
            plain = strip_styles(text)
            cleaned = sanitize_context(plain)
            self._inner.write(text if cleaned == plain else cleaned)
        else:
            self._inner.write(sanitize_context(text))
        return len(text)


@contextmanager
def fenced_output() -> Iterator[None]:
    """Within: human output is sanitised per write and :func:`echo_json` fences its data."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _FencedTextStream(sys.stdout), _FencedTextStream(sys.stderr)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        sys.stdout, sys.stderr = saved


def model_facing(command: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator (next to the function, under the click decorators): adds ``--raw`` and runs the
    command within :func:`fenced_output` unless it is given."""

    @click.option("--raw", is_flag=True, default=False,
                  help="Print stored text exactly (no fence sanitising; for export, not for a model).")
    @functools.wraps(command)
    def wrapper(*args: Any, raw: bool, **kwargs: Any) -> Any:
        if raw:
            return command(*args, **kwargs)
        with fenced_output():
            return command(*args, **kwargs)

    return wrapper


def open_facts(home: Home, *, reads: bool, config: Any = None) -> Any:  # -> FactStore (import lazy)
    """The fact store of ``home`` for a fact command; a read on a home without a store gets an
    empty one in memory, and a read never creates the home's folders (the store's opener makes
    what a write needs)."""
    from hermes_store.facts.store import FactStore

    if reads and not home.store_exists():
        return FactStore(home.open_reader(), config=config, owns_db=True)
    store = FactStore(home, config=config)  # a store that cannot be opened fails here, creating nothing
    if not reads:
        try:
            home.ensure()  # the home's folders, for a write, once its store is there
        except BaseException:
            store.close()
            raise
    return store
