"""A store named by mistake (found walking every SQLite naming from a terminal): a URL whose
folder does not exist, a file that is no SQLite database, a path given where a URL is asked.
Each is refused in one line naming the file and where the name comes from, and creates nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample_home" / "sessions"
# naming -> (the URL, given how, where it is relative to: "abs", the working directory or the home)
NAMINGS = ["option-absolute", "option-relative", "environment", "config-relative"]


def _name(home, tmp_path, monkeypatch, naming: str, target: Path) -> list[str]:
    """Name ``target`` as the store the way ``naming`` says; the CLI's leading options."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    monkeypatch.chdir(work)
    head = ["--home", str(home.root)]
    if naming == "option-absolute":
        head += ["--database-url", f"sqlite:///{target}"]
    elif naming == "option-relative":
        head += ["--database-url", f"sqlite:///{target.relative_to(work)}"]
    elif naming == "environment":
        monkeypatch.setenv("HERMES_STORE_DATABASE_URL", f"sqlite:///{target}")
    else:
        home.config_path.write_text(f"store:\n  database_url: sqlite:///{target.relative_to(home.root)}\n",
                                    encoding="utf-8")
    return head


ORIGIN = {"option-absolute": "--database-url", "option-relative": "--database-url",
          "environment": "$HERMES_STORE_DATABASE_URL", "config-relative": "{config}:2: store.database_url"}


@pytest.mark.parametrize("naming", NAMINGS)
@pytest.mark.parametrize("argv", [["facts", "add", "hello"], ["sessions", "index", str(SAMPLE)],
                                  ["restore", "BACKUP"]], ids=["facts-add", "sessions-index", "restore"])
def test_a_url_whose_folder_is_missing_is_refused_and_creates_nothing(home, tmp_path, monkeypatch, naming, argv):
    """``--database-url sqlite:////typo/dir/x.db facts add ...`` made ``/typo/dir`` and a fresh
    empty store there (exit 0): every later command without the typo went on using another
    store. sqlite3 and SQLAlchemy refuse such a name; so do we, before creating anything."""
    base = home.root if naming == "config-relative" else tmp_path / "work"
    base.mkdir(exist_ok=True)
    target = base / "typo" / "dir" / "x.db"
    if argv[0] == "restore":
        backup = tmp_path / "store.bak"
        assert CliRunner().invoke(cli, ["--home", str(tmp_path / "other"), "facts", "add", "x"]).exit_code == 0
        assert CliRunner().invoke(cli, ["--home", str(tmp_path / "other"), "backup", str(backup)]).exit_code == 0
        argv = ["restore", str(backup)]
    head = _name(home, tmp_path, monkeypatch, naming, target)
    before = sorted(p for p in tmp_path.rglob("*") if "other" not in p.parts)
    result = CliRunner().invoke(cli, [*head, *argv])
    assert result.exit_code == 1, result.output
    origin = ORIGIN[naming].format(config=home.config_path)
    assert result.stderr == (f"Error: {target}: cannot create the store: no directory {target.parent} "
                             f"(named by {origin}; create it first); nothing was created\n")
    assert sorted(p for p in tmp_path.rglob("*") if "other" not in p.parts) == before
    assert not (base / "typo").exists() and not home.db_path.exists()


def test_the_home_own_store_still_makes_the_home(tmp_path):
    """The home's own ``hermes_store.db`` is not named by a URL: a new home is made on the first
    write, as Hermes makes ``~/.hermes``."""
    root = tmp_path / "new" / "home"
    result = CliRunner().invoke(cli, ["--home", str(root), "facts", "add", "hello"])
    assert result.exit_code == 0, result.output
    assert (root / "hermes_store.db").is_file()


