#!/usr/bin/env python3
"""Threat-scan cost per message: the gated scan beside the full one, side by side in one run.

Every shown search excerpt, and up to 4 KB of the message it was cut from, passes
``hermes_store.threats.scan_findings``. This script writes a sample of the benchmark corpus
(``scripts/bench_ingest.py``'s ``CorpusWriter``: prose, questions, tool calls, tool output cut
from stdlib source, ~2 % CJK) plus the hostile red-team payloads, and times per message

* ``gated`` -- ``scan_findings`` as the search runs it (the skeleton gate of
  ``hermes_store.threat_patterns`` picks the patterns to run and the forms to spell out);
* ``needles`` -- the scan before the gate: every form (``scan_forms``), a pattern's regex run
  where its required literals occur in them (``REQUIRED``);
* ``full``  -- every form under every pattern, no gate and no needles.

It checks that both give the same findings for every text, then prints microseconds per
message (best of ``--rounds``) and the ratio.

Usage: .venv/bin/python scripts/bench_scan.py [--messages 20000] [--sample 3000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from hermes_store import threats
from hermes_store.threat_patterns import REQUIRED, THREAT_PATTERNS, needle_text

SCRIPTS = Path(__file__).resolve().parent


def _corpus_texts(messages: int) -> list[str]:
    """The message texts of a ``CorpusWriter`` corpus of ``messages`` messages."""
    spec = importlib.util.spec_from_file_location("bench_ingest", SCRIPTS / "bench_ingest.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    assert spec is not None and spec.loader is not None
    sys.modules["bench_ingest"] = module
    spec.loader.exec_module(module)
    texts: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        module.CorpusWriter(Path(tmp), messages).write()
        for path in sorted(Path(tmp).rglob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                content = record.get("content")
                if isinstance(content, str) and content:
                    texts.append(content[: threats.PAST_ALSO_CHARS])
    return texts


def _full(text: str) -> list[str]:
    forms = threats.scan_forms(text[: threats.MAX_SCAN_CHARS])
    return [pid for pid, regex in THREAT_PATTERNS if any(regex.search(form) for form in forms)]


def _needles(text: str) -> list[str]:
    forms = threats.scan_forms(text[: threats.MAX_SCAN_CHARS])
    lowered = needle_text(forms)
    return [pid for pid, regex in THREAT_PATTERNS
            if all(any(literal in lowered for literal in group) for group in REQUIRED[pid])
            and any(regex.search(form) for form in forms)]


def _best(fn, texts: list[str], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        began = time.process_time()
        for text in texts:
            fn(text)
        best = min(best, time.process_time() - began)
    return 1e6 * best / len(texts)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000, help="corpus size to sample from")
    parser.add_argument("--sample", type=int, default=3_000, help="messages timed")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (best kept)")
    args = parser.parse_args(argv)
    texts = _corpus_texts(args.messages)
    random.Random(7).shuffle(texts)
    sys.path.insert(0, str(SCRIPTS.parent))
    from tests.builtin.test_mem_threats import POSITIVE

    hostile = list(POSITIVE.values())
    sample = texts[: args.sample] + hostile
    mismatched = [t for t in sample
                  if not ([f for f in threats.scan_findings(t) if not f.startswith("invisible_")]
                          == _needles(t) == _full(t))]
    if mismatched:
        print(f"FINDINGS DIFFER on {len(mismatched)} texts, e.g. {mismatched[0][:200]!r}")
        return 1
    flagged = sum(1 for t in sample if threats.scan_findings(t))
    gated = _best(threats.scan_findings, sample, args.rounds)
    needles = _best(_needles, sample, args.rounds)
    full = _best(_full, sample, args.rounds)
    chars = sum(len(t) for t in sample) / len(sample)
    print(f"{len(sample)} texts ({len(hostile)} hostile, {flagged} flagged), {chars:.0f} chars on average; "
          "same findings in all three scans")
    print(f"| scan | us per message (best of {args.rounds}, CPU) |")
    print("|---|---:|")
    print(f"| full (every form, every pattern) | {full:.0f} |")
    print(f"| needles (before the gate) | {needles:.0f} |")
    print(f"| gated (scan_findings) | {gated:.0f} |")
    print(f"gated / needles: {gated / needles:.2f} ({needles / gated:.1f}x faster); "
          f"gated / full: {gated / full:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
