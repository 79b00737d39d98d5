#!/usr/bin/env python3
"""Fusion rules tried offline on recorded rankings of LongMemEval and LoCoMo.

``record``: runs ``eval_longmemeval.evaluate`` and ``eval_locomo.evaluate_sessions`` with the
semantic half on (vectors from the cache ``scripts/semantic_cache.py`` filled) but the fusion
replaced by a recorder: for every question it keeps the lexical session groups (best hit score
per session, in session_search's order), those of them inside a date the question names
(``dated``: fused as a part of their own, :func:`hermes_store.sessions.fusion.fuse_parts`) and
the nearest messages of the semantic half, and answers with the lexical order, so the figures
printed by the run are the lexical ones. The
records go to ``--out`` (JSON) with each question's type and gold sessions.

``grid``: replays :func:`hermes_store.sessions.fusion.fuse` with the settings of a small grid
on the records and prints, per setting, the overall figures of both datasets and the lowest
difference to lexical over every question type and figure (hit@1/5/10, MRR, all@5): a setting
is admissible when that difference is >= 0 (it never lowers a lexical figure). Without
``--full`` the rows vary one parameter of :class:`Fusion` at a time around its default (the
sensitivity table of docs/retrieval.md); with ``--full`` every combination of :data:`GRID` is
replayed and the 20 admissible ones of the largest gain (overall hit@1 + hit@5 of both
datasets) are printed.

Usage: .venv/bin/python scripts/eval_fusion.py record --model bundled:all-MiniLM-L6-v2
       [--cache /tmp/sem27-cache] [--out /tmp/sem27-records.json]
       .venv/bin/python scripts/eval_fusion.py grid [--records /tmp/sem27-records.json] [--full]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmark_data import locomo_conversations, longmemeval_questions, run_script  # noqa: E402

from hermes_store.sessions import session_search  # noqa: E402
from hermes_store.sessions.dated import split_dated  # noqa: E402
from hermes_store.sessions.fusion import Fusion, fuse_parts  # noqa: E402

METRICS = ("hit@1", "hit@5", "hit@10", "mrr", "all@5")


def record(model: str, cache: Path, lme: Path, locomo: Path, *, reuse: bool = False,
           raw: Path = Path("/tmp/sem27-raw-calls.json"),
           roles: tuple[tuple[str, ...], tuple[str, ...]] = (("user",), ("user", "assistant")),
           ) -> list[dict[str, Any]]:
    """Run both evaluations lexically, keeping what the fusion would have been given (the raw
    calls are kept in ``raw``; ``reuse`` pairs those again without a run). ``roles``: the roles
    embedded for LongMemEval and for LoCoMo (the evaluations' defaults)."""
    import eval_locomo
    import eval_longmemeval
    from eval_semantic import SemanticSetup

    calls: list[dict[str, Any]] = []

    def recorder(store: Any, query: str, groups: list, roles: Any, bounds: Any,
                 seen_roots: set[str], window: Any) -> list:
        nearest = store.semantic.nearest(query, session_search.SEMANTIC_SCAN_LIMIT)
        inside, _rest = split_dated(groups, window, lambda group: group[1])
        calls.append({"query": query,
                      "lexical": [[root, hits[0].score] for root, hits in groups],
                      "dated": [root for root, _hits in inside],
                      "semantic": [[sid, score] for _mid, sid, _seq, score in nearest]})
        return groups

    if reuse and raw.is_file():
        lme_calls, locomo_calls = json.loads(raw.read_text(encoding="utf-8"))
    else:
        session_search._fused = recorder
        setup = SemanticSetup(model, cache=cache, roles=roles[0])
        eval_longmemeval.print_table(eval_longmemeval.evaluate(lme, limit=5, detail=None, semantic=setup))
        lme_calls, calls[:] = list(calls), []
        setup.roles = roles[1]
        eval_locomo.print_session_table(eval_locomo.evaluate_sessions(locomo, setup))
        locomo_calls = list(calls)
        print(setup.summary())
        raw.write_text(json.dumps([lme_calls, locomo_calls]), encoding="utf-8")
    questions = list(longmemeval_questions(lme))
    out = [{"dataset": "lme", "type": q["question_type"], "gold": sorted(q["answer_session_ids"]),
            **call} for q, call in _pair(
                [(q["question"], q) for q in questions
                 if not str(q.get("question_id", "")).endswith("_abs")], lme_calls)]
    asked = []
    for name, conv in locomo_conversations(locomo):
        for qa in conv.get("qa", []):
            gold = eval_locomo.evidence_keys(qa)
            if qa.get("category") in eval_locomo.CATEGORIES and gold:
                asked.append((qa["question"], {"type": str(qa["category"]),
                                               "gold": sorted({f"{name}-s{n}" for n, _ in gold})}))
    out += [{"dataset": "locomo", **meta, **call} for meta, call in _pair(asked, locomo_calls)]
    return out


def _pair(asked: list[tuple[str, Any]], calls: list[dict[str, Any]]) -> list[tuple[Any, dict[str, Any]]]:
    """Each asked question with its recorded call (each question is asked twice, limit 10 and
    limit 5; a question whose search never reached the fusion, e.g. a refused query, gets empty
    rankings)."""
    pairs, at = [], 0
    for question, meta in asked:
        question = question.strip()  # session_search strips the query
        if at < len(calls) and calls[at]["query"] == question:
            pairs.append((meta, calls[at]))
            at += 2 if at + 1 < len(calls) and calls[at + 1]["query"] == question else 1
        else:
            pairs.append((meta, {"query": question, "lexical": [], "semantic": []}))
    if at != len(calls):
        print(f"warning: {len(calls) - at} recorded calls left unpaired", file=sys.stderr)
    return pairs


def figures(ranked: Sequence[Hashable], gold: set[Hashable]) -> dict[str, float]:
    """hit@1/5/10, MRR and all@5 of one ranking."""
    first = next((i for i, key in enumerate(ranked) if key in gold), None)
    row = {f"hit@{k}": float(first is not None and first < k) for k in (1, 5, 10)}
    row["mrr"] = 0.0 if first is None or first >= 10 else 1.0 / (first + 1)
    row["all@5"] = float(gold <= set(ranked[:5]))
    return row


def replay(records: list[dict[str, Any]], fusion: Fusion | None) -> dict[tuple[str, str], dict[str, float]]:
    """Mean figures per (dataset, type) and (dataset, 'all'), fused with ``fusion`` (None:
    lexical), the sessions of a date the question names first (as ``session_search`` does)."""
    sums: dict[tuple[str, str], dict[str, float]] = {}
    for rec in records:
        dated = set(rec.get("dated") or ())  # records made before the date parts have none
        parts = [[pair for pair in rec["lexical"] if (pair[0] in dated) == inside] for inside in (True, False)]
        if fusion is None:
            ranked = [root for part in parts for root, _score in part]
        else:
            ranked = fuse_parts(parts, semantic_sessions(rec["semantic"]), fusion)
        row = figures(ranked[:10], set(rec["gold"]))
        for key in ((rec["dataset"], rec["type"]), (rec["dataset"], "all")):
            bucket = sums.setdefault(key, {"n": 0.0})
            bucket["n"] += 1
            for name, value in row.items():
                bucket[name] = bucket.get(name, 0.0) + value
    return {key: {name: value / b["n"] for name, value in b.items() if name != "n"} | {"n": b["n"]}
            for key, b in sums.items()}


def semantic_sessions(nearest: list[list[Any]]) -> list[list[Any]]:
    """``[session, best cosine]`` in the order of each session's best message."""
    best: dict[str, float] = {}
    for sid, score in nearest:
        best.setdefault(sid, score)
    return [[sid, score] for sid, score in best.items()]


def lowest_difference(fused: dict, lexical: dict) -> tuple[float, str]:
    """The most negative fused-minus-lexical difference over every row and figure."""
    worst = (float("inf"), "")
    for key, row in lexical.items():
        for name in METRICS:
            diff = fused[key][name] - row[name]
            if diff < worst[0]:
                worst = (diff, f"{key[0]} {key[1]} {name}")
    return worst


PICKS = (("lme", "all", "hit@1"), ("lme", "all", "hit@5"), ("lme", "single-session-preference", "hit@5"),
         ("locomo", "all", "hit@1"), ("locomo", "all", "hit@5"), ("locomo", "3", "hit@5"))


def gain(table: dict, lexical: dict) -> float:
    """What a setting is ranked by: the sum of its overall hit@1 and hit@5 gains on both
    datasets (percentage points)."""
    return sum(100 * (table[(d, "all")][m] - lexical[(d, "all")][m])
               for d in ("lme", "locomo") for m in ("hit@1", "hit@5"))


def grid(records: list[dict[str, Any]], settings: list[Fusion], *, best: int | None = None) -> None:
    """Print the replayed figures of each setting (see the module docstring); with ``best``,
    only the ``best`` admissible settings of the largest gain."""
    lexical = replay(records, None)
    print("| setting | LME hit@1 | LME hit@5 | LME pref hit@5 | LoCoMo hit@1 | LoCoMo hit@5 |"
          " LoCoMo cat3 hit@5 | lowest difference |")
    print("|---|---|---|---|---|---|---|---|")

    def cells(table: dict) -> str:
        return " | ".join(f"{100 * table[(d, t)][m]:.1f}" for d, t, m in PICKS)

    rows = []
    for fusion in settings:
        fused = replay(records, fusion)
        diff, where = lowest_difference(fused, lexical)
        label = ", ".join(f"{k}={v}" for k, v in fusion.__dict__.items() if v != getattr(Fusion(), k))
        rows.append((gain(fused, lexical), diff, f"| {label or 'default'} | {cells(fused)} | "
                                                 f"{100 * diff:+.1f} ({where}) |"))
    if best is not None:
        admissible = [row for row in rows if row[1] >= -1e-9]
        print(f"<!-- {len(admissible)} of {len(rows)} settings admissible -->")
        rows = sorted(admissible, key=lambda row: -row[0])[:best]
    print(f"| lexical | {cells(lexical)} | 0 |")
    for _gain, _diff, line in rows:
        print(line)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("--model", required=True)
    rec.add_argument("--cache", type=Path, default=Path("/tmp/sem27-cache"))
    rec.add_argument("--lme", type=Path, default=Path("/work/shared/data/longmemeval/s_dev"))
    rec.add_argument("--locomo", type=Path, default=Path("/work/shared/data/locomo"))
    rec.add_argument("--reuse", action="store_true", help="pair the raw calls of the last run again")
    rec.add_argument("--out", type=Path, default=Path("/tmp/sem27-records.json"))
    rec.add_argument("--raw", type=Path, default=Path("/tmp/sem27-raw-calls.json"))
    rec.add_argument("--lme-roles", default="user")
    rec.add_argument("--locomo-roles", default="user,assistant")
    gr = sub.add_parser("grid")
    gr.add_argument("--records", type=Path, default=Path("/tmp/sem27-records.json"))
    gr.add_argument("--full", action="store_true", help="the whole grid, not the sensitivity rows")
    args = parser.parse_args(argv)
    if args.command == "record":
        roles = tuple(tuple(r.strip() for r in value.split(",") if r.strip())
                      for value in (args.lme_roles, args.locomo_roles))
        records = record(args.model, args.cache, args.lme, args.locomo, reuse=args.reuse,
                         raw=args.raw, roles=roles)
        args.out.write_text(json.dumps(records), encoding="utf-8")
        print(f"{len(records)} questions recorded in {args.out}")
        return 0
    records = json.loads(args.records.read_text(encoding="utf-8"))
    base = Fusion()
    if args.full:
        settings = [Fusion(**{**base.__dict__, **dict(zip(GRID, values, strict=True))})
                    for values in itertools.product(*GRID.values())]
    else:
        settings = [base] + [Fusion(**{**base.__dict__, name: value})
                             for name, values in GRID.items() for value in values
                             if value != getattr(base, name)]
    grid(records, settings, best=20 if args.full else None)
    return 0


#: the parameters tried (the sensitivity rows vary one at a time around the default).
GRID: dict[str, tuple[Any, ...]] = {
    "gate": (0.1, 0.2, 0.3, 0.5, 1.01),
    "lead": (0.0, 0.01, 0.02, 0.03, 0.05, 0.1, 0.15, 0.2, 0.3),
    "window": (2, 3, 5, 10),
}


if __name__ == "__main__":
    raise SystemExit(run_script(main))
