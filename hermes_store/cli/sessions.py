"""``hermes-store sessions``: index transcripts and manage the indexed sessions."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import apsw
import click

from hermes_store import timeutil
from hermes_store.cli import LazyGroup
from hermes_store.cli.common import (
    counted,
    echo_json,
    fail,
    get_home,
    model_facing,
    nothing_indexed_note,
    one_line,
)
from hermes_store.cli.style import (
    Progress,
    clip,
    echo_after_ctrl_c,
    fill,
    output_columns,
    pad,
    progress_shown,
    shown_width,
    style,
)
from hermes_store.db import DatabaseError
from hermes_store.sessions.importers import FORMATS
from hermes_store.sessions.loader import DEFAULT_BATCH, FTS_MODES, BulkLoader
from hermes_store.sessions.walk import walk_inputs


@click.group(cls=LazyGroup, lazy={"search": "hermes_store.cli.sessions_search:search",
                                  "watch": "hermes_store.cli.watch:watch",
                                  "export": "hermes_store.cli.export:export",
                                  "embed": "hermes_store.cli.embed:embed"})
def sessions() -> None:
    """Index past transcripts (Hermes, Claude Code, Codex, Gemini CLI and the other agents `sessions formats` lists) and manage them."""


@sessions.command("index")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["auto", *FORMATS]), default="auto", metavar="FORMAT",
              show_default=True,  # the choices as words the help wraps (one 1,000-column [a|b|...] term before)
              help=f"Transcript format; auto detects it per file. One of: {', '.join(FORMATS)}.")
@click.option("--discover", is_flag=True,
              help="Also index every known agent location found on this machine (see 'sessions sources').")
@click.option("--map", "column_map", default=None, metavar="KEY=COLUMN,...",
              help="Columns of a generic dump: role=...,content=...,time=...,session=... "
                   "(also title, model, tool_name).")
@click.option("--role-map", "role_map", default=None, metavar="WORD=ROLE,...",
              help="Roles of a generic dump: e.g. rep=assistant,caller=user (customer, human, agent, "
                   "bot, ai... are mapped already).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--batch-size", type=click.IntRange(min=1), default=DEFAULT_BATCH, hidden=True)
@click.option("--fts-mode", type=click.Choice(FTS_MODES), default="batch", hidden=True)
@click.pass_context
def index_cmd(ctx: click.Context, paths: tuple[Path, ...], fmt: str, discover: bool,
              column_map: str | None, role_map: str | None, as_json: bool, batch_size: int,
              fts_mode: str) -> None:
    """Import transcripts from files and directories (walked recursively).

    Re-running is cheap: unchanged files are skipped, appended JSONL adds only
    the new lines, and an interrupted run resumes where it stopped. Exit code 0
    when anything was imported, 1 when every input failed.
    """
    if not paths and not discover:
        raise click.UsageError("give PATHS to index, or --discover (or both)")
    for path in paths:  # a dangling or looping symlink is reported by the loader, not refused here
        if not os.path.lexists(path):
            raise click.BadParameter(f"Path '{path}' does not exist.", param_hint="'PATHS...'")
    options: dict[str, Any] = {}
    if column_map:
        from hermes_store.sessions.importers.message_dump import parse_column_map

        try:
            options["column_map"] = parse_column_map(column_map)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--map'") from None
    if role_map:
        from hermes_store.sessions.importers.message_dump import parse_role_map

        try:
            options["role_map"] = parse_role_map(role_map)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--role-map'") from None
    home = get_home(ctx)
    if discover:
        from hermes_store.sessions.discovery import discovered_paths, find_sources

        found = find_sources(None, Path.home(), Path(home.root))
        paths = (*paths, *discovered_paths(found))
    db = home.open_db()
    try:
        total = sum(_size(p) for p, _ in walk_inputs(paths)) if progress_shown() else 0
        stopped: BaseException | None = None
        with Progress(total, "Indexing") as bar:  # cleared when left: messages start on a clean line
            loader = BulkLoader(db, batch_messages=batch_size, fts_mode=fts_mode,
                                progress=(lambda path, size: bar.update(size)) if bar.shown else None,
                                options=options, on_wait=lambda line: click.echo(f"note: {line}", err=True))
            try:
                summary = loader.run(paths, fmt)
            except (KeyboardInterrupt, DatabaseError, apsw.Error) as exc:
                stopped = exc
        if isinstance(stopped, KeyboardInterrupt):
            echo_after_ctrl_c("Interrupted: committed batches are kept; run the same command to resume.")
            sys.exit(130)
        if stopped is not None:  # an engine's own error names no file: the store's is named
            where = "" if isinstance(stopped, DatabaseError) else f"{getattr(db, 'display_url', None) or db.path}: "
            fail(f"indexing stopped: {where}{stopped} (committed batches are kept; re-run to resume;"
                 " `hermes-store doctor` checks the store)" if where else
                 f"indexing stopped: {stopped} (committed batches are kept; re-run to resume)")
    finally:
        db.close()
    if as_json:
        echo_json(summary.as_dict())
    else:
        columns, err_columns = output_columns(), output_columns(err=True)  # wrapped at words on a terminal
        click.echo(fill(f"{counted(summary.files, 'file')}: {counted(summary.sessions_added, 'session')} and "
                   f"{counted(summary.messages_added, 'message')} added, {counted(summary.skipped, 'message')} "
                   f"already indexed, {counted(len(summary.errors), 'problem')}"
                   + (f", {summary.messages_updated} edited in place" if summary.messages_updated else "")
                   + (f", {counted(summary.forgotten, 'forgotten message')} left out" if summary.forgotten else "")
                   + (f", {len(summary.notices)} with nothing to import" if summary.notices else "")
                   + (f", {counted(summary.reread, 'file')} read again by a newer reader" if summary.reread else ""),
                        columns, "", "  "))
        for error in summary.errors:
            where = one_line(error["path"]) + (f":{error['line']}" if error["line"] is not None else "")
            click.echo(fill(f"{where}: {one_line(str(error['error']))}", err_columns, "  ", "    "), err=True)
        for notice in summary.notices:  # a known format's input holding nothing: said, not a problem
            click.echo(fill(f"note: {one_line(notice['path'])}: {one_line(str(notice['notice']))}", columns, "  ",
                            "    "))
        if summary.unwalked:
            shown = ", ".join(one_line(p) for p in summary.unwalked[:8]) + (", ..." if len(summary.unwalked) > 8 else "")
            click.echo(fill(f"note: hidden folders not walked (agents keep data there): {shown}; name one to "
                            "index it, or use --discover", columns, "  ", "    "))
    sys.exit(1 if summary.all_failed else 0)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


@sessions.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--source", default=None, help="Only sessions from this source (cli, telegram, cron, ...).")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.pass_context
@model_facing
def list_cmd(ctx: click.Context, as_json: bool, source: str | None, limit: int) -> None:
    """List sessions, most recently active first."""
    from hermes_store.sessions.live import SessionIndex
    from hermes_store.sessions.provenance import SOURCE_DELETED, source_status

    with get_home(ctx).open_reader() as db, SessionIndex(db) as index:
        rows = index.list_sessions(source=source, limit=limit)
        status = source_status(index.storage, [row["id"] for row in rows])
        sources_known = index.known_sources() if not rows else []
    for row in rows:
        row.update(status.get(row["id"], {"source_path": None, "source_deleted": False}))
    if as_json:
        echo_json(rows)
        return
    if not rows:
        if source is not None and sources_known:
            click.echo(f"No sessions from source {source!r} (indexed sources: {', '.join(sources_known)}).")
            return
        click.echo("No sessions indexed.")
        click.echo(fill(nothing_indexed_note(get_home(ctx)), output_columns(err=True), "", "  "), err=True)
        return
    # columns as wide as their widest value on a terminal (a CJK id or source takes two columns a
    # character; a control character is shown as \\u<4 hex>, six)
    ids, sources = [one_line(row["id"]) for row in rows], [one_line(row["source"] or "") for row in rows]
    id_width, source_width = max(map(shown_width, ids)), max(map(shown_width, sources))
    # on a terminal a row never wraps: a long title is cut with "…"; when even the ids do not
    # leave room (a subagent's id, a narrow window), each id gets a line of its own
    columns = output_columns()
    stacked = columns is not None and id_width + source_width + 27 > columns  # + the fixed columns
    for row, shown_id, source in zip(rows, ids, sources, strict=True):
        gone = f"  [{SOURCE_DELETED}]" if row["source_deleted"] else ""
        rest = (f"{pad(source, source_width)}  {timeutil.shown_time(row['started_at']):<16} {row['message_count']:>6}  "
                f"{one_line(row['title'] or '')}{gone}").rstrip()
        if stacked:
            click.echo(shown_id)
            click.echo(clip("    " + rest, columns))
        else:
            click.echo(clip(f"{pad(shown_id, id_width)}  {rest}", columns))


def _resolve(index: Any, session_id: str) -> str:
    """An exact id, or a unique prefix of one."""
    matches = index.resolve_id(session_id)
    if len(matches) == 1:
        return matches[0]
    if matches:
        fail(f"session id prefix {session_id!r} is ambiguous")
    fail(f"session not found: {session_id}")
    raise AssertionError  # fail() exits


@sessions.command("show")
@click.argument("session_id")
@click.option("--context", "around", type=click.IntRange(0, 1000), default=3, show_default=True,
              help="With ID#N: how many messages to show before and after message N.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {session, messages}.")
@click.pass_context
@model_facing
def show_cmd(ctx: click.Context, session_id: str, around: int, as_json: bool) -> None:
    """Show one session and its messages (ID may be a unique prefix).

    `ID#N` (the reference search, recall and session_search print) shows message N with
    --context messages either side, marked `>`; `@session:ID` works as ID.
    """
    from hermes_store.sessions.calltext import render_calls
    from hermes_store.sessions.live import SessionIndex
    from hermes_store.sessions.provenance import SOURCE_DELETED, source_status
    from hermes_store.sessions.refs import MessageRef, named_id, parse_ref
    from hermes_store.threats import past_findings

    try:
        ref = parse_ref(session_id)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'SESSION_ID'") from None
    with get_home(ctx).open_reader() as db, SessionIndex(db) as index:
        if ref.session_id != named_id(session_id) and index.storage.has_session(named_id(session_id)):
            ref = MessageRef(named_id(session_id))  # the whole text is a session's id (``file#3``)
        if not index.resolve_id(ref.session_id):
            for item in index.storage.forgotten_summary(ref.session_id):
                if item["whole_session"]:  # say so, never the text
                    fail(f"session {ref.session_id} was forgotten for good at {timeutil.shown_time(item['forgotten_at'])}")
        sid = _resolve(index, ref.session_id)
        session = index.get_session(sid)
        messages = index.get_messages(sid)
        status = source_status(index.storage, [sid]).get(sid)
        forgotten = [seq for item in index.storage.forgotten_summary(sid) for seq in item["messages"]]
    target = ref.seq
    if ref.message_id is not None:
        target = next((m["seq"] for m in messages if m["id"] == ref.message_id), None)
        if target is None:
            fail(f"message id {ref.message_id} is not in session {sid}")
    if target is not None:
        if not any(m["seq"] == target for m in messages):
            fail(f"no message {sid}#{target} (messages are numbered "
                 f"{messages[0]['seq'] if messages else 0}..{messages[-1]['seq'] if messages else 0})")
        messages = [m for m in messages if abs(m["seq"] - target) <= around]
    assert session is not None
    session.update(status or {"source_path": None, "source_deleted": False})
    for message in messages:  # a uid only where the source gave one (hermes-db, schema 31)
        if message.get("message_uid") is None:
            message.pop("message_uid", None)
    for row in [session, *messages]:  # the stored text as it is, marked where the scan flags it
        findings = past_findings(row.get("title" if row is session else "content") or "")
        if findings:
            row["flagged"] = findings
    if as_json:
        echo_json({"session": session, "messages": messages, **({"forgotten_messages": forgotten} if forgotten else {})})
        return
    columns = output_columns()  # on a terminal, lines wrap at words (a header's under its indent)
    lines = [f"Session {session['id']}  [{session['source']}, {session['origin_format']}]"]
    if session.get("flagged"):
        lines.append(f"  [flagged: {', '.join(session['flagged'])}] (the title)")
    lines += [f"  {label}: {session[label]}" for label in ("title", "model", "workspace", "parent_session_id")
              if session.get(label)]
    if session["source_path"]:
        gone = f"  ({SOURCE_DELETED}; the session is kept here)" if session["source_deleted"] else ""
        lines.append(f"  source file: {session['source_path']}{gone}")
    lines.append(f"  started: {timeutil.shown_time(session['started_at'])}  ended: {timeutil.shown_time(session['ended_at'])}"
                 f"  messages: {session['message_count']}")
    if forgotten:
        lines.append(f"  forgotten for good: {counted(len(forgotten), 'message')} (#{', #'.join(map(str, forgotten))})")
    for line in lines:
        click.echo(fill(line, columns, "", "    "))
    for message in messages:
        head = message["role"].upper()
        if message["tool_name"]:
            head += f":{message['tool_name']}"
        body = message["content"] or ""
        if message["tool_calls"]:
            calls = render_calls(message["tool_calls"]) or [str(message["tool_calls"])]
            body = "\n".join(([body] if body else []) + [f"[tool call] {c}" for c in calls])
        mark = "> " if message["seq"] == target else ""
        ref = style(f"{session['id']}#{message['seq']}", "bold" if mark else "dim")
        flag = f"[flagged: {', '.join(message['flagged'])}]\n" if message.get("flagged") else ""
        text = "\n".join(fill(line, columns) for line in f"{flag}{body}".split("\n"))
        heading = fill(f"{mark}{ref} {head} ({timeutil.shown_time(message['timestamp'])})", columns, "", "    ")
        click.echo(f"\n{heading}\n{text}")


@sessions.command("stats")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def stats_cmd(ctx: click.Context, as_json: bool) -> None:
    """Sessions, messages, per-source counts, database and index size."""
    from hermes_store.sessions.live import SessionIndex

    with get_home(ctx).open_reader() as db, SessionIndex(db) as index:
        data = index.stats()
    if as_json:
        echo_json(data)
        return
    click.echo(f"Sessions: {data['sessions']}")
    click.echo(f"Messages: {data['messages']}")
    for source, counts in data["per_source"].items():
        click.echo(f"  {source}: {counted(counts['sessions'], 'session')}, {counted(counts['messages'], 'message')}")
    click.echo(f"Indexed files: {data['sources_indexed']}")
    click.echo(f"Database: {data['db_bytes'] / 1e6:.1f} MB")
    if data["index_bytes"] is not None:
        click.echo(f"FTS index: {data['index_bytes'] / 1e6:.1f} MB")


@sessions.command("delete")
@click.argument("session_id")
@click.option("--forget", "for_good", is_flag=True,
              help="Forget it for good: later index runs skip it and say so (as `hermes-store forget --session`).")
@click.pass_context
def delete_cmd(ctx: click.Context, session_id: str, for_good: bool) -> None:
    """Delete one session and its messages (its children keep their grandparent)."""
    import time

    from hermes_store.sessions.live import SessionIndex
    from hermes_store.sessions.storage_vectors import VectorStore

    with get_home(ctx).open_reader() as db, SessionIndex(db) as index:  # no store: nothing to delete
        sid = _resolve(index, session_id)
        removed = index.storage.forget_session(sid, time.time()) if for_good else index.delete_session(sid)
    vectors = VectorStore.for_home(get_home(ctx))  # its embeddings go with it
    try:
        vectors.forget([], [sid])
    finally:
        vectors.close()
    click.echo(f"Deleted session {sid} ({counted(removed, 'message')})" + ("; forgotten for good." if for_good else "."))


@sessions.command("prune")
@click.option("--older-than", "older_than", default="90d", show_default=True,
              help="Age: 30s, 15m, 5h, 2d, 1w, a number of days, or an ISO date.")
@click.option("--dry-run", is_flag=True, help="Only list what would be deleted.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def prune_cmd(ctx: click.Context, older_than: str, dry_run: bool, as_json: bool) -> None:
    """Delete whole lineages whose every session is older than AGE.

    A lineage (a session with its parents and children) goes only when all of
    it is old; live sessions that never ended are kept.
    """
    from hermes_store.sessions.live import SessionIndex
    from hermes_store.sessions.storage_vectors import VectorStore
    from hermes_store.timeutil import parse_age

    try:
        age = parse_age(older_than)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--older-than") from exc
    with get_home(ctx).open_reader() as db, SessionIndex(db) as index:  # no store: nothing to prune
        ids = index.prune(age, dry_run=dry_run)
    if ids and not dry_run:
        vectors = VectorStore.for_home(get_home(ctx))  # their embeddings go with them, as for delete
        try:
            vectors.forget([], ids)
        finally:
            vectors.close()
    if as_json:
        echo_json({"dry_run": dry_run, "sessions": ids, "count": len(ids)})
        return
    verb = "Would delete" if dry_run else "Deleted"
    click.echo(f"{verb} {counted(len(ids), 'session')}.")
    for sid in ids:
        click.echo(f"  {sid}")


@sessions.command("sources")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def sources_cmd(ctx: click.Context, as_json: bool) -> None:
    """Every known agent transcript location on this machine, and how much of it is indexed.

    Locations come from each importer's defaults under $HOME plus the Hermes
    home's state.db and sessions/. 'sessions index --discover' indexes them.
    """
    from hermes_store.sessions.discovery import find_sources, project_formats
    from hermes_store.sessions.provenance import SOURCE_DELETED, missing_sources
    from hermes_store.sessions.storage import open_session_storage

    home = get_home(ctx)
    db = home.open_existing_db()
    forgotten: list[dict[str, Any]] = []
    gone: list[dict[str, Any]] = []
    try:
        storage = open_session_storage(db) if db is not None else None
        found = find_sources(storage, Path.home(), Path(home.root))
        forgotten = storage.forgotten_summary() if storage is not None else []
        if storage is not None and storage.ready():
            gone = missing_sources(storage)
    finally:
        if db is not None:
            db.close()
    if as_json:
        echo_json([location.as_dict() for location in found]
                  + [{"agent": row["format"], "path": row["path"], "exists": False,
                      "status": SOURCE_DELETED, "sessions": row["sessions"]} for row in gone]
                  + [{"status": "forgotten", "session_id": item["session_id"],
                      "whole_session": item["whole_session"], "messages": item["messages"],
                      "path": item["source"], "forgotten_at": item["forgotten_at"]}
                     for item in forgotten])  # ids, positions and times only, never the text
        return
    # columns as wide as their longest value: a long agent name or pattern shifted its row's
    # later columns out of line with the rest; on a terminal too narrow for the rows (any under
    # ~150 columns) each location's pattern goes on a line of its own below its agent and state
    patterns = [_shown_pattern(location.pattern, Path(home.root)) for location in found]
    states = [(f"{counted(location.files, 'file')}, {location.indexed_files} indexed "
               f"({counted(location.sessions, 'session')}, {counted(location.messages, 'message')})"
               if location.exists else "not found") + (" (truncated)" if location.truncated else "")
              for location in found]
    agent_width = max((shown_width(location.agent) for location in found), default=0)
    pattern_width = max(map(shown_width, patterns), default=0)
    state_width = max(map(shown_width, states), default=0)
    columns = output_columns()
    stacked = columns is not None and agent_width + pattern_width + state_width + 4 > columns
    for location, pattern, state in zip(found, patterns, states, strict=True):
        if stacked:  # the agent and its state on one line where they fit, the pattern below
            if agent_width + state_width + 2 <= columns:
                click.echo(f"{pad(location.agent, agent_width)}  {state}")
            else:
                fits = shown_width(location.agent) + shown_width(state) + 2 <= columns
                click.echo(f"{location.agent}  {state}" if fits
                           else f"{fill(location.agent, columns)}\n{fill(state, columns, '    ')}")
            click.echo(f"    {pattern}")
        else:
            click.echo(f"{pad(location.agent, agent_width)}  {pad(pattern, pattern_width)}  {state}")
        for problem in location.problems:
            click.echo(f"  problem: {one_line(problem)}", err=True)
    click.echo("\n" + fill("Written inside each project, indexed only when you name the path "
                           "(hermes-store sessions index PATH; --discover never looks in projects):", columns))
    for agent, files in project_formats():
        row = f"  {agent:<34} {', '.join(files)}"
        click.echo(row if columns is None or shown_width(row) <= columns else f"  {agent}\n    {', '.join(files)}")
    if gone:
        click.echo(f"\nIndexed files no longer on disk ({SOURCE_DELETED}; their sessions are kept):")
        for row in gone:
            click.echo(f"  {row['path']}  [{row['format']}]  {counted(row['sessions'], 'session')}")
    if forgotten:  # counts and ids only, never the text
        whole = [item["session_id"] for item in forgotten if item["whole_session"]]
        single = sum(len(item["messages"]) for item in forgotten)
        click.echo(f"forgotten for good (hermes-store forget): {counted(len(whole), 'session')}"
                   f"{' (' + ', '.join(whole) + ')' if whole else ''}, {counted(single, 'single message')}"
                   " -- indexing their sources again skips them")


def _shown_pattern(pattern: str, hermes_home: Path) -> str:
    """A default location as a person reads it: ``{hermes_home}`` is this Hermes home, written
    with ``~`` when it is under the user's home like the other locations."""
    if "{hermes_home}" not in pattern:
        return pattern
    user = Path.home()
    shown = str(hermes_home)
    if hermes_home.is_relative_to(user):
        shown = "/".join(["~", *hermes_home.relative_to(user).parts])
    return pattern.replace("{hermes_home}", shown)


