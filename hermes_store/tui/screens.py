"""The TUI's secondary screens: a whole session, the filter form, facts and memory entries."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Label, Static

from hermes_store import timeutil
from hermes_store.query import QueryPlan
from hermes_store.recall import KIND_BY_NAME
from hermes_store.tui.backend import ROLES, SESSION_PAGE, SearchRequest, StoreView, check_roles
from hermes_store.tui.inputs import OrderedInput
from hermes_store.tui.render import (
    highlighted,
    message_text,
    one_line,
    safe,
    session_header,
    terms_highlighted,
)
from hermes_store.tui.resume import resume_command


class MessageBox(VerticalScroll):
    """The session's messages, which keep the reader's place when the terminal is resized.

    A resize rewraps every message onto more or fewer lines while the scroll offset stays, so
    the screen showed some other message (at 40 columns, the middle of one far above the hit).
    :meth:`mark_place` notes the message at the top and how far into it the view is, on the
    layout before the resize; :meth:`keep_place` scrolls back there on the layout after it."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        super().__init__(id=id)
        self.place: tuple[Widget, float] | None = None  # (message at the top, fraction read of it)
        self.marked_at: Size | None = None  # the box's size when the place was marked

    def mark_place(self) -> None:
        """Note the message at the top of the view (the layout must still be the old one)."""
        if self.marked_at is not None and self.marked_at != self.size:
            return  # laid out anew already: the place noted before still holds
        top = self.scroll_y
        for message in self.children:
            region = message.virtual_region
            if region.bottom > top:
                self.place = (message, max(0.0, top - region.y) / max(1, region.height))
                break
        self.marked_at = self.size

    def keep_place(self) -> None:
        """Scroll the message noted by :meth:`mark_place` back to the top, as far into it."""
        if self.place is not None and self.place[0].parent is self:
            message, read = self.place
            region = message.virtual_region
            self.scroll_to(y=region.y + round(read * region.height), animate=False)
        self.marked_at = self.size


