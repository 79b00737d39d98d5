"""Auto-extraction: matched clause only, questions and compaction summaries skipped."""

from __future__ import annotations

from hermes_store.facts.extract import extract_from_messages


def test_clause_not_whole_message():
    found = extract_from_messages([{"role": "user", "content":
                                    "Thanks for that. Honestly, I prefer dark mode in editors, but not at night. "
                                    "Also the build is broken again."}])
    assert [(f.content, f.category) for f in found] == [("I prefer dark mode in editors", "user_pref")]


def test_questions_assistant_and_summaries_skipped():
    messages = [
        {"role": "user", "content": "Do you think I prefer tabs?"},
        {"role": "user", "content": "What if we decided to use Go?"},
        {"role": "assistant", "content": "I prefer spaces myself."},
        {"role": "user", "content": "[CONTEXT COMPACTION] Earlier: we decided to use Postgres."},
        {"role": "user", "content": "We agreed to ship on Friday. [CONTEXT SUMMARY]: I always test."},
        {"role": "user", "content": [{"type": "text", "text": "My favourite shell is fish."}]},
    ]
    assert [f.content for f in extract_from_messages(messages)] == [
        "We agreed to ship on Friday", "My favourite shell is fish"]
