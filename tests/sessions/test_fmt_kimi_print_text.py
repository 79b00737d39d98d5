"""``kimi --print`` in its default text output (``--output-format text``) saved to a file: the rich
repr of every wire message, wrapped at 80 columns. Before, refused as ``unknown format``. The
fixture reproduces the printer's structure (rich's pretty repr of the wire types), never real content."""

from __future__ import annotations

import io
import random

import pytest
from format_helpers import index, messages, roles, session

from hermes_store.sessions import detect_format
from hermes_store.sessions.importers.kimi_print_text import printed_objects

RUN = "kimi-print-text/runs/orchard-backup.txt"
SID = "8e41c7d2-3b5a-4f90-a6c1-27d9e0b4f318"


def test_kimi_print_text_run_is_read_whole(store, format_fixtures):
    path = format_fixtures / RUN
    assert detect_format(path) == "kimi-print-text"
    assert index(store, path)["errors"] == []
    row = session(store, SID)  # the resume hint names the session
    assert row["origin_format"] == "kimi-print-text" and row["source"] == "kimi-cli"
    rows = messages(store, SID)
    assert roles(rows) == ["user", "reasoning", "assistant", "assistant", "tool", "assistant", "tool", "assistant",
                           "tool", "system", "assistant"]
    # strings rich wrapped at 80 columns are whole again, the space a full line dropped put back
    assert rows[0]["content"] == ("the nightly backup of the orchard database failed twice this week, find out "
                                  "why and fix the cron entry")
    assert rows[1]["content"] == (
        "Start with the cron table and the backup script's last log. The failure happened twice, so it is "
        "probably timing rather than a broken script; check whether the job overlaps the vacuum window.")
    assert rows[2]["content"] == "I'll look at the cron entry first."
    # a call printed in pieces (ToolCall, then ToolCallPart) has its whole arguments
    assert rows[3]["calls"] == [("Shell", {"command": "crontab -l | grep orchard"}, "tool_Qm81")]
    assert (rows[4]["tool_call_id"], rows[4]["tool_name"]) == ("tool_Qm81", "Shell")
    assert rows[4]["content"] == "15 2 * * * /opt/orchard/bin/backup.sh >> /var/log/orchard-backup.log 2>&1\n"
    assert rows[5]["calls"] == [("Shell", {"command": "grep -c vacuum /etc/cron.d/orchard-maintenance"}, "tool_Vx02")]
    assert (rows[6]["content"], rows[6]["tool_call_id"]) == ("", "tool_Vx02")  # an empty result is kept
    assert rows[7]["calls"] == [("ReadFile", {"path": "/var/log/orchard-backup.log"}, "tool_Er03")]
    assert rows[8]["content"] == "Permission denied: /var/log/orchard-backup.log"  # a ToolError's message
    assert rows[9]["content"] == "[task] Background task completed: tail syslog\nTask ID: b77\nStatus: completed"
    assert rows[9]["timestamp"] == 1781337600.5
    # two TextParts printed one after the other are one reply, as the JSON printer joins them
    assert rows[10]["content"] == (
        "The backup at 02:15 collides with the vacuum that starts at 02:10 and holds its lock for twenty minutes; "
        "moving the backup to 02:45 avoids the overlap. 日本語のログも確認しました。")
    child = session(store, f"{SID}:agent-1")
    assert child["parent_session_id"] == SID
    assert [(r["role"], r["content"]) for r in messages(store, f"{SID}:agent-1")] == [
        ("assistant", "The vacuum job in orchard-maintenance starts at 02:10 and holds a lock for about twenty minutes.")]


def test_a_broken_object_and_a_stray_line_are_reported_and_the_rest_read(store, tmp_path):
    path = tmp_path / "kimi-run.txt"
    path.write_text(
        "TurnBegin(user_input='rename the branch')\n"
        "StepBegin(n=1)\n"
        "Traceback (most recent call last):\n"
        "TextPart(type='text', text=<unprintable>)\n"
        "ToolCall(\n"
        "    type='function',\n"
        "TextPart(type='text', text='Renamed to main.')\n"
        "TurnEnd()\n", encoding="utf-8")
    assert detect_format(path) == "kimi-print-text"
    summary = index(store, path)
    assert [e["line"] for e in summary["errors"]] == [3, 4, 5]
    assert [(r["role"], r["content"]) for r in messages(store, "kimi-run")] == [
        ("user", "rename the branch"), ("assistant", "Renamed to main.")]


def test_wrapped_strings_come_back_whole_at_any_width():
    """Property: what rich prints at 40-120 columns parses back to the very string printed (single
    spaces between words: a run of spaces rich cut at a full line comes back as one space; a line
    that is one word filling it exactly reads as a fold, so no such word is printed here)."""
    pydantic = pytest.importorskip("pydantic")
    console = pytest.importorskip("rich.console")

    class TextPart(pydantic.BaseModel):
        type: str = "text"
        text: str

    words = ["a", "is", "the", "orchard", "src/b.py", "-l", "日本語の", "https://example.org/a/b?c=d", "'q'", '"dq"', "back\\slash",
             "tab\there", "new\nline", "€"]
    rng = random.Random(7)
    for _ in range(300):
        width = rng.choice([40, 60, 80, 120])
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 50)))
        out = io.StringIO()
        printer = console.Console(file=out, width=width, color_system=None)
        printer.print(TextPart(text=text))
        printer.print(TextPart(text="end"))
        got = [obj["text"] for _, obj, _ in printed_objects(out.getvalue()) if obj is not None]
        assert got == [text, "end"], (width, text)
    # a word longer than the line is folded inside it (no space added where it was cut)
    for text in ("y" * 200, "see " + "z" * 150 + " then more words after the folded one"):
        out = io.StringIO()
        console.Console(file=out, width=60, color_system=None).print(TextPart(text=text))
        assert [obj["text"] for _, obj, _ in printed_objects(out.getvalue()) if obj is not None] == [text]


def test_stream_json_and_context_files_are_not_claimed(format_fixtures):
    assert detect_format(format_fixtures / "kimi-print/runs/upload-flake.jsonl") == "kimi-print"
