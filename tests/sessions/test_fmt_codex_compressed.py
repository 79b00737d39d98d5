"""Codex compresses cold rollouts (openai/codex ``codex-rs/rollout/src/compression.rs``: a rollout a
week old becomes ``rollout-*.jsonl.zst``; a resume decompresses it back beside it). Before: a
directory walk and ``--discover`` never picked them up and a named one was ``unknown format`` --
every Codex session older than a week was missing."""

from __future__ import annotations

import zstandard
from format_helpers import index

from hermes_store.db import Database
from hermes_store.sessions import SessionIndex, detect_format

DAY = "codex_rollouts/sessions/2026/01/15"
ROOT = "019bc1a2-7d3e-7f10-9a2b-3c4d5e6f7a8b"
ROOT_FILE = f"rollout-2026-01-15T09-30-00-{ROOT}.jsonl"
CHILD = "019bc1a9-0000-7abc-8def-112233445566"


def _said(store, session_id):
    return [(r["role"], r["content"], r["tool_calls"]) for r in SessionIndex(store).get_messages(session_id)]


def _compress(plain, *, keep=False):
    packed = plain.with_name(plain.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    if not keep:
        plain.unlink()
    return packed


def test_a_compressed_codex_home_reads_as_the_plain_one(store, format_fixtures, tmp_path):
    plain_dir = format_fixtures / DAY
    reference = Database(tmp_path / "plain.db")
    try:
        expected = index(reference, plain_dir)
        want = {sid: _said(reference, sid) for sid in (ROOT, CHILD)}
    finally:
        reference.close()
    for plain in sorted(plain_dir.glob("*.jsonl")):
        _compress(plain)
    compressed = plain_dir / f"{ROOT_FILE}.zst"
    assert compressed.is_file() and not (plain_dir / ROOT_FILE).exists()
    assert detect_format(compressed) == "codex"
    summary = index(store, format_fixtures / "codex_rollouts")  # a directory walk finds them
    assert summary["files"] == 2
    assert summary["errors"] == expected["errors"] or [e["error"] for e in summary["errors"]] == [
        e["error"] for e in expected["errors"]]
    assert want[ROOT] and {sid: _said(store, sid) for sid in (ROOT, CHILD)} == want


def test_the_plain_copy_a_resume_wrote_beside_it_is_the_one_read(store, format_fixtures):
    """A resume decompresses to the plain name and appends there; the ``.zst`` left beside it is an
    older copy: read through the plain file, nothing stored twice, nothing reported."""
    day = format_fixtures / DAY
    _compress(day / ROOT_FILE, keep=True)
    summary = index(store, day / f"{ROOT_FILE}.zst")
    assert summary["errors"] == [] and summary["messages_added"] == 0
    added = index(store, day / ROOT_FILE)["messages_added"]
    again = index(store, day / f"{ROOT_FILE}.zst")
    assert again["errors"] == [] and again["messages_added"] == 0
    assert added > 0 and len(_said(store, ROOT)) == added


def test_a_damaged_compressed_file_is_reported_not_imported_empty(store, format_fixtures):
    day = format_fixtures / DAY
    (day / ROOT_FILE).unlink()
    fake = day / f"{ROOT_FILE}.zst"
    fake.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 64)  # a zstd magic number, then no valid frame
    summary = index(store, fake)
    assert summary["sessions_added"] == 0 and summary["messages_added"] == 0
    assert len(summary["errors"]) == 1 and "decompress" in summary["errors"][0]["error"]


def test_a_frame_damaged_after_good_lines_keeps_the_lines_before_it(store, format_fixtures):
    """A file of two frames whose second is cut short (a copy stopped early): the lines of the
    first frame are read and the damage is reported, as for a plain file cut mid-line."""
    day = format_fixtures / DAY
    plain = day / ROOT_FILE
    lines = plain.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    first = zstandard.ZstdCompressor().compress(b"".join(lines[:half]))
    second = zstandard.ZstdCompressor().compress(b"".join(lines[half:]))
    packed = _compress(plain)
    packed.write_bytes(first + second[: len(second) // 2])
    summary = index(store, packed)
    assert summary["messages_added"] > 0
    assert len(summary["errors"]) == 1 and "ends inside a frame" in summary["errors"][0]["error"]
    whole = Database(format_fixtures / "whole.db")
    try:
        packed.write_bytes(first + second)  # both frames whole: every line
        assert index(whole, packed)["messages_added"] > summary["messages_added"]
    finally:
        whole.close()
