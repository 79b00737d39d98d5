#!/usr/bin/env python3
"""Benchmark ``hermes-store sessions index`` against the raw FTS5 limit and the naive way.

1. Generates a deterministic, realistic corpus of N messages as Hermes JSONL
   session files: user questions, assistant prose (from real docstrings of the
   Python standard library), tool calls with JSON arguments, tool outputs cut
   from real stdlib source files, ~2 % CJK messages.
2. Measures, each in a fresh subprocess (peak RSS from getrusage):
   * ``ours``          -- the bulk loader as ``sessions index`` runs it (batched
                          transactions, FTS rows indexed per batch by INSERT..SELECT);
   * ``ours-trigger``  -- the same loader keeping the per-row FTS trigger (for the
                          trigger-vs-batch decision);
   * ``raw-fts5``      -- the engine limit: parse the same JSONL and executemany the
                          message texts into a bare FTS5 table, 20k rows per transaction;
   * ``raw-fts5-tuned``-- the same with the store's bulk settings on that table (64 MiB page
                          cache, FTS5 ``hashsize`` 16 MiB): the stricter limit (not a default mode);
   * ``naive``         -- per-message inserts through the live API, one transaction
                          per message, FTS by trigger (measured on the first
                          ``--naive-sample`` messages; the rate is what counts).
3. Prints a table: msgs/s, ratio to raw, peak RSS, DB size vs raw text.

With ``--database-url postgresql://...`` two PostgreSQL modes run beside the SQLite ones
(each in a fresh schema of that database, dropped afterwards):
   * ``raw-copy``      -- the engine limit on that server: the same JSONL parsed and COPYed,
                          20k rows per transaction, into the store's own table layout
                          (tsvector column + GIN index included);
   * ``ours-pg``       -- the bulk loader writing to PostgreSQL (COPY per batch).
``ours-pg`` is compared with ``raw-copy`` (the "vs raw" column), the SQLite modes with
``raw-fts5``.

What the SQLite comparison weighs (both directions). ``raw-fts5`` is SQLite as shipped: one
thread, default page cache (2 MiB) and FTS5 defaults (1 MiB ``hashsize``), one column, the
``unicode61`` tokenizer, every message's full text indexed. ``ours`` does more per message: it
stores nine columns under a UNIQUE (session_id, seq) index with a foreign key and an insert
trigger, tracks sessions and per-file resume state, runs format detection, and indexes two
columns through the ``porter`` stemmer; it does less in one place: tool output is indexed up to
8 KiB (the rest is stored, not indexed). It also has what raw has not: a parser thread beside the
writer thread, a 64 MiB cache on the writing connection and ``hashsize`` 16 MiB
(schema/0008). So on a loaded machine, where the two threads do not get two cores, the figure
follows the CPU columns; ``raw-fts5-tuned`` shows the limit with the same cache and FTS5
settings, for a reader who wants the tuning out of the comparison.

``--redact-compare`` adds ``ours-noredact`` (the loader with ``store.redact: false``) and prints
the redaction cost as ours / ours-noredact.

Usage: scripts/bench_ingest.py [--messages 100000] [--workdir DIR] [--keep] [--redact-compare]
                               [--database-url URL|private] [--modes raw-fts5,ours,raw-copy,ours-pg]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

SEED = 20260401
BATCH = 20_000
CJK_SENTENCES = [
    "请帮我检查一下服务器的日志文件", "这个函数的返回值为什么是空的", "数据库连接超时了，怎么处理",
    "我们明天下午三点开会讨论部署计划", "桂林的山水很美，下次一起去旅游吧", "把配置文件里的端口改成八零八零",
    "今日は東京で雨が降っています", "このスクリプトはどこで実行されますか", "テストが失敗した原因を調べてください",
    "서버 재시작 후에도 오류가 계속 발생합니다", "회의록을 정리해서 공유해 주세요", "修改youer服务端的缓存策略",
    "上海和北京的天气都不错", "请把这段代码翻译成英文注释", "内存占用太高，需要优化",
]
TOOLS = ("terminal", "read_file", "search_files", "web_search", "write_file")


# --------------------------------------------------------------------------- corpus


def _text_pool(limit_files: int = 400) -> tuple[list[str], list[str], list[str]]:
    """(docstring sentences, source file texts, vocabulary) from the Python stdlib."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.glob("*.py"))[:limit_files]
    sentences: list[str] = []
    sources: list[str] = []
    vocab: set[str] = set()
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        sources.append(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if not doc:
                    continue
                for part in doc.replace("\n", " ").split(". "):
                    part = " ".join(part.split())
                    if 25 <= len(part) <= 400:
                        sentences.append(part.rstrip(".") + ".")
                        vocab.update(w.strip(".,:;()`'\"").lower() for w in part.split()
                                     if w.isascii() and w.strip(".,:;()`'\"").isalpha() and len(w) > 4)
    return sentences, sources, sorted(vocab)


class CorpusWriter:
    """Writes N messages of Hermes JSONL sessions; tracks the raw text size."""

    def __init__(self, root: Path, messages: int, seed: int = SEED) -> None:
        self.root = root
        self.target = messages
        self.rng = random.Random(seed)
        self.sentences, self.sources, self.vocab = _text_pool()
        self.raw_bytes = 0
        self.written = 0
        self.sessions = 0

    def _cjk(self) -> str:
        return "，".join(self.rng.sample(CJK_SENTENCES, self.rng.randint(1, 3))) + "。"

    def _prose(self, lo: int, hi: int) -> str:
        if self.rng.random() < 0.02:
            return self._cjk()
        return " ".join(self.rng.choice(self.sentences) for _ in range(self.rng.randint(lo, hi)))

    def _question(self) -> str:
        if self.rng.random() < 0.02:
            return self._cjk()
        words = self.rng.sample(self.vocab, 3)
        forms = ("How do I {0} the {1} when {2} fails?", "Why is {0} slower than {1} for {2}?",
                 "Can you explain {0} and {1}? {3}", "Find where {0} handles {1} in the {2} module.",
                 "{3} What does that mean for {0}?")
        return self.rng.choice(forms).format(*words, self.rng.choice(self.sentences))

    def _tool_output(self) -> str:
        text = self.rng.choice(self.sources)
        size = self.rng.choice((200, 600, 1500, 3000, 6000)) if self.rng.random() > 0.03 else 30000
        start = self.rng.randrange(max(1, len(text) - size))
        return text[start:start + size]

    def _tool_call(self, call_id: str) -> dict:
        tool = self.rng.choice(TOOLS)
        words = self.rng.sample(self.vocab, 2)
        args = {"terminal": {"command": f"grep -rn {words[0]} src/ | head -50"},
                "read_file": {"path": f"src/{words[0]}/{words[1]}.py", "offset": self.rng.randint(0, 500)},
                "search_files": {"pattern": f"def {words[0]}", "path": "."},
                "web_search": {"query": f"{words[0]} {words[1]} python"},
                "write_file": {"path": f"notes/{words[0]}.md", "content": self._prose(1, 2)}}[tool]
        return {"id": call_id, "type": "function",
                "function": {"name": tool, "arguments": json.dumps(args)}}

    def _session(self, count: int) -> list[dict]:
        rng = self.rng
        now = 1767225600 + self.sessions * 5400 + rng.randint(0, 3000)
        out: list[dict] = []
        while len(out) < count:
            out.append({"role": "user", "content": self._question(), "timestamp": now})
            now += rng.randint(5, 120)
            for _ in range(rng.choice((0, 1, 1, 2, 3))):
                if len(out) + 2 > count:
                    break
                call = self._tool_call(f"call_{len(out)}")
                out.append({"role": "assistant", "content": "", "tool_calls": [call],
                            "finish_reason": "tool_calls", "timestamp": now})
                out.append({"role": "tool", "tool_call_id": call["id"], "content": self._tool_output(),
                            "timestamp": now + 1})
                now += rng.randint(2, 30)
            if len(out) < count:
                out.append({"role": "assistant", "content": self._prose(2, 8), "finish_reason": "stop",
                            "timestamp": now})
                now += rng.randint(30, 600)
        return out[:count]

    def write(self) -> None:
        sessions_dir = self.root / "sessions"
        sessions_dir.mkdir(parents=True, exist_ok=True)
        while self.written < self.target:
            count = min(self.target - self.written, self.rng.randint(8, 90))
            sid = f"20260101_{self.sessions // 3600 % 24:02d}{self.sessions // 60 % 60:02d}" \
                  f"{self.sessions % 60:02d}_{self.sessions:06x}"
            meta = {"role": "session_meta", "model": "nous/hermes-4", "platform": "cli",
                    "timestamp": 1767225600 + self.sessions * 5400}
            lines = [json.dumps(meta)]
            for message in self._session(count):
                self.raw_bytes += len(message["content"].encode("utf-8"))
                if "tool_calls" in message:
                    self.raw_bytes += len(json.dumps(message["tool_calls"]).encode("utf-8"))
                lines.append(json.dumps(message, ensure_ascii=False))
            (sessions_dir / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
            self.written += count
            self.sessions += 1


# --------------------------------------------------------------------------- runners (child side)


def _db_bytes(path: Path) -> int:
    return sum(os.path.getsize(str(path) + s) for s in ("", "-wal") if os.path.exists(str(path) + s))


def run_ours(corpus: Path, db_path: Path, fts_mode: str, redact: bool = True) -> tuple[int, float]:
    """Returns (messages, CPU seconds of the writer thread); ``redact=False`` as with
    ``store.redact: false`` (secrets stored as they came)."""
    from hermes_store.db import Database
    from hermes_store.redaction import RedactionSettings
    from hermes_store.sessions.loader import BulkLoader

    with Database(db_path) as db:
        db.redaction_settings = RedactionSettings(enabled=redact)
        loader = BulkLoader(db, fts_mode=fts_mode)
        summary = loader.run([corpus])
        if summary.errors:
            raise SystemExit(f"import errors: {summary.errors[:3]}")
        return summary.messages_added, loader.writer_cpu_seconds


RAW_TUNED_HASHSIZE = 16 * 1024 * 1024  # messages_fts's 'hashsize' (schema/0008_fts_bulk_hash.sql)


def run_raw(corpus: Path, db_path: Path, tuned: bool = False) -> int:
    from hermes_store.db import Database
    from hermes_store.sessions.storage_sqlite import CACHE_KIB

    with Database(db_path, migrate=False) as db:
        db.execute("CREATE VIRTUAL TABLE fts USING fts5(content, tokenize='unicode61 remove_diacritics 2')")
        if tuned:  # the bulk writer's settings, nothing else
            db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            db.execute(f"INSERT INTO fts(fts, rank) VALUES ('hashsize', {RAW_TUNED_HASHSIZE})")
        rows: list[tuple[str]] = []
        total = 0

        def flush() -> None:
            with db.write():
                db.executemany("INSERT INTO fts(content) VALUES (?)", rows)

        for path in sorted((corpus / "sessions").glob("*.jsonl")):
            with open(path, "rb") as handle:
                for raw in handle:
                    obj = json.loads(raw)
                    if obj.get("role") == "session_meta":
                        continue
                    rows.append((obj.get("content") or "",))
                    if len(rows) >= BATCH:
                        flush()
                        total += len(rows)
                        rows = []
        if rows:
            flush()
            total += len(rows)
        return total


def _pg_messages(corpus: Path):
    """(session_id, meta line) per file, then message rows in the store's COPY column order."""
    from hermes_store.sessions.rows import cjk_for

    for path in sorted((corpus / "sessions").glob("*.jsonl")):
        rows = []
        with open(path, "rb") as handle:
            for raw in handle:
                obj = json.loads(raw)
                if obj.get("role") == "session_meta":
                    continue
                content = obj.get("content") or ""
                calls = obj.get("tool_calls")
                rows.append((path.stem, len(rows), obj["role"], content, None,
                             json.dumps(calls) if calls is not None else None, obj.get("tool_call_id"),
                             obj.get("timestamp"), cjk_for(obj["role"], content)))
        yield path.stem, rows


def run_raw_copy(corpus: Path, url: str) -> int:
    """COPY every message into the store's PostgreSQL layout, 20k rows per transaction."""
    from hermes_store.pgdb import PgDatabase

    total = 0
    with PgDatabase(url) as db:
        pending: list[tuple] = []
        sessions: list[tuple] = []

        def flush() -> None:
            with db.transaction():
                db.execute("SET LOCAL statement_timeout = 600000")  # as the bulk loader's batches
                db.copy_rows("COPY sessions (id, origin_format) FROM STDIN", sessions)
                db.copy_rows("COPY messages (session_id, seq, role, content, tool_name, tool_calls,"
                             " tool_call_id, timestamp, cjk) FROM STDIN", pending)

        for session_id, rows in _pg_messages(corpus):
            sessions.append((session_id, "hermes-jsonl"))
            pending.extend(rows)
            if len(pending) >= BATCH:
                flush()
                total += len(pending)
                pending, sessions = [], []
        if pending or sessions:
            flush()
            total += len(pending)
    return total


def run_ours_pg(corpus: Path, url: str) -> tuple[int, float]:
    """The bulk loader writing to PostgreSQL; (messages, CPU seconds of the writer thread)."""
    from hermes_store.pgdb import PgDatabase
    from hermes_store.sessions.loader import BulkLoader

    with PgDatabase(url) as db:
        loader = BulkLoader(db)
        summary = loader.run([corpus])
        if summary.errors:
            raise SystemExit(f"import errors: {summary.errors[:3]}")
        return summary.messages_added, loader.writer_cpu_seconds


def _pg_bytes(url: str) -> int:
    from hermes_store.pgdb import PgDatabase

    with PgDatabase(url, migrate=False) as db:
        return int(db.scalar(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = current_schema() AND c.relkind = 'r'") or 0)


PG_MODES = ("raw-copy", "ours-pg")


def _schema_url(url: str, schema: str) -> str:
    """``url`` with its search_path set to ``schema`` (a constant made by this script)."""
    from urllib.parse import quote

    return url + ("&" if "?" in url else "?") + "options=" + quote(f"-csearch_path={schema}")


def _fresh_schema(url: str, schema: str, *, drop_only: bool = False) -> None:
    from hermes_store.pgdb import PgDatabase

    with PgDatabase(url, migrate=False) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        if not drop_only:
            db.execute(f"CREATE SCHEMA {schema}")


def run_naive(corpus: Path, db_path: Path, sample: int) -> int:
    from hermes_store.db import Database
    from hermes_store.sessions.live import SessionIndex

    done = 0
    with Database(db_path) as db:
        index = SessionIndex(db)
        for path in sorted((corpus / "sessions").glob("*.jsonl")):
            sid = None
            with open(path, "rb") as handle:
                for raw in handle:
                    obj = json.loads(raw)
                    if obj.get("role") == "session_meta":
                        sid = index.create_session(path.stem, model=obj.get("model"))
                        continue
                    index.append_message(sid, obj["role"], obj.get("content") or "",
                                         tool_calls=obj.get("tool_calls"),
                                         tool_call_id=obj.get("tool_call_id"),
                                         timestamp=obj.get("timestamp"))
                    done += 1
                    if done >= sample:
                        return done
    return done


def child_main(mode: str, corpus: Path, db_path: Path, sample: int) -> None:
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = usage0.ru_utime + usage0.ru_stime
    start = time.perf_counter()
    main0 = time.thread_time()
    writer_cpu = 0.0
    if mode == "raw-copy":
        count = run_raw_copy(corpus, str(db_path))
    elif mode == "ours-pg":
        count, writer_cpu = run_ours_pg(corpus, str(db_path))
    elif mode == "ours":
        count, writer_cpu = run_ours(corpus, db_path, "batch")
    elif mode == "ours-noredact":
        count, writer_cpu = run_ours(corpus, db_path, "batch", redact=False)
    elif mode == "ours-trigger":
        count, writer_cpu = run_ours(corpus, db_path, "trigger")
    elif mode == "raw-fts5":
        count = run_raw(corpus, db_path)
    elif mode == "raw-fts5-tuned":
        count = run_raw(corpus, db_path, tuned=True)
    elif mode == "naive":
        count = run_naive(corpus, db_path, sample)
    else:
        raise SystemExit(f"unknown mode {mode}")
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu0
    # with the writer on its own thread, the busiest thread bounds the wall time on idle cores
    critical = max(time.thread_time() - main0, writer_cpu) if writer_cpu else cpu
    size = _pg_bytes(str(db_path)) if mode in PG_MODES else _db_bytes(db_path)
    print(json.dumps({"mode": mode, "messages": count, "seconds": seconds, "cpu": cpu,
                      "critical": critical,
                      "rss_mb": usage.ru_maxrss / 1024.0, "db_bytes": size}))


# --------------------------------------------------------------------------- driver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--modes", default="raw-fts5,ours,ours-trigger,naive")
    parser.add_argument("--naive-sample", type=int, default=20_000)
    parser.add_argument("--redact-compare", action="store_true",
                        help="also run ours-noredact (store.redact: false) and print ours / ours-noredact")
    parser.add_argument("--repeat", type=int, default=1, help="rounds (interleaved); best wall time kept")
    parser.add_argument("--keep", action="store_true", help="keep the corpus and databases")
    parser.add_argument("--database-url", default=None, metavar="URL",
                        help="also measure PostgreSQL (modes raw-copy, ours-pg) in this database"
                             " ('private': a throw-away server for this run)")
    parser.add_argument("--child", nargs=3, metavar=("MODE", "CORPUS", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, corpus, db_path = args.child
        child_main(mode, Path(corpus), db_path if mode in PG_MODES else Path(db_path), args.naive_sample)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_pgserver import database_url

    with database_url(args.database_url) as url:
        args.database_url = url
        run(args, parser)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """One benchmark run with parsed arguments (``database_url`` already resolved)."""
    modes = args.modes.split(",")
    if args.redact_compare:
        modes += [m for m in ("ours", "ours-noredact") if m not in modes]
    if args.database_url and not any(m in PG_MODES for m in modes):
        modes += list(PG_MODES)
    if any(m in PG_MODES for m in modes) and not args.database_url:
        parser.error("modes raw-copy and ours-pg need --database-url")

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench_ingest_"))
    workdir.mkdir(parents=True, exist_ok=True)
    corpus = workdir / "corpus"
    manifest_path = workdir / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    if manifest.get("messages") != args.messages:
        shutil.rmtree(corpus, ignore_errors=True)
        started = time.perf_counter()
        writer = CorpusWriter(corpus, args.messages)
        writer.write()
        manifest = {"messages": writer.written, "sessions": writer.sessions, "raw_bytes": writer.raw_bytes,
                    "jsonl_bytes": sum(p.stat().st_size for p in (corpus / "sessions").glob("*.jsonl"))}
        manifest_path.write_text(json.dumps(manifest))
        print(f"corpus: {writer.written} messages in {writer.sessions} sessions, "
              f"{writer.raw_bytes / 1e6:.1f} MB of message text "
              f"({manifest['jsonl_bytes'] / 1e6:.1f} MB JSONL), generated in {time.perf_counter() - started:.1f}s",
              flush=True)
    best: dict[str, dict] = {}
    for round_no in range(args.repeat):
        for mode in modes:
            if mode in PG_MODES:
                schema = "bench_" + mode.replace("-", "_")
                _fresh_schema(args.database_url, schema)
                db_path = _schema_url(args.database_url, schema)
            else:
                db_path = workdir / f"{mode}.db"
                for suffix in ("", "-wal", "-shm"):
                    Path(str(db_path) + suffix).unlink(missing_ok=True)
            out = subprocess.run([sys.executable, __file__, "--child", mode, str(corpus), str(db_path),
                                  "--naive-sample", str(args.naive_sample)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{mode}: failed\n{out.stderr}", file=sys.stderr)
                continue
            result = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"  round {round_no + 1} {mode}: {result['messages']} messages in "
                  f"{result['seconds']:.1f}s wall, {result['cpu']:.1f}s CPU", flush=True)
            if mode not in best or result["seconds"] < best[mode]["seconds"]:
                best[mode] = result
    if args.database_url and not args.keep:
        for mode in modes:
            if mode in PG_MODES:
                _fresh_schema(args.database_url, "bench_" + mode.replace("-", "_"), drop_only=True)
    results = list(best.values())
    print(f"\n{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; best of {args.repeat} run(s)")
    print("| mode | messages | wall s | msgs/s | vs raw (FTS5 / COPY) | CPU s | vs raw (CPU) "
          "| busiest thread s | vs raw (busiest) | peak RSS MB | DB MB | DB / raw text |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        raw = best.get("raw-copy" if r["mode"] in PG_MODES else "raw-fts5")
        rate = r["messages"] / r["seconds"]
        cpu_rate = r["messages"] / max(r["cpu"], 1e-9)
        ratio = f"{rate / (raw['messages'] / raw['seconds']):.2f}x" if raw else "-"
        cpu_ratio = f"{cpu_rate / (raw['messages'] / raw['cpu']):.2f}x" if raw else "-"
        crit_ratio = f"{raw['cpu'] / r['critical'] * r['messages'] / raw['messages']:.2f}x" if raw else "-"
        # the naive run covers a sample only: its DB size is not comparable
        db_ratio = "-" if r["mode"] == "naive" else f"{r['db_bytes'] / manifest['raw_bytes']:.2f}"
        db_mb = "-" if r["mode"] == "naive" else f"{r['db_bytes'] / 1e6:.0f}"
        print(f"| {r['mode']} | {r['messages']} | {r['seconds']:.1f} | {rate:,.0f} | {ratio} | "
              f"{r['cpu']:.1f} | {cpu_ratio} | {r['critical']:.1f} | {crit_ratio} | {r['rss_mb']:.0f} "
              f"| {db_mb} | {db_ratio} |")
    if "ours" in best and "raw-fts5-tuned" in best:
        tuned, ours = best["raw-fts5-tuned"], best["ours"]
        print(f"\nours vs raw-fts5-tuned (wall): {tuned['seconds'] / ours['seconds'] * ours['messages'] / tuned['messages']:.2f}x")
    if "ours" in best and "ours-noredact" in best:
        on, off = best["ours"], best["ours-noredact"]
        print(f"\nredaction on vs off (wall, msgs/s): {on['messages'] / on['seconds']:,.0f} vs "
              f"{off['messages'] / off['seconds']:,.0f} = {off['seconds'] / on['seconds'] * on['messages'] / off['messages']:.2f}x; "
              f"CPU {off['cpu'] / on['cpu'] * on['messages'] / off['messages']:.2f}x")
    print(f"\nraw message text: {manifest['raw_bytes'] / 1e6:.1f} MB in {manifest['sessions']} session files")
    if not args.keep and args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
