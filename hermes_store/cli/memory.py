"""``hermes-store memory``: inspect and edit the built-in MEMORY.md / USER.md store."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from typing import Any

import click

from hermes_store import timeutil, tools
from hermes_store.builtin import approval
from hermes_store.builtin.entries import char_count, file_name, usage_long
from hermes_store.builtin.render import TextCost, over_budget_warning
from hermes_store.builtin.store import MemoryStore
from hermes_store.cli.common import (
    counted,
    echo_error,
    echo_json,
    fenced_output,
    get_home,
    model_facing,
    one_line,
    store_home,
)
from hermes_store.cli.style import fill, output_columns
from hermes_store.home import Home, MemoryConfig

TARGET_CHOICE = click.Choice(["memory", "user"])


def iso(stamp: float | None) -> str | None:
    """Unix seconds as ``2026-01-31T12:00:00Z`` (None stays None)."""
    if stamp is None:
        return None
    return datetime.fromtimestamp(stamp, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def load_config(home: Home) -> MemoryConfig:
    """The ``memory:`` config read key by key; problems are printed to stderr (reads go on,
    the memory tool refuses writes)."""
    cfg = home.read_memory_config()
    for problem in cfg.errors:
        click.echo(f"Warning: {problem}", err=True)
    return cfg


def open_store(ctx: click.Context) -> tuple[MemoryStore, MemoryConfig]:
    """A loaded MemoryStore for the chosen home, with config limits and render style."""
    home = get_home(ctx)
    cfg = load_config(home)
    store = MemoryStore(home, cfg.memory_char_limit, cfg.user_char_limit, render=cfg.render, origin="cli")
    store.load_from_disk()
    return store, cfg


def _targets(target: str | None) -> list[str]:
    return [target] if target else ["memory", "user"]


@click.group("memory")
def memory() -> None:
    """The built-in MEMORY.md / USER.md store (live entries, prompt, cost, history)."""


@memory.command("show")
@click.option("--target", type=TARGET_CHOICE, default=None, help="Only this store (default: both).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
@model_facing
def show(ctx: click.Context, target: str | None, as_json: bool) -> None:
    """Live entries with index, chars and created/updated times."""
    store_home(ctx)  # the times and origins are the store's: a bad store setting stops here
    store, _ = open_store(ctx)
    data: dict[str, Any] = {}
    for name in _targets(target):
        rows = store.describe(name)
        for row in rows:
            row["created_at"] = iso(row["created_at"])
            row["updated_at"] = iso(row["updated_at"])
        used = char_count(store.entries_for(name))
        data[name] = {
            "file": str(store.path_for(name)),
            "round_trips": store.round_trips(name),
            "read_problem": store.read_problem(name),
            "drifted": store.drifted(name),
            "entry_count": len(rows),
            "chars": used,
            "limit": store.limit_for(name),
            "usage": usage_long(used, store.limit_for(name)),
            "over_budget": over_budget_warning(used, store.limit_for(name)),
            "entries": rows,
        }
    store.close()
    if as_json:
        echo_json(data)
        return
    columns = output_columns()  # on a terminal, long lines wrap at words with their indent kept
    for name, info in data.items():
        click.echo(fill(f"{file_name(name)}  {counted(info['entry_count'], 'entry', 'entries')}, {info['usage']}  "
                        f"({info['file']})", columns, "", "  "))
        if info["over_budget"]:
            click.echo(f"  {info['over_budget']}")
        if info["drifted"]:
            click.echo("  ⚠ the file holds an entry longer than the limit (text without '§'?): "
                       "replace/remove are refused until it is split into entries that fit")
        elif info["round_trips"] is False:
            click.echo("  ⚠ the file does not round-trip (hand edit?): the next replace/remove "
                       "rewrites it as a clean '§'-delimited list (only whitespace is lost)")
        elif info["round_trips"] is None:
            click.echo(f"  ⚠ the file cannot be read ({info['read_problem']}): every write is refused")
        if not info["entries"]:
            click.echo("  (empty)")
        for row in info["entries"]:
            click.echo(fill(f"[{row['index']}] {row['chars']} chars  {_history(row)}", columns, "  ", "      "))
            if row["blocked"]:
                click.echo(f"      ⚠ blocked in the prompt: {', '.join(row['blocked'])}")
            for line in row["text"].splitlines():
                click.echo(fill(line, columns, "      "))


def _history(row: dict[str, Any]) -> str:
    """An entry's known history (``created ...  updated ... by ...``), or that none is known: an
    entry is recorded (as `import`) at the first write through hermes-store, not before."""
    parts = []
    if row["created_at"]:
        parts.append(f"created {timeutil.shown_time(row['created_at'])}")
    if row["updated_at"]:
        by = f" by {row['updated_origin']}" if row["updated_origin"] else ""
        parts.append(f"updated {timeutil.shown_time(row['updated_at'])}{by}")
    return "  ".join(parts) or "(no history recorded yet)"


def _refused(results: list[dict[str, Any]]) -> None:
    """Each refusal's reason on stderr, then exit 1 (the JSON is already on stdout)."""
    for result in results:
        if not result.get("success"):
            echo_error(str(result.get('error') or 'refused'))
    sys.exit(1)


