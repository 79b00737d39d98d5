"""``--database-url private`` for the benchmarks: a throw-away PostgreSQL server for one run.

The server is the test suite's (``tests/pg_server.py``): ``initdb`` in a temporary directory,
listening on a Unix socket only, fsync off (a benchmark of the engine, not of the disk), stopped
and removed when the run ends. So the 1M-message runs need no server set up beforehand:

    .venv/bin/python scripts/bench_search.py --messages 1000000 --database-url private
    .venv/bin/python scripts/bench_ingest.py --messages 1000000 --modes raw-copy,ours-pg \\
        --database-url private
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

PRIVATE = "private"
_TESTS = Path(__file__).resolve().parent.parent / "tests"


@contextlib.contextmanager
def database_url(given: str | None) -> Iterator[str | None]:
    """``given`` as is, or (for ``private``) the URL of a private server run for the block."""
    if given != PRIVATE:
        yield given
        return
    spec = importlib.util.spec_from_file_location("hs_pg_server", _TESTS / "pg_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    reason = module.unavailable_reason()
    if reason:
        raise SystemExit(f"--database-url private: {reason}")
    server = module.PgServer(module.find_bindir())
    try:
        server.start()
        print(f"private PostgreSQL server in {server.root} (Unix socket, fsync off)", file=sys.stderr)
        yield server.url()
    finally:
        server.stop()
