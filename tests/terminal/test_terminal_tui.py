"""What ``hermes-store tui`` shows in a real terminal (tmux) for accented and prefix queries.

The screen is read with ``capture-pane -e``: a hit must arrive as a styled span (reverse
video, the TUI's hit style), never as marker or escape text.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("textual")

from tests.tui.test_tui_tmux import Tmux  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None,
                                reason="tmux is not installed: the real-terminal TUI test CANNOT run here")

CLI = [sys.executable, "-m", "hermes_store.cli"]
# reverse video (the hit style), in any of the ways tmux writes it, then the word
HIT = r"\x1b\[(?:[0-9;]*;)?7(?:;[0-9;]*)?m{word}"


def _cli(home: Path, *args: str) -> None:
    done = subprocess.run([*CLI, "--home", str(home), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.fixture
def french_home(tmp_path: Path) -> Path:
    """A store holding a Claude.ai export conversation, a memory entry and a fact, in French."""
    export = tmp_path / "data-2026-02-02-10-00-00"
    export.mkdir()
    conversation = {
        "uuid": "fr000000-0001-4000-8000-000000000001", "name": "Préparer le déploiement",
        "created_at": "2026-02-01T09:00:00Z", "updated_at": "2026-02-01T09:10:00Z",
        "chat_messages": [
            {"uuid": "fr-1", "sender": "human", "created_at": "2026-02-01T09:00:10Z",
             "text": "Le déploiement du service café a échoué hier soir.", "attachments": [], "files": []},
            {"uuid": "fr-2", "sender": "assistant", "created_at": "2026-02-01T09:00:30Z",
             "text": "Relancez le déploiement après avoir vidé le cache.", "attachments": [], "files": []}]}
    (export / "conversations.json").write_text(json.dumps([conversation], ensure_ascii=False), encoding="utf-8")
    home = tmp_path / "home"
    _cli(home, "sessions", "index", str(export))
    _cli(home, "memory", "add", "Préférer le déploiement progressif pour le café")
    _cli(home, "facts", "add", "Le déploiement du café se fait le lundi")
    return home


def _facts_view(home: Path, query: str) -> tuple[str, str]:
    """The facts+memory view (ctrl+g) for ``query``: (plain screen, styled screen)."""
    tmux = Tmux(f"env TERM=xterm-256color {' '.join(CLI)} --home {home} tui -q '{query}'; sleep 30")
    try:
        tmux.wait_for(" ms)")  # "N result(s) (T ms)": the search answered
        tmux.keys("C-g")
        screen = tmux.wait_for("se fait le lundi")
        time.sleep(0.3)
        return screen, tmux.screen("-e")
    finally:
        tmux.close()


@pytest.mark.parametrize(("query", "word"), [("cafe", "café"), ("deploy*", "déploiement")])
def test_fact_hits_are_marked_in_the_facts_and_memory_view(french_home: Path, query: str, word: str) -> None:
    """ctrl+g marked the memory entry's hit but never a fact's (facts come from their index
    without marks): the fact line showed plain text. Both are marked now, as the CLI bolds them."""
    screen, styled = _facts_view(french_home, query)
    assert "Facts" in screen and ">>>" not in screen and "\\u001b" not in screen
    lines = styled.splitlines()
    fact = next(line for line in lines if "se fait le lundi" in line)
    memory = next(line for line in lines if "progressif" in line)
    assert re.search(HIT.format(word=word), memory), memory
    assert re.search(HIT.format(word=word), fact), fact


def test_preview_and_session_mark_what_the_index_matched(french_home: Path) -> None:
    """The preview and the whole session (Enter) marked the query's words as written, anywhere
    in a word: ``deploy*`` marked ``Deploy`` inside ``Deploying`` and never ``déploiement``,
    ``cafe`` never ``café``, while the result list above marked the words the index matched.
    Both now mark those words (folded, stemmed, prefix*), whole, as the result list does."""
    for query, marked, unmarked in (("deploy*", ["déploiement"], ["café"]), ("cafe", ["café"], ["déploiement"])):
        tmux = Tmux(f"env TERM=xterm-256color {' '.join(CLI)} --home {french_home} tui -q '{query}'; sleep 30")
        try:
            tmux.wait_for("[0] USER")  # the preview of the first hit
            time.sleep(0.3)
            styled = tmux.screen("-e").splitlines()
            preview = styled[next(i for i, line in enumerate(styled) if "[0] USER" in line) + 1]
            for word in marked:
                assert re.search(HIT.format(word=word), preview), (query, preview)
            for word in unmarked:
                assert not re.search(HIT.format(word=word), preview), (query, preview)
            tmux.keys("Enter")
            tmux.wait_for("hit: fr000000")
            time.sleep(0.3)
            styled = tmux.screen("-e")
            line = next(line for line in styled.splitlines() if "hier soir" in line)
            for word in marked:
                assert re.search(HIT.format(word=word), line), (query, line)
        finally:
            tmux.close()


def test_stored_prompt_marks_are_text_in_the_result_list(tmp_path: Path) -> None:
    """A message holding ``>>> import quokka`` showed in the result list as ``python repl:
    >>>import quokka`` with ``import`` marked: the stored ``>>>`` was read as the hit mark and
    the real mark shown as text. The stored text is shown as written, only the hit marked."""
    source = tmp_path / "20260402_120000_bbbbbb.jsonl"
    source.write_text(json.dumps({"role": "session_meta", "platform": "cli", "timestamp": 1775131200}) + "\n"
                      + json.dumps({"role": "user", "content": "python repl: >>> import quokka then <<<<<<< HEAD",
                                    "timestamp": 1775131210}) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    _cli(home, "sessions", "index", str(source))
    tmux = Tmux(f"env TERM=xterm-256color {' '.join(CLI)} --home {home} tui -q 'import'; sleep 30")
    try:
        tmux.wait_for(" ms)")
        time.sleep(0.3)
        screen, styled = tmux.screen(), tmux.screen("-e")
    finally:
        tmux.close()
    result = next(line for line in screen.splitlines() if "python repl" in line)
    assert "python repl: >>> import quokka then <<<<<<< HEAD" in result, screen
    line = next(line for line in styled.splitlines() if "python repl" in line)
    assert re.search(HIT.format(word="import"), line) and not re.search(HIT.format(word=">>>"), line), line


def test_copying_a_reference_that_looks_like_markup(tmp_path: Path) -> None:
    """ctrl+r on a session whose id (its file name) holds ``[link=...]`` stopped the TUI with
    "Error: Expected markup value": the notification read the copied reference as Textual markup.
    Notifications are plain text now: the TUI keeps running and shows the reference as it is."""
    source = tmp_path / "20260405_120001_x[link=http:__evil]click.jsonl"
    source.write_text(json.dumps({"role": "session_meta", "platform": "cli", "timestamp": 1775044800}) + "\n"
                      + json.dumps({"role": "user", "content": "bracket numbat", "timestamp": 1775044810}) + "\n",
                      encoding="utf-8")
    home = tmp_path / "home"
    _cli(home, "sessions", "index", str(source))
    tmux = Tmux(f"env TERM=xterm-256color {' '.join(CLI)} --home {home} tui -q numbat; echo EXITED $?; sleep 30")
    try:
        tmux.wait_for(" ms)")
        tmux.keys("C-r")
        screen = tmux.wait_for("copied message reference")
        time.sleep(1)
        screen = tmux.screen()
    finally:
        tmux.close()
    assert "EXITED" not in screen and "markup" not in screen, screen
    assert "20260405_120001_x[link=http:__evil]click#0" in screen, screen


def test_a_long_title_leaves_the_session_header_readable(tmp_path: Path) -> None:
    """Opening a session whose title is long (importers keep up to 300 characters) showed the
    title over the whole header: the session id, the hit's reference and the resume command were
    clipped away. The title now takes one line, cut with ``…``, at 80 columns and after the
    window is resized to 40."""
    export = tmp_path / "data-2026-02-02-10-00-00"
    export.mkdir()
    conversation = {
        "uuid": "lt000000-0001-4000-8000-000000000001", "name": "Quarterly planning " + "notes " * 49,
        "created_at": "2026-02-01T09:00:00Z", "updated_at": "2026-02-01T09:10:00Z",
        "chat_messages": [{"uuid": "lt-1", "sender": "human", "created_at": "2026-02-01T09:00:10Z",
                           "text": "where did the dugong survey go", "attachments": [], "files": []}]}
    (export / "conversations.json").write_text(json.dumps([conversation]), encoding="utf-8")
    home = tmp_path / "home"
    _cli(home, "sessions", "index", str(export))
    tmux = Tmux(f"env TERM=xterm-256color {' '.join(CLI)} --home {home} tui -q dugong; sleep 30")
    try:
        tmux.wait_for(" ms)")
        tmux.keys("Enter")
        screen = tmux.wait_for("Quarterly planning")
        time.sleep(0.5)
        screen = tmux.screen()
        assert "hit: lt000000-0001-4000-8000-000000000001#0" in screen, screen
        assert "resume: (no resume command for this agent)" in screen, screen
        title = next(line for line in screen.splitlines() if "Quarterly planning" in line)
        assert title.rstrip().endswith("…"), screen
        tmux.run("resize-window", "-t", "tui", "-x", "40", "-y", "24")
        time.sleep(1.5)
        screen = tmux.screen()
        assert "hit:" in screen and "resume: (no resume command for this" in screen, screen
        assert "where did the dugong survey go" in screen.replace("\n ", " "), screen
    finally:
        tmux.close()