def _tool_call(ctx: click.Context, args: dict[str, Any], session_id: str) -> None:
    """Run the memory tool as an agent would and print its JSON: exit 0 when it succeeded,
    1 when it was refused or matched nothing (the JSON unchanged on stdout, the reason on stderr).

    The person at the CLI is the approver, so ``memory.write_approval`` does not stage these.
    """
    reply = tools.handle_tool_call("memory", args, home=get_home(ctx), session_id=session_id,
                                   origin="cli", user_approved=True)
    click.echo(reply)
    try:
        data = json.loads(reply)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("success") is False:
        echo_error(str(data.get('error') or 'the memory tool refused the change'))
        sys.exit(1)


@memory.command("add")
@click.argument("content")
@click.option("--target", type=TARGET_CHOICE, default="memory", show_default=True)
@click.option("--session-id", default="", help="Recorded as the writer of the entry.")
@click.pass_context
def add(ctx: click.Context, content: str, target: str, session_id: str) -> None:
    """Add CONTENT as a new entry (prints the memory tool's JSON)."""
    _tool_call(ctx, {"action": "add", "target": target, "content": content}, session_id)


@memory.command("replace")
@click.argument("old_text")
@click.argument("content")
@click.option("--target", type=TARGET_CHOICE, default="memory", show_default=True)
@click.option("--session-id", default="", help="Recorded as the writer of the change.")
@click.pass_context
def replace(ctx: click.Context, old_text: str, content: str, target: str, session_id: str) -> None:
    """Replace the whole entry OLD_TEXT identifies with CONTENT (prints the tool's JSON)."""
    _tool_call(ctx, {"action": "replace", "target": target, "old_text": old_text, "content": content},
               session_id)


@memory.command("remove")
@click.argument("old_text")
@click.option("--target", type=TARGET_CHOICE, default="memory", show_default=True)
@click.option("--session-id", default="", help="Recorded as the writer of the change.")
@click.pass_context
def remove(ctx: click.Context, old_text: str, target: str, session_id: str) -> None:
    """Remove the entry OLD_TEXT identifies (prints the tool's JSON)."""
    _tool_call(ctx, {"action": "remove", "target": target, "old_text": old_text}, session_id)


@memory.command("prompt")
@click.pass_context
def prompt(ctx: click.Context) -> None:
    """Print exactly the memory blocks a new session's system prompt would get."""
    store, cfg = open_store(ctx)
    text = store.system_prompt(memory_enabled=cfg.memory_enabled,
                               user_profile_enabled=cfg.user_profile_enabled)
    store.close()
    if text:
        click.echo(text)


def prompt_cost(store: MemoryStore, cfg: MemoryConfig) -> dict[str, Any]:
    """Per-entry and per-block cost of the memory part of a new session's system prompt."""
    enabled = {"memory": cfg.memory_enabled, "user": cfg.user_profile_enabled}
    blocks = {name: {**store.cost(name), "enabled": enabled[name]} for name in ("memory", "user")}
    for block in blocks.values():
        block["over_budget"] = over_budget_warning(block["used_chars"], block["limit"])
    text = store.system_prompt(memory_enabled=cfg.memory_enabled,
                               user_profile_enabled=cfg.user_profile_enabled)
    frame = {"chars": 0, "bytes": 0, "tokens": 0}
    for cost in blocks.values():
        if cost["enabled"]:
            for key in frame:
                frame[key] += cost["frame"][key]
    return {"style": store.render_style, "blocks": blocks,
            "total": TextCost.of(text).as_dict(), "frame_total": frame}


@memory.command("cost")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def cost(ctx: click.Context, as_json: bool) -> None:
    """Bytes, chars and estimated tokens the memory blocks cost per entry and per block."""
    store, cfg = open_store(ctx)
    data = prompt_cost(store, cfg)
    store.close()
    if as_json:
        echo_json(data)
        return
    columns = output_columns()  # on a terminal, a long line wraps at words
    click.echo(fill(f"Render style: {data['style']}   (tokens are estimates: ~4 ASCII chars or 1 other char each)",
                    columns, "", "  "))
    for name, block in data["blocks"].items():
        state = "" if block["enabled"] else "  [disabled in config: not in the prompt]"
        click.echo(f"\n{file_name(name)}  {counted(block['entry_count'], 'entry', 'entries')}, {block['used_chars']:,}/"
                   f"{block['limit']:,} chars{state}")
        if block["over_budget"]:
            click.echo(f"  {block['over_budget']}")
        click.echo(f"  {'':>10} {'chars':>7} {'bytes':>7} {'tokens':>7}")
        for entry in block["entries"]:
            click.echo(f"  {'#' + str(entry['index']):>10} {entry['chars']:>7} {entry['bytes']:>7} "
                       f"{entry['tokens']:>7}")
        for label in ("delimiters", "frame", "block"):
            part = block[label]
            click.echo(f"  {label:>10} {part['chars']:>7} {part['bytes']:>7} {part['tokens']:>7}")
    total, frame = data["total"], data["frame_total"]
    click.echo("\n" + fill(f"Total in prompt: {total['chars']:,} chars, {total['bytes']:,} bytes, "
                           f"~{total['tokens']:,} tokens (frame overhead {frame['bytes']:,} bytes, "
                           f"~{frame['tokens']:,} tokens)", columns, "", "  "))


