"""fsutil: the one atomic file replacement."""

from __future__ import annotations

import os
import stat

import pytest

from hermes_store.fsutil import atomic_write_bytes, atomic_write_text


def test_new_file_is_private_and_complete(tmp_path):
    target = tmp_path / "a.txt"
    atomic_write_text(target, "héllo\r\nworld")
    assert target.read_bytes() == "héllo\r\nworld".encode()
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600


def test_existing_mode_is_kept_unless_given(tmp_path):
    target = tmp_path / "b.txt"
    target.write_text("old")
    os.chmod(target, 0o644)
    atomic_write_text(target, "new")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644
    atomic_write_text(target, "newer", mode=0o600)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600


def test_failure_keeps_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "c.txt"
    target.write_text("old")

    def broken_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk on fire"):
        atomic_write_bytes(target, b"new", prefix=".mine.")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["c.txt"]
