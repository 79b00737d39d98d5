"""The TUI as a person meets it with long and hostile stored text (pilot, small terminals)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("textual")

from hermes_store.home import Home  # noqa: E402
from hermes_store.tui.app import SearchApp  # noqa: E402
from hermes_store.tui.screens import RecallScreen, SessionScreen  # noqa: E402
from tests.tui.conftest import run_cli, write_jsonl  # noqa: E402
from tests.tui.test_tui_pilot import settle, wait_until  # noqa: E402


@pytest.fixture
def long_home(tmp_path: Path) -> Path:
    """A store with one session whose title and messages are long single lines."""
    lines = [{"role": "session_meta", "platform": "cli", "timestamp": 1768900000.0,
              "title": "A very long session title " + "about zebras " * 30}]
    for i in range(4):
        lines.append({"role": "user", "content": f"zebra {i} " + "A" * 10_000 + " tail",
                      "timestamp": 1768900001.0 + i})
    source = write_jsonl(tmp_path / "src" / "20260120_101500_long.jsonl", lines)
    home = tmp_path / "home"
    run_cli(home, "sessions", "index", "--format", "hermes-jsonl", str(source))
    return home


@pytest.mark.parametrize("size", [(40, 15), (80, 24), (200, 50)])
def test_each_result_is_two_lines_however_long_its_title_and_snippet(long_home: Path, size) -> None:
    """A result is ``source title time role`` and its snippet, two lines cut with "…": a long
    title used to wrap over three lines and a 1,000-character snippet over nine, so at 80x24 one
    result filled the whole list (at 40x15 the list showed part of one title)."""
    async def run() -> None:
        app = SearchApp(Home(long_home), query="zebra")
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot, "zebra")
            assert len(app.rows) == 4
            results = app.query_one("#results")
            assert results.virtual_size.height == 2 * len(app.rows)
            lines = [strip.text for strip in results.render_lines(results.region.reset_offset)]
            assert lines[0].rstrip().endswith("…") and lines[1].rstrip().endswith("…"), lines[:2]
    asyncio.run(run())


def test_next_and_previous_pages_open_where_reading_goes_on(tui_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """n used to show the next page at the scroll offset of the one before (read to its end, the
    new page opened near its own end, its first messages above the screen); now n opens a page
    at its top and p at its end (the hit's own page still opens at the hit)."""
    monkeypatch.setattr("hermes_store.tui.screens.SESSION_PAGE", 10)

    def first_seq_shown(app: SearchApp) -> int:
        box = app.screen.query_one("#session-messages")
        visible = [w for w in app.screen.query(".message") if w.region.y >= box.region.y
                   and w.region.bottom <= box.region.bottom]
        return int(str(visible[0].render()).split("]")[0].split("[")[-1])

    async def run() -> None:
        app = SearchApp(Home(tui_home), query="canary")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot, "canary")
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen)
                             and len(app.screen.query(".message")) == 10)
            box = app.screen.query_one("#session-messages")
            await pilot.press("p")  # messages 15-24: opens at its end, 24 on screen
            await wait_until(pilot, lambda: "messages 15–24" in str(app.screen.query_one("#session-header").render()))
            await pilot.pause(0.2)
            assert box.scroll_y == box.max_scroll_y > 0
            await pilot.press("home", "p")  # messages 5-14, read from its top last: still opens at its end
            await wait_until(pilot, lambda: "messages 5–14" in str(app.screen.query_one("#session-header").render()))
            await pilot.pause(0.2)
            assert box.scroll_y == box.max_scroll_y > 0
            await pilot.press("n")  # read to the end of 5-14, n: 15-24 opens at its top
            await wait_until(pilot, lambda: "messages 15–24" in str(app.screen.query_one("#session-header").render()))
            await pilot.pause(0.2)
            assert box.scroll_y == 0 and first_seq_shown(app) == 15
    asyncio.run(run())


def test_ctrl_g_closes_the_facts_and_memory_view_it_opened(tui_home: Path) -> None:
    """ctrl+g on the facts and memory view opened a second copy over it (and a third...), each
    needing its own Esc to get back to the results; now it goes back, as Esc does."""
    async def run() -> None:
        app = SearchApp(Home(tui_home), query="zebrafish")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot, "zebrafish")
            main = app.screen
            await pilot.press("ctrl+g")
            await wait_until(pilot, lambda: isinstance(app.screen, RecallScreen))
            await pilot.press("ctrl+g")
            await wait_until(pilot, lambda: app.screen is main)
            assert len(app.screen_stack) == 1
    asyncio.run(run())
