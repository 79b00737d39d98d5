"""One "host" of the multi-host test: its own home, writing to the shared PostgreSQL store.

Run as ``python multihost_worker.py HOME URL SECONDS LOG SHARED_FACT_IDS``. Until the deadline it
appends messages to live sessions, adds facts of its own, gives feedback on the shared facts
(two helpful, then one unhelpful: the net change of each round is zero, so trust never reaches
a bound and the expected value is plain arithmetic) and searches; every acknowledged write and
every error goes to LOG as one JSON line. Exits 0 unless it could not start.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback


def main() -> int:
    home_dir, url, seconds, log_path, shared = sys.argv[1:6]
    os.environ["HERMES_HOME"] = home_dir
    os.environ["HERMES_STORE_DATABASE_URL"] = url
    from hermes_store.facts.store import FactStore
    from hermes_store.home import Home
    from hermes_store.sessions import SessionIndex
    from hermes_store.sessions.search import search_messages

    home = Home(home_dir).ensure()
    shared_ids = [int(x) for x in shared.split(",")]
    deadline = time.monotonic() + float(seconds)
    name = os.path.basename(home_dir)
    cycle = ("helpful", "helpful", "unhelpful")
    db = home.open_db()
    index, facts = SessionIndex(db), FactStore(db)
    with open(log_path, "a", encoding="utf-8") as log:
        def record(kind: str, **data) -> None:
            log.write(json.dumps({"kind": kind, **data}) + "\n")
            log.flush()

        round_no = 0
        while time.monotonic() < deadline:
            round_no += 1
            try:
                sid = index.create_session(f"{name}-{round_no}", title=f"{name} round {round_no}")
                for seq in range(3):
                    text = f"{name} round {round_no} message {seq} about deploying the staging cluster"
                    message_id = index.append_message(sid, "user" if seq % 2 == 0 else "assistant", text)
                    record("message", session_id=sid, seq=seq, id=message_id, content=text)
                fact = f"{name} fact number {round_no}: the build server {round_no} runs on port {8000 + round_no}"
                fact_id = facts.add_fact(fact, "general", "multihost")["fact_id"]
                record("fact", id=fact_id, content=fact)
                target = shared_ids[round_no % len(shared_ids)]
                for action in cycle:
                    facts.record_feedback(target, action)
                    record("feedback", id=target, action=action)
                if round_no % 5 == 0:
                    found = search_messages(db, f"{name} round {round_no - 1}", limit=5)
                    record("search", count=found.count)
            except Exception as exc:  # every error is reported, none is hidden
                record("error", error=f"{type(exc).__name__}: {exc}", trace=traceback.format_exc()[-1500:])
        record("done", rounds=round_no)
    db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
