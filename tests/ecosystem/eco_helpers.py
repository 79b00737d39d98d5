"""A store built the way people build one (``sessions index``, ``facts add``), for the ecosystem tests."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from click.testing import CliRunner

from hermes_store.cli import cli

PLANTED = "flamingo"  # a word in one user message only
FACT_WORD = "kestrel"  # a word in one fact only
PAST_CAP = "zeppelinword"  # a word beyond the 8 KiB tool-output cap: never indexed


def run_cli(home: Path, *argv: str) -> str:
    """Run a CLI command on ``home`` and return its stdout (asserts exit 0)."""
    result = CliRunner().invoke(cli, ["--home", str(home), *argv])
    assert result.exit_code == 0, result.output
    return result.stdout


def write_transcript(path: Path) -> None:
    """A Hermes JSONL session: prose, a tool call, a tool output longer than the FTS cap."""
    lines = [
        {"role": "session_meta", "model": "m", "platform": "telegram", "timestamp": "2026-01-05T10:15:00Z"},
        {"role": "user", "content": f"Where did the {PLANTED} migration notes go?",
         "timestamp": "2026-01-05T10:15:05Z"},
        {"role": "assistant", "content": "", "timestamp": "2026-01-05T10:15:06Z",
         "tool_calls": [{"id": "c1", "type": "function",
                         "function": {"name": "terminal", "arguments": "{\"command\": \"cat notes\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "timestamp": "2026-01-05T10:15:07Z",
         "content": "capped output " + "x " * 5000 + PAST_CAP},
        {"role": "assistant", "content": "They are in docs/migrations.md.", "timestamp": "2026-01-05T10:15:09Z"},
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def build_store(home: Path) -> Path:
    """Index one transcript and add two facts through the CLI; return the database path."""
    transcript = home.parent / "transcripts" / "20260105_101500_abc123.jsonl"
    write_transcript(transcript)
    run_cli(home, "sessions", "index", str(transcript))
    run_cli(home, "facts", "add", f"The staging cluster is called {FACT_WORD}", "--category", "project")
    run_cli(home, "facts", "add", "The office plant needs water weekly")
    run_cli(home, "memory", "add", "Deploys happen on Fridays")
    return home / "hermes_store.db"


def sqlite_utils(*argv: str) -> subprocess.CompletedProcess:
    """Run the ``sqlite-utils`` CLI in a subprocess (it uses the stdlib sqlite3 module)."""
    return subprocess.run([sys.executable, "-m", "sqlite_utils", *argv], capture_output=True, text=True,
                          timeout=60)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


PRINTED_URL = re.compile(r"open (http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+))")


def start_browse(home: Path, log: Path, *options: str) -> tuple[subprocess.Popen, str]:
    """Start ``hermes-store browse`` and wait until Datasette answers the URL it printed.

    Returns (process, base URL); the run's token is in :data:`TOKENS` under the base URL, and
    :func:`get_json` adds it (as the first request of a browser would, then its cookie). ``options``
    go before ``browse`` (``--database-url URL``)."""
    port = free_port()
    handle = open(log, "w", encoding="utf-8")  # noqa: SIM115 (closed with the process by the caller)
    proc = subprocess.Popen([sys.executable, "-c", "from hermes_store.cli import main; main()",
                             "--home", str(home), *options, "browse", "--port", str(port)],
                            stdout=handle, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"browse exited with {proc.returncode}: {log.read_text()}")
        printed = PRINTED_URL.search(log.read_text(encoding="utf-8"))
        if printed is None:
            time.sleep(0.2)
            continue
        assert printed.group(2) == str(port)
        TOKENS[base] = printed.group(3)
        try:
            with urllib.request.urlopen(printed.group(1), timeout=2):
                return proc, base
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"Datasette did not answer on {base}: {log.read_text()}")


TOKENS: dict[str, str] = {}  # base URL -> the token its browse printed


def with_token(url: str) -> str:
    """``url`` with the token of the browse run it points at."""
    for base, token in TOKENS.items():
        if url.startswith(base):
            return url + ("&" if "?" in url else "?") + "token=" + token
    return url


def get_json(url: str):
    """GET ``url`` (with its browse run's token) and decode the JSON reply."""
    with urllib.request.urlopen(with_token(url), timeout=20) as response:
        return json.loads(response.read().decode("utf-8"))


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
