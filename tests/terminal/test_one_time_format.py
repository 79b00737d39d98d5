"""One time format across the human output (found walking the CLI as a newcomer): the same
instant was printed three ways. `sessions search` showed local time (`2026-03-16 00:13` under
TZ=Asia/Kolkata), `recall` the UTC ISO form with an offset (`2026-03-15T18:43:50+00:00`) and
`memory show` / `memory history` UTC with a `Z` (`2026-12-08T00:30:52Z`). Now every human listing
shows a time in the user's zone (TZ respected) as `YYYY-MM-DD HH:MM` (`memory history`, a trail,
adds the seconds), through `timeutil.shown_time`; `--json` keeps epoch seconds and UTC ISO text.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.terminal.test_terminal_screen import _env, run_in_pipe

ROOT = Path(__file__).resolve().parents[2]
SESSION = "20260315_184210_9bd7e4"  # the sample home's telegram session (started 18:42:10 UTC)
RAFTS = 1773600230  # its message #4, 2026-03-15 18:43:50 UTC: past midnight in Kolkata
STARTED = 1773600130
ZONES = ["Asia/Kolkata", "America/Los_Angeles"]
UTC_FORMS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2})")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("time_home")
    shutil.copytree(ROOT / "examples" / "sample_home", root, dirs_exist_ok=True)
    assert run_in_pipe(["--home", str(root), "sessions", "index", str(root / "sessions")]).returncode == 0
    assert run_in_pipe(["--home", str(root), "memory", "add", "Raft tickets are booked through the hotel"]
                       ).returncode == 0  # recorded now: created/updated times and a history event
    return root


def local(epoch: float, zone: str, seconds: bool = False) -> str:
    """``epoch`` as a person in ``zone`` reads it, in the one human format."""
    return datetime.fromtimestamp(epoch, ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M" + (":%S" if seconds else ""))


def shown(home: Path, zone: str, *args: str) -> str:
    done = run_in_pipe(["--home", str(home), "--color", "never", *args], TZ=zone)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode("utf-8")
    assert not UTC_FORMS.search(out), out  # no UTC ISO form in human text
    return out


def as_json(home: Path, *args: str) -> object:
    done = run_in_pipe(["--home", str(home), *args, "--json"], TZ="Asia/Kolkata")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("zone", ZONES)
def test_a_message_time_reads_the_same_in_every_command(home: Path, zone: str) -> None:
    when = local(RAFTS, zone)
    search = shown(home, zone, "sessions", "search", "rafts", "--limit", "1")
    assert search.startswith(f"{when}  telegram  {SESSION}#4 "), search
    recalled = shown(home, zone, "recall", "rafts", "--kinds", "sessions", "--limit", "1")
    assert f"  {SESSION}#4  {when} user" in recalled, recalled
    show = shown(home, zone, "sessions", "show", f"{SESSION}#4", "--context", "0")
    assert f"{SESSION}#4 USER ({when})" in show, show


@pytest.mark.parametrize("zone", ZONES)
def test_a_session_start_reads_the_same_in_list_and_show(home: Path, zone: str) -> None:
    when = local(STARTED, zone)
    listed = shown(home, zone, "sessions", "list")
    assert re.search(rf"^{SESSION}  telegram  {when} ", listed, re.MULTILINE), listed
    show = shown(home, zone, "sessions", "show", SESSION)
    assert f"  started: {when}  ended: {local(1773600250, zone)}" in show, show


@pytest.mark.parametrize("zone", ZONES)
def test_memory_times_read_as_local_in_show_history_and_recall(home: Path, zone: str) -> None:
    entry = as_json(home, "memory", "show", "--target", "memory")["memory"]["entries"][-1]
    updated = datetime.fromisoformat(entry["updated_at"].replace("Z", "+00:00")).timestamp()
    event = as_json(home, "memory", "history")[0]
    show = shown(home, zone, "memory", "show", "--target", "memory")
    assert f"created {local(updated, zone)}  updated {local(updated, zone)} by cli" in show, show
    history = shown(home, zone, "memory", "history")
    assert history.startswith(f"#{event['id']:<5} {local(event['at_epoch'], zone, seconds=True)}  memory"), history
    recalled = shown(home, zone, "recall", "raft tickets", "--kinds", "memory", "--limit", "1")
    assert f"  #{entry['index']}  ({local(updated, zone)})" in recalled, recalled


@pytest.mark.parametrize("zone", ZONES)
def test_the_tui_shows_the_time_as_the_cli_does(zone: str) -> None:
    code = ("from hermes_store.tui.render import result_text, session_header\n"
            f"print(result_text({{'source': 'telegram', 'timestamp': {RAFTS}, 'role': 'user'}}).plain)\n"
            f"print(session_header({{'id': 'x', 'started_at': {STARTED}}}, None, None).plain)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=_env(TZ=zone), timeout=60,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode("utf-8")
    assert f"  {local(RAFTS, zone)}  user" in out and f"started {local(STARTED, zone)}" in out, out


def test_json_keeps_epoch_seconds_and_utc(home: Path) -> None:
    hit = as_json(home, "recall", "rafts", "--kinds", "sessions", "--limit", "1")["results"][0]
    assert hit["timestamp"] == RAFTS and hit["time"] == "2026-03-15T18:43:50+00:00"
    entry = as_json(home, "memory", "show", "--target", "memory")["memory"]["entries"][-1]
    assert entry["created_at"].endswith("Z")
