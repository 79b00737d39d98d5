"""Codex rollouts: every response_item type of the current schema, titles, lineage, problems."""

from __future__ import annotations

import json

from sess_helpers import FIXTURES, index_json

from hermes_store.sessions import SessionIndex

DAY = FIXTURES / "codex_rollouts" / "sessions" / "2026" / "01" / "15"
SID = "019bc1a2-7d3e-7f10-9a2b-3c4d5e6f7a8b"
CHILD = "019bc1a9-0000-7abc-8def-112233445566"
MAIN = DAY / f"rollout-2026-01-15T09-30-00-{SID}.jsonl"


def _calls(message):
    return [(c["function"]["name"], c["function"]["arguments"]) for c in json.loads(message["tool_calls"])]


def test_every_item_type_is_indexed(run, store):
    code, summary = index_json(run, DAY)
    assert code == 0 and summary["sessions_added"] == 2 and summary["messages_added"] == 18
    msgs = SessionIndex(store).get_messages(SID)
    assert [m["role"] for m in msgs] == [
        "system", "user", "reasoning", "assistant", "assistant", "tool", "assistant", "assistant",
        "tool", "assistant", "tool", "assistant", "tool", "user", "assistant", "system"]
    assert msgs[0]["content"].startswith("<permissions instructions>")  # developer -> system
    assert msgs[1]["content"] == ("Find the latest Astro release notes and make a hero image for the blog"
                                  "\n[input_image]")
    assert msgs[2]["content"] == ("**Planning the search**\nCheck the release notes first.\n"
                                  "raw chain: search, then read the changelog")
    assert _calls(msgs[3]) == [("web_search", '{"type": "search", "query": "Astro 5 release notes"}')]
    assert _calls(msgs[4]) == [("tool_search", '{"query": "image generation"}')]
    assert msgs[5]["content"] == "image_gen" and msgs[5]["tool_name"] == "tool_search"
    assert _calls(msgs[6]) == [("image_generation",
                                '{"revised_prompt": "A rocket made of code over a purple sky"}')]
    assert "iVBOR" not in json.dumps(msgs)  # image bytes are never stored
    assert _calls(msgs[7])[0][0] == "apply_patch" and "Add File" in _calls(msgs[7])[0][1]
    assert msgs[8]["tool_name"] == "apply_patch" and msgs[8]["content"].startswith("Success.")
    assert _calls(msgs[9])[0][0] == "local_shell" and msgs[10]["content"] == "hero.md\nfavicon.svg"
    assert msgs[10]["tool_name"] == "local_shell"
    assert msgs[12]["content"] == "build failed: missing sharp" and msgs[12]["tool_name"] == "exec_command"
    assert msgs[13]["content"] == "worker: sharp is an optional dependency, install it"
    assert msgs[15]["content"].startswith("Summary: searched Astro notes")
    session = SessionIndex(store).get_session(SID)
    assert session["title"] == "Astro release notes and hero image"  # thread_name_updated
    assert session["model"] == "gpt-5.2-codex" and session["workspace"] == "/home/ana/site"
    child = SessionIndex(store).get_session(CHILD)
    assert child["parent_session_id"] == SID and child["message_count"] == 2


def test_unknown_types_are_reported_with_path_and_line(run):
    _code, summary = index_json(run, MAIN)
    errors = [(e["path"], e["line"], e["error"].split(" (")[0]) for e in summary["errors"]]
    assert errors == [(str(MAIN), 25, "unknown response_item type 'future_item_kind'"),
                      (str(MAIN), 26, "unknown record type 'brand_new_record'")]


def test_reasoning_summaries_need_the_role_to_be_found(run):
    index_json(run, MAIN)
    found = json.loads(run("sessions", "search", "--json", "changelog").stdout)["results"]
    assert found == []
    found = json.loads(run("sessions", "search", "--json", "--role", "reasoning", "changelog").stdout)
    assert [r["role"] for r in found["results"]] == ["reasoning"]
