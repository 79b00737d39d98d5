"""The one registry of database engines (lowest layer): what makes an engine an engine.

Each :class:`Engine` names the URL schemes that choose it, its schema folder, its database
class, its error classes and the storage class of every area (``builtin``, ``facts``,
``sessions``), all as ``"module:Name"`` strings imported on use, so an engine's driver is only
needed where it is chosen. :class:`~hermes_store.home.Home` reads the schemes, ``migrate``
and ``status`` the names, each area's storage factory its storage classes. A third engine is
its modules plus one entry in :data:`ENGINES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

AREAS = ("builtin", "facts", "sessions", "vectors")


@dataclass(frozen=True)
class Engine:
    """One database engine, every part of it named."""

    name: str
    label: str  # how status prints it
    url_schemes: tuple[str, ...]  # ``scheme://`` forms of a URL that choose this engine
    schema_folder: str  # the migrations' folder, relative to the schema directory ("" = its top)
    database: str  # "module:Class" of its database object
    errors: tuple[str, ...]  # "module:Class" of the errors it raises for database trouble
    storages: Mapping[str, str] = field(default_factory=dict)  # area -> "module:Class"
    # "module:function" ``(home, url, **options) -> database``: how a Home opens (creates,
    # migrates) its store on this engine; ``url`` is None for the default engine's own file
    opener: str = ""
    # "module:function" ``(url, base) -> Path | None``: the local file a URL names (a relative
    # path taken from the directory ``base``, None = the working directory), for an engine that
    # keeps the store in a file (malformed URLs raise); "" for an engine on a server
    url_file: str = ""
    # "module:function" ``url -> str``: the URL fit to print (password masked); "" = as given
    display_url: str = ""
    # "module:function" ``url -> None``: raises ValueError for a URL this engine cannot parse,
    # without connecting (so a malformed URL is a configuration error before any open)
    url_check: str = ""
    # "module:function" ``url -> bool``: whether the database a URL names holds a store yet, for
    # an engine on a server (a file engine's store is its file: :attr:`url_file`); "" = always
    store_check: str = ""
    # "module:function" ``url -> str``: the URL with what this process's environment adds to it
    # written in, for a process started elsewhere (a hook, a service); "" = the URL as given
    url_to_pass: str = ""

    @property
    def file_based(self) -> bool:
        """True when this engine keeps the store in a local file (see :attr:`url_file`)."""
        return bool(self.url_file)

    def passed_url(self, url: str) -> str:
        """``url`` with what this environment adds to it written in (:attr:`url_to_pass`)."""
        return load(self.url_to_pass)(url) if self.url_to_pass else url


ENGINES: dict[str, Engine] = {
    "sqlite": Engine(
        name="sqlite", label="SQLite", url_schemes=("sqlite",), schema_folder="",
        database="hermes_store.db:Database",
        errors=("hermes_store.db:DatabaseError", "apsw:Error"),
        storages={
            "builtin": "hermes_store.builtin.storage_sqlite:SqliteBuiltinStorage",
            "facts": "hermes_store.facts.storage_sqlite:SqliteFactStorage",
            "sessions": "hermes_store.sessions.storage_sqlite:SqliteSessionStorage",
            "vectors": "hermes_store.sessions.storage_vectors_sql:SqliteVectorRows",
        },
        opener="hermes_store.db:open_home_store", url_file="hermes_store.db:sqlite_url_path"),
    "postgresql": Engine(
        name="postgresql", label="PostgreSQL", url_schemes=("postgresql", "postgres"), schema_folder="pg",
        database="hermes_store.pgdb:PgDatabase",
        errors=("hermes_store.db:DatabaseError", "psycopg:Error"),
        storages={
            "builtin": "hermes_store.builtin.storage_pg:PgBuiltinStorage",
            "facts": "hermes_store.facts.storage_pg:PgFactStorage",
            "sessions": "hermes_store.sessions.storage_pg:PgSessionStorage",
            "vectors": "hermes_store.sessions.storage_vectors_pg:PgVectorRows",
        },
        opener="hermes_store.pgdb:open_home_store", display_url="hermes_store.pgdb:mask_url",
        url_check="hermes_store.pgdb:check_url", store_check="hermes_store.pgdb:store_present",
        url_to_pass="hermes_store.pgdb:pinned_url"),
}
DEFAULT_ENGINE = "sqlite"


def load(target: str) -> Any:
    """The object a ``"module:Name"`` string names (the module imported now)."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def engine_named(name: str) -> Engine:
    """The engine called ``name`` (``ValueError`` listing the known ones otherwise)."""
    engine = ENGINES.get(name)
    if engine is None:
        raise ValueError(f"unknown database engine {name!r} (known: {', '.join(sorted(ENGINES))})")
    return engine


def url_scheme(url: str) -> str:
    """The lower-cased scheme of ``url`` ("" when it has none)."""
    head, sep, _ = url.partition(":")
    return head.strip().lower() if sep else ""


