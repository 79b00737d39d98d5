"""One gateway of the fleet test (tests/store/test_fleet_writers.py): its own process, a home
that another gateway may share, one store that every gateway shares.

Run as ``python fleet_worker.py HOME URL ROUNDS LOG NAME SHARED_DIR`` (URL ``-`` for the home's
SQLite file). Each round adds a memory entry through the agent's memory tool, a fact of its
own, a fact every gateway adds too, a fact naming an entity every gateway names, writes a
transcript into SHARED_DIR and indexes that folder (every gateway indexes it: overlapping
runs), then searches. Every acknowledged write and every error goes to LOG as a JSON line.
"""

from __future__ import annotations

import json
import os
import sys
import traceback


def main() -> int:
    home_dir, url, rounds, log_path, name, shared_dir = sys.argv[1:7]
    os.environ["HERMES_HOME"] = home_dir
    from hermes_store.home import Home
    from hermes_store.sessions.loader import BulkLoader
    from hermes_store.tools import handle_tool_call

    home = Home(home_dir, database_url=None if url == "-" else url)
    with open(log_path, "a", encoding="utf-8") as log:
        def record(kind: str, **data: object) -> None:
            log.write(json.dumps({"kind": kind, "who": name, **data}) + "\n")
            log.flush()

        def tool(tool_name: str, args: dict) -> dict:
            reply = json.loads(handle_tool_call(tool_name, args, home=home, session_id=f"{name}-s"))
            if not reply.get("success") or reply.get("errors"):  # recall names a kind that failed
                record("error", tool=tool_name, reply=reply)
            return reply

        for n in range(int(rounds)):
            try:
                if tool("memory", {"action": "add", "content": f"{name} note {n}"}).get("success"):
                    record("memory", text=f"{name} note {n}")
                reply = tool("fact_store", {"action": "add", "content": f"{name} fact {n} port {9000 + n}"})
                record("fact", id=reply.get("fact_id"), status=reply.get("status"))
                reply = tool("fact_store", {"action": "add", "content": f"shared fleet fact {n}"})
                record("shared", id=reply.get("fact_id"), status=reply.get("status"))
                reply = tool("fact_store", {"action": "add", "content": f"Quentin Zorblax{n} fixed {name} printer"})
                record("entity_fact", id=reply.get("fact_id"), status=reply.get("status"))
                path = os.path.join(shared_dir, f"20260101_0000{n % 60:02d}_{name}{n}.jsonl")
                with open(path + ".tmp", "w", encoding="utf-8") as f:
                    f.write(json.dumps({"role": "session_meta", "model": "m", "platform": "cli",
                                        "timestamp": "2026-01-01T00:00:00Z"}) + "\n")
                    f.write(json.dumps({"role": "user", "content": f"{name} transcript {n} zebra",
                                        "timestamp": "2026-01-01T00:00:01Z"}) + "\n")
                os.rename(path + ".tmp", path)
                db = home.open_db()
                try:
                    summary = BulkLoader(db, pipeline=False).run([shared_dir])
                finally:
                    db.close()
                if summary.errors:
                    record("error", tool="index", errors=summary.errors[:3])
                tool("session_search", {"query": "zebra"})
                tool("recall", {"query": f"{name} note"})
            except Exception as exc:  # every error is reported, none is hidden
                record("error", tool="exception", error=f"{type(exc).__name__}: {exc}",
                       trace=traceback.format_exc()[-1500:])
        record("done", rounds=int(rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
