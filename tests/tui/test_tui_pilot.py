"""The TUI driven through Textual's pilot at 80x24: what the screen shows after each key."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("textual")

from textual.widgets import Input, Label, Static  # noqa: E402

from hermes_store.home import Home  # noqa: E402
from hermes_store.tui.app import SearchApp  # noqa: E402
from hermes_store.tui.render import HIT_STYLE, result_text  # noqa: E402
from hermes_store.tui.screens import FiltersScreen, RecallScreen, SessionScreen  # noqa: E402
from tests.tui.conftest import CLAUDE_ID, HERMES_ID  # noqa: E402

SIZE = (80, 24)


async def settle(app: SearchApp, pilot, query: str | None = None) -> None:
    """Wait until the shown outcome answers ``query`` (the box's text by default)."""
    query = app.request.query if query is None else query
    for _ in range(400):
        if app.outcome is not None and app.outcome.request == app.request and app.request.query == query:
            break
        await asyncio.sleep(0.01)
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def wait_until(pilot, condition, timeout: float = 10.0) -> None:
    """Let the app run until ``condition()`` holds (workers and refreshes are asynchronous)."""
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        await pilot.pause(0.02)
    assert condition()


def shown(app: SearchApp, selector: str) -> str:
    """The plain text a Static shows."""
    return str(app.screen.query_one(selector, Static).render())


def status(app: SearchApp) -> str:
    return shown(app, "#status")


def recall_shown(app: SearchApp) -> str:
    """The plain text of the facts and memory view: its entries, then its notes."""
    texts = [str(w.render()) for w in app.screen.query_one("#recall-entries").query(Static)]
    return "\n".join([*texts, shown(app, "#recall-body")])


def preview(app: SearchApp) -> str:
    return "\n".join(str(w.render()) for w in app.query_one("#preview").query(Static))


def test_typing_finds_highlights_and_previews(tui_home: Path) -> None:
    async def run() -> None:
        app = SearchApp(Home(tui_home))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            assert "Type to search" in status(app)
            await pilot.press(*"zebrafish")
            await settle(app, pilot, "zebrafish")
            assert "1 result" in status(app)
            assert app.rows[0]["session_id"] == CLAUDE_ID
            option = app.query_one("#results").get_option_at_index(0)
            line = str(option.prompt)
            assert "claude-code" in line and "2026-01-20" in line and "user" in line
            # the matched word is a style span, the snippet has no markers left
            assert "Why did the zebrafish experiment fail?" in line and ">>>" not in line
            spans = [option.prompt.plain[s.start:s.end] for s in option.prompt.spans if s.style == HIT_STYLE]
            assert spans == ["zebrafish"]
            # the preview shows the conversation around it, tool calls included
            await wait_until(pilot, lambda: "incubator" in preview(app))
            text = preview(app)
            assert "▶ [0] USER" in text
            assert "tool call Read" in text and "/home/ana/lab/notes.md" in text
            assert "incubator temperature dropped to 18C" in text
    asyncio.run(run())


def test_stored_control_characters_are_neutralised(tui_home: Path) -> None:
    async def run() -> None:
        app = SearchApp(Home(tui_home), query="canary")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, "canary")
            prompt = app.query_one("#results").get_option_at_index(0).prompt
            # the excerpt is the text the index reads: the stored escape is not in it at all
            assert "\x1b" not in prompt.plain and "u001b" not in prompt.plain
            assert "[bold]x[/bold]" in prompt.plain  # shown as text, not read as markup
            await wait_until(pilot, lambda: "canary" in preview(app))
            # the whole message shows it as visible text, never as an escape
            assert "\x1b" not in preview(app) and "\\u001b[2J" in preview(app)
    asyncio.run(run())


def test_enter_opens_whole_session_scrolled_to_hit(tui_home: Path) -> None:
    async def run() -> None:
        app = SearchApp(Home(tui_home), query="canary")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, "canary")
            await pilot.press("enter")
            await pilot.pause()
            await app.workers.wait_for_complete()
            assert isinstance(app.screen, SessionScreen)
            await wait_until(pilot, lambda: len(app.screen.query(".message")) == 40)
            await wait_until(pilot, lambda: app.screen.query_one("#session-messages").scroll_y > 0)
            header = shown(app, "#session-header")
            assert "Kubernetes rollout" in header and f"hit: {HERMES_ID}#30" in header
            assert f"hermes --resume {HERMES_ID}" in header
            messages = app.screen.query(".message")
            assert len(messages) == 40  # the whole session
            box = app.screen.query_one("#session-messages")
            assert box.scroll_y > 0  # scrolled down to message 30
            hit = app.screen.query_one(".hit", Static)
            assert "[30]" in str(hit.render())
            await pilot.press("c")
            assert app.clipboard == f"{HERMES_ID}#30"
            await pilot.press("escape")
            assert not isinstance(app.screen, SessionScreen)
    asyncio.run(run())


