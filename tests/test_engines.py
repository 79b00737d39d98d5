"""The one engine registry: URL schemes, storages, database classes and the typed protocol."""

from __future__ import annotations

import pytest

from hermes_store import engines
from hermes_store.builtin import storage as builtin_storage
from hermes_store.db import Database
from hermes_store.facts import storage as fact_storage
from hermes_store.home import ConfigError, Home
from hermes_store.sessions import storage as session_storage


@pytest.mark.parametrize(("url", "name"), [
    (None, "sqlite"), ("sqlite:////tmp/x.db", "sqlite"), ("SQLite:///rel.db", "sqlite"),
    ("postgresql://u@h/db", "postgresql"), ("postgres://u:secret@h/db", "postgresql"),
])
def test_a_url_chooses_its_engine(url, name):
    assert engines.engine_for_url(url).name == name


def test_an_unknown_scheme_is_named_without_the_rest_of_the_url(tmp_path):
    with pytest.raises(ValueError) as info:
        engines.engine_for_url("mysql://root:hunter2@h/db")
    assert "mysql:" in str(info.value) and "hunter2" not in str(info.value)
    with pytest.raises(ConfigError):
        _ = Home(tmp_path, database_url="mysql://root:hunter2@h/db").engine


def test_a_key_value_connection_string_is_refused_without_echoing_its_password(tmp_path):
    """libpq's ``dbname=… password=…`` form has no scheme and no ':' (a socket host): it was
    refused as "a path" with the whole text, password included, echoed on stderr."""
    from click.testing import CliRunner

    from hermes_store.cli import cli

    conninfo = "dbname=app password=Zq9Secr3tPw host=/run/postgresql"
    with pytest.raises(ValueError) as info:
        engines.engine_for_url(conninfo)
    assert "Zq9Secr3tPw" not in str(info.value) and "connection string" in str(info.value)
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "--database-url", conninfo, "status"])
    assert result.exit_code == 2 and "Zq9Secr3tPw" not in result.output and "connection string" in result.output
    (tmp_path / "config.yaml").write_text(f'store:\n  database_url: "{conninfo}"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "status"])
    assert result.exit_code == 1 and "Zq9Secr3tPw" not in result.output
    assert "store.database_url" in result.output
    with pytest.raises(ValueError, match="key=value connection string") as info:  # no engine reads it: not echoed
        engines.engine_for_url("tokn=Zq9Secr3tPw")
    assert "Zq9Secr3tPw" not in str(info.value)
    with pytest.raises(ValueError, match="is a path, not a URL"):  # a path is still named (it holds no password)
        engines.engine_for_url("/tmp/store.db")


def test_every_area_reads_its_storages_from_the_registry():
    for module, area in ((builtin_storage, "builtin"), (fact_storage, "facts"), (session_storage, "sessions")):
        assert module.STORAGE_ENGINES == engines.storage_registry(area)
        assert set(module.STORAGE_ENGINES) == set(engines.ENGINES)
    assert set(engines.storage_registry("vectors")) == set(engines.ENGINES)  # sessions' embeddings
    for engine in engines.ENGINES.values():
        assert set(engine.storages) == set(engines.AREAS)
        for target in engine.storages.values():
            assert isinstance(engines.load(target), type)


def test_a_third_engine_is_one_entry(monkeypatch, tmp_path):
    fake = engines.Engine(name="toy", label="Toy", url_schemes=("toy",), schema_folder="toy",
                          database="hermes_store.db:Database", errors=("hermes_store.db:DatabaseError",),
                          storages={"sessions": "hermes_store.sessions.storage_sqlite:SqliteSessionStorage"})
    monkeypatch.setitem(engines.ENGINES, "toy", fake)
    assert Home(tmp_path, database_url="toy://anything").engine == "toy"
    assert engines.storage_registry("sessions")["toy"].endswith("SqliteSessionStorage")


class _ToyDatabase:
    """What the toy engines' openers return: the arguments Home gave them."""

    engine = "toy"

    def __init__(self, home: Home, url: str | None, options: dict) -> None:
        self.home, self.url, self.options = home, url, options


def open_toy(home: Home, url: str | None, **options) -> _ToyDatabase:
    return _ToyDatabase(home, url, options)


def toy_file(url: str, base=None):  # the url_file contract: (url, base of a relative path)
    from pathlib import Path

    rest = url.partition("://")[2]
    return Path(rest) if rest.startswith("/") else None


def test_home_opens_a_registered_third_engine_by_its_url_scheme(monkeypatch, tmp_path):
    """Home has no engine names in it: a server engine registered here (with an opener and a
    URL masker from this test module) is chosen by its scheme and opened by its own opener."""
    toy = engines.Engine(name="toy", label="Toy", url_schemes=("toy", "toydb"), schema_folder="toy",
                         database=f"{__name__}:_ToyDatabase", errors=(), opener=f"{__name__}:open_toy",
                         display_url="hermes_store.pgdb:mask_url")
    monkeypatch.setitem(engines.ENGINES, "toy", toy)
    home = Home(tmp_path, database_url="toydb://me:hunter2@server/store")
    db = home.open_db(migrate=False)
    assert isinstance(db, _ToyDatabase) and db.home is home
    assert db.url == "toydb://me:hunter2@server/store" and db.options == {"migrate": False}
    assert db.redaction_settings is not None  # Home still hands every engine its settings
    assert home.engine == "toy" and home.sqlite_path is None and home.store_exists()
    assert "hunter2" not in home.store_location() and "server/store" in home.store_location()
    assert not (tmp_path / "hermes_store.db").exists()


def test_a_file_based_third_engine_opens_the_file_its_url_names(monkeypatch, tmp_path):
    toy = engines.Engine(name="toyfile", label="Toy file", url_schemes=("toyfile",), schema_folder="toy",
                         database=f"{__name__}:_ToyDatabase", errors=(), opener=f"{__name__}:open_toy",
                         url_file=f"{__name__}:toy_file")
    monkeypatch.setitem(engines.ENGINES, "toyfile", toy)
    target = tmp_path / "elsewhere" / "toy.db"
    home = Home(tmp_path, database_url=f"toyfile://{target}")
    assert home.sqlite_path == target and home.store_location() == str(target)
    assert not home.store_exists()
    assert home.open_db().home.sqlite_path == target
    with pytest.raises(ConfigError, match="names no file"):
        _ = Home(tmp_path, database_url="toyfile://relative").engine


def test_an_engine_without_an_opener_is_refused_by_name(monkeypatch, tmp_path):
    bare = engines.Engine(name="bare", label="Bare", url_schemes=("bare",), schema_folder="bare",
                          database="hermes_store.db:Database", errors=())
    monkeypatch.setitem(engines.ENGINES, "bare", bare)
    with pytest.raises(ConfigError, match="Bare engine has no opener"):
        Home(tmp_path, database_url="bare://x").open_db()


def test_no_module_picks_an_engine_by_comparing_its_name():
    """Engine choice goes through the registry: no ``== "sqlite"`` / ``== "postgresql"``
    comparisons and no ``startswith("postgres`` outside the engines' own modules."""
    import re
    from pathlib import Path

    import hermes_store

    root = Path(hermes_store.__file__).parent
    pattern = re.compile(r"""[!=]=\s*["'](?:sqlite|postgresql|postgres)["']|startswith\(["']postgres""")
    own = {"engines.py", "db.py", "pgdb.py"}
    found = [f"{p.relative_to(root)}:{n}" for p in sorted(root.rglob("*.py")) if p.name not in own
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not found, found


def test_both_database_classes_satisfy_the_protocol(tmp_path):
    from hermes_store.pgdb import PgDatabase

    with Database(tmp_path / "s.db") as db:
        assert isinstance(db, engines.StoreDatabase)
    for name in ("execute", "query", "query_one", "scalar", "portable", "write", "table_exists", "close"):
        assert hasattr(PgDatabase, name), name
    assert engines.error_classes(["sqlite"])


def test_execute_returns_the_changed_row_count_on_both_engines(home, engine):
    """``execute`` answers the same on SQLite and PostgreSQL: the rows the statement inserted,
    updated or deleted, 0 for anything else (a SELECT's rows are not changes, DDL changes none),
    and never a cursor; ``executemany`` answers None. Through ``portable`` as well."""
    db = home.open_db()
    try:
        assert db.engine == engine and isinstance(db, engines.StoreDatabase)
        sql = db.portable
        with db.write():
            assert sql.execute("INSERT INTO store_meta (key, value) VALUES (?, ?), (?, ?)",
                               ("k1", "a", "k2", "b")) == 2
            assert sql.execute("UPDATE store_meta SET value = ? WHERE key IN (?, ?)", ("c", "k1", "k2")) == 2
            assert sql.execute("UPDATE store_meta SET value = ? WHERE key = ?", ("x", "absent")) == 0
            # a SELECT after a change: its rows are not changes (SQLite's changes() would say 2)
            assert sql.execute("SELECT key FROM store_meta WHERE key IN (?, ?)", ("k1", "k2")) == 0
            assert sql.executemany("INSERT INTO store_meta (key, value) VALUES (?, ?)",
                                   [("k3", "d"), ("k4", "e")]) is None
            assert sql.execute("DELETE FROM store_meta WHERE key IN (?, ?, ?) RETURNING key",
                               ("k1", "k3", "k4")) == 3
            # a table with triggers (the facts' text index): the statement's own rows only
            assert sql.execute("INSERT INTO facts (content, category, tags, trust_score, cjk)"
                               " VALUES (?, ?, ?, ?, ?)", ("the kettle is blue", "general", "", 0.5, None)) == 1
            assert sql.execute("CREATE INDEX IF NOT EXISTS test_meta_value ON store_meta (value)") == 0
        assert sql.scalar("SELECT value FROM store_meta WHERE key = ?", ("k2",)) == "c"
        assert sql.scalar("SELECT count(*) FROM store_meta WHERE key IN (?, ?, ?)", ("k1", "k3", "k4")) == 0
        with db.write():
            assert sql.execute("DROP INDEX test_meta_value") == 0
    finally:
        db.close()


def test_scrub_hides_a_short_password_without_garbling_the_message():
    """A one-letter password used to be replaced inside every word of the driver's message:
    ``failed to resolve host 'host': Servname not su***orted for ai_sockty***e``."""
    from hermes_store.pgdb import scrub

    url = "postgresql://u:p@host:notaport/db"
    message = ("failed to resolve host 'host': [Errno -8] Servname not supported for ai_socktype; "
               "password=p; user u:p@host")
    assert scrub(message, url) == ("failed to resolve host 'host': [Errno -8] Servname not supported for "
                                   "ai_socktype; password=***; user u:***@host")
    assert scrub("auth failed for s3cr%2Fet and s3cr/et", "postgresql://u:s3cr%2Fet@h/db") == \
        "auth failed for *** and ***"


def test_scrub_hides_both_halves_of_a_password_holding_an_unencoded_at():
    """``postgresql://deploy:Tr0ub4dor@Zebra77@127.0.0.1:1/app``: libpq ends the password at the
    first '@' and reads the rest as the host, so its error quoted ``'Zebra77@127.0.0.1'`` (half
    the password) while the masked URL hid it whole; found naming such a URL with --database-url."""
    from hermes_store.pgdb import mask_url, scrub

    url = "postgresql://deploy:Tr0ub4dor@Zebra77@127.0.0.1:1/app"
    message = "failed to resolve host 'Zebra77@127.0.0.1': [Errno -2] Name or service not known"
    assert scrub(message, url) == "failed to resolve host '***@127.0.0.1': [Errno -2] Name or service not known"
    assert "Zebra77" not in mask_url(url) and "Tr0ub4dor" not in mask_url(url)