def engine_for_url(url: str | None) -> Engine:
    """The engine a database URL chooses (None: the default engine); ``ValueError`` naming the
    scheme (never the rest of the URL, which may hold a password) for an unknown one."""
    if url is None:
        return ENGINES[DEFAULT_ENGINE]
    scheme = url_scheme(url)
    for engine in ENGINES.values():
        if scheme in engine.url_schemes:
            return engine
    forms = " or ".join(f"{s}://..." for e in ENGINES.values() for s in e.url_schemes[:1])
    server = _keyword_value_engine(url) if not scheme else None
    if server is not None:  # never echoed: it may hold password=...
        raise ValueError(f"a keyword/value connection string (its values not shown), not a URL: write it as "
                         f"{server.url_schemes[0]}://user@host/dbname, parameters such as host=/run/postgresql "
                         "in its query (?host=/run/postgresql&sslmode=require)")
    if not scheme and "=" in url:  # key=value text no engine reads: never echoed either (password=...)
        raise ValueError(f"a key=value connection string is not a database URL (its text is not shown: it may "
                         f"hold a password); write it as a URL (use {forms})")
    if not scheme and url.strip():  # a path given for a URL (no ':' and no '=': no password to hide)
        default = ENGINES[DEFAULT_ENGINE].url_schemes[0]
        raise ValueError(f"{url.strip()!r} is a path, not a URL: name a file as {default}:///{url.strip()} "
                         f"(use {forms})")
    raise ValueError(f"unsupported scheme in {scheme + ':' if scheme else '(no scheme)'!r} (use {forms})")


def _keyword_value_engine(text: str) -> Engine | None:
    """The engine whose URL check reads ``text`` (no scheme) as a keyword/value connection string
    (libpq's ``host=... dbname=...``), else None."""
    if "=" not in text:
        return None
    for engine in ENGINES.values():
        if engine.url_check:
            try:
                load(engine.url_check)(text)
            except ValueError:
                continue
            return engine
    return None


def display_url(url: str) -> str:
    """``url`` fit to print, as the engine it chooses masks it (an unknown scheme: the scheme only)."""
    try:
        engine = engine_for_url(url)
    except ValueError:
        return f"{url_scheme(url) or '(no scheme)'}:..."
    return load(engine.display_url)(url) if engine.display_url else url


def storage_registry(area: str) -> dict[str, str]:
    """``{engine name: "module:Class"}`` of ``area``'s storage on every engine that has one."""
    return {name: engine.storages[area] for name, engine in ENGINES.items() if area in engine.storages}


def error_classes(names: Iterable[str] | None = None) -> tuple[type[BaseException], ...]:
    """The error classes of the engines ``names`` (all when None) whose driver is installed."""
    found: list[type[BaseException]] = []
    for engine in (ENGINES[n] for n in (names if names is not None else ENGINES)):
        for target in engine.errors:
            try:
                cls = load(target)
            except ImportError:  # that engine's driver is not installed: nothing of it can raise
                continue
            if cls not in found:
                found.append(cls)
    return tuple(found)


@runtime_checkable
class StoreDatabase(Protocol):
    """What every engine's database object offers the storages (``Database``, ``PgDatabase``).

    Statements given to these methods are in the engine's own placeholder style; the same
    calls behind :attr:`portable` take ``?`` placeholders on every engine.
    """

    engine: str
    readonly: bool

    def execute(self, sql: str, params: Any = ...) -> int:
        """Run one statement to its end; the rows it inserted, updated or deleted (0 for any
        other statement), the same on every engine."""

    def executemany(self, sql: str, rows: Iterable[Any]) -> None:
        """Run ``sql`` once per row of bindings."""

    def query(self, sql: str, params: Any = ...) -> list[dict[str, Any]]:
        """Every row as a dict."""

    def query_one(self, sql: str, params: Any = ...) -> dict[str, Any] | None:
        """The first row as a dict, or None."""

    def scalar(self, sql: str, params: Any = ...) -> Any:
        """The first column of the first row, or None."""

    @property
    def portable(self) -> PortableDatabase:
        """The engine-neutral calls (``?`` placeholders, ``query_in``)."""

    def write(self) -> AbstractContextManager[Any]:
        """A write transaction: committed on success, rolled back on error; nested use joins."""

    def lock_patience(self, seconds: float) -> AbstractContextManager[None]:
        """Within: a write transaction begun here waits at most ``seconds`` for another
        session's lock, then fails with ``DatabaseError`` (bookkeeping a read does on the side)."""

    def table_exists(self, name: str) -> bool:
        """True when a table or view called ``name`` exists."""

    def close(self) -> None:
        """Release the connection(s)."""


class PortableDatabase(Protocol):
    """The engine-neutral calls of :attr:`StoreDatabase.portable` (``?`` placeholders)."""

    def execute(self, sql: str, params: Sequence[Any] = ...) -> int:
        """Run one statement; the rows it inserted, updated or deleted (0 for any other)."""

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run ``sql`` once per row of bindings."""

    def query(self, sql: str, params: Sequence[Any] = ...) -> list[dict[str, Any]]:
        """Every row as a dict."""

    def query_one(self, sql: str, params: Sequence[Any] = ...) -> dict[str, Any] | None:
        """The first row as a dict, or None."""

    def scalar(self, sql: str, params: Sequence[Any] = ...) -> Any:
        """The first column of the first row, or None."""

    def query_in(self, sql: str, values: Iterable[Any], *, before: Sequence[Any] = ...,
                 after: Sequence[Any] = ..., chunk: int = ...) -> list[dict[str, Any]]:
        """Rows of ``sql`` for any number of ``values`` (``{marks}`` holds the list)."""


__all__ = ["AREAS", "DEFAULT_ENGINE", "ENGINES", "Engine", "PortableDatabase", "StoreDatabase",
           "display_url", "engine_for_url", "engine_named", "error_classes", "load", "storage_registry", "url_scheme"]
