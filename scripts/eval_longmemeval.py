#!/usr/bin/env python3
"""LongMemEval retrieval through ``session_search``, as an agent meets it.

For every question of ``--data`` (a directory of one JSON file per question, or the published
``longmemeval_s.json`` list: ``scripts/benchmark_data.py``; each question in the S split layout:
``question``, ``question_type``, ``haystack_session_ids``, ``haystack_dates``,
``haystack_sessions``, ``answer_session_ids``; turns with ``has_answer: true`` are the evidence)
the question's own haystack is written as Hermes session JSONL files into a fresh temporary
home, indexed with the same loader ``hermes-store sessions index`` runs, and the question is
asked through the ``session_search`` tool (``handle_tool_call``, the JSON an agent reads).
Abstention questions (ids ending in ``_abs``) are skipped.

Figures, overall and per question type:

- session ``hit@1/5/10`` and ``MRR``: an answer session among the first k sessions returned
  (one call with ``limit=10``);
- ``all@5``: every answer session among the first 5;
- evidence ``any`` and ``share``: of the messages the agent reads in the reply of one call with
  ``--limit`` (default 5) and ``--detail`` (default: the tool's default), whether any evidence
  turn is there, and which share of the question's evidence turns is;
- latency p50/p95 of the ``limit=10`` call.

With ``--database-url URL`` (or ``private``: a throw-away server) each haystack is indexed into
a fresh schema of that PostgreSQL database instead (``scripts/eval_store.py``): the same
figures on the other engine.

With ``--semantic MODEL`` every haystack is also embedded (``sessions embed``'s code) and the
calls run with ``semantic.model`` set, i.e. on the fused ranking (docs/retrieval.md), reranked
by ``--reranker`` (default ``auto``: ``bundled:ms-marco-MiniLM-L-12-v2`` when installed;
``none`` for the fused ranking alone).

Usage: .venv/bin/python scripts/eval_longmemeval.py [--data DIR|FILE] [--limit 5] [--detail full]
       [--only N] [--semantic MODEL [--semantic-cache DIR] [--reranker auto|none|MODEL]] [--json]
       [--database-url URL|private]
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmark_data import longmemeval_questions, run_script
from eval_store import fresh_home, reset_schema

from hermes_store.sessions import dated
from hermes_store.sessions.loader import BulkLoader
from hermes_store.tools import handle_tool_call

DEFAULT_DATA = Path("/work/shared/data/longmemeval/s_dev")
KS = (1, 5, 10)


def parse_date(text: str) -> float:
    """LongMemEval's ``2023/05/20 (Sat) 00:31`` as epoch seconds (UTC)."""
    day, _, clock = text.partition(") ")
    moment = datetime.strptime(f"{day.split(' (')[0]} {clock.strip() or '00:00'}", "%Y/%m/%d %H:%M")
    return moment.replace(tzinfo=timezone.utc).timestamp()


def write_haystack(question: dict[str, Any], sessions_dir: Path) -> dict[tuple[str, int], bool]:
    """Write each haystack session as ``<sid>.jsonl``; returns ``(sid, seq) -> has_answer``."""
    sessions_dir.mkdir(parents=True, exist_ok=True)
    evidence: dict[tuple[str, int], bool] = {}
    for sid, date, turns in zip(question["haystack_session_ids"], question["haystack_dates"],
                                question["haystack_sessions"], strict=False):
        start = parse_date(date)
        lines = [{"role": "session_meta", "platform": "cli", "timestamp": start}]
        for seq, turn in enumerate(turns):
            lines.append({"role": turn["role"], "content": turn.get("content") or "",
                          "timestamp": start + 30 * (seq + 1)})
            evidence[(sid, seq)] = bool(turn.get("has_answer"))
        (sessions_dir / f"{sid}.jsonl").write_text(
            "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return evidence


def _returned_messages(reply: dict[str, Any]) -> list[tuple[str, int]]:
    """``(session_id, message row id)`` of every message the agent reads in a discover reply."""
    out = []
    for result in reply.get("results", []):
        for part in ("bookend_start", "messages", "bookend_end"):
            for message in result.get(part) or []:
                out.append((result["session_id"], int(message["id"])))
    return out


def evaluate(data: Path, *, limit: int, detail: str | None, only: int | None = None,
             semantic: Any = None, database_url: str | None = None) -> dict[str, Any]:
    """Run every question; returns per-type and overall figures (on a PostgreSQL store when
    ``database_url`` is given: ``eval_store``)."""
    buckets: dict[str, dict[str, float]] = {}
    latencies: list[float] = []
    questions = longmemeval_questions(data)
    for question in itertools.islice(questions, only) if only else questions:
        if str(question.get("question_id", "")).endswith("_abs"):
            continue
        gold = set(question.get("answer_session_ids") or [])
        with tempfile.TemporaryDirectory() as tmp:
            home = fresh_home(Path(tmp), database_url)
            evidence = write_haystack(question, Path(tmp) / "sessions")
            db = home.open_db()
            try:
                BulkLoader(db).run([Path(tmp) / "sessions"], "hermes-jsonl")
                seq_of = {int(r["id"]): (r["session_id"], int(r["seq"]))
                          for r in db.query("SELECT id, session_id, seq FROM messages")}
                if semantic is not None:
                    semantic.prepare(home, db)
            finally:
                db.close()
            # relative dates ("two weeks ago") are read from the day the question was asked
            asked = parse_date(question["question_date"]) if question.get("question_date") else None
            dated.clock = time.time if asked is None else functools.partial(float, asked)
            began = time.perf_counter()
            ranked_reply = json.loads(handle_tool_call("session_search", {"query": question["question"],
                                                                          "limit": 10}, home=home))
            latencies.append(time.perf_counter() - began)
            args: dict[str, Any] = {"query": question["question"], "limit": limit}
            if detail:
                args["detail"] = detail
            read_reply = json.loads(handle_tool_call("session_search", args, home=home))
        ranked = [r["session_id"] for r in ranked_reply.get("results", [])]
        gold_turns = {key for key, has in evidence.items() if has}
        shown = {seq_of[mid] for _sid, mid in _returned_messages(read_reply) if mid in seq_of}
        first = next((i for i, sid in enumerate(ranked) if sid in gold), None)
        row = {f"hit@{k}": float(first is not None and first < k) for k in KS}
        row["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
        row["all@5"] = float(bool(gold) and gold <= set(ranked[:5]))
        if gold_turns:
            row["evidence_any"] = float(bool(gold_turns & shown))
            row["evidence_share"] = len(gold_turns & shown) / len(gold_turns)
        for name in (question.get("question_type", "?"), "all"):
            bucket = buckets.setdefault(name, {"n": 0.0, "n_evidence": 0.0})
            bucket["n"] += 1
            bucket["n_evidence"] += 1 if gold_turns else 0
            for key, value in row.items():
                bucket[key] = bucket.get(key, 0.0) + value
    report: dict[str, Any] = {"limit": limit, "detail": detail or "default",
                              "engine": "postgresql" if database_url else "sqlite", "types": {}}
    for name, bucket in buckets.items():
        n, ne = bucket.pop("n"), bucket.pop("n_evidence")
        report["types"][name] = {"n": int(n), **{
            key: (value / ne if key.startswith("evidence") else value / n) if (ne if key.startswith("evidence") else n) else 0.0
            for key, value in bucket.items()}}
    latencies.sort()
    report["p50_ms"] = 1000 * latencies[len(latencies) // 2] if latencies else 0.0
    report["p95_ms"] = 1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.95))] if latencies else 0.0
    return report


