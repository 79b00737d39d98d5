"""``hermes-store browse``: the store in Datasette, read-only, on 127.0.0.1 (a front end).

Datasette (the ``hermes_store[browse]`` extra) runs as its own process, so this
process never opens the store with anything but APSW. It opens mutable files with
``?mode=ro`` and has no write API, and it only listens on the loopback address.
``datasette_metadata.json`` beside this module configures full-text search on
``messages``, ``facts`` and the built-in entry index and three canned queries:
the memory history timeline, facts by trust, and sessions per day per source.

Only the store's owner is served: every run makes a random token, the printed URL carries it,
and the plugin ``browse/guard.py`` (an ``asgi_wrapper``) refuses every request without the token
or the cookie it sets, and every request whose ``Host`` is not this loopback address and port.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_store.browse.guard import PORT_ENV, TOKEN_ENV, TOKEN_PARAM, new_token
from hermes_store.home import Home

HOST = "127.0.0.1"
DEFAULT_PORT = 8001
METADATA_FILE = Path(__file__).with_name("datasette_metadata.json")
TEMPLATE_DB = "hermes_store"  # the database key used in the shipped metadata
SETTINGS: tuple[tuple[str, str], ...] = (
    ("truncate_cells_html", "400"),  # long tool outputs stay readable in tables
    ("sql_time_limit_ms", "3000"),
)
# The plugin Datasette loads from --plugins-dir: the hook lives in the package (guard.py).
PLUGIN_SOURCE = '''"""hermes-store browse: only the owner (token), only on the loopback Host."""
from datasette import hookimpl

from hermes_store.browse.guard import from_environment


@hookimpl
def asgi_wrapper(datasette):
    return from_environment
'''


# exit status after Ctrl-C (docs/cli.md, "Exit codes"); SIGTERM is a requested stop: 0
EXIT_INTERRUPTED = 130


class BrowseUnavailable(RuntimeError):
    """Datasette is not installed, the store cannot be served, or the port is taken."""


class _Terminated(Exception):
    """SIGTERM arrived: stop Datasette and end as asked."""


def metadata(db_name: str) -> dict[str, Any]:
    """The shipped Datasette metadata with its database entry named ``db_name`` (the file's stem)."""
    data = json.loads(METADATA_FILE.read_text(encoding="utf-8"))
    databases = data.get("databases", {})
    if TEMPLATE_DB in databases and db_name != TEMPLATE_DB:
        databases[db_name] = databases.pop(TEMPLATE_DB)
    return data


def datasette_command(db_path: Path, port: int, metadata_path: Path, plugins_dir: Path) -> list[str]:
    """The command line that serves ``db_path`` read-only on 127.0.0.1:``port`` behind the guard plugin."""
    cmd = [sys.executable, "-m", "datasette", "serve", str(db_path), "--host", HOST, "--port", str(port),
           "--metadata", str(metadata_path), "--plugins-dir", str(plugins_dir)]
    for name, value in SETTINGS:
        cmd += ["--setting", name, value]
    return cmd


# Datasette opens a file as ``file:{path}?mode=ro`` without encoding the path: in a SQLite URI a
# ``?`` or ``#`` ends the path and ``%XX`` is decoded, so such a name opens (and creates) another file
URI_SPECIAL = ("%", "?", "#")


def served_path(db_path: Path, folder: Path) -> Path:
    """The name Datasette is given for ``db_path``: the path itself, or, when SQLite's URI syntax
    would read it as another file (:data:`URI_SPECIAL`), a symbolic link to it in ``folder``
    named after its stem (SQLite follows the link, so the store's own ``-wal`` is read)."""
    if not any(char in str(db_path) for char in URI_SPECIAL):
        return db_path
    stem = "".join("_" if char in URI_SPECIAL else char for char in db_path.stem) or TEMPLATE_DB
    link = folder / f"{stem}.db"
    if any(char in str(link) for char in URI_SPECIAL):
        raise BrowseUnavailable(f"{db_path}: Datasette cannot open a file whose path holds % ? or #, and "
                                f"the temporary folder {folder} holds one too (set TMPDIR to another folder)")
    link.symlink_to(db_path)
    return link


def prepare(home: Home) -> Path:
    """Migrate the home's SQLite store (so its FTS layout is current); return its path.

    Datasette reads SQLite files only: a store on a server, or none at all yet, is refused
    with :class:`BrowseUnavailable` saying why (nothing is created)."""
    path = home.sqlite_path
    if path is None:
        raise BrowseUnavailable(f"browse serves a SQLite store; this store is on {home.engine} "
                                f"({home.store_location()}); copy it to a file with "
                                "`hermes-store migrate --to sqlite:///path` and browse that")
    if not path.exists():
        raise BrowseUnavailable(f"{path}: no store yet (index sessions or add facts first)")
    with home.open_db():
        pass
    return path


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on now (the guard must know the port it serves)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def check_port_free(port: int) -> None:
    """Raise :class:`BrowseUnavailable` when something already listens on 127.0.0.1:``port``
    (another browse run, say): the URL printed for this run would reach that server instead."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Datasette binds it
        try:
            sock.bind((HOST, port))
        except OSError as exc:
            raise BrowseUnavailable(f"{HOST}:{port} is already in use ({exc.strerror}; another "
                                    "`hermes-store browse`?); pick another port with --port N, "
                                    "or --port 0 for a free one") from exc


def browse_url(port: int, token: str) -> str:
    """The URL the owner opens: this run's token in the query string."""
    return f"http://{HOST}:{port}/?{TOKEN_PARAM}={token}"


def run(home: Home, port: int = DEFAULT_PORT, announce: Callable[[str], None] | None = None) -> int:
    """Serve the home's store until stopped; return the exit status: Datasette's own when it
    ends by itself, 130 after Ctrl-C, 0 after SIGTERM.

    ``port`` 0 picks a free port; a port something already listens on is refused. ``announce`` is called with the URL to open (it carries the
    run's token) before Datasette starts."""
    if importlib.util.find_spec("datasette") is None:
        raise BrowseUnavailable("Datasette is not installed; install it with: pip install 'hermes_store[browse]'")
    db_path = prepare(home)
    if port:
        check_port_free(port)
    port = port or free_port()
    token = new_token()
    with tempfile.TemporaryDirectory(prefix="hermes-store-browse-") as tmp:
        served = served_path(db_path, Path(tmp))
        meta_path = Path(tmp) / "metadata.json"
        meta_path.write_text(json.dumps(metadata(served.stem), indent=2), encoding="utf-8")
        plugins = Path(tmp) / "plugins"
        plugins.mkdir()
        (plugins / "hermes_store_guard.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
        env = dict(os.environ, **{TOKEN_ENV: token, PORT_ENV: str(port)})
        if announce is not None:
            announce(browse_url(port, token))
        process = subprocess.Popen(datasette_command(served, port, meta_path, plugins), env=env)
        previous = _stop_on_sigterm()
        try:
            return process.wait()
        except KeyboardInterrupt:
            _stop(process)
            return EXIT_INTERRUPTED
        except _Terminated:
            _stop(process)
            return 0
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
            if process.poll() is None:  # we are ending for any other reason: never orphan Datasette
                _stop(process)


def _stop(process: subprocess.Popen) -> int:
    """Terminate ``process`` (then kill it after 10 s); its exit code."""
    process.terminate()
    try:
        return process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def _stop_on_sigterm() -> Any:
    """Make SIGTERM end ``browse`` as Ctrl-C does (so the Datasette child is stopped too)."""
    try:
        return signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread: leave signal handling alone
        return None
