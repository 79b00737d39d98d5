"""Codex rollout segments: one thread's rollout kept in several files after rotation.

A long-lived thread's live rollout (``<codex home>/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl``)
is rotated: the file is frozen as an immutable segment,
``<codex home>/<segments dir>/<thread>/<segment id>/<the same file name>`` (``initial`` for the
segment of a rollout written before segment ids), and the live path is written again from a
``session_meta`` (a new ``segment_id``) followed by a ``rollout_reference`` record naming the
segment it continues (``rollout_path``, ``thread_id``, ``rollout_id`` (the thread's own, or
none), ``segment_id``); a segment may itself continue an older one. Codex reads the thread by
expanding the references in order (openai/codex ``codex-rs/rollout``: ``resolve_rollout_reference_path``,
``canonical_same_thread_reference``: "expected_path = codex_home / rotated segments / thread /
segment / file name").

So the live file is the thread's source: its read follows the reference into the segments (the
records they hold come first, under the thread's session), and a segment file met on its own
(a walk of the Codex home) is a member of the live file, read through it. Before, re-reading
the rotated live file dropped every message indexed from it before the rotation (the file was
taken as rewritten and its earlier messages forgotten), and a segment indexed on its own was
refused as a second file claiming the thread's id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_store.sessions.importers.base import opt_str

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_NAME = re.compile(rf"^rollout-(\d{{4}})-(\d{{2}})-(\d{{2}})T[\d-]+-({_UUID})\.jsonl$", re.I)
_SEGMENT = re.compile(rf"^(?:{_UUID}|initial)$", re.I)
MAX_SEGMENTS = 256  # references followed from one file (codex-rs bounds its expansion the same way)
MAX_SEGMENT_LINE_BYTES = 64 * 1024 * 1024


def same_thread_reference(payload: dict[str, Any], thread: str | None) -> bool:
    """True for a ``rollout_reference`` to an earlier segment of this very thread (not a fork
    of another thread, not a cut at the n-th user message, not a revert's other rollout)."""
    target = opt_str(payload.get("thread_id"))
    rollout = opt_str(payload.get("rollout_id"))
    return (bool(thread) and target == thread and (rollout is None or rollout == thread)
            and payload.get("nth_user_message") is None)


def active_twin(path: Path) -> Path | None:
    """The live rollout a segment file (``…/<thread>/<segment>/rollout-…-<thread>.jsonl``) was
    rotated out of, when it is on disk; None for any other file."""
    match = _NAME.match(path.name)
    if match is None or len(path.parents) < 4:
        return None
    if path.parent.parent.name.lower() != match.group(4).lower() or not _SEGMENT.match(path.parent.name):
        return None
    year, month, day = match.group(1), match.group(2), match.group(3)
    for home in list(path.parents)[2:5]:
        for candidate in (home / "sessions" / year / month / day / path.name,
                          home / "archived_sessions" / path.name,
                          home / "archived_sessions" / year / month / day / path.name):
            if candidate.is_file() and candidate.resolve() != path.resolve():
                return candidate
    return None


def referenced_segment(reader: Path, payload: dict[str, Any]) -> Path | None:
    """The segment file a same-thread ``rollout_reference`` names: its recorded ``rollout_path``,
    else the same file name under ``<codex home>/*/<thread>/<segment>/`` (a Codex home copied or
    moved elsewhere), the Codex home being an ancestor of the file that holds the reference."""
    recorded = opt_str(payload.get("rollout_path"))
    own = reader.resolve()
    if recorded:
        path = Path(recorded)
        if path.is_file() and path.resolve() != own:
            return path
    thread = opt_str(payload.get("thread_id"))
    segment = opt_str(payload.get("segment_id")) or "initial"
    name = Path(recorded).name if recorded else reader.name
    if not thread or "/" in segment or "/" in thread or not _NAME.match(name):
        return None
    for home in list(reader.parents)[:6]:
        for found in sorted(home.glob(f"*/{thread}/{segment}/{name}")):
            if found.is_file() and found.resolve() != own:
                return found
    return None


def segment_lines(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """``(line, record, "")`` per record of a segment; ``(line, None, why)`` for a line that is not one."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            if len(raw) > MAX_SEGMENT_LINE_BYTES:
                yield number, None, f"line of {len(raw):,} bytes is over the limit; skipped"
                continue
            try:
                obj = json.loads(raw.decode("utf-8", errors="replace"))
            except (ValueError, RecursionError) as exc:
                yield number, None, f"malformed JSON: {exc}"
                continue
            if isinstance(obj, dict):
                yield number, obj, ""
            else:
                yield number, None, "not a JSON object (skipped)"