COLUMNS = ("hit@1", "hit@5", "hit@10", "mrr", "all@5", "evidence_any", "evidence_share")


def print_table(report: dict[str, Any]) -> None:
    """Print the figures as a Markdown table (percentages except MRR)."""
    print(f"session_search, limit={report['limit']}, detail={report['detail']}")
    print("| type | n | " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * (2 + len(COLUMNS)))
    for name in sorted(report["types"], key=lambda t: (t == "all", t)):
        row = report["types"][name]
        cells = [f"{row.get(c, 0.0):.3f}" if c == "mrr" else f"{100 * row.get(c, 0.0):.1f}" for c in COLUMNS]
        print(f"| {name} | {row['n']} | " + " | ".join(cells) + " |")
    print(f"engine: {report.get('engine', 'sqlite')}; latency p50 {report['p50_ms']:.1f} ms, "
          f"p95 {report['p95_ms']:.1f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=5, help="limit of the call whose messages are read")
    parser.add_argument("--detail", default=None, help="detail of that call (default: the tool's)")
    parser.add_argument("--only", type=int, default=None, help="only the first N question files")
    parser.add_argument("--semantic", default=None, metavar="MODEL",
                        help="also embed with MODEL and search with the fusion (semantic extra)")
    parser.add_argument("--semantic-cache", type=Path, default=None, metavar="DIR",
                        help="with --semantic: vectors of texts already in DIR (scripts/semantic_cache.py) are read, not computed")
    from eval_semantic import add_reranker_argument, chosen_reranker

    add_reranker_argument(parser)
    parser.add_argument("--semantic-set", action="append", default=[], metavar="KEY=VALUE",
                        help="with --semantic: a further semantic: setting of config.yaml "
                             "(gate, lead, window), repeatable")
    parser.add_argument("--semantic-roles", default="user", metavar="ROLES",
                        help="with --semantic: the roles embedded, semantic.roles of config.yaml "
                             "(default %(default)s: LongMemEval's evidence is 94.5 %% user turns)")
    parser.add_argument("--database-url", default=None, metavar="URL",
                        help="index and search on this PostgreSQL database (a schema of its own, "
                             "dropped at the end; 'private': a throw-away server for this run)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"error: {args.data}: no such file or directory (point --data at LongMemEval question files)",
              file=sys.stderr)
        return 2
    semantic = None
    if args.semantic:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from eval_semantic import SemanticSetup

        semantic = SemanticSetup(args.semantic, dict(kv.split("=", 1) for kv in args.semantic_set),
                                     reranker=chosen_reranker(args.reranker), cache=args.semantic_cache,
                                     roles=tuple(r.strip() for r in args.semantic_roles.split(",") if r.strip()))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_pgserver import database_url

    with database_url(args.database_url) as url:
        try:
            report = evaluate(args.data, limit=args.limit, detail=args.detail, only=args.only,
                              semantic=semantic, database_url=url)
        finally:
            if url:
                reset_schema(url, create=False)
    if semantic is not None:
        report["semantic"] = semantic.summary()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)
        if semantic is not None:
            print(report["semantic"])
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
