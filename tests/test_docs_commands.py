"""Every shell command shown in README.md and docs/*.md is run, so the docs never drift (issue 22).

The convention for writers of README.md and docs/*.md:

* Commands meant to be run go in ```sh (or ```bash) fences; one command per line, a trailing
  ``\\`` continues it on the next line. Synopses with placeholders (``ID``, ``[--json]``,
  ``a|b``) go in ```text fences: they are not run.
* Blank lines and lines starting with ``#`` are skipped.
* A command ending in ``# not run: REASON`` is skipped (it needs a server, another program, the
  network, or it is the test suite itself); the reason is required.
* A command ending in ``# exit N`` must exit with status N; any other must exit 0.
* A command whose comment begins ``# pg:`` runs against a private throw-away PostgreSQL server
  the test starts (``tests/pg_server.py``; the file's test is skipped, loudly, where no server
  can be had): in it, the docs' example server ``postgresql://hermes@db.internal/NAME`` stands
  for a fresh database of that server (one per NAME in the file). Any other command that names
  the example server must be ``# not run:``: it would reach for a host that is not there.
* A search shown must find something: a command that answers with nothing found (``No matching
  messages.``, ``No results.``, ``No facts found.``, ``No sessions indexed.``, an empty JSON
  list or ``"results": []``) fails, unless its comment says ``finds nothing`` (as a first run on
  an empty home does). An example the reader runs on the sample home and sees nothing from
  shows nothing.
* Each file's commands run in order in one ``bash`` process, as a reader types them into one
  terminal: an ``export`` (or ``cd``) of one command holds for the ones after it, in that file
  only. The shell starts in one fresh home for that file: a copy of ``examples/sample_home``
  (MEMORY.md, USER.md, four transcripts in ``sessions/``, nothing indexed yet) in a temporary
  directory, with ``HERMES_HOME`` pointing at it, the working directory at the repository root
  (so ``examples/...`` paths work), ``TMPDIR`` in the test's own folder (so ``mktemp -d``
  leaves nothing behind) and this Python's ``bin`` directory first on ``PATH`` (so
  ``hermes-store`` is the package under test). Index the transcripts in your file before
  searching them. ``$HERMES_HOME`` may be used in commands.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^\s*```(sh|bash)\s*$")
NOT_RUN = re.compile(r"#\s*not run:\s*(\S.*)$")
EXIT = re.compile(r"#\s*exit\s+(\d+)\s*$")
ON_PG = re.compile(r"#\s*pg:")
EXAMPLE_SERVER = re.compile(r"(['\"]?)postgresql://hermes@db\.internal/(\w+)\1")
FINDS_NOTHING = re.compile(r"#.*\bfinds nothing\b")
NOTHING_FOUND = ("No matching messages.", "No results.", "No facts found.", "No sessions indexed.", "[]")


def found_nothing(stdout: str) -> bool:
    """True when a command's output says it found nothing (its only line one of
    :data:`NOTHING_FOUND`, or JSON whose ``results`` list, or itself, is empty)."""
    text = stdout.strip()
    if text in NOTHING_FOUND:
        return True
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return data == [] or (isinstance(data, dict) and data.get("results") == [])


def doc_files() -> list[Path]:
    """README.md and every docs/*.md (whoever adds one)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def commands(path: Path) -> list[tuple[int, str, int | None]]:
    """(line number, command, expected status or None when not run) for each shell command."""
    found: list[tuple[int, str, int | None]] = []
    inside, pending, start = False, "", 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            inside = bool(FENCE.match(line)) if not inside else False
            continue
        if not inside:
            continue
        if pending:
            line, pending = pending + line.lstrip(), ""
        else:
            start = number
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1] + " "
            continue
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if NOT_RUN.search(text):
            found.append((start, text, None))
            continue
        status = EXIT.search(text)
        found.append((start, text, int(status.group(1)) if status else 0))
    return found


def shell_script(shown: list[tuple[int, str]], outputs: Path) -> str:
    """One bash script running ``shown`` (line number, command) in order in one shell, each
    command's stdout, stderr and status written to ``outputs/<line>.out|err|status``. A command
    runs in a ``{ ...; }`` group, in the shell itself, so its ``export`` or ``cd`` holds for the
    next; the group's closing brace is on a line of its own, past a trailing ``# comment``."""
    lines = []
    for number, command in shown:
        base = outputs / str(number)
        lines.append(f"{{ {command}\n}} >'{base}.out' 2>'{base}.err' </dev/null\n"
                     f"echo $? >'{base}.status'")
    return "\n".join(lines) + "\n"


def on_private_server(run: list[tuple[int, str, int]], request: pytest.FixtureRequest,
                      ) -> tuple[list[tuple[int, str, int]], list[str]]:
    """``run`` with the example server of each ``# pg:`` command replaced by a fresh database of
    the test's private server (started only for a file that has one), and those databases."""
    if not any(ON_PG.search(command) for _, command, _ in run):
        return run, []
    server = request.getfixturevalue("pg_server")
    databases: dict[str, str] = {}

    def database(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in databases:
            databases[name] = f"docs_{name}_{os.getpid()}_{len(databases)}"
            server.create_database(databases[name])
        return shlex.quote(server.url(databases[name]))  # its ?host=...&port=... quoted for the shell

    return ([(n, EXAMPLE_SERVER.sub(database, c) if ON_PG.search(c) else c, e) for n, c, e in run],
            list(databases.values()))


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_shown_command_works(path: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    home = tmp_path / "home"
    shutil.copytree(ROOT / "examples" / "sample_home", home)
    scratch, outputs = tmp_path / "tmp", tmp_path / "outputs"
    scratch.mkdir()
    outputs.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("HERMES_STORE_DATABASE_URL", "NO_COLOR", "HERMES_STORE_DEBUG")}
    env.update(HERMES_HOME=str(home), HOME=str(tmp_path), TMPDIR=str(scratch),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    run = [(number, command, expected) for number, command, expected in commands(path) if expected is not None]
    if not run:
        return
    run, databases = on_private_server(run, request)
    try:
        subprocess.run(["bash", "-c", shell_script([(n, c) for n, c, _ in run], outputs)], cwd=ROOT, env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120 * len(run))
    finally:
        for name in databases:
            request.getfixturevalue("pg_server").drop_database(name)
    for number, command, expected in run:
        status = outputs / f"{number}.status"
        assert status.exists(), f"{path.name}:{number}: `{command}` never ran (did one before it exit the shell?)"
        got = int(status.read_text().strip())
        shown = (outputs / f"{number}.out").read_text()
        assert got == expected, (
            f"{path.name}:{number}: `{command}` exited {got}, expected {expected}\n"
            f"{shown[-2000:]}\n{(outputs / f'{number}.err').read_text()[-2000:]}")
        assert FINDS_NOTHING.search(command) or not found_nothing(shown), (
            f"{path.name}:{number}: `{command}` found nothing ({shown.strip()[:200]!r}): show an example "
            "that finds something on the sample home, or say `# finds nothing` and why")


def test_an_export_holds_for_the_commands_after_it(tmp_path: Path) -> None:
    """docs/store.md begins its examples with ``export HERMES_HOME="$(mktemp -d)"``: run each
    in a shell of its own (as this test did), the export was lost and every command after it
    ran in the sample home instead of the empty one the doc shows."""
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    script = shell_script([(1, "export SHOWN=empty-home"), (2, 'test "$SHOWN" = empty-home  # exit 0'),
                           (3, "cd /"), (4, "pwd")], outputs)
    subprocess.run(["bash", "-c", script], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert [(outputs / f"{n}.status").read_text().strip() for n in (1, 2, 3, 4)] == ["0"] * 4
    assert (outputs / "4.out").read_text() == "/\n"


def test_an_example_that_finds_nothing_is_caught() -> None:
    """docs/watch.md showed ``sessions search pgbouncer.ini`` and docs/browse.md three
    ``sqlite-utils search`` commands that found nothing on the sample home (``No matching
    messages.``, ``[]``): they exited 0, so the test passed them, and a reader saw nothing."""
    assert found_nothing("No matching messages.\n") and found_nothing("[]\n")
    assert found_nothing('{"query": "k", "count": 0, "results": []}')
    assert not found_nothing("2026-03-12 09:15  cli  20260312_091500_3fa2c1#0 [user]\n    backup\n")
    assert not found_nothing('{"results": [{"id": 1}]}') and not found_nothing("")


def test_the_convention_is_applied() -> None:
    """Skipped commands say why; README shows its two set-up commands."""
    for path in doc_files():
        for number, command, expected in commands(path):
            if expected is None:
                assert NOT_RUN.search(command).group(1).strip(), f"{path.name}:{number}: give a reason"
            elif EXAMPLE_SERVER.search(command):
                assert ON_PG.search(command), (
                    f"{path.name}:{number}: names the example server: mark it `# pg:` or `# not run:`")
    shown = [c for _, c, _ in commands(ROOT / "README.md")]
    assert any(c.startswith("scripts/demo") for c in shown)
    assert any(c.startswith("scripts/test") for c in shown)
