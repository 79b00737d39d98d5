"""The search-as-you-type app: a query box, results, a preview of the conversation around the hit.

Typing restarts a short debounce timer (:data:`DEBOUNCE`); when it fires, the search runs in
a worker thread. Each keystroke bumps a generation number: a search whose generation is
no longer current is skipped before it starts and its results are dropped if it was
already running (Textual's exclusive worker group cancels it as well), so the screen
only ever shows the answer to what is in the box now.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.timer import Timer
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from hermes_store.home import Home
from hermes_store.query import compile_query
from hermes_store.sessions.discovery import HOW_TO_INDEX
from hermes_store.tui.backend import SearchOutcome, SearchRequest, StoreView, message_reference
from hermes_store.tui.inputs import OrderedInput
from hermes_store.tui.render import message_text, one_line, result_text, safe
from hermes_store.tui.resume import resume_command
from hermes_store.tui.screens import FiltersScreen, RecallScreen, SessionScreen

DEBOUNCE = 0.025  # seconds of quiet after a keystroke before the search starts
HELP = 'words, "a phrase", a OR b, NOT word, prefix* — the language of `hermes-store sessions search`'

CSS = """
#query { height: 3; }
#filters { height: 1; padding: 0 1; }
#status { height: auto; max-height: 5; padding: 0 1; }
#status.problem { color: $error; text-style: bold; }
/* min-heights: the results (one is two lines) and the preview share what a 40x15 window leaves */
#results { height: 1fr; min-height: 2; border: none; text-wrap: nowrap; text-overflow: ellipsis; }
#results:focus { border-left: thick $accent; }
#preview { height: 1fr; min-height: 3; border-top: solid $primary; }
/* the same width with and without a scrollbar: the hit scrolled to the top stays there */
#session-messages { scrollbar-gutter: stable; }
#session-header { height: auto; max-height: 10; padding: 0 1; border-bottom: solid $primary; }
.message { padding: 0 1; margin-bottom: 1; }
.hit { background: $boost; }
FiltersScreen { align: center middle; }
#filters-form { width: 76; max-width: 100%; height: auto; border: round $primary; padding: 0 1; background: $surface; }
#filters-form Input { height: 3; }
#filters-form Label { width: 100%; }
#recall-title { height: auto; max-height: 3; padding: 0 1; }
#recall-entries { height: auto; }
.recall-entry { padding-left: 4; }
"""


class ResultList(OptionList):
    """The result list; when it has the focus, single letters work too."""

    BINDINGS = [
        Binding("c", "app.copy_reference", "Copy ref"),
        Binding("r", "app.copy_resume", "Copy resume"),
        Binding("f", "app.filters", "Filters"),
        Binding("m", "app.recall", "Facts+memory"),
        Binding("slash,i", "app.focus_query", "Query"),
        Binding("q", "app.quit", "Quit"),
    ]


class Preview(VerticalScroll):
    """The conversation around the highlighted result, centred on the hit (``.preview-hit``).

    A resized terminal rewraps every message above the hit onto more or fewer lines while the
    scroll offset stays, so the hit slid out of view (at 40 columns the pane showed an earlier
    message's text); the pane centres its hit again after each resize."""

    def on_resize(self) -> None:
        self.call_after_refresh(self.show_hit)

    def show_hit(self, hit: Static | None = None) -> None:
        """Scroll ``hit`` (by default the pane's hit, if it holds one) to the middle of the pane."""
        hit = hit or next(iter(self.query(".preview-hit").results(Static)), None)
        if hit is not None:
            self.scroll_to_center(hit, animate=False)


class PreviewHit(Static):
    """The preview's hit message. It asks its pane to centre it whenever its own size changes:
    its first layout and every rewrap. A scroll asked for once, right after mounting, measured
    a pane not laid out yet on a busy machine, and the pane stayed at its top."""

    def on_resize(self) -> None:
        pane = self.parent
        if isinstance(pane, Preview):
            pane.call_after_refresh(pane.show_hit, self)


class SearchApp(App[None]):
    """``hermes-store tui``: search every indexed agent's past as you type."""

    TITLE = "hermes-store"
    CSS = CSS
    BINDINGS = [
        Binding("ctrl+c", "quit", "Quit", priority=True),
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
        Binding("pagedown", "move(5)", show=False),
        Binding("pageup", "move(-5)", show=False),
        Binding("ctrl+r", "copy_reference", "Copy ref"),
        Binding("ctrl+o", "copy_resume", "Copy resume"),
        Binding("ctrl+t", "filters", "Filters"),
        Binding("ctrl+g", "recall", "Facts+memory"),
        Binding("escape", "focus_results", "Results", show=False),
    ]

    def __init__(self, home: Home, *, query: str = "", store: StoreView | None = None) -> None:
        super().__init__()
        self.store = store or StoreView(home)
        self.request = SearchRequest(query)
        self.rows: list[dict[str, Any]] = []
        self.outcome: SearchOutcome | None = None
        self.generation = 0
        self._timer: Timer | None = None
        self.last_copied: str | None = None
        self.changed_at = time.perf_counter()  # when the request last changed
        self.latency: float | None = None  # change -> its results on screen, for the last search shown
        # a key that acts on the results (Enter, ctrl+r, ctrl+o) pressed before the results of what
        # was typed came: (the generation it waits for, the action)
        self.when_shown: tuple[int, Callable[[], None]] | None = None
        self.started = 0  # the last generation whose search began

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this platform; on Linux and macOS one that takes its size from the
        terminal it draws on, never from ``$COLUMNS``/``$LINES`` (:mod:`hermes_store.tui.terminal`)."""
        driver = super().get_driver_class()
        if os.name != "posix":
            return driver
        from hermes_store.tui.terminal import TerminalSizeDriver  # imports termios: POSIX only

        return TerminalSizeDriver if driver is TerminalSizeDriver.__base__ else driver

    # -- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield OrderedInput(self.request.query, placeholder="Search all your agents' past…", id="query")
        yield Static("", id="filters")
        yield Static("", id="status")
        yield ResultList(id="results")
        yield Preview(id="preview")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#query", Input).focus()
        self.show_filters()
        self.schedule_search()

    # -- searching -----------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        """Every keystroke in the query box: restart the debounce timer."""
        if event.input.id == "query":
            self.sync_query()

    def sync_query(self) -> None:
        """Make the request what the query box holds now. Keys typed ahead (a paste, a burst over
        SSH) reach the box before their ``Changed`` messages reach the app, so a key bound here
        (ctrl+g, ctrl+r) could act on the words typed before them; each ``Changed`` then only
        catches up with a box already read."""
        value = self.query_one("#query", Input).value
        if value != self.request.query:
            self.request = replace(self.request, query=value)
            self.changed_at = time.perf_counter()
            self.schedule_search()

    def schedule_search(self, delay: float = DEBOUNCE) -> None:
        """Search for the current request after ``delay`` seconds of quiet."""
        self.generation += 1
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(max(delay, 0.001), partial(self.start_search, self.generation))

    def start_search(self, generation: int) -> None:
        """Run the search in a worker thread (a newer one cancels this one)."""
        if generation != self.generation or generation == self.started:
            return
        self.started = generation
        self.store.cancel()  # whatever search is still running answers an older query
        self.run_worker(partial(self.search_job, self.request, generation), thread=True,
                        exclusive=True, group="search", exit_on_error=False)

    def search_job(self, request: SearchRequest, generation: int) -> None:
        """The worker: search unless stale, hand the outcome to the UI thread unless stale."""
        if generation != self.generation:
            return
        try:
            outcome = self.store.search(request)
        except Exception as exc:  # the store failed: say so on screen, keep the app usable
            outcome = SearchOutcome(request, "failed", problem=str(exc) or type(exc).__name__)
        if generation == self.generation:
            self.call_from_thread(self.show_outcome, outcome, generation)

    def show_outcome(self, outcome: SearchOutcome, generation: int) -> None:
        """Put a search's results and status line on screen (UI thread)."""
        if generation != self.generation:
            return
        self.outcome = outcome
        self.rows = outcome.rows
        results = self.query_one("#results", ResultList)
        results.clear_options()
        results.add_options([Option(result_text(row), id=str(i)) for i, row in enumerate(self.rows)])
        self.set_status(*self.status_for(outcome))
        self.latency = time.perf_counter() - self.changed_at
        if self.rows:
            results.highlighted = 0
        else:
            self.query_one("#preview", VerticalScroll).remove_children()
        if self.when_shown is not None and self.when_shown[0] == generation:
            action = self.when_shown[1]
            self.when_shown = None
            action()

    def status_for(self, outcome: SearchOutcome) -> tuple[str, bool]:
        """The status line for ``outcome`` and whether it reports a problem."""
        where = safe(self.store.where())
        if outcome.state == "no-store":
            return f"No store at {where}: nothing indexed yet; {HOW_TO_INDEX}.", True
        if outcome.state == "empty-store":
            return f"The store is empty ({where}): no sessions indexed yet; {HOW_TO_INDEX}.", True
        if outcome.state == "failed":  # the store, not the query: never labelled "Invalid"
            problem = safe(outcome.problem or "")
            at = "" if where in problem else f" at {where}"  # most errors name the store already
            return (f"The store{at} could not be searched: {problem}", True)
        if outcome.state == "blank":
            return (f"Type to search: {HELP}", False)
        count = len(outcome.rows)
        found = f"{count} result{'s' if count != 1 else ''}" if count else "No matching messages"
        found += f" ({outcome.elapsed * 1000:.0f} ms)"
        if outcome.problem:
            return (f"Invalid: {safe(outcome.problem)}" + (f" — {found}" if outcome.state == "invalid"
                                                            and outcome.rows else ""), True)
        if outcome.note:
            found += f"; {one_line(outcome.note)}"
        return found, False

    def set_status(self, text: str, problem: bool = False) -> None:
        """Write the status line (red when it reports a problem)."""
        status = self.query_one("#status", Static)
        status.update(Text(text) if problem else Text(text, no_wrap=True, overflow="ellipsis"))
        status.set_class(problem, "problem")

    def show_filters(self) -> None:
        """The filter line under the query box."""
        summary = self.request.filter_summary()
        self.query_one("#filters", Static).update(
            Text(f"filters: {safe(summary) or 'none'}  (ctrl+t to change)", style="dim",
                 no_wrap=True, overflow="ellipsis"))

    # -- the preview -----------------------------------------------------------------------

    def current_row(self) -> dict[str, Any] | None:
        """The highlighted result, or None."""
        index = self.query_one("#results", ResultList).highlighted
        if index is None or not 0 <= index < len(self.rows):
            return None
        return self.rows[index]

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """A new result is highlighted: load the conversation around it."""
        row = self.current_row()
        if row is not None:
            self.load_preview(row)

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def load_preview(self, row: dict[str, Any]) -> None:
        """Read the messages around ``row`` (worker thread) and show them."""
        try:
            messages = self.store.context(row["session_id"], int(row["seq"]))
        except Exception:  # interrupted by a newer search, or the store went away: nothing to show
            return
        plan = compile_query(self.request.query)
        texts = [(m.get("seq") == int(row["seq"]), message_text(m, hit_seq=int(row["seq"]), query=plan))
                 for m in messages]
        self.call_from_thread(self._set_preview, row, texts)

    def _set_preview(self, row: dict[str, Any], texts: list[tuple[bool, Text]]) -> None:
        if row is not self.current_row():
            return
        box = self.query_one("#preview", Preview)
        box.remove_children()
        if not texts:
            box.mount(Static(Text("This message is no longer in the store.")))
            return
        widgets = [PreviewHit(text, classes="preview-hit") if hit else Static(text, classes="preview-message")
                   for hit, text in texts]
        box.mount_all(widgets)
        hit = next((w for w, (is_hit, _) in zip(widgets, texts, strict=True) if is_hit), None)
        self.call_after_refresh(box.show_hit, hit)

    # -- actions --------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the query box opens the highlighted result (see :meth:`on_results`)."""
        if event.input.id == "query":
            self.on_results(self.action_open)

    def on_results(self, action: Callable[[], None]) -> None:
        """Run ``action`` (it acts on the highlighted result) on the results of what the box
        holds: pressed before they are on screen (the search waits for a pause in typing), it
        runs once they are, on the first of them, not on a result of the query before or with
        "No result selected"."""
        self.sync_query()
        if self.outcome is None or self.outcome.request != self.request:
            self.when_shown = (self.generation, action)
            self.start_search(self.generation)  # the key ends the typing: no need to wait for the pause
            return
        action()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a result opens its session."""
        self.action_open()

    def action_open(self) -> None:
        """Open the whole session of the highlighted result."""
        row = self.current_row()
        if row is None:
            self.notify("No result to open.", severity="warning")
            return
        self.push_screen(SessionScreen(self.store, row, compile_query(self.request.query)))

    def action_move(self, step: int) -> None:
        """Move the result highlight by ``step`` (works while typing)."""
        results = self.query_one("#results", ResultList)
        if not self.rows:
            return
        current = results.highlighted if results.highlighted is not None else 0
        results.highlighted = max(0, min(len(self.rows) - 1, current + step))

    def action_focus_results(self) -> None:
        """Move the focus to the result list (single-letter keys work there)."""
        self.query_one("#results", ResultList).focus()

    def action_focus_query(self) -> None:
        """Move the focus back to the query box."""
        self.query_one("#query", Input).focus()

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Textual's notification, always plain text (``markup`` is ignored): a notification may
        name a session id or a format from the store, and ``[link=...]`` or an unbalanced ``[/]``
        in one was read as markup (the latter stopped the TUI with "Expected markup value")."""
        extra = {} if timeout is None else {"timeout": timeout}
        super().notify(message, title=title, severity=severity, markup=False, **extra)

    def copy(self, text: str, what: str) -> None:
        """Copy ``text`` to the clipboard (OSC 52: works over SSH) and show it."""
        self.copy_to_clipboard(text)
        self.last_copied = text
        self.notify(f"Copied {what}: {text}", timeout=6)
        self.set_status(f"copied {what}: {text}")

    def copy_reference(self, row: dict[str, Any] | None) -> None:
        """Copy the message reference of ``row``."""
        if row is None:
            self.notify("No result selected.", severity="warning")
            return
        self.copy(message_reference(safe(row["session_id"]), int(row["seq"])), "message reference")

    def copy_resume(self, row: dict[str, Any] | None, session: dict[str, Any] | None = None) -> None:
        """Copy the command resuming ``row``'s session in its agent (when the agent has one)."""
        if row is None:
            self.notify("No result selected.", severity="warning")
            return
        session = session or self.store.session(row["session_id"]) or {}
        command = resume_command(session.get("origin_format"), str(row["session_id"]))
        if command is None:
            fmt = safe(session.get("origin_format") or "unknown")
            self.notify(f"No resume command known for {fmt} sessions.", severity="warning")
            self.set_status(f"no resume command known for {fmt} sessions", True)
            return
        self.copy(safe(command), "resume command")

    def action_copy_reference(self) -> None:
        """Copy the highlighted result's message reference."""
        self.on_results(lambda: self.copy_reference(self.current_row()))

    def action_copy_resume(self) -> None:
        """Copy the highlighted result's resume command."""
        self.on_results(lambda: self.copy_resume(self.current_row()))

    def action_filters(self) -> None:
        """Open the filter form; applying it re-runs the search."""
        def applied(request: SearchRequest | None) -> None:
            if request is not None:
                self.request = replace(request, query=self.request.query)
                self.show_filters()
                self.schedule_search(0)

        self.push_screen(FiltersScreen(self.request, self.store), applied)

    def action_recall(self) -> None:
        """Open the facts and memory entries matching the query (what the box holds now)."""
        self.sync_query()
        self.push_screen(RecallScreen(self.store, self.request.query))

    async def action_quit(self) -> None:
        """Leave the app (the store is closed on the way out)."""
        self.exit()

    def on_unmount(self) -> None:
        self.store.close()
