"""A newcomer's first run, walked by hand from README.md and docs/*.md (audit-newuser).

Each test is one thing that left a first-time user stuck or misled."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from hermes_store.cli import cli


def _run(home: Path, *argv: str):
    return CliRunner().invoke(cli, ["--home", str(home), *argv])


def test_sessions_list_on_an_empty_home_says_where_it_looked_and_what_to_do(tmp_path: Path) -> None:
    """``hermes-store sessions list`` on a first run printed "No sessions indexed." and nothing
    else: not which store it read (a mistyped --home, HERMES_HOME or database URL looks the
    same), nor how to index anything. stdout keeps its one line; stderr names the store and
    the command."""
    home = tmp_path / "new-home"
    done = _run(home, "sessions", "list")
    assert done.exit_code == 0
    assert done.stdout.strip() == "No sessions indexed."
    note = " ".join(done.stderr.split())
    assert str(home / "hermes_store.db") in note and "no store there yet" in note
    assert "hermes-store sessions index PATH" in note and "--discover" in note
    assert not home.exists()  # the note is a read: nothing created


def test_sessions_search_with_nothing_indexed_says_so_but_not_when_sessions_exist(tmp_path: Path) -> None:
    """``sessions search foo`` on an empty store printed only "No matching messages.", as if
    the transcripts had been searched. It now adds the nothing-indexed note; a search that
    simply matches nothing in an indexed store does not get it."""
    home = tmp_path / "h"
    done = _run(home, "sessions", "search", "foo")
    assert done.exit_code == 0 and done.stdout.strip() == "No matching messages."
    assert "no sessions are indexed in" in " ".join(done.stderr.split())
    sample = Path(__file__).resolve().parents[1] / "examples" / "sample_home" / "sessions"
    assert _run(home, "sessions", "index", str(sample)).exit_code == 0
    miss = _run(home, "sessions", "search", "zzyzx")
    assert miss.exit_code == 0 and "No matching messages." in miss.stdout
    assert "no sessions are indexed" not in miss.stderr


def test_sessions_list_of_an_unknown_source_does_not_claim_nothing_is_indexed(tmp_path: Path) -> None:
    """``sessions list --source nope`` on a store with four sessions said "No sessions indexed."."""
    home = tmp_path / "h"
    sample = Path(__file__).resolve().parents[1] / "examples" / "sample_home" / "sessions"
    assert _run(home, "sessions", "index", str(sample)).exit_code == 0
    done = _run(home, "sessions", "list", "--source", "nope")
    assert done.exit_code == 0
    assert "No sessions from source 'nope' (indexed sources: cli, telegram)." in done.stdout
    assert "No sessions indexed." not in done.stdout


def test_a_bad_since_is_refused_before_anything_is_indexed(tmp_path: Path) -> None:
    """``sessions search x --since 2026-13-01`` on a home with no store answered "No matching
    messages." with exit 0; once sessions existed the same command was a usage error. Every
    bound is read first, and the error names the option it came from."""
    home = tmp_path / "h"
    for option, value, problem in (("--since", "2026-13-01", "not a date"), ("--until", "someday", "not a date"),
                                   ("--after", "last tuesday", "invalid time bound")):
        done = _run(home, "sessions", "search", "x", option, value)
        assert done.exit_code == 2, (option, done.output)
        assert f"Invalid value for '{option}'" in done.stderr and problem in done.stderr
        assert "No matching messages" not in done.stdout
    assert not home.exists()


def test_status_on_a_first_run_says_the_home_and_its_files_are_not_there_yet(tmp_path: Path) -> None:
    """``status`` with no ~/.hermes at all showed "Home: ~/.hermes" and "MEMORY.md: 0 entries,
    0% — 0/2,200 chars" as if both existed, empty; a newcomer with a mistyped home could not
    tell. It now says the home does not exist yet and each file is not there yet."""
    home = tmp_path / "no-such-home"
    done = _run(home, "status")
    assert done.exit_code == 0
    text = " ".join(done.stdout.split())
    assert f"Home: {home} (does not exist yet: the first write creates it)" in text
    assert f"MEMORY.md: no file yet ({home / 'memories' / 'MEMORY.md'})" in text
    assert "USER.md: no file yet" in text and "0 entries" not in text
    assert not home.exists()
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("one\n§\ntwo", encoding="utf-8")
    text = " ".join(_run(home, "status").stdout.split())
    assert "does not exist yet" not in text and "MEMORY.md: 2 entries" in text and "USER.md: no file yet" in text


def _synopsis() -> list[list[str]]:
    """The words of each line of docs/cli.md's synopsis block (the first ```text fence), a
    trailing ``# comment`` left out; ``|`` separates alternatives as a space does."""
    import re

    text = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    block = text.split("```text\n", 1)[1].split("```", 1)[0]
    return [re.split(r"[\s|]+", line.split("  #")[0].strip()) for line in block.splitlines()
            if line.startswith("hermes-store")]