class SessionScreen(Screen[None]):
    """A whole session, scrollable, opened at the hit (long sessions in pages of SESSION_PAGE)."""

    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Back"),
        Binding("c", "copy_reference", "Copy ref"),
        Binding("r", "copy_resume", "Copy resume"),
        Binding("n", "page(1)", "Next page"),
        Binding("p", "page(-1)", "Prev page"),
    ]

    def __init__(self, store: StoreView, row: dict[str, Any], plan: QueryPlan) -> None:
        super().__init__()
        self.store, self.row, self.plan = store, row, plan  # plan: the query, to mark its words
        self.session: dict[str, Any] | None = None
        count_hint = int(row.get("seq") or 0)
        self.start = max(0, count_hint - SESSION_PAGE // 2)
        self.paged_back = False  # the page shown was reached with p (previous)
        self.page_note = ""  # which page of a long session is shown, when it is one of several

    def compose(self) -> ComposeResult:
        yield Static(Text("Loading the session…"), id="session-header")
        yield MessageBox(id="session-messages")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#session-messages").focus()
        self.load()

    @work(thread=True, exclusive=True, group="session", exit_on_error=False)
    def load(self) -> None:
        """Read the session row and one page of messages (in a worker thread)."""
        try:
            session = self.session or self.store.session(self.row["session_id"])
            messages = self.store.session_page(self.row["session_id"], self.start, SESSION_PAGE) if session else []
        except Exception as exc:  # the store failed or went away: say so, keep the app usable
            problem = Text(f"Could not read the session: {type(exc).__name__}: {one_line(exc)} (Esc: back)",
                           style="bold red")
            self.app.call_from_thread(self.query_one("#session-header", Static).update, problem)
            return
        self.app.call_from_thread(self.show, session, messages)

    def show(self, session: dict[str, Any] | None, messages: list[dict[str, Any]]) -> None:
        """Put the loaded page on screen and scroll to the hit."""
        header = self.query_one("#session-header", Static)
        box = self.query_one("#session-messages", MessageBox)
        box.remove_children()
        box.place = box.marked_at = None
        if session is None:
            header.update(Text(f"Session {safe(self.row['session_id'])} is no longer in the store."))
            return
        self.session = session
        total = int(session.get("message_count") or 0)
        self.page_note = ""
        if messages:
            first, last = messages[0]["seq"], messages[-1]["seq"]
            if first > 0 or last + 1 < total:
                self.page_note = f"messages {first}–{last} of {total} (n/p: next/previous page)"
        self.show_header()
        hit_seq = int(self.row["seq"])
        widgets = [Static(message_text(m, hit_seq=hit_seq, query=self.plan, max_chars=None),
                          classes="message hit" if m["seq"] == hit_seq else "message")
                   for m in messages]
        box.mount_all(widgets)
        hit = next((w for w, m in zip(widgets, messages, strict=True) if m["seq"] == hit_seq), None)
        if hit is not None:
            self.call_after_refresh(box.scroll_to_widget, hit, animate=False, top=True)
        else:  # a page without the hit reads on from where the last one was left: n at its top, p at its end
            self.call_after_refresh(box.scroll_end if self.paged_back else box.scroll_home, animate=False)

    def show_header(self, width: int | None = None) -> None:
        """Lay the header out for ``width`` cells (by default its own), its title line cut to one line."""
        if self.session is None:
            return
        header = self.query_one("#session-header", Static)
        if width is None:
            width = (header.content_size.width or self.app.size.width - 2) if header.size.width \
                else self.app.size.width - 2
        text = session_header(self.session, self.row, self.resume(), width)
        if self.page_note:
            text.append(f"\n{self.page_note}", style="dim")
        header.update(text)

    def on_resize(self, event: events.Resize) -> None:
        """A resized terminal: the title line is cut again for the new width, and the messages
        keep the reader's place (:class:`MessageBox`). The header is still laid out for the old
        width here: cut for that one, a narrowed header kept the height of a title wrapped
        onto two lines (a blank line under it)."""
        self.show_header(max(1, event.size.width - 2))  # its padding: one cell each side
        box = self.query_one("#session-messages", MessageBox)
        box.mark_place()
        self.call_after_refresh(box.keep_place)

    def resume(self) -> str | None:
        """The resume command of this session's agent, if it has one."""
        if self.session is None:
            return None
        return resume_command(self.session.get("origin_format"), str(self.session["id"]))

    def action_page(self, step: int) -> None:
        """Show the next (1) or previous (-1) page of a long session."""
        total = int((self.session or {}).get("message_count") or 0)
        start = self.start + step * SESSION_PAGE
        if start < 0 and self.start > 0:
            start = 0
        if start < 0 or start >= total:
            self.notify("No more messages that way.")
            return
        self.start, self.paged_back = start, step < 0
        self.load()

    def action_copy_reference(self) -> None:
        """Copy the hit's message reference."""
        self.app.copy_reference(self.row)  # type: ignore[attr-defined]

    def action_copy_resume(self) -> None:
        """Copy the command resuming this session in its agent."""
        self.app.copy_resume(self.row, self.session)  # type: ignore[attr-defined]


class FiltersScreen(ModalScreen[SearchRequest | None]):
    """A small form: sources, roles, since, until. Enter applies, Escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+l", "clear", "Clear all")]

    def __init__(self, request: SearchRequest, store: StoreView) -> None:
        super().__init__()
        self.request, self.store = request, store

    def compose(self) -> ComposeResult:
        with Vertical(id="filters-form"):
            yield Label("Filters (Enter applies, Esc cancels, ctrl+l clears; lists are comma-separated)")
            yield Label("Agent/source:")
            yield OrderedInput(",".join(self.request.sources), placeholder="e.g. claude-code,codex,cli", id="f-sources")
            yield Label(f"Role ({', '.join(ROLES)}):")
            yield OrderedInput(",".join(self.request.roles), placeholder="e.g. user,assistant", id="f-roles")
            yield Label("Since / until (YYYY-MM-DD, ISO time, epoch, or an age like 7d):")
            yield OrderedInput(self.request.since or "", placeholder="since, e.g. 30d", id="f-since")
            yield OrderedInput(self.request.until or "", placeholder="until, e.g. 2026-01-31", id="f-until")
            yield Static("", id="f-known")
            yield Static("", id="f-error")

    def on_mount(self) -> None:
        self.query_one("#f-sources", Input).focus()
        self.load_sources()

    @work(thread=True, exclusive=True, group="sources", exit_on_error=False)
    def load_sources(self) -> None:
        """Show which sources the store has (in a worker thread)."""
        names = self.store.sources()
        text = Text("known sources: " + (", ".join(one_line(n) for n in names) or "none"), style="dim")
        self.app.call_from_thread(self.query_one("#f-known", Static).update, text)

    def _values(self) -> dict[str, Any]:
        def split(widget_id: str) -> tuple[str, ...]:
            raw = self.query_one(widget_id, Input).value
            return tuple(p.strip() for p in raw.split(",") if p.strip())

        return {"sources": split("#f-sources"), "roles": split("#f-roles"),
                "since": self.query_one("#f-since", Input).value.strip() or None,
                "until": self.query_one("#f-until", Input).value.strip() or None}

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Validate and apply; a bad value is named and the form stays open."""
        values = self._values()
        problem = check_roles(values["roles"])
        for name in ("since", "until"):
            if problem is None:
                try:
                    timeutil.parse_when(values[name], name=name, end_of_day=name == "until")
                except timeutil.TimeParseError as exc:
                    problem = str(exc)
        if problem:
            error = self.query_one("#f-error", Static)
            error.update(Text(f"Invalid filter: {safe(problem)}", style="bold red"))
            # the form's last line: in a short window (40x15) it is below the edge, and Enter
            # seemed to do nothing; scroll it into view once it is laid out
            self.call_after_refresh(error.scroll_visible, animate=False)
            return
        self.dismiss(replace(self.request, **values))

    def action_clear(self) -> None:
        """Empty every field."""
        for widget in self.query(Input):
            widget.value = ""

    def action_cancel(self) -> None:
        """Close without changing the filters."""
        self.dismiss(None)


class RecallScreen(Screen[None]):
    """Facts and MEMORY.md/USER.md entries matching the query (through the recall layer)."""

    # ctrl+g, which opened this view, closes it (it used to stack another copy, one more Esc each)
    BINDINGS = [Binding("escape,q,ctrl+g", "app.pop_screen", "Back")]

    def __init__(self, store: StoreView, query: str) -> None:
        super().__init__()
        self.store, self.text = store, query

    def compose(self) -> ComposeResult:
        yield Static(Text(f"Facts and memory entries for: {one_line(self.text)}", style="bold"),
                     id="recall-title")
        with VerticalScroll(id="recall-box"):
            yield Vertical(id="recall-entries")
            yield Static(Text("Searching…"), id="recall-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#recall-box").focus()
        if not self.text.strip():
            self.query_one("#recall-body", Static).update(
                Text("Type a query first: this view lists the facts and MEMORY/USER entries matching it."))
            return
        self.load()

    @work(thread=True, exclusive=True, group="recall", exit_on_error=False)
    def load(self) -> None:
        """Ask the recall layer (in a worker thread)."""
        result = self.store.memory_and_facts(self.text)
        # (text, CSS class) per line of the view: an entry is its own widget, indented by its
        # padding, so its wrapped lines keep the indent (a "    " prefix indented the first only)
        lines: list[tuple[Text, str]] = []
        current = None
        for item in result.results:
            kind = KIND_BY_NAME[item.kind]
            if kind.name != current:
                current = kind.name
                lines.append((Text(kind.title, style="bold cyan"), "recall-kind"))
            head, text = kind.describe(item.to_dict())
            lines.append((Text(one_line(head), style="dim"), "recall-head"))
            # memory entries come marked by their index; a fact is marked here (as recall bolds it)
            lines.append((terms_highlighted(text, self.text) if kind.name == "facts" else highlighted(text),
                          "recall-entry"))
        body = Text()
        if not result.results and result.errors:  # not "no match": the search did not happen
            body.append("No facts or memory entries found: the searches below failed.\n")
        elif not result.results:
            body.append("No facts or memory entries match this query.\n")
        for kind, note in result.notes.items():
            body.append(f"note ({kind}): {one_line(note)}\n", style="dim")
        for kind, error in result.errors.items():
            body.append(f"error: {kind} could not be searched: {one_line(error)}\n", style="bold red")
        body.rstrip()
        self.app.call_from_thread(self.show, lines, body)

    def show(self, lines: list[tuple[Text, str]], body: Text) -> None:
        """Put the entries found and the notes about the search on screen (UI thread)."""
        self.query_one("#recall-entries", Vertical).mount_all(
            [Static(text, classes=css_class) for text, css_class in lines])
        notes = self.query_one("#recall-body", Static)
        notes.update(body)
        notes.display = bool(body)