def test_copy_reference_and_resume_command(tui_home: Path) -> None:
    async def run() -> None:
        app = SearchApp(Home(tui_home), query="zebrafish")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, "zebrafish")
            await pilot.press("ctrl+r")
            assert app.clipboard == f"{CLAUDE_ID}#0"
            assert f"copied message reference: {CLAUDE_ID}#0" in status(app)
            await pilot.press("ctrl+o")
            assert app.clipboard == f"claude --resume {CLAUDE_ID}"
            assert "claude --resume" in status(app)
            # from the result list, single letters
            await pilot.press("escape", "c")
            assert app.clipboard == f"{CLAUDE_ID}#0"
    asyncio.run(run())


def test_filters_narrow_and_bad_values_are_named(tui_home: Path) -> None:
    async def run() -> None:
        app = SearchApp(Home(tui_home), query="deploy")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, "deploy")
            assert len(app.rows) == 30  # RESULT_LIMIT of the 40 messages
            await pilot.press("ctrl+t")
            assert isinstance(app.screen, FiltersScreen)
            app.screen.query_one("#f-roles", Input).value = "usr"
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, FiltersScreen)
            assert "unknown role usr" in shown(app, "#f-error")
            app.screen.query_one("#f-roles", Input).value = "user"
            app.screen.query_one("#f-since", Input).value = "yesterday-ish"
            await pilot.press("enter")
            await pilot.pause()
            assert "Invalid filter" in shown(app, "#f-error")
            app.screen.query_one("#f-since", Input).value = ""
            await pilot.press("enter")
            await pilot.pause()
            assert not isinstance(app.screen, FiltersScreen)
            await settle(app, pilot, "deploy")
            assert len(app.rows) == 20 and {r["role"] for r in app.rows} == {"user"}
            assert "role=user" in shown(app, "#filters")
            app.request = app.request.__class__("deploy", sources=("claude-code",))
            app.schedule_search(0)
            await settle(app, pilot, "deploy")
            assert app.rows == [] and "No matching messages" in status(app)
    asyncio.run(run())


def test_invalid_query_is_said(tui_home: Path) -> None:
    async def run() -> None:
        app = SearchApp(Home(tui_home), query="(zebrafish")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, "(zebrafish")
            assert "Invalid: query not understood" in status(app)
            assert "unbalanced parenthesis" in status(app) or "parenthes" in status(app)
            assert app.query_one("#status").has_class("problem")
            await pilot.press("ctrl+u", *"***")
            await settle(app, pilot, "***")
            assert "no searchable words" in status(app)
    asyncio.run(run())


def test_a_question_read_as_prose_is_a_note_not_invalid(tui_home: Path) -> None:
    """A question that holds "a quoted title" is read as prose (the CLI prints a note): the
    status line gives the results and the note, not a red "Invalid"."""
    async def run() -> None:
        query = 'where did we talk about the "zebrafish" tank setup'
        app = SearchApp(Home(tui_home), query=query)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, query)
            assert "Invalid" not in status(app) and "read as a question" in status(app)
            assert not app.query_one("#status").has_class("problem")
    asyncio.run(run())


def test_facts_and_memory_view(tui_home: Path) -> None:
    async def run() -> None:
        app = SearchApp(Home(tui_home), query="zebrafish")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, "zebrafish")
            await pilot.press("ctrl+g")
            assert isinstance(app.screen, RecallScreen)
            await wait_until(pilot, lambda: "Searching" not in shown(app, "#recall-body"))
            body = recall_shown(app)
            assert "third floor" in body and "28C incubators" in body
            assert "MEMORY" in body.upper() and "fact" in body.lower()
            await pilot.press("q")
            assert not isinstance(app.screen, RecallScreen)
    asyncio.run(run())


def test_no_store_is_said_and_never_created(tmp_path: Path) -> None:
    home = tmp_path / "nohome"

    async def run() -> None:
        app = SearchApp(Home(home))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"zebrafish")
            await settle(app, pilot, "zebrafish")
            assert "No store at" in status(app) and "sessions index" in status(app)
            await pilot.press("ctrl+g")
            await wait_until(pilot, lambda: "Searching" not in shown(app, "#recall-body"))
            assert "No facts or memory entries" in shown(app, "#recall-body")
    asyncio.run(run())
    assert not (home / "hermes_store.db").exists()


def test_empty_store_is_said(tmp_path: Path) -> None:
    home = Home(tmp_path / "empty")
    home.open_db().close()  # a store without sessions

    async def run() -> None:
        app = SearchApp(home, query="anything")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, "anything")
            assert "The store is empty" in status(app)
    asyncio.run(run())


def test_result_text_is_two_lines() -> None:
    text = result_text({"source": "codex", "title": "t\x1b]52;c;x\x07", "timestamp": 0, "role": "assistant",
                        "snippet": ">>>a<<< b"})
    assert text.plain.count("\n") == 1 and "\x1b" not in text.plain and "\x07" not in text.plain