@sessions.command("formats")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def formats_cmd(as_json: bool) -> None:
    """The transcript formats this installation reads (bundled and from entry points)."""
    from hermes_store.sessions.importers import IMPORTERS, ORIGINS, REGISTRY_PROBLEMS

    rows = [{"name": name, "agent": cls.agent or name, "origin": ORIGINS.get(name, "bundled"),
             "default_locations": {k: list(v) for k, v in cls.default_locations.items()}}
            for name, cls in IMPORTERS.items()]
    if as_json:
        echo_json({"formats": rows, "problems": list(REGISTRY_PROBLEMS)})
        return
    columns = output_columns()  # on a terminal, a long name or list of places wraps at words
    # beside a 23-column name while that leaves room for a path; below it, indented, on a narrow
    # terminal (at 40 columns the places had 17: every path broke across lines without indent)
    stacked = columns is not None and columns - 23 < 40
    under = " " * (4 if stacked else 23)
    for row in rows:
        where = "; ".join(row["default_locations"].get("linux", [])) or "-"
        origin = "" if row["origin"] == "bundled" else f" [{row['origin']}]"
        if stacked:
            click.echo(row["name"])
        click.echo(fill(f"{row['agent']}{origin}", columns, under if stacked else f"{row['name']:<22} ", under))
        click.echo(fill(where, columns, under))
    for problem in REGISTRY_PROBLEMS:
        click.echo(f"problem: {problem}", err=True)
