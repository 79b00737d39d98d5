"""Write-path safety: drift and unreadable guards, locks, atomic writes, concurrent writers."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from hermes_store.builtin import MemoryStore
from hermes_store.builtin.fileio import atomic_write_text, locked


@pytest.fixture
def store(home):
    s = MemoryStore(home)
    s.load_from_disk()
    yield s
    s.close()


DRIFT_MESSAGE = (
    "Refusing to write MEMORY.md: it holds an entry larger than the whole store's char limit, i.e. "
    "free-form text written without § delimiters (the patch tool, a shell append, a manual edit). "
    "Rewriting it would lose that text. A snapshot was saved to {backup}. Resolve the drift first — "
    "either rewrite the file as a clean §-delimited list of entries, or move the extra content out — "
    "then retry. This guard exists to prevent silent data loss (issue #26045).")


def test_drift_blocks_replace_remove_batch_but_not_add(home):
    # Upstream's rule (#107270): only an entry longer than the whole store's limit is drift.
    hand_edited = "first entry\n§\nsecond entry\n# appended by a shell " + "y" * 40 + "\n"
    home.memory_file.write_text(hand_edited)
    store = MemoryStore(home, memory_char_limit=40)
    store.load_from_disk()
    for result in (store.replace("memory", "first", "changed"),
                   store.remove("memory", "first"),
                   store.apply_batch("memory", [{"action": "remove", "old_text": "first"}])):
        assert result["success"] is False
        backup = result["drift_backup"]
        # Hermes' _drift_error (zons 0c8ef8dc), word for word.
        assert result["error"] == DRIFT_MESSAGE.format(backup=backup)
        assert result["remediation"] == (
            "Open the .bak file, integrate the missing entries into the memory tool one at a time via "
            "memory(action=add, content=...), then remove or rewrite the original file to a clean state.")
        assert os.path.basename(backup).startswith("MEMORY.md.bak.")
        assert open(backup, encoding="utf-8").read() == hand_edited
    assert home.memory_file.read_text() == hand_edited  # untouched by refused writes
    store.close()


def test_layout_only_difference_is_not_drift_and_the_edit_rewrites_cleanly(store, home):
    # Blank lines around '§', an empty entry and padding: upstream no longer refuses (#107270);
    # the user's replace rewrites the file as the clean joined entries, losing only whitespace.
    home.memory_file.write_text("first entry\n\n§\n\n\n§\n  second entry  \n")
    result = store.replace("memory", "first", "changed entry")
    assert result["success"] is True and "drift_backup" not in result
    assert home.memory_file.read_text() == "changed entry\n§\nsecond entry"
    assert list(home.memories_dir.glob("MEMORY.md.bak.*")) == []


def test_entry_longer_than_limit_counts_as_drift(home):
    home.memory_file.write_text("x" * 30)
    s = MemoryStore(home, memory_char_limit=20)
    result = s.remove("memory", "x")
    assert result["error"] == DRIFT_MESSAGE.format(backup=result["drift_backup"])
    s.close()


def test_clean_file_has_no_drift(store, home):
    home.memory_file.write_text("a\n§\nb")
    assert store.remove("memory", "a")["success"]


@pytest.mark.parametrize("make_unreadable", ["invalid_utf8", "directory"])
def test_unreadable_file_refuses_every_write(home, store, make_unreadable):
    path = home.memory_file
    if make_unreadable == "invalid_utf8":
        path.write_bytes(b"valid\n\xc2\xa7\nbad \xff\xfe bytes")
    else:
        path.mkdir()
    before = path.read_bytes() if path.is_file() else None
    message = ("Refusing to write MEMORY.md: the file exists on disk but could not be read right now "
               "(temporarily locked by another program, a permission change, invalid/corrupt text "
               "encoding, or a filesystem error). Treating an unreadable file as empty and saving "
               "would wipe existing memory, so the write is refused. Nothing was changed — retry in a moment."
               " Found: MEMORY.md: " + ("line 3, column 5: byte 0xff is not valid UTF-8."
                                        if make_unreadable == "invalid_utf8" else "Is a directory."))
    for result in (store.add("memory", "new"), store.remove("memory", "valid"),
                   store.replace("memory", "valid", "x"),
                   store.apply_batch("memory", [{"action": "add", "content": "y"}])):
        assert result == {"success": False, "error": message}
    if before is not None:
        assert path.read_bytes() == before


def test_a_file_of_invalid_utf8_is_named_with_its_line_everywhere(home, store, caplog):
    """Before, the refusal and `memory show` said only "could not be read" (and "retry in a
    moment", which never helps for a bad byte): nothing told where the file is broken."""
    from click.testing import CliRunner

    from hermes_store.cli import cli

    home.memory_file.write_bytes(b"\xef\xbb\xbfkeep me\n\xc2\xa7\nsecond\nbad \xff byte")
    before = home.memory_file.read_bytes()
    with caplog.at_level("WARNING"):
        store.load_from_disk()
    assert "line 4, column 5: byte 0xff is not valid UTF-8" in caplog.text
    assert "Found: MEMORY.md: line 4, column 5: byte 0xff is not valid UTF-8." in store.add("memory", "x")["error"]
    shown = CliRunner().invoke(cli, ["--home", str(home.root), "memory", "show"]).output
    assert "the file cannot be read (line 4, column 5: byte 0xff is not valid UTF-8)" in shown
    assert home.memory_file.read_bytes() == before


def test_bom_is_stripped_and_never_rewritten(home, store):
    home.user_file.write_bytes("\ufeffName: Ana".encode())
    store.load_from_disk()
    assert store.user_entries == ["Name: Ana"]
    store.replace("user", "Ana", "Name: Ana Ruiz")
    assert home.user_file.read_bytes() == b"Name: Ana Ruiz"


def test_lock_file_is_private_even_under_loose_umask(home, store):
    old = os.umask(0o002)
    try:
        store.add("memory", "x")
    finally:
        os.umask(old)
    lock = home.memories_dir / "MEMORY.md.lock"
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600


def test_loose_lock_file_is_tightened(home, store):
    lock = home.memories_dir / "USER.md.lock"
    lock.touch()
    os.chmod(lock, 0o664)
    store.add("user", "y")
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600


def test_symlinked_lock_is_refused(home, store, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("do not touch")
    os.chmod(victim, 0o644)
    lock = home.memories_dir / "MEMORY.md.lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to(victim)
    result = store.add("memory", "x")
    assert result["success"] is False and "MEMORY.md.lock" in result["error"]
    assert victim.read_text() == "do not touch" and stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert not home.memory_file.exists()
    with pytest.raises(OSError), locked(home.memory_file):
        pass


def test_atomic_write_leaves_no_temp_files_and_cleans_up_on_failure(home, monkeypatch):
    path = home.memory_file
    atomic_write_text(path, "a\n§\nb")
    assert path.read_bytes() == b"a\n\xc2\xa7\nb"
    assert not [p for p in home.memories_dir.iterdir() if p.name.startswith(".mem_")]

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(RuntimeError, match="Failed to write memory file .*MEMORY.md: disk full"):
        atomic_write_text(path, "new")
    assert path.read_bytes() == b"a\n\xc2\xa7\nb"
    assert not [p for p in home.memories_dir.iterdir() if p.name.startswith(".mem_")]


def test_failed_write_reports_error_and_keeps_file(home, store, monkeypatch):
    store.add("memory", "kept")
    monkeypatch.setattr(os, "replace", lambda s, d: (_ for _ in ()).throw(OSError("read-only fs")))
    result = store.add("memory", "lost?")
    assert result["success"] is False and "Failed to write memory file" in result["error"]
    assert home.memory_file.read_text() == "kept"


WRITER = textwrap.dedent("""
    import json, sys
    from hermes_store.builtin import MemoryStore
    home, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = MemoryStore(home, memory_char_limit=10_000_000, origin="proc-" + tag)
    failures = [r for r in (store.add("memory", f"{tag} entry {i}") for i in range(n)) if not r["success"]]
    print(json.dumps(failures))
""")


def test_two_processes_adding_concurrently_lose_nothing(home):
    n = 200
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(home.root), tag, str(n)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for tag in ("A", "B")]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert json.loads(out) == []
    s = MemoryStore(home)
    s.load_from_disk()
    expected = {f"{tag} entry {i}" for tag in ("A", "B") for i in range(n)}
    assert set(s.memory_entries) == expected and len(s.memory_entries) == 2 * n
    # provenance saw every write too, attributed to its writer and never as a hand edit
    events = s.history("memory")
    assert len(events) == 2 * n
    assert {e["origin"] for e in events} == {"proc-A", "proc-B"}
    rows = s.describe("memory")
    assert all(r["created_at"] is not None for r in rows)
    s.close()