def test_search_open_and_copy_on_each_engine(engine_home: Path) -> None:
    async def run() -> None:
        app = SearchApp(Home(engine_home))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*"zebrafish")
            await settle(app, pilot, "zebrafish")
            assert "1 result" in status(app) and app.rows[0]["session_id"] == CLAUDE_ID
            await wait_until(pilot, lambda: "tool call Read" in preview(app))
            await pilot.press("ctrl+r")
            assert app.clipboard == f"{CLAUDE_ID}#0"
            await pilot.press("enter")
            await wait_until(pilot, lambda: len(app.screen.query(".message")) == 4)
            assert "The incubator got too cold overnight." in "\n".join(
                str(w.render()) for w in app.screen.query(".message"))
    asyncio.run(run())


def test_long_session_pages(tui_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hermes_store.tui.screens.SESSION_PAGE", 10)

    def seqs(app: SearchApp) -> list[int]:
        return [int(str(w.render()).split("]")[0].split("[")[-1]) for w in app.screen.query(".message")]

    async def run() -> None:
        app = SearchApp(Home(tui_home), query="canary")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, "canary")
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen) and seqs(app) == list(range(25, 35)))
            assert "messages 25–34 of 40" in shown(app, "#session-header")
            await pilot.press("n")
            await wait_until(pilot, lambda: seqs(app) == list(range(35, 40)))
            await pilot.press("p", "p")
            await wait_until(pilot, lambda: seqs(app) == list(range(15, 25)))
    asyncio.run(run())


def test_a_store_that_cannot_be_read_is_not_called_an_invalid_query(tmp_path: Path) -> None:
    """A store that fails (here a file that is no database; on PostgreSQL a database that does
    not exist) used to read "Invalid: search failed: PgUnavailable: ..." as if the query were
    at fault; the status line now names the store and why it could not be searched."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "hermes_store.db").write_bytes(b"this is not a database" * 100)

    async def run() -> None:
        app = SearchApp(Home(home), query="zebrafish")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, "zebrafish")
            text = status(app)
            assert "Invalid" not in text, text
            text = text.replace("\n", "")
            assert "The store could not be searched: " in text and str(home / "hermes_store.db") in text
            assert app.query_one("#status").has_class("problem")
    asyncio.run(run())


def test_a_postgresql_database_that_does_not_exist_is_named_with_its_cause(pg_server, tmp_path: Path) -> None:
    """The PostgreSQL case of the test above, as `--database-url` names it: the status line says
    the store could not be searched and why (the database does not exist), never "Invalid"."""
    url = pg_server.url("no_such_database_here")
    home = Home(tmp_path / "home", database_url=url)

    async def run() -> None:
        app = SearchApp(home, query="zebrafish")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, "zebrafish")
            text = status(app).replace("\n", " ")
            assert "Invalid" not in text, text
            assert "The store could not be searched: " in text and "no_such_database_here" in text
            assert "does not exist" in text
    asyncio.run(run())


def test_facts_view_on_a_store_that_cannot_be_read_does_not_say_nothing_matches(pg_server, tmp_path: Path) -> None:
    """ctrl+g on an unreachable store used to say "No facts or memory entries match this query."
    above the error, as if the store had been searched."""
    home = Home(tmp_path / "home", database_url=pg_server.url("no_such_database_here"))

    async def run() -> None:
        app = SearchApp(home, query="zebrafish")
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot, "zebrafish")
            await pilot.press("ctrl+g")
            await wait_until(pilot, lambda: "Searching" not in shown(app, "#recall-body"))
            body = shown(app, "#recall-body")
            assert "could not be searched" in body and "does not exist" in body.replace("\n", " ")
            assert "match this query" not in body
    asyncio.run(run())


def test_facts_title_and_filters_form_fit_a_40_column_terminal(tui_home: Path) -> None:
    """At 40x15 the facts and memory view's title (one line high) lost the query it names, and
    the filters form (76 columns wide) ran off the right edge, its labels cut mid-word."""
    async def run() -> None:
        app = SearchApp(Home(tui_home), query="zebrafish")
        async with app.run_test(size=(40, 15)) as pilot:
            await settle(app, pilot, "zebrafish")
            await pilot.press("ctrl+g")
            await wait_until(pilot, lambda: isinstance(app.screen, RecallScreen))
            await pilot.pause(0.2)
            title = app.screen.query_one("#recall-title", Static)
            lines = [strip.text for strip in title.render_lines(title.region.reset_offset)]
            assert "zebrafish" in " ".join(lines), lines
            await pilot.press("escape")
            await pilot.press("ctrl+t")
            await wait_until(pilot, lambda: isinstance(app.screen, FiltersScreen))
            await pilot.pause(0.2)
            form = app.screen.query_one("#filters-form")
            assert form.region.right <= 40, form.region
            for label in form.query(Label):  # wrapped within the form, never cut
                assert label.region.right <= form.content_region.right, (label.region, form.content_region)
    asyncio.run(run())
