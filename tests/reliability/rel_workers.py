"""Worker processes for the load tests, run as ``python rel_workers.py COMMAND ARGS``.

Each worker prints one JSON object per line: acknowledged writes (``{"ack": ...}``)
and failures that reached it as a caller (``{"error": ...}``). The test process
reads the lines after the worker exits and checks every acknowledgement.

Commands:
  mem_add HOME WORKER COUNT START_AT   COUNT memory adds (targets alternate), starting at START_AT
  writer HOME KIND INDEX SECONDS       KIND is ingest | live | facts | memory
  reader HOME KIND INDEX SECONDS       KIND is search | recall
"""

from __future__ import annotations

import json
import random
import sys
import time
import traceback
from pathlib import Path

from hermes_store.builtin.store import MemoryStore
from hermes_store.facts.store import FactStore
from hermes_store.home import Home
from hermes_store.recall import recall
from hermes_store.sessions import SessionIndex, index_paths
from hermes_store.sessions.search import search_messages
from hermes_store.tools import handle_tool_call

VOCAB = ("deploy", "staging", "postgres", "kafka", "latency", "invoice", "rollback", "cache",
         "kubernetes", "terraform", "grafana", "alerting", "budget", "python", "rust", "backup")
BIG = 10**6


def emit(obj: dict) -> None:
    """Print one JSON line and flush (the parent reads them after exit)."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def sentence(rng: random.Random, tag: str) -> str:
    """A few vocabulary words plus a unique tag."""
    return " ".join(rng.sample(VOCAB, 4)) + f" {tag}"


def failure(exc: BaseException) -> str:
    """An exception as the caller saw it."""
    return f"{type(exc).__name__}: {exc}"


# --------------------------------------------------------------------------- memory adds


def mem_add(home: str, worker: int, count: int, start_at: float) -> None:
    """``count`` adds alternating memory/user targets, all starting at ``start_at``."""
    store = MemoryStore(Home(home), memory_char_limit=BIG, user_char_limit=BIG)
    time.sleep(max(0.0, start_at - time.time()))
    for i in range(count):
        target = "user" if (worker + i) % 2 else "memory"
        content = f"worker {worker} entry {i} for {target}"
        try:
            result = store.add(target, content)
        except Exception as exc:  # noqa: BLE001 - reported to the test
            emit({"error": failure(exc), "content": content})
            continue
        if result.get("success"):
            emit({"ack": content, "target": target})
        else:
            emit({"error": result.get("error"), "content": content})
    store.close()


# --------------------------------------------------------------------------- soak writers


def _write_transcript(path: Path, rng: random.Random, tag: str, messages: int) -> list[str]:
    lines, contents = [], []
    for k in range(messages):
        text = sentence(rng, f"{tag}m{k}")
        contents.append(text)
        lines.append(json.dumps({"role": "user" if k % 2 == 0 else "assistant", "content": text}))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return contents


def writer(home_dir: str, kind: str, index: int, seconds: float) -> None:
    """Write for ``seconds``; every write that returned is acknowledged on stdout."""
    home = Home(home_dir)
    rng = random.Random(index * 7919 + sum(map(ord, kind)))
    deadline = time.time() + seconds
    n = 0
    if kind == "memory":
        store = MemoryStore(home, memory_char_limit=BIG, user_char_limit=BIG)
    elif kind == "facts":
        store = FactStore(home)
    elif kind == "live":
        store = SessionIndex(home)
    else:
        store = None
    transcripts = home.root.parent / f"transcripts_{kind}_{index}"
    while time.time() < deadline:
        tag = f"{kind[0]}{index}x{n}"
        try:
            if kind == "ingest":
                sid = f"20260101_000000_{index:02d}{n:04x}"
                contents = _write_transcript(transcripts / f"{sid}.jsonl", rng, tag, 6)
                summary = index_paths(home, [transcripts / f"{sid}.jsonl"])
                if summary["errors"]:
                    emit({"error": f"ingest errors: {summary['errors']}"})
                else:
                    emit({"ack": sid, "kind": "session", "messages": contents})
            elif kind == "live":
                sid = store.create_session(source="soak", title=f"soak {tag}")
                texts = []
                for k in range(3):
                    text = sentence(rng, f"{tag}m{k}")
                    store.append_message(sid, "user" if k % 2 == 0 else "assistant", text)
                    texts.append(text)
                store.end_session(sid)
                emit({"ack": sid, "kind": "session", "messages": texts})
            elif kind == "facts":
                content = f"The {rng.choice(VOCAB)} service for {tag} runs on {rng.choice(VOCAB)}"
                reply = store.add_fact(content, "project")
                emit({"ack": content, "kind": "fact", "fact_id": reply["fact_id"]})
            else:
                content = sentence(rng, tag)
                result = store.add("user" if n % 2 else "memory", content)
                if result.get("success"):
                    emit({"ack": content, "kind": "memory", "target": "user" if n % 2 else "memory"})
                else:
                    emit({"error": result.get("error")})
        except Exception as exc:  # noqa: BLE001 - every failure is reported
            emit({"error": failure(exc), "trace": traceback.format_exc(limit=4)})
        n += 1
    if store is not None:
        store.close()


def reader(home_dir: str, kind: str, index: int, seconds: float) -> None:
    """Search for ``seconds``; any exception or error field is reported."""
    home = Home(home_dir)
    rng = random.Random(index * 104729)
    deadline = time.time() + seconds
    reads = 0
    index_db = None
    while time.time() < deadline:
        words = " ".join(rng.sample(VOCAB, rng.randint(1, 3)))
        try:
            if kind == "search":
                if not home.db_path.exists():
                    time.sleep(0.05)
                    continue
                if index_db is None:
                    index_db = home.open_db()
                search_messages(index_db, words, limit=10)
                reply = json.loads(handle_tool_call("session_search", {"query": words}, home=home))
                if not reply.get("success"):
                    emit({"error": f"session_search: {reply.get('error')}"})
            else:
                result = recall(words, home=home, limit=10)
                if result.errors:
                    emit({"error": f"recall: {result.errors}"})
                reply = json.loads(handle_tool_call("fact_store", {"action": "search", "query": words},
                                                    home=home))
                if not reply.get("success"):
                    emit({"error": f"fact_store search: {reply.get('error')}"})
            reads += 1
        except Exception as exc:  # noqa: BLE001 - every failure is reported
            emit({"error": failure(exc), "trace": traceback.format_exc(limit=4)})
    if index_db is not None:
        index_db.close()
    emit({"reads": reads})


def main(argv: list[str]) -> int:
    command, *args = argv
    if command == "mem_add":
        mem_add(args[0], int(args[1]), int(args[2]), float(args[3]))
    elif command == "writer":
        writer(args[0], args[1], int(args[2]), float(args[3]))
    elif command == "reader":
        reader(args[0], args[1], int(args[2]), float(args[3]))
    else:
        raise SystemExit(f"unknown command {command!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