def _leaf_commands() -> list[tuple[str, ...]]:
    import click

    found: list[tuple[str, ...]] = []

    def walk(command: click.Command, path: tuple[str, ...], ctx: click.Context) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                walk(sub, (*path, name), click.Context(sub, parent=ctx))
        else:
            found.append(path)

    walk(cli, (), click.Context(cli))
    return found


def test_the_synopsis_of_docs_cli_names_every_command() -> None:
    """README calls docs/cli.md "every command", but its synopsis left out fifteen of them
    (browse, mcp, tui, migrate, redact, forget, hooks, service, sessions watch / embed /
    export, facts alias / entities / import-hermes, hermes revert): a newcomer reading it did
    not learn they exist. Each command the CLI has is named in a synopsis line, under its group."""
    lines = _synopsis()
    missing = []
    for path in _leaf_commands():
        group, name = (None, path[0]) if len(path) == 1 else path
        if not any(words[0] == "hermes-store" and name in words
                   and (group is None or (len(words) > 1 and words[1] == group)) for words in lines):
            missing.append(" ".join(path))
    assert not missing, f"docs/cli.md's synopsis does not name: {', '.join(missing)}"


def test_the_tui_advises_an_index_command_that_works(tmp_path: Path) -> None:
    """The TUI on a home with no store said "Run `hermes-store sessions index` to import your
    agents' sessions."; that command, run as told, is a usage error (exit 2: "give PATHS to
    index, or --discover"). The TUI now gives the CLI's advice, which names PATH or --discover,
    and the command it names works."""
    import pytest

    pytest.importorskip("textual")
    from hermes_store.home import Home
    from hermes_store.tui.app import SearchApp
    from hermes_store.tui.backend import SearchOutcome, SearchRequest

    app = SearchApp(Home(tmp_path / "nohome"))
    for state in ("no-store", "empty-store"):
        text, problem = app.status_for(SearchOutcome(SearchRequest("x"), state))
        assert problem and "`hermes-store sessions index PATH`" in text and "--discover" in text, text
        assert "`hermes-store sessions index`" not in text
    sample = Path(__file__).resolve().parents[1] / "examples" / "sample_home" / "sessions"
    assert _run(tmp_path / "nohome", "sessions", "index", str(sample)).exit_code == 0


def test_readme_points_its_commands_at_a_copy_not_at_the_readers_hermes_home() -> None:
    """README's ten commands, typed as shown, ran on ~/.hermes (the docs test sets HERMES_HOME,
    a reader does not): a newcomer's real Hermes home got the sample transcripts indexed and a
    memory entry added. The block now points HERMES_HOME at a copy of the sample first."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_docs_commands import ROOT, commands

    shown = [command for _, command, expected in commands(ROOT / "README.md") if expected is not None]
    first = next(i for i, command in enumerate(shown) if command.startswith("hermes-store"))
    assert any(command.startswith("export HERMES_HOME=") and "examples/sample_home" in command
               for command in shown[:first]), shown[:first + 1]


def _forget_then_reindex(home: Path, *url: str) -> list[str]:
    sample = str(Path(__file__).resolve().parents[1] / "examples" / "sample_home" / "sessions")
    head = ["--database-url", url[0]] if url else []
    said = []
    for argv in (["sessions", "index", sample], ["forget", "--matching", "keep backups for 14 days"],
                 ["forget", "--session", "20260320_101005_c0ffee"], ["sessions", "index", sample]):
        done = _run(home, *head, *argv)
        assert done.exit_code == 0, (argv, done.output)
        said.append(done.stdout.strip())
    return said


def test_reindex_after_forget_counts_what_the_store_holds(tmp_path: Path) -> None:
    """Walking docs/redaction.md: after ``forget`` of one message and of a whole 5-message
    session, re-indexing the unchanged files said "23 messages already indexed" of a store
    holding 17: the files' rows kept the count read before the forgetting."""
    said = _forget_then_reindex(tmp_path / "h")
    assert said[1].startswith("forgot 1 message")
    assert said[3] == "4 files: 0 sessions and 0 messages added, 17 messages already indexed, 0 problems", said[3]


def test_reindex_after_forget_counts_what_the_store_holds_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    """The same on PostgreSQL (one storage code path for both engines)."""
    said = _forget_then_reindex(tmp_path / "h", pg_url)
    assert said[3] == "4 files: 0 sessions and 0 messages added, 17 messages already indexed, 0 problems", said[3]


