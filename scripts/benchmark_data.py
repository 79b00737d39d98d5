"""The benchmark files the evaluation scripts read, in every layout they are shared in.

``--data`` of ``eval_longmemeval.py``, ``eval_locomo.py``, ``eval_recall.py``, ``eval_fusion.py``
and ``semantic_cache.py`` may name:

- a directory of one JSON file per item (the development slices in ``../shared/data/``:
  ``<sessions>_<question_id>.json`` per LongMemEval question, ``conv-N.json`` per LoCoMo
  conversation, with the conversation's keys at the top);
- a single file as the benchmarks publish it: LongMemEval's ``longmemeval_s.json`` (a list of
  questions) and LoCoMo's ``locomo10.json`` (a list of ``{"sample_id", "conversation": {...},
  "qa": [...]}``);
- a directory holding such files, or a mix.

Items come in a stable order: files by name, then the order inside each file. A file that is not
JSON, or holds neither layout, stops the run with an error naming it (a benchmark run that
silently skipped part of its data would print figures of another set).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


class DataError(ValueError):
    """A benchmark file that cannot be read as the layout asked for."""


def _files(data: Path) -> list[Path]:
    if data.is_dir():
        return sorted(data.glob("*.json"))
    if data.is_file():
        return [data]
    raise DataError(f"{data}: no such file or directory")


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a readable JSON file ({exc})") from exc


def _items(path: Path, value: Any) -> list[tuple[str, Any]]:
    """``(name, item)`` pairs of one file: the file itself, or each element of a list."""
    if isinstance(value, list):
        return [(f"{path.stem}[{i}]", item) for i, item in enumerate(value)]
    return [(path.stem, value)]


def longmemeval_questions(data: Path) -> Iterator[dict[str, Any]]:
    """Every LongMemEval question of ``data`` (abstention questions included; the caller skips
    them), each checked for the keys the evaluations read."""
    for path in _files(data):
        for where, question in _items(path, _load(path)):
            if not isinstance(question, dict) or "question" not in question \
                    or not isinstance(question.get("haystack_sessions"), list):
                raise DataError(f"{path} ({where}): not a LongMemEval question "
                                "(needs 'question' and a 'haystack_sessions' list)")
            yield question


def locomo_conversations(data: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(name, conversation)`` for every LoCoMo conversation of ``data``: the conversation's
    keys (``speaker_a``, ``session_N``, ``session_N_date_time`` ...) at the top with its ``qa``,
    whichever layout it came in. ``name`` is the ``sample_id`` when there is one, else the
    file's name; it prefixes the conversation's session ids."""
    for path in _files(data):
        for where, item in _items(path, _load(path)):
            if not isinstance(item, dict):
                raise DataError(f"{path} ({where}): not a LoCoMo conversation")
            conversation = item.get("conversation")
            if isinstance(conversation, dict):
                flat = {**conversation, "qa": item.get("qa") or []}
                name = str(item.get("sample_id") or where)
            else:
                flat, name = item, path.stem if where == path.stem else where
            if not any(key.startswith("session_") for key in flat):
                raise DataError(f"{path} ({where}): not a LoCoMo conversation (no session_N turns)")
            yield name, flat


def run_script(main: Callable[[], int]) -> int:
    """A script's ``main()``, with a :class:`DataError` or a store that cannot be opened (an
    unreachable ``--database-url``, say: :class:`hermes_store.db.DatabaseError`) printed as
    ``error: ...`` (exit status 2) instead of a traceback."""
    from hermes_store.db import DatabaseError

    try:
        return main()
    except (DataError, DatabaseError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
