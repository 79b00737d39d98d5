"""The added importers survive damaged input: wrong value types and cut-off files.

Every JSON/JSONL fixture of the added formats is mutated (a value somewhere
replaced by one of another type, or the file cut short) and indexed: the run
must finish, reporting problems instead of raising.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
from pathlib import Path

import pytest
from format_helpers import index
from sess_helpers import FIXTURES

FORMAT_DIRS = ("gemini-cli", "gemini-cli-logs", "gemini-cli-checkpoint", "qwen-code", "qwen-code-legacy",
               "opencode-json", "chatgpt-export", "claude-ai-export", "cline", "copilot-chat", "copilot-cli", "copilot-cli-history",
               "goose-jsonl", "amp",
               "factory-droid", "kimi-cli", "pi", "openclaw", "openhands")
REPLACEMENTS = (None, 7, "x", [], {}, [None], {"type": 3})


def _files() -> list[Path]:
    found = []
    for name in FORMAT_DIRS:
        found += [p for p in sorted((FIXTURES / name).rglob("*")) if p.is_file() and p.suffix in (".json", ".jsonl")]
    return found


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index_, item in enumerate(value):
            yield from _paths(item, (*prefix, index_))


def _replace(value, path, new):
    if not path:
        return new
    target = value
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return value


def _mutants(path: Path, rng: random.Random, count: int) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        lines = []
        for line in text.splitlines():
            try:
                lines.append(json.loads(line))
            except ValueError:
                continue  # the fixture's own cut-off last line
        doc = lines
    else:
        doc = json.loads(text)
    out = []
    for _ in range(count):
        mutated = json.loads(json.dumps(doc))
        for _ in range(3):
            candidates = [p for p in _paths(mutated) if p]
            if candidates:
                _replace(mutated, rng.choice(candidates), copy.deepcopy(rng.choice(REPLACEMENTS)))
        if path.suffix == ".jsonl":
            out.append("".join(json.dumps(line) + "\n" for line in mutated))
        else:
            out.append(json.dumps(mutated))
    cut = text[: max(1, len(text) * 2 // 3)]
    out.append(cut)
    return out


FILES = _files()


@pytest.mark.parametrize("fixture", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_damaged_copies_are_reported_not_raised(store, tmp_path, fixture):
    rng = random.Random(str(fixture.relative_to(FIXTURES)))
    top = fixture.relative_to(FIXTURES).parts[0]
    for number, text in enumerate(_mutants(fixture, rng, 12)):
        root = tmp_path / f"m{number}"
        shutil.copytree(FIXTURES / top, root / top)
        target = root / fixture.relative_to(FIXTURES)
        target.write_text(text, encoding="utf-8")
        summary = index(store, target)  # must not raise
        assert isinstance(summary["errors"], list)
