#!/usr/bin/env python3
"""Evidence retrieval on LoCoMo through ``recall`` (facts + sessions) vs sessions-only search.

For every conversation of ``--data`` a fresh home is built: its sessions go
into the session index exactly as ``scripts/eval_locomo.py`` does (one LoCoMo
session = one session, one turn = one message), and its per-speaker
``events_session_N`` lists become facts (category ``event``, tag
``session_N``). Each question of category 1-4 is then asked two ways, both
returning 10 items:

* sessions-only: ``search_messages`` (what ``session_search`` does), plain and
  with ``expand_context`` (neighbours of strong matches, what recall uses);
* recall: ``recall(question, kinds=("facts", "sessions"))``, the fused list.

Two scores per system, side by side in one run:

* turn hit@k: any evidence turn among the top-k *messages* (facts count as
  misses: they are not turns). This is the strict LoCoMo metric.
* session hit@k: any top-k item comes from a session holding an evidence turn
  (a message from it, or a fact derived from its events). This credits a fact
  that points the agent at the right conversation.

Usage: .venv/bin/python scripts/eval_recall.py [--data DIR|FILE] [--k 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmark_data import locomo_conversations, run_script  # noqa: E402
from eval_locomo import CATEGORIES, DEFAULT_DATA, evidence_keys, index_conversation, turns_of  # noqa: E402

from hermes_store.facts import FactStore  # noqa: E402
from hermes_store.home import Home  # noqa: E402
from hermes_store.recall import recall  # noqa: E402
from hermes_store.sessions.search import search_messages  # noqa: E402


def add_event_facts(store: FactStore, conv: dict) -> int:
    """Store every ``events_session_N`` event as a fact tagged with its session; return the count."""
    added = 0
    for key, value in conv.items():
        if not key.startswith("events_session_") or not isinstance(value, dict):
            continue
        n = int(key.rsplit("_", 1)[1])
        for speaker, events in value.items():
            if speaker == "date" or not isinstance(events, list):
                continue
            for event in events:
                text = f"{event} ({value.get('date', '')})".strip()
                if store.add_fact(text, "event", f"session_{n}").get("status") != "exists":
                    added += 1
    return added


def _session_no(session_id: str) -> int:
    return int(session_id.rsplit("-s", 1)[1])


def recall_positions(items) -> tuple[list[tuple[int, int] | None], list[int]]:
    """For each recalled item: its (session, seq) if a message, and the session it came from."""
    turns: list[tuple[int, int] | None] = []
    sessions: list[int] = []
    for item in items:
        if item.kind == "sessions":
            n = _session_no(item.provenance["session_id"])
            turns.append((n, item.provenance["seq"]))
            sessions.append(n)
        else:
            turns.append(None)
            tags = item.provenance.get("tags") or ""
            numbers = [int(t.split("_")[1]) for t in tags.replace(",", " ").split() if t.startswith("session_")]
            sessions.append(numbers[0] if numbers else -1)
    return turns, sessions


def evaluate(data: Path, k: int) -> dict:
    """Run both systems over every conversation; return hit rates and timings."""
    systems = ("sessions-only search", "sessions-only search, expand_context", "recall (facts + sessions)")
    totals = {s: {"n": 0, "turn": 0, "session": 0} for s in systems}
    timings: dict[str, list[float]] = {s: [] for s in systems}
    facts_total = 0
    for name, conv in locomo_conversations(data):
        turns = turns_of(conv)
        with tempfile.TemporaryDirectory() as tmp:
            home = Home(Path(tmp) / "home").ensure()
            db = home.open_db()
            index_conversation(db, name, turns)
            facts_total += add_event_facts(FactStore(db), conv)
            for qa in conv.get("qa", []):
                gold = evidence_keys(qa)
                if qa.get("category") not in CATEGORIES or not gold:
                    continue
                gold_sessions = {s for s, _ in gold}
                question = qa["question"]
                began = time.perf_counter()
                found = search_messages(db, question, limit=k)
                timings[systems[0]].append(time.perf_counter() - began)
                positions = [(_session_no(r["session_id"]), r["seq"]) for r in found.results]
                began = time.perf_counter()
                wide = search_messages(db, question, limit=k, expand_context=True)
                timings[systems[1]].append(time.perf_counter() - began)
                wide_positions = [(_session_no(r["session_id"]), r["seq"]) for r in wide.results]
                began = time.perf_counter()
                fused = recall(question, kinds=("facts", "sessions"), limit=k, home=home, db=db).results
                timings[systems[2]].append(time.perf_counter() - began)
                rec_turns, rec_sessions = recall_positions(fused)
                for system, turn_list, session_list in (
                    (systems[0], positions, [s for s, _ in positions]),
                    (systems[1], wide_positions, [s for s, _ in wide_positions]),
                    (systems[2], rec_turns, rec_sessions),
                ):
                    bucket = totals[system]
                    bucket["n"] += 1
                    bucket["turn"] += bool(gold & {t for t in turn_list[:k] if t is not None})
                    bucket["session"] += bool(gold_sessions & set(session_list[:k]))
            db.close()
    report = {"k": k, "facts": facts_total, "systems": {}}
    for system in systems:
        t = sorted(timings[system])
        b = totals[system]
        report["systems"][system] = {
            "questions": b["n"],
            f"turn_hit@{k}": round(b["turn"] / b["n"], 3) if b["n"] else 0.0,
            f"session_hit@{k}": round(b["session"] / b["n"], 3) if b["n"] else 0.0,
            "p50_ms": round(1000 * t[len(t) // 2], 2) if t else 0.0,
            "p95_ms": round(1000 * t[int(len(t) * 0.95)], 2) if t else 0.0,
        }
    return report


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"error: {args.data}: no such file or directory", file=sys.stderr)
        return 2
    report = evaluate(args.data, args.k)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    k = report["k"]
    print(f"LoCoMo evidence retrieval, {report['facts']} event facts, k={k}\n")
    print(f"| system | questions | turn hit@{k} | session hit@{k} | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|")
    for system, row in report["systems"].items():
        print(f"| {system} | {row['questions']} | {row[f'turn_hit@{k}']:.3f} | {row[f'session_hit@{k}']:.3f} "
              f"| {row['p50_ms']:.2f} | {row['p95_ms']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
