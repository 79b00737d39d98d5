"""``hermes-store hooks install|uninstall|run claude-code``: index a session when it ends.

``install claude-code`` adds a ``SessionEnd`` hook to Claude Code's ``~/.claude/settings.json``
(``{"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": ...}]}]}}``) whose
command is ``hermes-store --home HOME hooks run claude-code``. Claude Code hands a hook its
event as JSON on stdin (``session_id``, ``transcript_path``, ``cwd``, ``reason``, ...); ``run``
reads ``transcript_path`` and indexes that file. Every other setting and hook is kept, the
previous file is copied to ``settings.json.bak`` before it is rewritten (atomically), and
installing twice changes nothing.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import click

from hermes_store.cli.common import counted, fail, get_home, store_home
from hermes_store.engines import display_url
from hermes_store.fsutil import atomic_write_text
from hermes_store.home import Home

EVENT = "SessionEnd"
MARKER = "hooks run claude-code"  # how our own hook command is recognised
HOOK_TIMEOUT = 120  # seconds Claude Code lets the hook run
MAX_STDIN = 1 << 20  # the hook's event JSON is small; read at most this much


def _settings_path() -> Path:
    return Path.home() / ".claude" / "settings.json"


def _command(home: Home) -> str:
    """The hook's command: this home, and the store named on this command line or in this
    environment, which Claude Code's own environment and working directory would not name."""
    script = shutil.which("hermes-store")
    argv = [script] if script else [sys.executable, "-c", "from hermes_store.cli import main; main()"]
    url = home.database_url_to_pass()
    store = ["--database-url", url] if url else []
    return shlex.join([*argv, "--home", str(Path(home.root).absolute()), *store, *MARKER.split()])


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, UnicodeError, ValueError) as exc:
        fail(f"{path}: cannot read it as JSON ({exc}); left unchanged")
    if not isinstance(data, dict):
        fail(f"{path}: expected a JSON object at the top level; left unchanged")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict) or not isinstance(hooks.get(EVENT, []), list):
        fail(f"{path}: field 'hooks.{EVENT}' is not in Claude Code's shape; left unchanged")
    return data


def _ours(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("command"), str) and MARKER in entry["command"]


def _save(path: Path, data: dict[str, Any]) -> Path | None:
    """Write ``data`` to ``path``; the file it replaces is kept as ``<name>.bak``, returned (None
    when there was no file before)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    kept = None
    if path.exists():
        kept = path.with_name(path.name + ".bak")
        shutil.copy2(path, kept)
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return kept


@click.group("hooks")
def hooks() -> None:
    """Agent hooks that index a session when it ends (Claude Code)."""


@hooks.command("install")
@click.argument("agent", type=click.Choice(["claude-code"]))
@click.pass_context
def install(ctx: click.Context, agent: str) -> None:
    """Add the index-on-session-end hook to the agent's settings."""
    path = _settings_path()
    data = _load(path)
    command = _command(store_home(ctx))
    groups = data.setdefault("hooks", {}).setdefault(EVENT, [])
    present = [h for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if _ours(h)]
    if any(h.get("command") == command for h in present):
        click.echo(f"already installed in {path}")
        return
    for group in groups:  # an older command of ours (another install path): replaced in place
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            group["hooks"] = [h for h in group["hooks"] if not _ours(h)]
    data["hooks"][EVENT] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
    data["hooks"][EVENT].append({"hooks": [{"type": "command", "command": command,
                                            "timeout": HOOK_TIMEOUT}]})
    kept = _save(path, data)
    click.echo(f"added a {EVENT} hook to {path}" + (f" (previous file kept as {kept.name})" if kept else ""))
    url = store_home(ctx).database_url_to_pass()
    if url and display_url(url) != url:  # the mask changed it: the URL holds a password
        click.echo(f"warning: the hook's command in {path} holds the store URL with its password; to keep "
                   "it out, name the store in config.yaml (store.database_url) and the password in "
                   "~/.pgpass, then install again (docs/watch.md)", err=True)


@hooks.command("uninstall")
@click.argument("agent", type=click.Choice(["claude-code"]))
def uninstall(agent: str) -> None:
    """Remove the hook (other hooks and settings are kept)."""
    path = _settings_path()
    data = _load(path)
    groups = data.get("hooks", {}).get(EVENT, [])
    kept = []
    removed = 0
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            mine = [h for h in group["hooks"] if _ours(h)]
            removed += len(mine)
            group = {**group, "hooks": [h for h in group["hooks"] if not _ours(h)]}
            if not group["hooks"]:
                continue
        kept.append(group)
    if not removed:
        click.echo(f"no hermes-store hook in {path}")
        return
    if kept:
        data["hooks"][EVENT] = kept
    else:
        del data["hooks"][EVENT]
        if not data["hooks"]:
            del data["hooks"]
    _save(path, data)
    click.echo(f"removed the {EVENT} hook from {path}")


@hooks.command("run")
@click.argument("agent", type=click.Choice(["claude-code"]))
@click.pass_context
def run(ctx: click.Context, agent: str) -> None:
    """(Called by the hook.) Index the transcript named in the event JSON on stdin."""
    from hermes_store.sessions.loader import BulkLoader

    raw = sys.stdin.read(MAX_STDIN)
    try:
        event = json.loads(raw or "{}")
    except ValueError as exc:
        fail(f"hook input is not JSON: {exc}")
    transcript = event.get("transcript_path") if isinstance(event, dict) else None
    if not isinstance(transcript, str) or not transcript:
        fail("hook input has no 'transcript_path'")
    path = Path(transcript).expanduser()
    if not path.is_file():
        click.echo(f"{path}: no such transcript; nothing indexed", err=True)
        return
    db = get_home(ctx).open_db()
    try:
        summary = BulkLoader(db, pipeline=False).run([path])
    finally:
        db.close()
    click.echo(f"indexed {counted(summary.messages_added, 'message')} from {path}", err=True)
