"""Regressions found by running the real Hermes memory tool side by side with ours.

Each test quotes the upstream behaviour (NousResearch/hermes-agent, tools/memory_tool_store.py);
no upstream code is imported.
"""

from __future__ import annotations

import json

from hermes_store.tools import handle_tool_call


def test_single_op_no_match_error_carries_entries_but_no_usage(home):
    # Newest upstream (zons 0c8ef8dc) _no_match_error: "No entry matched '…'. Retry the {verb}
    # with old_text copied verbatim from the intended entry." plus current_entries; no usage, and
    # no closest_entries when no entry shares 30 % of the words.
    handle_tool_call("memory", {"action": "add", "content": "user likes tea"}, home=home)
    for action, extra in (("replace", {"content": "z"}), ("remove", {})):
        reply = json.loads(handle_tool_call("memory", {"action": action, "old_text": "nomatch", **extra},
                                            home=home))
        assert reply == {
            "success": False,
            "error": (f"No entry matched 'nomatch'. Retry the {action} with old_text copied verbatim "
                      "from the intended entry."),
            "current_entries": ["user likes tea"],
        }


def test_batch_abort_keeps_usage_without_entries(home):
    # Hermes _batch_failure: message + " No operations were applied (batch is all-or-nothing).",
    # usage=self._usage(target) -- and no current_entries.
    handle_tool_call("memory", {"action": "add", "content": "alpha"}, home=home)
    reply = json.loads(handle_tool_call(
        "memory", {"operations": [{"action": "remove", "old_text": "zzz"}]}, home=home))
    assert reply == {
        "success": False,
        "error": ("Operation 1 (remove): No entry matched 'zzz'. Retry the remove with old_text copied "
                  "verbatim from the intended entry. No operations were applied (batch is all-or-nothing)."),
        "usage": "5/2,200",
    }


def test_a_file_holding_a_repeated_entry_is_not_drift(home):
    # Hermes' _detect_external_drift compares the file with its entries as split, before
    # dedupe, so "dup\n§\ndup\n§\nother" round-trips; the write then keeps one "dup".
    # (Hermes itself writes such a file when a replace produces an existing entry.)
    home.ensure()
    home.memory_file.write_bytes("dup\n§\ndup\n§\nother".encode())
    reply = json.loads(handle_tool_call("memory", {"action": "replace", "old_text": "other",
                                                   "content": "new one"}, home=home))
    assert reply == {"success": True, "done": True, "target": "memory", "usage": "0% — 13/2,200 chars",
                     "entry_count": 2, "message": "Entry replaced.", "replaced_entry": "other",
                     "new_entry": "new one", "note": "Write saved. This update is complete — do not repeat it."}
    assert home.memory_file.read_bytes() == "dup\n§\nnew one".encode()
    assert not list(home.memories_dir.glob("MEMORY.md.bak.*"))


def test_repeated_entries_in_a_batch_target_file_are_not_drift(home):
    home.ensure()
    home.memory_file.write_bytes("dup\n§\ndup\n§\nother".encode())
    reply = json.loads(handle_tool_call(
        "memory", {"operations": [{"action": "remove", "old_text": "other"}]}, home=home))
    assert reply["success"] and reply["removed_entries"] == {"1": "other"} and reply["entry_count"] == 1
    assert home.memory_file.read_bytes() == b"dup"
