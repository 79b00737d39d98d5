#!/usr/bin/env python3
"""Evidence retrieval on LoCoMo: our session search side by side with plain BM25.

Each conversation of ``--data`` (default /work/shared/data/locomo: a directory of
``conv-N.json`` files, or LoCoMo's own ``locomo10.json``; ``scripts/benchmark_data.py``) is indexed
into a fresh temporary store: one LoCoMo session = one session (its date is
the timestamp), one turn = one message (``dia_id`` Dn:k = session n, seq k-1;
speaker A = user, speaker B = assistant; the turn text is ``Speaker: text``
as in a chat transcript, with any image caption appended). For every question of category 1-4 the question text is searched
within its conversation, and hit@k is 1 when any evidence turn is among the
top k. The baseline is rank-bm25 (BM25Okapi) over lowercase word tokens with
the same stopwords removed, on the same turn texts.

With ``--database-url postgresql://...`` (or ``private``: a throw-away server) each conversation
is indexed into that database instead (a fresh schema, dropped at the end) and searched there:
the same search code on the PostgreSQL engine, for comparing the figures of the engines (at
either level; ``scripts/eval_store.py``).

With ``--level session`` the question is asked as an agent asks it, through the
``session_search`` tool on a home holding the conversation (SQLite): session hit@1/5/10 and
MRR (an evidence session among the first k sessions of a ``limit=10`` call), all@5 (every
evidence session among the first 5), and evidence ``any``/``share`` (whether any evidence
turn, and which share of them, is among the messages one ``limit=5`` call returns), per
category. With ``--semantic MODEL`` the calls run on the fused ranking, reranked by
``--reranker`` (default ``auto``: ``bundled:ms-marco-MiniLM-L-12-v2`` when installed; ``none``
for the fused ranking alone), as in ``scripts/eval_longmemeval.py``.

Usage: .venv/bin/python scripts/eval_locomo.py [--data DIR|FILE] [--k 5 10] [--json] [--database-url URL|private]
       .venv/bin/python scripts/eval_locomo.py --level session [--data DIR|FILE] [--json] [--database-url URL|private]
                 [--semantic MODEL [--semantic-cache DIR] [--reranker auto|none|MODEL]]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmark_data import locomo_conversations, run_script
from eval_store import fresh_home, reset_schema, schema_url
from rank_bm25 import BM25Okapi

from hermes_store.db import Database
from hermes_store.query import STOPWORDS
from hermes_store.sessions.search import find_hits, search_messages
from hermes_store.tokens import cjk_projection, tokenize

DEFAULT_DATA = Path("/work/shared/data/locomo")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_DIA = re.compile(r"D(\d+):(\d+)")


def parse_date(text: str) -> float | None:
    """LoCoMo's ``1:56 pm on 8 May, 2023`` as epoch seconds (UTC), None when unreadable."""
    try:
        moment = datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y")
    except (TypeError, ValueError):
        return None
    return moment.replace(tzinfo=timezone.utc).timestamp()


def turns_of(conv: dict) -> list[tuple[int, int, str, str, float | None]]:
    """``(session_no, seq, role, text, timestamp)`` for every turn of a conversation."""
    out = []
    speaker_a = conv.get("speaker_a")
    numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    for n in numbers:
        start = parse_date(conv.get(f"session_{n}_date_time", ""))
        for i, turn in enumerate(conv[f"session_{n}"]):
            match = _DIA.fullmatch(str(turn.get("dia_id", "")))
            seq = int(match.group(2)) - 1 if match else i
            text = turn.get("text") or ""
            if turn.get("blip_caption"):
                text += f" [image: {turn['blip_caption']}]"
            if turn.get("speaker"):
                text = f"{turn['speaker']}: {text}"
            role = "user" if turn.get("speaker") == speaker_a else "assistant"
            ts = None if start is None else start + seq * 30.0
            out.append((n, seq, role, text, ts))
    return out


