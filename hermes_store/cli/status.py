"""``hermes-store status``: what ``hermes memory status`` shows, plus paths, counts, usage, DB size.

Read-only: nothing is created or written (the database is not opened).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from importlib import metadata
from typing import Any

import click

from hermes_store.builtin.entries import (
    char_count,
    parse_entries,
    read_raw_checked,
    usage_long,
    usage_percent,
)
from hermes_store.builtin.render import over_budget_warning
from hermes_store.cli.common import counted, echo_json, fail, get_home, model_facing
from hermes_store.cli.style import fill, output_columns
from hermes_store.config_check import Section, duplicate_keys, unknown_keys
from hermes_store.engines import engine_named
from hermes_store.facts.config import KEYS as FACT_KEYS
from hermes_store.facts.config import SECTION as FACTS_SECTION
from hermes_store.facts.config import load_fact_config
from hermes_store.home import (
    MEMORY_KEYS,
    STORE_KEYS,
    TOP_KEYS,
    ConfigError,
    Home,
    MemoryConfig,
    located,
)
from hermes_store.providers.discovery import plugins_problems
from hermes_store.sessions.fusion import SEMANTIC_KEYS, semantic_problems

RULE = "\u2500" * 40
ENTRY_POINT_GROUPS = ("hermes_store.providers", "hermes_agent.memory_providers")


def _flag(on: bool) -> str:
    return "enabled \u2713" if on else "disabled \u2717"


def _scan_plugins(home: Home) -> list[dict[str, Any]]:
    """Fallback listing without loading any plugin code: plugin dirs and entry points."""
    found: dict[str, str] = {}
    try:
        for child in sorted(home.plugins_dir.iterdir()):
            if child.is_dir() and ((child / "plugin.yaml").exists() or (child / "__init__.py").exists()):
                found.setdefault(child.name, "plugin_dir")
    except OSError:
        pass
    for group in ENTRY_POINT_GROUPS:
        try:
            points = metadata.entry_points(group=group)
        except Exception:  # broken package metadata must not break status
            continue
        for point in points:
            found.setdefault(point.name, "entry_point")
    return [{"name": name, "source": source, "available": None, "reason": "", "hint": source,
             "missing": [], "status_config": None} for name, source in sorted(found.items())]


def _env_fields(provider: Any) -> list[dict[str, Any]]:
    """``{env_var, set, url}`` for every config field of ``provider`` that names an env var."""
    try:
        schema = provider.get_config_schema() or []
    except Exception:  # a broken plugin must not break status
        return []
    rows = []
    for field in schema:
        if isinstance(field, dict) and field.get("env_var"):
            var = str(field["env_var"])
            rows.append({"env_var": var, "set": bool(os.environ.get(var)), "url": field.get("url") or ""})
    return rows


def installed_plugins(home: Home, provider_config: dict[str, Any] | None = None,
                      active: str | None = None) -> list[dict[str, Any]]:
    """Memory provider plugins visible to this home, with availability when they can be loaded.

    Uses provider discovery (entry points and ``$HOME/plugins/<name>/``); if that
    machinery fails, falls back to listing names without loading anything.
    """
    try:
        from hermes_store.providers.discovery import (
            NOT_RUN_REASON,
            discover_providers,
            release_unused,
        )

        # status is read-only: only the configured provider's code runs (a session would load it anyway)
        infos = discover_providers(home, include_builtin=False,
                                   run_plugin_code=frozenset({active}) if active else frozenset())
    except Exception:  # discovery itself broken: still show what is on disk
        return _scan_plugins(home)
    rows = []
    try:
        for info in infos:
            if info.shadowed_by:
                continue
            instance = info.provider
            missing = _env_fields(instance) if instance is not None else []
            status_config = None
            getter = getattr(instance, "get_status_config", None)
            if info.name == active and callable(getter):
                try:
                    status_config = dict(getter(dict(provider_config or {})) or {})
                except Exception as exc:
                    status_config = {"status_config_error": str(exc)}
            rows.append({
                "name": info.name, "source": info.source,
                "available": None if info.reason == NOT_RUN_REASON else info.usable,
                "reason": info.reason,
                "hint": "not loaded by status" if info.reason == NOT_RUN_REASON
                else "requires API key" if missing else "no setup needed",
                "missing": missing, "status_config": status_config,
            })
    finally:
        release_unused(infos)
    return rows


def _memory_tool_enabled(home: Home, cfg: MemoryConfig) -> bool:
    try:
        agent = home.config().get("agent") or {}
    except ConfigError:
        agent = {}
    disabled = agent.get("disabled_toolsets") if isinstance(agent, dict) else None
    hidden = isinstance(disabled, list) and "memory" in disabled
    return (cfg.memory_enabled or cfg.user_profile_enabled) and not hidden


def _store_info(path: os.PathLike[str], limit: int) -> dict[str, Any]:
    raw, readable = read_raw_checked(path)  # type: ignore[arg-type]
    entries = parse_entries(raw) if readable else []
    used = char_count(entries)
    return {"file": str(path), "exists": os.path.exists(path), "readable": readable,
            "entry_count": len(entries), "chars": used, "limit": limit,
            "usage_percent": usage_percent(used, limit), "usage": usage_long(used, limit),
            "over_budget": over_budget_warning(used, limit)}


def collect_status(home: Home) -> dict[str, Any]:
    """Everything ``status`` prints, as a dict."""
    cfg = home.read_memory_config()
    provider = cfg.provider or None
    provider_config = cfg.raw.get(provider) if provider else None
    provider_config = provider_config if isinstance(provider_config, dict) else {}
    plugins = installed_plugins(home, provider_config, provider)
    active = next((p for p in plugins if p["name"] == provider), None)
    if active is not None and active["status_config"] is not None:
        provider_config = active["status_config"]
    database = _database_info(home)
    database["counts"], size = _counts(home, database)
    if database["path"] is None and size is not None:  # a server's store: its size as it says it
        database["size_bytes"] = size
    database["semantic"] = _semantic_info(home, database)
    return {
        "builtin": {
            "memory_injection": cfg.memory_enabled,
            "user_profile": cfg.user_profile_enabled,
            "memory_tool": _memory_tool_enabled(home, cfg),
        },
        "provider": provider,
        "provider_config": provider_config,
        "plugin_installed": (active is not None) if provider else None,
        "provider_available": active["available"] if active is not None else None,
        "missing": active["missing"] if active is not None else [],
        "installed_plugins": [
            {k: p[k] for k in ("name", "source", "available", "reason", "hint")} | {"active": p["name"] == provider}
            for p in plugins
        ],
        "home": str(home.root),
        "home_exists": home.root.is_dir(),
        "config_path": str(home.config_path),
        "render": cfg.render,
        "stores": {
            "memory": _store_info(home.memory_file, cfg.memory_char_limit),
            "user": _store_info(home.user_file, cfg.user_char_limit),
        },
        "database": database,
    }


# where a status line's value starts: after its indent and its "Label:" with the spaces after it
_VALUE_START = re.compile(r" *(?:[A-Za-z][A-Za-z .]*: +)?")


def _database_info(home: Home) -> dict[str, Any]:
    """Engine and location of the store (a server URL with its password masked; never opened:
    ``exists`` False before the first write, None when a server cannot be asked)."""
    db_path = home.sqlite_path
    if db_path is None:
        try:  # the server is asked once whether its database holds a store (never created here)
            exists: bool | None = home.store_exists()
        except Exception:  # noqa: BLE001 - unreachable: the counts say so
            exists = None
        return {"engine": home.engine, "url": home.store_location(), "path": None,
                "exists": exists, "size_bytes": None}
    db_size = 0
    for suffix in ("", "-wal"):
        try:
            db_size += os.path.getsize(str(db_path) + suffix)
        except OSError:
            pass
    exists = db_path.exists()
    info = {"engine": home.engine, "path": str(db_path), "exists": exists, "size_bytes": db_size}
    problem = None if exists else home.store_directory_problem()
    return {**info, "problem": problem} if problem else info


def _counts(home: Home, database: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """Sessions, messages and facts stored (zeros before the store exists; ``error`` when the
    database cannot be read, so status still shows everything else), and the bytes the store
    uses as its database tells them (None when not read)."""
    if database.get("exists") is False:  # no store created yet (None: a server that cannot be asked)
        return {"sessions": 0, "messages": 0, "facts": 0}, None
    from hermes_store.facts.store import FactStore
    from hermes_store.sessions.live import SessionIndex

    try:
        db = home.open_db()
        try:
            counts: dict[str, Any] = dict(SessionIndex(db).counts())
            counts["facts"] = FactStore(db).count()
            size = int(db.size_bytes())
        finally:
            db.close()
    except Exception as exc:  # status never fails for a damaged store: it says so
        return {"sessions": None, "messages": None, "facts": None, "error": str(exc)}, None
    return counts, size


def _semantic_info(home: Home, database: dict[str, Any]) -> dict[str, Any]:
    """``semantic.model`` and how many vectors of it the store holds (the model is not loaded;
    ``error`` when it cannot be found or the vectors cannot be read)."""
    from hermes_store.sessions.embeddings import SemanticUnavailable, configured_model, stored_names
    from hermes_store.sessions.storage_vectors import VectorStore

    try:
        model = configured_model(home.config())
    except ConfigError:
        return {"model": None}
    if model is None:
        return {"model": None, **_reranker_info(home)}
    try:
        names = stored_names(model)
    except SemanticUnavailable as exc:
        return {"model": model, "vectors": None, "error": str(exc), **_reranker_info(home)}
    if database.get("exists") is False:  # nothing indexed yet: the model and reranker still checked
        return {"model": model, "vectors": 0, **_reranker_info(home)}
    vectors = VectorStore.for_home(home)
    try:
        count = sum(vectors.count(name) for name in names)
    except Exception as exc:  # noqa: BLE001 - status never fails: it says what it could not read
        return {"model": model, "vectors": None, **_reranker_info(home),
                "error": _quietly(vectors.damage) or f"the vectors cannot be read: {exc}"}
    finally:
        vectors.close()
    return {"model": model, "vectors": count, **_reranker_info(home)}


def _quietly(check: Any) -> Any:
    """``check()``, or None when it fails too (status says what it could, never a traceback)."""
    try:
        return check()
    except Exception:  # noqa: BLE001 - a second failure adds nothing to the first
        return None


def _reranker_info(home: Home) -> dict[str, Any]:
    """``semantic.reranker`` (found, not loaded), and ``reranker_error`` when it cannot be found."""
    from hermes_store.sessions.embeddings import SemanticUnavailable
    from hermes_store.sessions.reranker import configured_reranker, resolve_reranker

    reranker = configured_reranker(home.config())
    if reranker is None:
        return {}
    try:
        resolve_reranker(reranker)
    except SemanticUnavailable as exc:
        return {"reranker": reranker, "reranker_error": str(exc)}
    return {"reranker": reranker}


def render_status(data: dict[str, Any]) -> list[str]:
    """The human-readable lines (Hermes' layout first, then the store details)."""
    builtin = data["builtin"]
    provider = data["provider"]
    lines = [
        "Memory status",
        RULE,
        "  Built-in (MEMORY.md / USER.md):",
        f"    Memory injection:   {_flag(builtin['memory_injection'])}",
        f"    User profile:       {_flag(builtin['user_profile'])}",
        f"    Memory tool:        {_flag(builtin['memory_tool'])}",
        f"  Provider:  {provider or '(none — built-in only)'}",
    ]
    if provider:
        lines.append(f"  {provider} config:")
        for key, value in data["provider_config"].items():
            lines.append(f"    {key}: {value}")
        installed = data["plugin_installed"]
        lines.append("  Plugin:    " + ("installed \u2713" if installed else "NOT installed \u2717"))
        if not installed:
            lines.append(f"    Install the '{provider}' plugin to ~/.hermes/plugins/ and try again.")
        else:
            available = data["provider_available"]
            lines.append("  Status:    " + ("available \u2713" if available else "not available \u2717"))
            if not available and data["missing"]:
                lines.append("  Missing:")
                for row in data["missing"]:
                    mark = "\u2713" if row["set"] else "\u2717"
                    url = f"  \u2192 {row['url']}" if row["url"] else ""
                    lines.append(f"    {mark} {row['env_var']}{url}")
                lines.append("  Note: systemd/gateway services do not inherit ~/.hermes/.env \u2014")
                lines.append("  set any variables above in the service environment.")
    if data["installed_plugins"]:
        lines.append("")
        lines.append("  Installed plugins:")
        for plugin in data["installed_plugins"]:
            active = " \u2190 active" if plugin["active"] else ""
            lines.append(f"    \u2022 {plugin['name']}  ({plugin['hint']}){active}")
    # a first run: say that the home and its files are not there yet (the first write makes
    # them), not "0 entries" of a file that does not exist under a home that does not either
    missing_home = "" if data.get("home_exists", True) else "  (does not exist yet: the first write creates it)"
    lines += ["", "  Store:", f"    Home:       {data['home']}{missing_home}"]
    for target, label in (("memory", "MEMORY.md"), ("user", "USER.md")):
        info = data["stores"][target]
        state = info["usage"] if info["readable"] else "UNREADABLE"
        if not info["exists"]:
            lines.append(f"    {label + ':':<11} no file yet  ({info['file']})")
            continue
        lines.append(f"    {label + ':':<11} {counted(info['entry_count'], 'entry', 'entries')}, {state}  ({info['file']})")
        if info["over_budget"]:
            lines.append(f"    {'':<11} {info['over_budget']}")
    db = data["database"]
    if db.get("path") is None:  # on a server
        label = engine_named(db["engine"]).label + (", not created yet" if db["exists"] is False else "")
        label += f", {db['size_bytes']:,} bytes" if db.get("size_bytes") is not None else ""
        lines.append(f"    {'Database:':<11} {label}  ({db['url']})")
    else:
        size = f"{db['size_bytes']:,} bytes" if db["exists"] else "not created yet"
        if db.get("problem"):  # a URL's folder that does not exist: the first write is refused
            size += f" (no directory {os.path.dirname(db['path'])}: the first write is refused)"
        lines.append(f"    {'Database:':<11} {size}  ({db['path']})")
    counts = db.get("counts") or {}
    if counts.get("error"):
        lines.append(f"    {'Counts:':<11} unreadable ({counts['error']})")
    else:
        lines.append(f"    {'Sessions:':<11} {counts.get('sessions', 0):,}")
        lines.append(f"    {'Messages:':<11} {counts.get('messages', 0):,}")
        lines.append(f"    {'Facts:':<11} {counts.get('facts', 0):,}")
    lines.append(f"    {'Render:':<11} {data['render']}")
    semantic = db.get("semantic") or {}
    if semantic.get("model"):
        state = (f"cannot be used ({semantic['error']})" if semantic.get("error")
                 else f"{semantic['vectors']:,} messages embedded"
                 + ("" if semantic["vectors"] else " (hermes-store sessions embed)"))
        lines.append(f"    {'Semantic:':<11} {semantic['model']}, {state}")
    if semantic.get("reranker"):
        error = semantic.get("reranker_error") or (None if semantic.get("model") else "it needs semantic.model")
        lines.append(f"    {'Reranker:':<11} {semantic['reranker']}" + (f", cannot be used ({error})" if error else ""))
    return lines


def _config_sections() -> dict[tuple[str, ...], Section]:
    """The keys each section of config.yaml is read for, from the readers that own them."""
    return {(): Section(TOP_KEYS, owned=False), ("memory",): Section(MEMORY_KEYS, owned=False),
            ("store",): Section(STORE_KEYS, owned=True), ("semantic",): Section(SEMANTIC_KEYS, owned=True),
            ("memory", FACTS_SECTION): Section(FACT_KEYS, owned=True)}


def _raised(read: Callable[[Home], object]) -> Callable[[Home], list[str]]:
    """A check that reads a setting and reports the :class:`ConfigError` it raises."""
    def check(home: Home) -> list[str]:
        try:
            read(home)
        except ConfigError as exc:
            return [str(exc)]
        return []
    return check


#: Every check of config.yaml beyond ``memory:`` (which ``config_errors`` reports), with what
#: its problem does: each returns its problems, a key's reader raising as it does when a
#: command needs the key.
_CONFIG_CHECKS: tuple[tuple[Callable[[Home], list[str]], str], ...] = (
    (_raised(Home.redaction_settings), "every write to the store is refused until it is fixed"),
    (_raised(Home.store_engine), "the store cannot be opened until it is fixed"),
    (_raised(load_fact_config), "fact commands fail until it is fixed"),
    (lambda home: semantic_problems(home.config().get("semantic")), "semantic search does not use it until it is fixed"),
    (lambda home: plugins_problems(home.config()), ""),
    (lambda home: duplicate_keys(home.config_path), ""),
    (lambda home: unknown_keys(home.config_path, _config_sections()), ""),
)


def _config_problems(home: Home) -> list[tuple[str, str]]:
    """Every problem of config.yaml outside ``memory:`` with what it does, each once with its
    file, line and key: a bad ``store.redact_patterns`` regular expression stops every write to
    the store, a bad fact-store or ``semantic:`` value is replaced by its default, a typo
    (``semantc:``) or a key given twice was ignored without a word, so a newcomer checking
    status saw all well."""
    problems: list[tuple[str, str]] = []
    for check, consequence in _CONFIG_CHECKS:
        for problem in check(home):
            problem = located(home.config_path, problem)
            if all(problem != seen for seen, _ in problems):
                problems.append((problem, consequence))
    return problems


@click.command("status")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
@model_facing  # plug-in names, provider reasons and config errors an agent may read
def status(ctx: click.Context, as_json: bool) -> None:
    """Show memory status: built-in stores, provider, paths, entry counts, usage and DB size."""
    home = get_home(ctx)
    try:
        data = collect_status(home)
    except ConfigError as exc:  # a bad config value: a failure (1), not a usage error
        fail(str(exc))
        return
    config_errors = home.read_memory_config().errors
    store_errors = _config_problems(home)
    if as_json:
        echo_json({**data, "config_errors": list(config_errors),
                   "store_config_errors": [problem for problem, _ in store_errors]})
        return
    for problem in config_errors:
        click.echo(f"Warning: {problem} (memory writes are refused until it is fixed)", err=True)
    for problem, consequence in store_errors:
        click.echo(f"Warning: {problem}" + (f" ({consequence})" if consequence else ""), err=True)
    columns = output_columns()  # on a terminal a long value wraps at words, under its value column
    click.echo("\n".join(fill(line, columns, "", " " * len(_VALUE_START.match(line).group()))
                         for line in render_status(data)))
