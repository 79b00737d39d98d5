"""Hostile filesystems: disk full, a read-only home, and a filesystem without WAL support.

Disk full uses a small tmpfs when this process may mount one (root); otherwise
the writes run in a forked child under ``RLIMIT_FSIZE`` (files may not grow past a
limit, the same EFBIG/SQLITE_FULL paths). Read-only uses a read-only bind mount
as root (root ignores permission bits), else ``chmod a-w``.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from rel_helpers import db_problems, read_md, read_only, small_tmpfs, tmp_leftovers, tree_snapshot

from hermes_store.builtin.store import MemoryStore
from hermes_store.db import Database
from hermes_store.facts.store import FactStore
from hermes_store.home import Home
from hermes_store.sessions import SessionIndex, index_paths
from hermes_store.tools import handle_tool_call

BIG = 10**6
CAUSES = ("space", "full", "too large", "disk", "efbig", "errno 27", "errno 28")
BIG_ENTRY = "ledger " * 8_500  # 59,500 chars: under the 65,536-char scan window


def _seed(home: Home) -> None:
    store = MemoryStore(home, memory_char_limit=BIG, user_char_limit=BIG)
    assert store.add("memory", "seed entry that must survive")["success"]
    store.close()
    with FactStore(home) as facts:
        facts.add_fact("The seed fact survives a full disk", "project")
    with SessionIndex(home) as index:
        sid = index.create_session("20260101_000000_seed00", source="cli")
        index.append_message(sid, "user", "seed message about postgres")


def _transcript(path: Path, messages: int) -> Path:
    lines = [json.dumps({"role": "user" if i % 2 == 0 else "assistant",
                         "content": f"disk pressure message {i} " + "padding text " * 40})
             for i in range(messages)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _attempt_writes(home: Home, transcript: Path) -> dict[str, str]:
    """Every write path once; returns ``{name: "ok" | error text}`` (never raises)."""
    outcomes: dict[str, str] = {}

    def attempt(name, action):
        try:
            outcomes[name] = action() or "ok"
        except Exception as exc:  # noqa: BLE001 - recorded and checked by the test
            outcomes[name] = f"{type(exc).__name__}: {exc}"

    def memory_add():
        store = MemoryStore(home, memory_char_limit=BIG, user_char_limit=BIG)
        try:
            result = store.add("memory", BIG_ENTRY)
        finally:
            store.close()
        return None if result["success"] else result["error"]

    def facts_add():
        with FactStore(home) as facts:
            for i in range(300):
                facts.add_fact(f"Filler fact {i} " + "about capacity planning " * 60, "project")

    def ingest():
        summary = index_paths(home, [transcript])
        return "; ".join(e["error"] for e in summary["errors"]) or None

    def live():
        with SessionIndex(home) as index:
            sid = index.create_session(source="cli")
            for i in range(300):
                index.append_message(sid, "user", f"live message {i} " + "more words " * 80)

    def tool():
        reply = json.loads(handle_tool_call("memory", {"action": "add", "target": "user",
                                                       "content": "written through the tool"},
                                            home=home))
        return None if reply.get("success") else reply.get("error")

    attempt("memory add", memory_add)
    attempt("fact add", facts_add)
    attempt("ingest", ingest)
    attempt("live append", live)
    attempt("memory tool", tool)
    return outcomes


def _fill(directory: Path) -> Path:
    filler = directory / "filler.bin"
    # unbuffered: a write the full disk cut short leaves nothing behind for close() to flush
    # (a buffered file raised ENOSPC again from close, depending on how many bytes were free)
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
        except OSError:
            pass
    return filler


def _run_with_fsize_limit(home: Home, transcript: Path, limit: int) -> dict[str, str]:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            data = json.dumps(_attempt_writes(home, transcript)).encode()
            os.write(write_fd, data)
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks = []
    while chunk := os.read(read_fd, 65536):
        chunks.append(chunk)
    os.close(read_fd)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks))


def test_disk_full_clear_error_nothing_half_written(tmp_path):
    transcript = _transcript(tmp_path / "20260102_000000_full01.jsonl", 3000)
    with small_tmpfs(tmp_path / "small", "8m") as mount:
        if mount is not None:
            home = Home(mount / "home").ensure()
            _seed(home)
            before_md = home.memory_file.read_bytes()
            opened = FactStore(home)  # a connection opened before the disk filled up
            filler = _fill(mount)
            outcomes = _attempt_writes(home, transcript)
            try:
                for i in range(300):
                    opened.add_fact(f"Open-store fact {i} " + "capacity " * 100, "project")
                outcomes["fact add (open store)"] = "ok"
            except Exception as exc:  # noqa: BLE001 - checked below
                outcomes["fact add (open store)"] = f"{type(exc).__name__}: {exc}"
            opened.close()
            filler.unlink()
            assert all("no space left" in v.lower() for v in outcomes.values()), outcomes
            how = "tmpfs"
        else:
            home = Home(tmp_path / "home").ensure()
            _seed(home)
            before_md = home.memory_file.read_bytes()
            limit = max(p.stat().st_size for p in home.root.rglob("*") if p.is_file()) + 4096
            outcomes = _run_with_fsize_limit(home, transcript, limit)
            how = "RLIMIT_FSIZE"
        print(f"\nRELIABILITY disk full ({how}): {outcomes}")
        failed = {k: v for k, v in outcomes.items() if v != "ok"}
        assert failed, f"{how}: nothing failed, the limit was not reached: {outcomes}"
        for name, error in failed.items():
            assert any(c in error.lower() for c in CAUSES), f"{how}: unclear error for {name}: {error}"
            assert "Traceback" not in error
        # nothing half-written: files are the old version (or complete new one), DB sound
        entries = read_md(home.memory_file)
        if outcomes["memory add"] == "ok":
            assert entries[-1] == BIG_ENTRY.strip()
        else:
            assert home.memory_file.read_bytes() == before_md
        assert tmp_leftovers(home.memories_dir) == []
        assert db_problems(home.db_path) == []
        with FactStore(home) as facts:
            assert facts.find_by_content("The seed fact survives a full disk") is not None
        with SessionIndex(home) as index:
            assert index.get_messages("20260101_000000_seed00")[0]["content"] == "seed message about postgres"
        # with space again, everything works
        store = MemoryStore(home, memory_char_limit=BIG, user_char_limit=BIG)
        assert store.add("memory", "after the disk was freed")["success"]
        store.close()
        summary = index_paths(home, [transcript])
        assert summary["errors"] == []
        assert db_problems(home.db_path) == []


def test_read_only_home_clear_error_nothing_changed(tmp_path):
    root = tmp_path / "ro"
    root.mkdir()
    home = Home(root / "home").ensure()
    _seed(home)
    transcript = _transcript(tmp_path / "20260102_000000_ro0001.jsonl", 50)
    before = tree_snapshot(root)
    with read_only(root):
        # reading still works
        store = MemoryStore(home, memory_char_limit=BIG, user_char_limit=BIG)
        store.load_from_disk()
        assert "seed entry that must survive" in (store.format_for_system_prompt("memory") or "")
        result = store.add("memory", "cannot be written")
        assert not result["success"]
        assert any(c in result["error"].lower() for c in ("read-only", "permission", "readonly")), result
        store.close()
        for name, args in (("memory", {"action": "add", "target": "user", "content": "no"}),
                           ("fact_store", {"action": "add", "content": "The blocked fact"}),
                           ("fact_store", {"action": "search", "query": "seed"}),
                           ("session_search", {"query": "postgres"}),
                           ("recall", {"query": "seed"})):
            reply = json.loads(handle_tool_call(name, args, home=home))
            assert "success" in reply, (name, reply)
            if not reply["success"]:
                assert "Traceback" not in reply["error"]
                if args.get("action") == "add" or name == "memory":
                    assert any(c in reply["error"].lower() for c in ("read-only", "readonly", "permission")), reply
        with pytest.raises(Exception) as info:
            index_paths(home, [transcript])
        assert any(c in str(info.value).lower() for c in ("read-only", "readonly", "permission"))
    assert tree_snapshot(root) == before


def test_no_wal_filesystem_falls_back_and_works(tmp_path):
    """A filesystem without shared-memory locking (``HERMES_STORE_SQLITE_VFS=unix-dotfile``)
    refuses WAL: the store falls back to a rollback journal and every path still works,
    also across processes."""
    home = Home(tmp_path / "home").ensure()
    env = dict(os.environ, HERMES_STORE_SQLITE_VFS="unix-dotfile", HERMES_HOME=str(home.root))
    script = (
        "import json, sys\n"
        "from hermes_store.home import Home\n"
        "from hermes_store.db import Database\n"
        "from hermes_store.builtin.store import MemoryStore\n"
        "from hermes_store.facts.store import FactStore\n"
        "from hermes_store.sessions import SessionIndex\n"
        "from hermes_store.sessions.search import search_messages\n"
        "home = Home(sys.argv[1]); n = sys.argv[2]\n"
        "s = MemoryStore(home); assert s.add('memory', 'no wal entry ' + n)['success']; s.close()\n"
        "with FactStore(home) as f: f.add_fact('No WAL fact number ' + n, 'project')\n"
        "with SessionIndex(home) as i:\n"
        "    sid = i.create_session(source='cli'); i.append_message(sid, 'user', 'nowal kafka ' + n)\n"
        "    hits = search_messages(i.db, 'nowal kafka', limit=10).results\n"
        "db = Database(home.db_path); mode = db.journal_mode; db.close()\n"
        "print(json.dumps({'mode': mode, 'hits': len(hits)}))\n"
    )
    outputs = []
    for n in range(2):
        done = subprocess.run([sys.executable, "-c", script, str(home.root), str(n)], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout))
    assert all(o["mode"] == "delete" for o in outputs), outputs
    assert outputs[1]["hits"] == 2
    assert not Path(str(home.db_path) + "-wal").exists()
    assert read_md(home.memory_file) == ["no wal entry 0", "no wal entry 1"]
    db = Database(home.db_path, vfs="unix-dotfile")
    try:
        assert db.journal_mode == "delete"
        assert db.scalar("SELECT COUNT(*) FROM facts") == 2
    finally:
        db.close()
    assert db_problems(home.db_path) == []


def test_doctor_on_a_full_disk_says_so(tmp_path):
    """doctor on a store whose disk is full said `Error: …hermes_store.db: disk I/O error (run
    \\`hermes-store doctor\\`)`: the read-only open's first statement failed unexplained (SQLite
    could not make the -shm file) and the CLI told the user to run the command that failed; then
    it called the sound file damaged: "run `hermes-store doctor --fix` to salvage it"."""
    from click.testing import CliRunner

    from hermes_store.cli import cli

    with small_tmpfs(tmp_path / "small", "4m") as mount:
        if mount is None:
            pytest.skip("a small tmpfs cannot be mounted here (needs root)")
        home = Home(mount / "home").ensure()
        _seed(home)
        filler = _fill(mount)
        try:
            result = CliRunner().invoke(cli, ["--home", str(home.root), "doctor"])
        finally:
            filler.unlink()
        assert "run `hermes-store doctor" not in result.output, result.output  # nor --fix: no damage
        assert f"no space left on the device holding {home.root}" in result.output, result.output
        assert db_problems(home.db_path) == []