def _index_sqlite(db: Database, name: str, turns: list) -> None:
    with db.write():
        for n in sorted({t[0] for t in turns}):
            first = next(t for t in turns if t[0] == n)
            db.execute(
                "INSERT INTO sessions(id, origin_format, source, title, started_at, message_count) "
                "VALUES (?, 'locomo', 'cli', NULL, ?, ?)",
                (f"{name}-s{n}", first[4], sum(1 for t in turns if t[0] == n)),
            )
        db.executemany(
            "INSERT INTO messages(session_id, seq, role, content, timestamp, cjk) VALUES (?,?,?,?,?,?)",
            [(f"{name}-s{n}", seq, role, text, ts, cjk_projection(text)) for n, seq, role, text, ts in turns],
        )
        db.execute("INSERT INTO messages_fts(messages_fts) VALUES('rebuild')")


def _index_postgresql(db: Any, name: str, turns: list) -> None:
    with db.transaction():
        sessions = []
        for n in sorted({t[0] for t in turns}):
            first = next(t for t in turns if t[0] == n)
            sessions.append((f"{name}-s{n}", "locomo", "cli", first[4], sum(1 for t in turns if t[0] == n)))
        db.copy_rows("COPY sessions (id, origin_format, source, started_at, message_count) FROM STDIN", sessions)
        db.copy_rows("COPY messages (session_id, seq, role, content, timestamp, cjk) FROM STDIN",
                     [(f"{name}-s{n}", seq, role, text, ts, cjk_projection(text))
                      for n, seq, role, text, ts in turns])
    db.execute("ANALYZE")


#: How each engine's store takes a conversation's rows (by ``db.engine``).
INDEXERS = {"sqlite": _index_sqlite, "postgresql": _index_postgresql}


def index_conversation(db: Any, name: str, turns: list) -> None:
    """Write one conversation into the store's session index (either engine)."""
    INDEXERS[db.engine](db, name, turns)


PG_SCHEMA = "locomo_eval"


def open_pg_conversation(url: str, name: str, turns: list):
    """A fresh PostgreSQL store (schema ``locomo_eval`` of ``url``) holding one conversation."""
    from hermes_store.pgdb import PgDatabase

    reset_schema(url, schema=PG_SCHEMA)
    db = PgDatabase(schema_url(url, PG_SCHEMA))
    index_conversation(db, name, turns)
    return db


def bm25_tokens(text: str) -> list[str]:
    """Baseline tokens: lowercase words without stopwords."""
    return [t for t in (w.lower() for w in tokenize(text)) if t not in STOPWORDS]


def evidence_keys(qa: dict) -> set[tuple[int, int]]:
    """Evidence ``dia_id`` values as ``(session_no, seq)``."""
    keys = set()
    for ev in qa.get("evidence") or []:
        for s, k in _DIA.findall(str(ev)):
            keys.add((int(s), int(k) - 1))
    return keys


def _positions(result) -> list[tuple[int, int]]:
    return [(int(r["session_id"].rsplit("-s", 1)[1]), r["seq"]) for r in result.results]


