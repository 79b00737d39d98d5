"""Issue 25: two writers adding the same fact at once on PostgreSQL: one "added", one "exists"."""

from __future__ import annotations

import threading

import pytest

from hermes_store.facts.store import FactStore
from hermes_store.home import Home
from hermes_store.tools import handle_tool_call

CONTENT = "The racing fact: the deploy window opens at 09:00 UTC"


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
def test_duplicate_adds_racing_on_postgresql_report_exists(engine, home):
    stores = [FactStore(Home(home.root)) for _ in range(2)]
    both_looked = threading.Barrier(2, timeout=20)
    for store in stores:  # each looks up the content, then waits until the other has looked too
        lookup = store.find_by_content

        def racing_lookup(content, _lookup=lookup):
            found = _lookup(content)
            both_looked.wait()
            return found

        store.find_by_content = racing_lookup
    replies: list[dict] = []
    failures: list[BaseException] = []

    def add(store):
        try:
            replies.append(store.add_fact(CONTENT, "project", ""))
        except BaseException as exc:  # the raw UniqueViolation this test is about
            failures.append(exc)

    threads = [threading.Thread(target=add, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for store in stores:
        store.close()
    assert failures == []
    assert sorted(r["status"] for r in replies) == ["added", "exists"]
    assert len({r["fact_id"] for r in replies}) == 1
    again = handle_tool_call("fact_store", {"action": "add", "content": CONTENT}, home=home)
    assert '"status": "exists"' in again
