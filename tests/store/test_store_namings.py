"""The store named every way (home, ``--database-url``, ``$HERMES_STORE_DATABASE_URL``,
``store.database_url``) on both engines: each command reads and writes exactly that store, and
the same command behaves the same on both engines (docs/store.md)."""

from __future__ import annotations

from click.testing import CliRunner

from hermes_store.cli import cli


def _run(home, *argv: str):
    return CliRunner().invoke(cli, ["--home", str(home.root), *argv])


def test_backup_into_a_missing_directory_is_refused_alike_on_both_engines(home, engine, tmp_path):
    """A backup into ``missing/dir/`` failed on SQLite but created the directories on
    PostgreSQL: the same command now fails the same way on both, creating nothing."""
    assert _run(home, "facts", "add", "kept in the backup").exit_code == 0
    dest = tmp_path / "missing" / "dir" / "store.bak"
    result = _run(home, "backup", str(dest))
    assert result.exit_code == 1, result.output
    assert result.stderr == f"Error: {dest}: cannot write the backup: no directory {dest.parent}\n"
    assert not (tmp_path / "missing").exists()


def test_migrate_without_a_store_creates_none(home, tmp_path, pg_url):
    """``migrate --to URL`` on a home with no store yet created ``<home>/hermes_store.db`` (and a
    migrated, empty target) and said "Done: 0 rows"; like ``backup``, it now says there is nothing
    to copy and creates nothing."""
    from hermes_store.pgdb import PgDatabase

    result = _run(home, "migrate", "--to", pg_url)
    assert result.exit_code == 1, result.output
    assert result.stderr == (f"Error: {home.db_path}: no store to migrate yet (nothing was created there); "
                             "nothing was copied\n")
    assert not home.db_path.exists()
    with PgDatabase(pg_url, migrate=False) as target:
        assert not target.table_exists("sessions")