@pytest.mark.parametrize("naming", NAMINGS)
def test_doctor_and_status_say_the_folder_is_missing(home, tmp_path, monkeypatch, naming):
    """doctor said "ok: no store yet (it is created by the first write)" and exit 0 for a URL
    whose folder is missing, though every write would be refused: it fails naming the folder;
    status says the first write is refused. Neither creates anything."""
    base = home.root if naming == "config-relative" else tmp_path / "work"
    base.mkdir(exist_ok=True)
    target = base / "typo" / "x.db"
    head = _name(home, tmp_path, monkeypatch, naming, target)
    origin = ORIGIN[naming].format(config=home.config_path)
    doctor = CliRunner().invoke(cli, [*head, "doctor"])
    assert doctor.exit_code == 1, doctor.output
    assert doctor.stdout.splitlines()[1] == (f"FAIL   store: {target}: cannot create the store: no directory "
                                             f"{target.parent} (named by {origin}; create it first)")
    status = CliRunner().invoke(cli, [*head, "status"])
    assert status.exit_code == 0, status.output
    assert (f"Database:   not created yet (no directory {target.parent}: the first write is refused)  ({target})"
            in status.stdout)
    assert not (base / "typo").exists() and not home.db_path.exists()


@pytest.mark.parametrize("naming", ["option-absolute", "environment", "config-relative"])
@pytest.mark.parametrize("content", [b"my notes, not a database\n", bytes(range(256)) * 16], ids=["text", "binary"])
def test_a_file_that_is_not_sqlite_is_named_as_such_and_left_alone(home, tmp_path, monkeypatch, naming, content):
    """A text file named as the store: ``sessions list`` (a read) said "cannot open for writing:
    file is not a database", and doctor "not a SQLite database ... (run `hermes-store doctor
    --fix` to salvage it)", though --fix can salvage nothing from it ("salvage failed:
    NotADBError"). Each command now says it is not a SQLite database, and the file is untouched."""
    base = home.root if naming == "config-relative" else tmp_path / "work"
    base.mkdir(exist_ok=True)
    target = base / "notes.db"
    target.write_bytes(content)
    head = _name(home, tmp_path, monkeypatch, naming, target)
    for argv in (["sessions", "list"], ["facts", "add", "x"], ["recall", "x"]):
        result = CliRunner().invoke(cli, [*head, *argv])
        assert result.exit_code == 1, (argv, result.output)
        assert f"{target}: not a SQLite database, so not a store; nothing was changed" in result.stderr, argv
        assert "for writing" not in result.stderr and len(result.stderr.splitlines()) == 1, argv
        assert "DatabaseError" not in result.stderr, argv  # our explained error, not a class name
    for argv in (["doctor"], ["doctor", "--fix"]):
        result = CliRunner().invoke(cli, [*head, *argv])
        assert result.exit_code == 1, (argv, result.output)
        assert result.stdout.splitlines()[1] == (f"FAIL   store: {target}: not a SQLite database (its first bytes "
                                                 "are not the SQLite header), so nothing in it can be salvaged; "
                                                 "doctor --fix leaves it alone: name the store's own file, or move "
                                                 "this one aside for a fresh store"), argv
    assert target.read_bytes() == content
    assert sorted(p.name for p in base.iterdir() if p.name.startswith("notes")) == ["notes.db"]