def _short(text: str | None, width: int = 60) -> str:
    """``text`` quoted on one line, cut to ``width``: control characters shown as ``\\u<4 hex>`` as
    every command shows them (``repr`` wrote ``\\x1b`` and doubled every backslash of a path)."""
    if text is None:
        return "-"
    flat = " ".join(text.split())
    return "'" + one_line(flat if len(flat) <= width else flat[: width - 3] + "...") + "'"


@memory.command("history")
@click.option("--target", type=TARGET_CHOICE, default=None, help="Only this store.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most N events.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def history(ctx: click.Context, target: str | None, limit: int | None, as_json: bool) -> None:
    """The append-only trail of add/replace/remove events (newest first)."""
    readable = store_home(ctx).open_existing_db()  # the trail is the store's: a bad store setting,
    if readable is not None:  # or a store that cannot be opened, stops here (not "No history yet.")
        readable.close()
    store, _ = open_store(ctx)
    events = store.history(target, limit)
    store.close()
    for event in events:
        event["at_epoch"] = event["at"]  # exact, so --json is a complete export of the trail
        event["at"] = iso(event["at"])
    if as_json:
        echo_json(events)
        return
    if not events:
        click.echo("No history yet.")
    columns = output_columns()  # on a terminal, a long event wraps at words under its text
    with fenced_output():  # the human trail is read like `memory show`; --json stays the exact export
        for ev in events:
            who = ev["origin"] + (f" session={ev['session_id']}" if ev["session_id"] else "")
            undo = f" (undid #{ev['restored_from']})" if ev["restored_from"] else ""
            if ev["action"] == "replace":
                change = f"{_short(ev['old_text'])} -> {_short(ev['new_text'])}"
            else:
                change = _short(ev["new_text"] if ev["action"] == "add" else ev["old_text"])
            # a trail: several events a minute are told apart by their seconds
            at = timeutil.shown_time(ev["at_epoch"], seconds=True)
            click.echo(fill(f"#{ev['id']:<5} {at}  {ev['target']:<6} {ev['action']:<7} {who}{undo}  {change}",
                            columns, "", " " * 7))


@memory.command("restore")
@click.argument("event_id", type=int)
@click.option("--session-id", default="", help="Recorded as the writer of the undo.")
@click.pass_context
def restore(ctx: click.Context, event_id: int, session_id: str) -> None:
    """Undo history event EVENT_ID (prints the JSON result; exit 1 when nothing was restored)."""
    store, _ = open_store(ctx)
    result = store.restore(event_id, origin="restore", session_id=session_id)
    store.close()
    echo_json(result)
    if not result.get("success"):
        _refused([result])


@memory.command("pending")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def pending(ctx: click.Context, as_json: bool) -> None:
    """Writes staged by memory.write_approval, waiting for approve/reject."""
    records = approval.list_pending(get_home(ctx))
    if as_json:
        echo_json(records)
        return
    if not records:
        click.echo("No pending memory writes.")
    for record in records:
        if "error" in record:
            click.echo(f"{record['id']}  {record['error']}")
            continue
        click.echo(f"{record['id']}  {timeutil.shown_time(record.get('created_at'))}  {record.get('origin', '')}  "
                   f"{record.get('summary', '')}")


def _each_pending(ctx: click.Context, record_id: str) -> list[str]:
    if record_id != "all":
        return [record_id]
    return [r["id"] for r in approval.list_pending(get_home(ctx)) if "error" not in r]


@memory.command("approve")
@click.argument("record_id")
@click.pass_context
def approve(ctx: click.Context, record_id: str) -> None:
    """Apply pending write RECORD_ID (or 'all'); prints one JSON result per record."""
    store, _ = open_store(ctx)
    results = []
    for rid in _each_pending(ctx, record_id):
        try:
            results.append(approval.approve(store, rid))
        except approval.PendingError as exc:
            results.append({"success": False, "error": str(exc)})
    store.close()
    echo_json(results if record_id == "all" else results[0])
    if not all(r.get("success") for r in results):
        _refused(results)


@memory.command("reject")
@click.argument("record_id")
@click.pass_context
def reject(ctx: click.Context, record_id: str) -> None:
    """Discard pending write RECORD_ID (or 'all')."""
    results = []
    for rid in _each_pending(ctx, record_id):
        try:
            results.append(approval.reject(get_home(ctx), rid))
        except approval.PendingError as exc:
            results.append({"success": False, "error": str(exc)})
    echo_json(results if record_id == "all" else results[0])
    if not all(r.get("success") for r in results):
        _refused(results)