def evaluate(data: Path, ks: list[int], database_url: str | None = None) -> dict:
    """Run both systems over every conversation; return the score table (on PostgreSQL when
    ``database_url`` is given, else on a temporary SQLite file)."""
    top = max(ks)
    totals: dict[str, dict] = {}
    timings: list[float] = []

    def add(system: str, category: int, ranked: list[tuple[int, int]], gold: set) -> None:
        for cat in (category, 0):
            bucket = totals.setdefault(system, {}).setdefault(cat, {"n": 0, **{k: 0 for k in ks}})
            bucket["n"] += 1
            for k in ks:
                bucket[k] += bool(gold & set(ranked[:k]))

    for name, conv in locomo_conversations(data):
        turns = turns_of(conv)
        keys = [(t[0], t[1]) for t in turns]
        bm25 = BM25Okapi([bm25_tokens(t[3]) or ["_"] for t in turns])
        with tempfile.TemporaryDirectory() as tmp:
            if database_url:
                db = open_pg_conversation(database_url, name, turns)
            else:
                db = Database(Path(tmp) / "locomo.db")
                index_conversation(db, name, turns)
            for qa in conv.get("qa", []):
                category = qa.get("category")
                gold = evidence_keys(qa)
                if category not in CATEGORIES or not gold:
                    continue
                question = qa["question"]
                began = time.perf_counter()
                result = search_messages(db, question, limit=top)
                timings.append(time.perf_counter() - began)
                add("hermes_store search", category, _positions(result), gold)
                expanded = search_messages(db, question, limit=top, expand_context=True)
                add("hermes_store search, expand_context", category, _positions(expanded), gold)
                plain, _note, _mode = find_hits(db, question, limit=top, smooth=False)
                add("ablation: no context smoothing", category,
                    [(int(h.session_id.rsplit("-s", 1)[1]), h.seq) for h in plain], gold)
                scores = bm25.get_scores(bm25_tokens(question))
                order = sorted(range(len(turns)), key=lambda i: -scores[i])[:top]
                add("bm25 (rank-bm25)", category, [keys[i] for i in order], gold)
            db.close()
    if database_url:
        reset_schema(database_url, create=False, schema=PG_SCHEMA)
    timings.sort()
    return {"engine": "postgresql" if database_url else "sqlite", "totals": totals, "ks": ks,
            "p50_ms": 1000 * timings[len(timings) // 2] if timings else 0.0,
            "p95_ms": 1000 * timings[int(len(timings) * 0.95)] if timings else 0.0}


SESSION_COLUMNS = ("hit@1", "hit@5", "hit@10", "mrr", "all@5", "evidence_any", "evidence_share")


def evaluate_sessions(data: Path, semantic: Any = None, database_url: str | None = None) -> dict:
    """Session-level figures through the ``session_search`` tool (see the module docstring), on
    a PostgreSQL store when ``database_url`` is given (``eval_store``)."""
    from hermes_store.tools import handle_tool_call

    totals: dict[int, dict[str, float]] = {}
    timings: list[float] = []
    for name, conv in locomo_conversations(data):
        turns = turns_of(conv)
        with tempfile.TemporaryDirectory() as tmp:
            home = fresh_home(Path(tmp), database_url)
            db = home.open_db()
            index_conversation(db, name, turns)
            where = {int(r["id"]): (int(r["session_id"].rsplit("-s", 1)[1]), int(r["seq"]))
                     for r in db.query("SELECT id, session_id, seq FROM messages")}
            if semantic is not None:
                semantic.prepare(home, db)
            db.close()
            for qa in conv.get("qa", []):
                category, gold = qa.get("category"), evidence_keys(qa)
                if category not in CATEGORIES or not gold:
                    continue
                began = time.perf_counter()
                ranked_reply = json.loads(handle_tool_call(
                    "session_search", {"query": qa["question"], "limit": 10}, home=home))
                timings.append(time.perf_counter() - began)
                read_reply = json.loads(handle_tool_call(
                    "session_search", {"query": qa["question"], "limit": 5}, home=home))
                ranked = [int(r["session_id"].rsplit("-s", 1)[1]) for r in ranked_reply.get("results", [])]
                shown = {where[int(m["id"])] for r in read_reply.get("results", [])
                         for part in ("bookend_start", "messages", "bookend_end")
                         for m in r.get(part) or [] if int(m["id"]) in where}
                sessions = {n for n, _ in gold}
                first = next((i for i, n in enumerate(ranked) if n in sessions), None)
                row = {f"hit@{k}": float(first is not None and first < k) for k in (1, 5, 10)}
                row["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
                row["all@5"] = float(sessions <= set(ranked[:5]))
                row["evidence_any"] = float(bool(gold & shown))
                row["evidence_share"] = len(gold & shown) / len(gold)
                for cat in (category, 0):
                    bucket = totals.setdefault(cat, {"n": 0.0})
                    bucket["n"] += 1
                    for key, value in row.items():
                        bucket[key] = bucket.get(key, 0.0) + value
    timings.sort()
    return {"level": "session", "engine": "postgresql" if database_url else "sqlite", "totals": totals,
            "p50_ms": 1000 * timings[len(timings) // 2] if timings else 0.0,
            "p95_ms": 1000 * timings[int(len(timings) * 0.95)] if timings else 0.0}


def print_session_table(report: dict) -> None:
    """Print the session-level figures per category (percentages except MRR)."""
    print("| category | n | " + " | ".join(SESSION_COLUMNS) + " |")
    print("|" + "---|" * (2 + len(SESSION_COLUMNS)))
    for cat in sorted(report["totals"], key=lambda c: (c == 0, c)):
        b = report["totals"][cat]
        label = "all (1-4)" if cat == 0 else f"{cat} {CATEGORIES[cat]}"
        cells = [f"{b.get(c, 0.0) / b['n']:.3f}" if c == "mrr" else f"{100 * b.get(c, 0.0) / b['n']:.1f}"
                 for c in SESSION_COLUMNS]
        print(f"| {label} | {int(b['n'])} | " + " | ".join(cells) + " |")
    print(f"\nengine: {report.get('engine', 'sqlite')}; session_search latency per question: "
          f"p50 {report['p50_ms']:.2f} ms, p95 {report['p95_ms']:.2f} ms")


def print_table(report: dict) -> None:
    """Print hit@k per system and category as a Markdown table."""
    ks = report["ks"]
    header = "| system | category | n | " + " | ".join(f"hit@{k}" for k in ks) + " |"
    print(header)
    print("|" + "---|" * (3 + len(ks)))
    for system, cats in report["totals"].items():
        for cat in sorted(cats, key=lambda c: (c == 0, c)):
            b = cats[cat]
            label = "all (1-4)" if cat == 0 else f"{cat} {CATEGORIES[cat]}"
            cells = " | ".join(f"{b[k] / b['n']:.3f}" for k in ks)
            print(f"| {system} | {label} | {b['n']} | {cells} |")
    print(f"\nengine: {report.get('engine', 'sqlite')}; hermes_store search latency per question: p50 {report['p50_ms']:.2f} ms, "
          f"p95 {report['p95_ms']:.2f} ms")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--k", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--json", action="store_true", help="print the raw report as JSON")
    parser.add_argument("--database-url", default=None, metavar="URL",
                        help="index and search on this PostgreSQL database (a schema of its own,"
                             " dropped at the end; 'private': a throw-away server for this run)")
    parser.add_argument("--level", choices=("turn", "session"), default="turn",
                        help="turn: evidence turns among the top-k messages (default); session: "
                             "through the session_search tool, per session")
    parser.add_argument("--semantic", default=None, metavar="MODEL",
                        help="with --level session: also embed with MODEL and search with the fusion")
    parser.add_argument("--semantic-cache", type=Path, default=None, metavar="DIR",
                        help="with --semantic: vectors of texts already in DIR (scripts/semantic_cache.py) are read, not computed")
    from eval_semantic import add_reranker_argument, chosen_reranker

    add_reranker_argument(parser)
    parser.add_argument("--semantic-set", action="append", default=[], metavar="KEY=VALUE",
                        help="with --semantic: a further semantic: setting of config.yaml "
                             "(gate, lead, window), repeatable")
    parser.add_argument("--semantic-roles", default="user,assistant", metavar="ROLES",
                        help="with --semantic: the roles embedded, semantic.roles of config.yaml "
                             "(default %(default)s: LoCoMo's two speakers are both people; the second is stored as the assistant)")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"error: {args.data}: no such file or directory", file=sys.stderr)
        return 2
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_pgserver import database_url

    if args.level == "session":
        semantic = None
        if args.semantic:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from eval_semantic import SemanticSetup

            semantic = SemanticSetup(args.semantic, dict(kv.split("=", 1) for kv in args.semantic_set),
                                     reranker=chosen_reranker(args.reranker), cache=args.semantic_cache,
                                     roles=tuple(r.strip() for r in args.semantic_roles.split(",") if r.strip()))
        with database_url(args.database_url) as url:
            try:
                report = evaluate_sessions(args.data, semantic, url)
            finally:
                if url:
                    reset_schema(url, create=False)
        if semantic is not None:
            report["semantic"] = semantic.summary()
        if args.json:
            print(json.dumps(report, indent=2, default=str))
        else:
            print_session_table(report)
            if semantic is not None:
                print(report["semantic"])
        return 0
    with database_url(args.database_url) as url:
        report = evaluate(args.data, sorted(set(args.k)), url)
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print_table(report)
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
