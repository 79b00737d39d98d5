#!/usr/bin/env python3
"""Search latency on a synthetic session corpus: hermes_store vs ``grep -r -i -F``.

Builds (or reuses) a corpus of Hermes-style JSONL transcripts, indexes it with
the session loader, then times a mixed query set (rare words, common words,
phrases, CJK, natural-language questions, punctuation-heavy literals) through
``search_messages`` (limit 10) and through ``grep -r -i -F`` over the same
files. Prints p50/p95/p99 per query class and overall.

The corpus is written by ``scripts/bench_ingest.py``'s ``CorpusWriter`` (so
both benchmarks share one corpus); when that script is missing, the built-in
generator below writes the same JSONL shape.

With ``--database-url postgresql://...`` the same corpus is also indexed into that database
(in the schema ``bench_search``, kept between runs like the SQLite file) and every query is
timed there too, so the two engines' figures come from the same run.

Usage: .venv/bin/python scripts/bench_search.py [--messages 20000] [--work DIR] [--repeat 5]
                                                [--database-url URL|private]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

from hermes_store.db import Database
from hermes_store.sessions.loader import BulkLoader
from hermes_store.sessions.search import search_messages

SCRIPTS = Path(__file__).resolve().parent
SOURCES = [("cli", 0.7), ("telegram", 0.15), ("cron", 0.1), ("subagent", 0.05)]
TECH = ("deploy docker build error config server database migration test branch commit cache "
        "network timeout memory python rust index query latency release backup cluster token").split()
CJK_LINES = ["修改youer服务端的配置", "数据库迁移失败了", "广西桂林的天气很好", "東京の天気は晴れです",
             "请检查日志文件", "我喜欢用Python写数据库代码"]
TRICKY = ["scripts/deploy.sh", "C:\\Users\\bob\\app.log", "TODO: fix", "P2.2", "bob@example.com",
          "ask-codex", "50% done"]
SYLLABLES = "ka ri to mo na shi ve lo pra en dor mu zel qui fa gon tri bel os ux".split()


def _vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return TECH + sorted(words)


def builtin_generate(directory: Path, messages: int, seed: int = 7) -> Path:
    """Write ``messages`` messages as Hermes JSONL transcripts under ``directory``."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(vocab))]
    cumulative = []
    total = 0.0
    for w in weights:
        total += w
        cumulative.append(total)
    directory.mkdir(parents=True, exist_ok=True)
    written, number = 0, 0
    clock = 1_700_000_000.0
    while written < messages:
        number += 1
        count = min(messages - written, rng.randint(10, 150))
        source = rng.choices([s for s, _ in SOURCES], [w for _, w in SOURCES])[0]
        sid = f"20240101_000000_{number:08x}"
        lines = [json.dumps({"role": "session_meta", "platform": source, "model": "bench",
                             "timestamp": clock, "title": " ".join(rng.choices(vocab[:300], k=3))})]
        for i in range(count):
            words = rng.choices(vocab, cum_weights=cumulative, k=rng.randint(5, 60))
            roll = rng.random()
            if roll < 0.02:
                words.insert(rng.randrange(len(words)), rng.choice(CJK_LINES))
            elif roll < 0.04:
                words.insert(rng.randrange(len(words)), rng.choice(TRICKY))
            clock += rng.uniform(5, 120)
            lines.append(json.dumps({"role": "user" if i % 2 == 0 else "assistant",
                                     "content": " ".join(words), "timestamp": clock}, ensure_ascii=False))
        (directory / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        written += count
        clock += rng.uniform(600, 86400)
    return directory


def _bench_ingest():
    """The ``scripts/bench_ingest.py`` module, or None when it is missing or broken."""
    path = SCRIPTS / "bench_ingest.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("bench_ingest", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception:  # noqa: BLE001 - fall back to the built-in generator
        return None
    return module


def generate(directory: Path, messages: int, seed: int | None) -> str:
    """Write the corpus with bench_ingest's CorpusWriter when available; return which generator ran."""
    module = _bench_ingest()
    if module is not None and hasattr(module, "CorpusWriter"):
        writer = module.CorpusWriter(directory, messages, seed if seed is not None else module.SEED)
        writer.write()
        return "bench_ingest.CorpusWriter"
    builtin_generate(directory, messages, seed if seed is not None else 7)
    return "built-in"


def _cjk_queries() -> list[str]:
    """2- and 3-character CJK words taken from the corpus generator's sentences."""
    module = _bench_ingest()
    lines = list(getattr(module, "CJK_SENTENCES", CJK_LINES)) if module is not None else CJK_LINES
    out = []
    for i, line in enumerate(lines[:6]):
        size = 2 + i % 2
        out.append(line[1:1 + size])
    return out


def query_set(db: Database) -> dict[str, list[str]]:
    """The mixed query set; rare/common words are chosen from the indexed vocabulary."""
    vocab = [r[0] for r in db.iter_rows(
        "SELECT term, doc FROM messages_fts_bench_vocab WHERE col = 'search_content' ORDER BY doc DESC")]
    words = [w for w in vocab if w.isalpha() and w.isascii() and len(w) > 3]
    common = words[:8]
    rare = words[len(words) // 2: len(words) // 2 + 12]
    return {
        "rare": rare,
        "common": common,
        "phrase": [f'"{a} {b}"' for a, b in zip(common[:4], common[4:8], strict=False)],
        "cjk": _cjk_queries(),
        "question": ["how did we fix the docker build error?", "what was the database migration plan",
                     "why does the server timeout after deploy", "which branch had the cache regression",
                     f"when did we talk about {rare[0]} and {rare[1]}?"],
        "literal": ["scripts/deploy.sh", "C:\\Users", "TODO: fix", f"src/{common[0]}/{rare[2]}.py",
                    f"notes/{rare[3]}.md", "youer服务端"],
    }


def _open_pg(url: str, corpus: Path, fresh: bool):
    """The PostgreSQL store in schema ``bench_search`` of ``url``, indexed from ``corpus``."""
    from urllib.parse import quote

    from hermes_store.pgdb import PgDatabase

    with PgDatabase(url, migrate=False) as admin:
        if fresh:
            admin.execute("DROP SCHEMA IF EXISTS bench_search CASCADE")
        admin.execute("CREATE SCHEMA IF NOT EXISTS bench_search")
    pg = PgDatabase(url + ("&" if "?" in url else "?") + "options=" + quote("-csearch_path=bench_search"))
    if not int(pg.scalar("SELECT count(*) FROM messages") or 0):
        began = time.perf_counter()
        BulkLoader(pg).run([corpus])
        pg.execute("ANALYZE")
        print(f"indexed into PostgreSQL in {time.perf_counter() - began:.1f}s", file=sys.stderr)
    return pg


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    """p50, p95, p99 in milliseconds."""
    ordered = sorted(samples)

    def pick(q: float) -> float:
        return 1000 * ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]

    return pick(0.50), pick(0.95), pick(0.99)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000, help="corpus size in messages")
    parser.add_argument("--work", type=Path, default=Path("/tmp/hermes_store_bench_search"))
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per query (ours)")
    parser.add_argument("--grep-repeat", type=int, default=1, help="timed runs per query (grep)")
    parser.add_argument("--seed", type=int, default=None, help="corpus seed (generator default)")
    parser.add_argument("--fresh", action="store_true", help="rebuild corpus and index")
    parser.add_argument("--database-url", default=None, metavar="URL",
                        help="also time the queries on PostgreSQL (schema bench_search of this database;"
                             " 'private': a throw-away server for this run)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(SCRIPTS))
    from bench_pgserver import database_url

    with database_url(args.database_url) as url:
        args.database_url = url
        return run(args)


def run(args: argparse.Namespace) -> int:
    """One benchmark run with parsed arguments (``database_url`` already resolved)."""
    work = args.work / str(args.messages)
    corpus, db_path = work / "corpus", work / "bench.db"
    if args.fresh and work.exists():
        shutil.rmtree(work)
    if not corpus.exists():
        began = time.perf_counter()
        which = generate(corpus, args.messages, args.seed)
        print(f"generated {args.messages:,} messages with {which} in {time.perf_counter() - began:.1f}s",
              file=sys.stderr)
    db = Database(db_path)
    if not db.scalar("SELECT count(*) FROM messages"):
        began = time.perf_counter()
        BulkLoader(db).run([corpus])
        print(f"indexed in {time.perf_counter() - began:.1f}s", file=sys.stderr)
    total = db.scalar("SELECT count(*) FROM messages")
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.messages_fts_bench_vocab "
               "USING fts5vocab(main, messages_fts, col)")
    queries = query_set(db)
    pg = _open_pg(args.database_url, corpus, args.fresh) if args.database_url else None

    ours: dict[str, list[float]] = {}
    on_pg: dict[str, list[float]] = {}
    grep: dict[str, list[float]] = {}
    partial: list[str] = []  # PostgreSQL queries that stopped at the walk's time budget
    for cls, items in queries.items():
        for text in items:
            search_messages(db, text, limit=10)  # warm the page cache
            for _ in range(args.repeat):
                began = time.perf_counter()
                search_messages(db, text, limit=10)
                ours.setdefault(cls, []).append(time.perf_counter() - began)
            if pg is not None:
                note = search_messages(pg, text, limit=10).note or ""
                if "results are partial" in note:
                    partial.append(text)
                for _ in range(args.repeat):
                    began = time.perf_counter()
                    search_messages(pg, text, limit=10)
                    on_pg.setdefault(cls, []).append(time.perf_counter() - began)
            needle = text.strip('"')
            for _ in range(args.grep_repeat):
                began = time.perf_counter()
                subprocess.run(["grep", "-r", "-i", "-F", "-l", "--", needle, str(corpus)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                grep.setdefault(cls, []).append(time.perf_counter() - began)
    db.close()
    if pg is not None:
        pg.close()

    size_mb = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file()) / 1e6
    print(f"corpus: {total:,} messages, {size_mb:.0f} MB JSONL; index {db_path.stat().st_size / 1e6:.0f} MB")
    pg_head = " PostgreSQL p50 / p95 / p99 (ms) |" if pg is not None else ""
    print(f"| class | queries | hermes_store p50 / p95 / p99 (ms) |{pg_head} grep -r -i -F p50 / p95 / p99 (ms) |")
    print("|---|---|---|---|" + ("---|" if pg is not None else ""))
    for cls in [*queries, "all"]:
        mine = sum(ours.values(), []) if cls == "all" else ours[cls]
        theirs = sum(grep.values(), []) if cls == "all" else grep[cls]
        n = sum(len(v) for v in queries.values()) if cls == "all" else len(queries[cls])
        a, b = percentiles(mine), percentiles(theirs)
        pg_cell = ""
        if pg is not None:
            c = percentiles(sum(on_pg.values(), []) if cls == "all" else on_pg[cls])
            pg_cell = f" {c[0]:.1f} / {c[1]:.1f} / {c[2]:.1f} |"
        print(f"| {cls} | {n} | {a[0]:.1f} / {a[1]:.1f} / {a[2]:.1f} |{pg_cell} "
              f"{b[0]:.0f} / {b[1]:.0f} / {b[2]:.0f} |")
    if pg is not None:
        print(f"PostgreSQL: {len(partial)} of {sum(len(v) for v in queries.values())} queries returned "
              f"partial results (time budget){': ' + ', '.join(partial) if partial else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
