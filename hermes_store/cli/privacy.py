"""``hermes-store redact``: rescan what is stored, rewrite it, leave no old copy behind."""

from __future__ import annotations

from collections import Counter
from typing import Any

import click

from hermes_store.cli.common import counted, echo_json, fail, get_home
from hermes_store.redaction import rules_redactor
from hermes_store.redaction.storage import purge_free_space, rewrite_texts, secure_deletes
from hermes_store.sessions.pending import message_deriver
from hermes_store.sessions.storage import open_session_storage
from hermes_store.sessions.storage_vectors import VectorStore


@click.command("redact")
@click.option("--dry-run", is_flag=True, help="Count what would be redacted; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def redact(ctx: click.Context, dry_run: bool, as_json: bool) -> None:
    """Redact secrets already stored (sessions, tool calls, titles, facts, memory history).

    Every stored text passes through the same rules as new text (config.yaml
    `store.redact_patterns` / `store.redact_allow` included), even when
    `store.redact: false`. Then the full-text indexes are rebuilt and no copy of the old
    text is left: on SQLite the rewrite runs with `secure_delete`, the WAL is truncated and
    the file VACUUMed; on PostgreSQL the changed tables are rewritten (VACUUM FULL).
    The embeddings of rewritten messages are deleted too (made from the old text); the next
    `sessions embed` embeds the redacted text. MEMORY.md / USER.md are never rewritten.
    """
    home = get_home(ctx)
    db = home.open_reader()  # no store yet: nothing to redact, and no file made to say so
    changed_keys: dict[str, list[tuple[Any, ...]]] = {}
    try:
        redactor = rules_redactor(db)  # off for new text, an explicit rescan still uses the rules
        report = rewrite_texts(db, redactor.redact_counted, dry_run=dry_run, changed_keys=changed_keys,
                               derive={"messages": message_deriver(redactor)})
        changed = [table for table, row in report.items() if row["rows"]]
        rebuilt: list[str] = []
        if changed and not dry_run:
            storage = open_session_storage(db)
            for name in storage.text_indexes():
                storage.rebuild_text_index(name)
                rebuilt.append(name)
            purge_free_space(db, changed)
    finally:
        db.close()
    if changed_keys.get("messages"):
        vectors = VectorStore.for_home(home)
        try:
            vectors.forget([int(key[0]) for key in changed_keys["messages"]], [])
        finally:
            vectors.close()
    _report(report, rebuilt, dry_run, as_json)


def _report(report: dict[str, dict[str, int]], rebuilt: list[str], dry_run: bool, as_json: bool) -> None:
    kinds: Counter[str] = Counter()
    for row in report.values():
        kinds.update({k: v for k, v in row.items() if k != "rows"})
    rows = sum(row["rows"] for row in report.values())
    result: dict[str, Any] = {"success": True, "dry_run": dry_run, "rows_changed": rows,
                              "secrets": dict(sorted(kinds.items())), "tables": report,
                              "indexes_rebuilt": rebuilt}
    if as_json:
        echo_json(result)
        return
    verb = "would redact" if dry_run else "redacted"
    click.echo(f"{verb} {counted(sum(kinds.values()), 'secret')} in {counted(rows, 'row')}")
    for kind, n in sorted(kinds.items()):
        click.echo(f"  {kind}: {n}")
    if rebuilt:
        click.echo(f"rebuilt {counted(len(rebuilt), 'full-text index', 'full-text indexes')}; "
                   "old text purged from the database")


@click.command("forget")
@click.argument("ref", required=False)
@click.option("--session", "session_id", default=None, help="Forget this whole session (id or unique prefix).")
@click.option("--matching", default=None, help="Forget every message whose text holds TEXT exactly.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def forget(ctx: click.Context, ref: str | None, session_id: str | None, matching: str | None,
           as_json: bool) -> None:
    """Forget for good: REF (`SESSION_ID#N` as `sessions search` prints it, or a session id),
    `--session ID` or `--matching TEXT`.

    The rows go, the full-text index follows, and no copy is left in the database file, its
    WAL or free pages (so backups taken afterwards hold none); a tombstone (session id and a
    hash of the message, never its text) keeps `sessions index` from bringing it back.
    """
    from hermes_store.sessions.forget import ForgetError
    from hermes_store.sessions.forget import forget as forget_items

    if not (ref or session_id or matching is not None):
        raise click.UsageError("name what to forget: REF, --session ID or --matching TEXT")
    db = get_home(ctx).open_reader()  # no store yet: nothing to forget, and no file made to say so
    try:
        storage = open_session_storage(db)
        secure_deletes(db)
        try:
            result = forget_items(storage, ref=ref, session_id=session_id, matching=matching)
        except ForgetError as exc:  # names nothing stored: refused (1), as `sessions show` is
            fail(str(exc))  # with --json, also {"success": false, ...} on stdout
        if result["messages"] or result["sessions"]:
            purge_free_space(db, ["messages", "sessions"])
    finally:
        db.close()
    vectors = VectorStore.for_home(get_home(ctx))  # embeddings of what was forgotten go too
    try:
        vectors.forget(result["message_ids"], result["sessions"])
    finally:
        vectors.close()
    if as_json:
        echo_json({"success": True, "forgotten_sessions": result["sessions"], "forgotten_messages": result["messages"]})
        return
    sessions = result["sessions"]
    if not result["messages"] and not sessions:
        click.echo("nothing was forgotten: no stored message holds that text")
        return
    whole = f" ({counted(len(sessions), 'whole session')}: {', '.join(sessions)})" if sessions else ""
    them = "it" if result["messages"] == 1 else "them"
    click.echo(f"forgot {counted(result['messages'], 'message')}{whole}; re-indexing will not bring {them} back")