def test_tool_session_id_help_says_all_it_does(tmp_path: Path) -> None:
    """``tool --help`` said --session-id is "excluded from session_search"; it is excluded from
    recall too and recorded as the writer of memory writes (as ``mcp --help`` says). Both are
    checked here, with the help that now says so."""
    import json

    help_text = " ".join(CliRunner().invoke(cli, ["tool", "--help"]).stdout.split())
    assert "excluded from session_search and recall, recorded with every memory write" in help_text
    home = tmp_path / "h"
    sample = Path(__file__).resolve().parents[1] / "examples" / "sample_home" / "sessions"
    assert _run(home, "sessions", "index", str(sample)).exit_code == 0
    ask = json.dumps({"query": "backup", "kinds": ["sessions"]})
    assert "3fa2c1" in _run(home, "tool", "recall", ask).stdout
    assert "3fa2c1" not in _run(home, "tool", "--session-id", "20260312_091500_3fa2c1", "recall", ask).stdout
    add = json.dumps({"action": "add", "target": "memory", "content": "written by s-demo"})
    assert _run(home, "tool", "--session-id", "s-demo", "memory", add).exit_code == 0
    assert "session=s-demo" in _run(home, "memory", "history").stdout


def test_sessions_help_does_not_narrow_the_formats_to_four() -> None:
    """``sessions --help`` said it indexes "(Hermes, Claude Code, Codex, OpenAI JSONL)"; it
    reads dozens of formats. It now points at ``sessions formats``, which lists them."""
    text = " ".join(CliRunner().invoke(cli, ["sessions", "--help"]).stdout.split())
    assert "OpenAI JSONL)" not in text and "`sessions formats` lists" in text


def test_facts_lines_label_their_numbers(tmp_path: Path) -> None:
    """``facts search postgresql`` (README) printed "#1 [0.50] score=0.442 Ana prefers ...": the
    bare bracketed number is the fact's trust, which nothing on the screen said (recall prints
    "trust 0.55"). Both numbers are labelled now."""
    home = tmp_path / "h"
    assert _run(home, "facts", "add", "Ana prefers PostgreSQL over MySQL").exit_code == 0
    assert _run(home, "facts", "search", "postgresql").stdout.startswith(
        "#1 (trust 0.50, score 0.")
    assert _run(home, "facts", "list").stdout.startswith("#1 (trust 0.50) Ana prefers PostgreSQL")


def test_status_warns_of_a_store_setting_that_refuses_every_write(tmp_path: Path) -> None:
    """With ``store.redact_patterns: {x: "("}`` in config.yaml, ``sessions index`` and ``facts
    add`` fail naming it, but ``status`` (where a newcomer looks) printed no warning at all."""
    import json

    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text('store:\n  redact_patterns:\n    x: "("\n', encoding="utf-8")
    assert _run(home, "facts", "add", "a fact").exit_code == 1
    done = _run(home, "status")
    assert done.exit_code == 0
    warning = " ".join(done.stderr.split())
    assert "store.redact_patterns.x: not a valid regular expression" in warning
    assert "every write to the store is refused until it is fixed" in warning
    data = json.loads(_run(home, "status", "--json", "--raw").stdout)
    assert data["store_config_errors"] and "redact_patterns.x" in data["store_config_errors"][0]


def test_memory_reads_do_not_create_the_home(tmp_path: Path) -> None:
    """Walking store.md's first run in tmux: ``memory show`` (and ``history``, ``prompt``,
    ``cost``) on a home that does not exist created it and an empty ``memories/`` (a mistyped
    --home left a folder tree behind); docs/store.md: the home is created on the first write."""
    for argv in (["memory", "show"], ["memory", "history"], ["memory", "prompt"], ["memory", "cost"]):
        home = tmp_path / "-".join(argv) / "home"
        done = _run(home, *argv)
        assert done.exit_code == 0, (argv, done.output)
        assert not home.exists(), f"{argv} created {sorted(str(p) for p in home.parent.rglob('*'))}"
    home = tmp_path / "written" / "home"
    assert _run(home, "memory", "add", "the first write makes the home").exit_code == 0
    assert (home / "memories" / "MEMORY.md").read_text(encoding="utf-8") == "the first write makes the home"
    not_a_dir = tmp_path / "file-home"
    not_a_dir.write_text("x", encoding="utf-8")
    done = CliRunner().invoke(cli, ["memory", "show"], env={"HERMES_HOME": str(not_a_dir)})
    assert done.exit_code == 1 and str(not_a_dir) in done.output and "not a directory" in done.output.lower()


def test_recall_on_a_first_run_says_where_it_looked(tmp_path: Path) -> None:
    """docs/store.md's first run: ``recall kubernetes`` on an empty home printed "No results."
    alone, as ``sessions list`` did. It now adds the same note; with sessions indexed it does
    not."""
    home = tmp_path / "h"
    done = _run(home, "recall", "kubernetes")
    assert done.exit_code == 0 and done.stdout.strip() == "No results."
    assert "no sessions are indexed in" in " ".join(done.stderr.split())
    sample = Path(__file__).resolve().parents[1] / "examples" / "sample_home" / "sessions"
    assert _run(home, "sessions", "index", str(sample)).exit_code == 0
    assert "no sessions are indexed" not in _run(home, "recall", "kubernetes").stderr