@pytest.mark.parametrize(("value", "problem"), [
    ("/srv/hermes/store.db", "'/srv/hermes/store.db' is a path, not a URL: name a file as sqlite:////srv/hermes/store.db"),
    ("store.db", "'store.db' is a path, not a URL: name a file as sqlite:///store.db"),
    ("sqlite:store.db", "sqlite:store.db: expected sqlite:///path/to/file.db (three slashes, then the path: "
                        "sqlite:///rel.db, sqlite:////abs/file.db)"),
    ("sqlite://store.db", "sqlite://store.db: expected sqlite:///path/to/file.db (three slashes"),
    ("host=/run/postgresql dbname=hermes password=s3cret",
     "a keyword/value connection string (its values not shown), not a URL: write it as postgresql://user@host/dbname"),
])
def test_a_path_or_a_short_sqlite_url_gets_the_url_to_write(home, tmp_path, monkeypatch, value, problem):
    """A path given as the URL said "unsupported scheme in '(no scheme)'", and ``sqlite:store.db``
    "sqlite: the URL names no file (SQLite needs one)": neither said what to write instead. A libpq
    keyword/value string was called a path, told to become ``sqlite:///host=...`` and printed
    whole, its password with it."""
    monkeypatch.chdir(tmp_path)
    option = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", value, "status"])
    assert option.exit_code == 2 and f"Invalid value for '--database-url': {problem}" in option.stderr
    monkeypatch.setenv("HERMES_STORE_DATABASE_URL", value)
    variable = CliRunner().invoke(cli, ["--home", str(home.root), "facts", "add", "x"])
    assert variable.exit_code == 1 and variable.stderr.startswith(f"Error: $HERMES_STORE_DATABASE_URL: {problem}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hermes_home"] and not home.db_path.exists()
    assert "s3cret" not in option.output + variable.output


def test_a_database_url_at_the_top_of_config_yaml_is_refused_not_ignored(home, tmp_path):
    """``database_url: sqlite:///x.db`` written at the top level of config.yaml (not under
    ``store:``) was ignored without a word: every command used ``<home>/hermes_store.db``."""
    home.config_path.write_text("memory:\n  memory_enabled: true\ndatabase_url: sqlite:///x.db\n", encoding="utf-8")
    for argv in (["facts", "add", "x"], ["sessions", "list"], ["status"]):
        result = CliRunner().invoke(cli, ["--home", str(home.root), *argv])
        assert result.exit_code == 1, (argv, result.output)
        assert result.stderr == (f"Error: {home.config_path}:3: database_url: not read at the top level (the store "
                                 "would be another file); write it under store:, as store.database_url\n"), argv
    assert sorted(p.name for p in home.root.iterdir()) == ["config.yaml", "memories"]
    named = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", f"sqlite:///{tmp_path / 'o.db'}",
                                     "facts", "add", "x"])
    assert named.exit_code == 0, named.output  # the option decides: config.yaml's URL is not asked for


@pytest.mark.parametrize(("text", "said"), [
    ('store:\n  database_url: "sqlite:///x.db\nmemory:\n  x: 1\n',
     ":5: invalid YAML: found unexpected end of stream (column 1), while scanning a quoted scalar begun on line 2"),
    ("a: b: c\n", ":1: invalid YAML: mapping values are not allowed here (column 5)"),
])
def test_invalid_yaml_is_one_line(home, text, said):
    """PyYAML's message took five lines, naming ``"<unicode string>"`` and drawing a caret."""
    home.config_path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["--home", str(home.root), "sessions", "list"])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {home.config_path}{said}\n"


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_database_url_option_is_a_usage_error(home, value):
    """``--database-url "$DB"`` with ``DB`` unset silently used ``<home>/hermes_store.db``."""
    result = CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", value, "facts", "add", "x"])
    assert result.exit_code == 2
    assert "Invalid value for '--database-url': empty: name a store URL" in result.stderr
    assert not home.db_path.exists()


def test_a_url_names_one_file_however_it_is_given(home, tmp_path, monkeypatch):
    """``--database-url "sqlite:///x.db "`` (a trailing space, as pasted) made a second store
    ``"x.db "`` while the same value in ``$HERMES_STORE_DATABASE_URL`` or config.yaml, which are
    stripped, named ``x.db``."""
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'x.db'} "
    assert CliRunner().invoke(cli, ["--home", str(home.root), "--database-url", url, "facts", "add", "a"]).exit_code == 0
    monkeypatch.setenv("HERMES_STORE_DATABASE_URL", url)
    assert CliRunner().invoke(cli, ["--home", str(home.root), "facts", "add", "b"]).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hermes_home", "x.db"]
