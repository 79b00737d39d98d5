"""Where things live: HERMES_HOME, profiles and ``config.yaml``.

Resolution order for the home directory: an explicit argument, then the
``HERMES_HOME`` environment variable, then ``~/.hermes``. A profile is the
sub-directory ``<home>/profiles/<name>/``, exactly like Hermes profiles.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hermes_store.db import DB_FILENAME, DatabaseError
from hermes_store.fsutil import private_mkdir

DATABASE_URL_ENV = "HERMES_STORE_DATABASE_URL"
DEFAULT_MEMORY_CHAR_LIMIT = 2200
DEFAULT_USER_CHAR_LIMIT = 1375
_PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # used with fullmatch: "$" would pass "x\n"
_TRUE = {"1", "true", "yes", "on", "y", "t", "enabled", "enable", "approve"}
_FALSE = {"0", "false", "no", "off", "n", "f", "", "none", "null", "disabled", "disable"}


class ConfigError(ValueError):
    """config.yaml could not be read or holds a value of the wrong kind."""


def described(exc: BaseException) -> str:
    """``exc`` as a one-line reason: our own errors (:class:`ConfigError`, ``DatabaseError``),
    written for a person and naming their file, as they are; any other with its class."""
    text = str(exc)
    return text if isinstance(exc, (ConfigError, DatabaseError)) and text else f"{type(exc).__name__}: {text}"


def coerce_bool(value: Any, default: bool, *, name: str = "value") -> bool:
    """Read a YAML/env style boolean; strings like ``"false"`` and ``"0"`` are False."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"{name}: expected a boolean, got {value!r}")


def coerce_int(value: Any, default: int, *, name: str = "value", minimum: int | None = None) -> int:
    """Read an integer that may arrive as a string (``"2200"``) or float (``2200.0``)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    if isinstance(value, bool):
        raise ConfigError(f"{name}: expected an integer, got {value!r}")
    try:
        number = int(float(str(value).strip().replace(",", "").replace("_", "")))
    except ValueError as exc:
        raise ConfigError(f"{name}: expected an integer, got {value!r}") from exc
    if minimum is not None and number < minimum:
        raise ConfigError(f"{name}: must be at least {minimum}, got {number}")
    return number


def resolve_home(home: str | os.PathLike[str] | None = None, profile: str | None = None) -> Path:
    """Return the home directory to use (not created here)."""
    if home is not None and str(home) != "":
        root = Path(home).expanduser()
    elif os.environ.get("HERMES_HOME"):
        root = Path(os.environ["HERMES_HOME"]).expanduser()
    else:
        root = Path.home() / ".hermes"
    if root.resolve() == Path(root.resolve().anchor):  # resolved: "/tmp/.." and links to "/" too
        raise ConfigError(f"{root}: refusing to use the filesystem root as the Hermes home "
                          "(set HERMES_HOME or --home to a directory of its own)")
    if profile:
        if not _PROFILE_NAME.fullmatch(profile):
            raise ConfigError(f"invalid profile name {profile!r} (letters, digits, . _ - only)")
        root = root / "profiles" / profile
    return root.absolute()


@dataclass(frozen=True)
class MemoryConfig:
    """The ``memory:`` section of config.yaml, with Hermes defaults and coercion applied."""

    memory_enabled: bool = True
    user_profile_enabled: bool = True
    memory_char_limit: int = DEFAULT_MEMORY_CHAR_LIMIT
    user_char_limit: int = DEFAULT_USER_CHAR_LIMIT
    provider: str = ""
    write_approval: bool = False
    render: str = "hermes"  # "hermes" (byte-identical blocks) or "compact"
    nudge_interval: int = 10
    #: ours: a write that would put a secret into the system prompt is refused unless true
    allow_secrets: bool = False
    raw: dict[str, Any] = field(default_factory=dict)
    #: Why some of config.yaml could not be used (file:line: key: problem); writes are refused then.
    errors: tuple[str, ...] = ()

    @property
    def write_refusal(self) -> str | None:
        """The error a write gets while config.yaml is unreadable or invalid (None when fine)."""
        if not self.errors:
            return None
        return ("config.yaml cannot be used, so memory writes are refused until it is fixed "
                "(reads go on): " + "; ".join(self.errors))

    @classmethod
    def from_mapping(cls, section: Any, *, strict: bool = True,
                     locate: Any = None) -> MemoryConfig:
        """Build from the parsed ``memory:`` mapping (None or missing keys → defaults).

        ``strict`` raises :class:`ConfigError` on the first bad value. Otherwise each key
        is read on its own: a bad value keeps its default, every other key keeps its
        configured value, and the problem lands in ``errors`` (prefixed with
        ``locate(key)``, e.g. ``config.yaml:7``).
        """
        if section is None:
            section = {}
        if not isinstance(section, dict):
            problem = f"memory: expected a mapping, got {type(section).__name__}"
            if strict:
                raise ConfigError(problem)
            return cls(errors=(_located(locate, None, problem),))
        values: dict[str, Any] = {}
        errors: list[str] = []
        for key, reader in _MEMORY_FIELDS.items():
            try:
                values[key] = reader(section.get(key))
            except ConfigError as exc:
                if strict:
                    raise
                errors.append(_located(locate, key, str(exc)))
        return cls(**values, raw=dict(section), errors=tuple(errors))


def _render_style(value: Any) -> str:
    render = str(value or "hermes").strip().lower()
    if render not in ("hermes", "compact"):
        raise ConfigError(f"memory.render: expected 'hermes' or 'compact', got {render!r}")
    return render


def _provider_name(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):  # ``provider: 5`` was shown as provider "5" without a word
        raise ConfigError(f"memory.provider: expected a provider name (builtin, holographic_store "
                          f"or a plug-in's name), got {value!r}")
    return value.strip()


# key of the memory: section -> reader (raises ConfigError naming ``memory.<key>``)
_MEMORY_FIELDS: dict[str, Any] = {
    "memory_enabled": lambda v: coerce_bool(v, True, name="memory.memory_enabled"),
    "user_profile_enabled": lambda v: coerce_bool(v, True, name="memory.user_profile_enabled"),
    "memory_char_limit": lambda v: coerce_int(v, DEFAULT_MEMORY_CHAR_LIMIT, name="memory.memory_char_limit",
                                              minimum=1),
    "user_char_limit": lambda v: coerce_int(v, DEFAULT_USER_CHAR_LIMIT, name="memory.user_char_limit", minimum=1),
    "provider": lambda v: _provider_name(v),
    "write_approval": lambda v: coerce_bool(v, False, name="memory.write_approval"),
    "render": _render_style,
    "nudge_interval": lambda v: coerce_int(v, 10, name="memory.nudge_interval", minimum=0),
    "allow_secrets": lambda v: coerce_bool(v, False, name="memory.allow_secrets"),
}


#: Keys of ``memory:`` read by this package (Hermes reads more there: only near misses are typos).
MEMORY_KEYS = frozenset(_MEMORY_FIELDS) | {"holographic_store", "review_literal_auto"}
#: Every key of ``store:`` (this package's own section: any other key is a typo).
STORE_KEYS = frozenset({"database_url", "redact", "redact_patterns", "redact_allow"})
#: Top-level sections this package reads (the file is Hermes's too: only near misses are typos).
TOP_KEYS = frozenset({"memory", "store", "semantic", "plugins"})


def _located(locate: Any, key: str | None, problem: str) -> str:
    where = locate(key) if locate is not None else None
    return f"{where}: {problem}" if where else problem


class Home:
    """A resolved Hermes home: the paths inside it and its configuration."""

    def __init__(self, root: str | os.PathLike[str] | None = None, profile: str | None = None,
                 database_url: str | None = None, url_option: str = "--database-url") -> None:
        self.root = resolve_home(root, profile)
        self.profile = profile
        # stripped as the variable's and config.yaml's are: one URL names one store however given
        self._database_url = (database_url or "").strip() or None
        self._url_option = url_option  # how errors name the option ``database_url`` came from
        # Set by a read-only front end (``mcp --read-only``): every store opened from this home
        # is read-only, so not even a read's bookkeeping (facts' retrieval_count) is written.
        self.read_only = False

    @property
    def memories_dir(self) -> Path:
        """``<home>/memories`` — MEMORY.md and USER.md live here."""
        return self.root / "memories"

    @property
    def memory_file(self) -> Path:
        return self.memories_dir / "MEMORY.md"

    @property
    def user_file(self) -> Path:
        return self.memories_dir / "USER.md"

    @property
    def db_path(self) -> Path:
        """``<home>/hermes_store.db`` — every derived index."""
        return self.root / DB_FILENAME

    @property
    def config_path(self) -> Path:
        return self.root / "config.yaml"

    @property
    def plugins_dir(self) -> Path:
        return self.root / "plugins"

    def ensure(self) -> Home:
        """Create the home and memories directories (private to the user); a read-only home
        (``mcp --read-only``) is left as it is."""
        if self.root.exists() and not self.root.is_dir():
            raise ConfigError(f"{self.root}: the Hermes home is not a directory")
        if not self.read_only:
            private_mkdir(self.memories_dir)
        return self

    def config(self) -> dict[str, Any]:
        """The whole parsed config.yaml (empty when the file is absent)."""
        return load_config(self.config_path)

    def memory_config(self) -> MemoryConfig:
        """The ``memory:`` section with defaults and coercion (raises ConfigError on a bad value)."""
        return MemoryConfig.from_mapping(self.config().get("memory"))

    def read_memory_config(self) -> MemoryConfig:
        """The ``memory:`` section, never raising: what can be read is kept key by key.

        An unreadable file or a bad value is reported in ``errors`` naming the file,
        the line and the key; callers keep reading but refuse writes
        (:attr:`MemoryConfig.write_refusal`).
        """
        try:
            data = self.config()
        except ConfigError as exc:
            return MemoryConfig(errors=(str(exc),))
        path = self.config_path
        return MemoryConfig.from_mapping(
            data.get("memory"), strict=False,
            locate=lambda key: f"{path}:{config_line(path, ('memory', key) if key else ('memory',))}")

    def database_url(self) -> str | None:
        """Where the shared store lives: ``--database-url``, else ``$HERMES_STORE_DATABASE_URL``,
        else ``store.database_url`` in config.yaml; None means this home's SQLite file."""
        if self._database_url:
            return self._database_url
        env = os.environ.get(DATABASE_URL_ENV, "").strip()
        if env:
            return env
        return self._configured_url()

    def database_url_origin(self) -> str:
        """Where :meth:`database_url` comes from, as an error message names it: ``--database-url``
        (or the option a command built this home from, ``url_option``: ``migrate --to``),
        ``$HERMES_STORE_DATABASE_URL`` or ``<home>/config.yaml:LINE: store.database_url``."""
        if self._database_url:
            return self._url_option
        if os.environ.get(DATABASE_URL_ENV, "").strip():
            return f"${DATABASE_URL_ENV}"
        return f"{self.config_path}:{config_line(self.config_path, ('store', 'database_url'))}: store.database_url"

    def database_url_to_pass(self) -> str | None:
        """The URL a process started elsewhere (a service, an agent's hook: another working
        directory, another environment) must be given to open this same store; None when it finds
        the store itself through this home (its ``config.yaml`` or its own file).

        That is the ``--database-url`` or ``$HERMES_STORE_DATABASE_URL`` URL, a relative
        ``sqlite:///`` one with the file's path made absolute, a server URL with what this
        environment adds to it written in (the engine's ``url_to_pass``: ``PGHOST`` ...; a
        ``config.yaml`` URL too when it depends on them)."""
        url = self.database_url()
        if url is None:
            return None
        engine = self.store_engine()
        from_config = self._url_base() is not None  # config.yaml's: found through the home
        if engine.url_file:
            return None if from_config else f"sqlite:///{self.sqlite_path}"
        pinned = engine.passed_url(url)
        return None if from_config and pinned == url else pinned

    def _configured_url(self) -> str | None:
        config = self.config()
        if "database_url" in config:  # meant for the store, but never read there: no silent default
            raise ConfigError(f"{self.config_path}:{config_line(self.config_path, ('database_url',))}: "
                              "database_url: not read at the top level (the store would be another file); "
                              "write it under store:, as store.database_url")
        store = config.get("store")
        if store is None:
            return None
        if not isinstance(store, dict):
            raise ConfigError(located(self.config_path, f"store: expected a mapping, got {type(store).__name__}"))
        url = store.get("database_url")
        if url is None or (isinstance(url, str) and not url.strip()):
            return None
        if not isinstance(url, str):
            raise ConfigError(located(self.config_path, "store.database_url: expected a string URL "
                                      f"(postgresql://... or sqlite:///path), got {url!r}"))
        return url.strip()

    def store_engine(self):  # -> engines.Engine (import lazy for CLI start-up)
        """The :class:`~hermes_store.engines.Engine` :meth:`database_url` chooses (the default
        engine without one), by the URL schemes of :data:`hermes_store.engines.ENGINES`; a
        malformed or unknown URL raises :class:`ConfigError` now, not at first open, naming where
        the URL comes from (:meth:`database_url_origin`)."""
        from hermes_store.db import DatabaseError
        from hermes_store.engines import engine_for_url, load, url_scheme

        url = self.database_url()
        try:
            engine = engine_for_url(url)
            if url is not None and engine.url_file and load(engine.url_file)(url, self._url_base()) is None:
                raise ValueError(f"{url_scheme(url)}: the URL names no file ({engine.label} needs one)")
            if url is not None and engine.url_check:
                load(engine.url_check)(url)
        except (ValueError, DatabaseError) as exc:
            raise ConfigError(f"{self.database_url_origin()}: {exc}") from exc
        return engine

    @property
    def engine(self) -> str:
        """The name of the engine :meth:`database_url` chooses (see :meth:`store_engine`)."""
        return self.store_engine().name

    @property
    def sqlite_path(self) -> Path | None:
        """The local file this home's store lives in (this home's ``hermes_store.db``, or the
        file the URL of a file-based engine such as ``sqlite:///`` names); None when the store
        is on a server."""
        from hermes_store.engines import load

        engine = self.store_engine()
        if not engine.url_file:
            return None
        url = self.database_url()
        return (load(engine.url_file)(url, self._url_base()) if url else None) or self.db_path

    def _url_base(self) -> Path | None:
        """Where a relative file URL starts: the home for ``store.database_url`` in its
        config.yaml (the same store from every working directory: a service, Hermes, an MCP
        client), the working directory (None) for ``--database-url`` and the variable."""
        from_config = not self._database_url and not os.environ.get(DATABASE_URL_ENV, "").strip()
        return self.root if from_config else None

    def store_directory_problem(self) -> str | None:
        """Why the store's local file cannot be created, else None: a file a URL names must be
        in a directory that exists (as for ``sqlite3`` and SQLAlchemy; the message names it and
        where the URL comes from). This home's own ``hermes_store.db`` and a store on a server
        have none: the home is made on the first write."""
        path = self.sqlite_path
        if path is None or self.database_url() is None or path.parent.is_dir():
            return None
        return (f"{path}: cannot create the store: no directory {path.parent} "
                f"(named by {self.database_url_origin()}; create it first)")

    def prepare_store_directory(self) -> None:
        """Make ready the directory the store's local file is created in (nothing for a store
        on a server): this home's own ``hermes_store.db`` gets the home's private directories; a
        mistyped folder in a URL (:meth:`store_directory_problem`) raises
        :class:`~hermes_store.db.DatabaseError` and creates nothing, rather than an empty store
        somewhere nobody looks."""
        from hermes_store.db import DatabaseError

        problem = self.store_directory_problem()
        if problem:
            raise DatabaseError(f"{problem}; nothing was created")
        path = self.sqlite_path
        if path is not None and self.database_url() is None:
            private_mkdir(path.parent)

    def beside_store(self, name: str) -> Path:
        """Where a local file ``name`` that belongs to the store goes: beside the store's own
        file (so two homes naming one ``sqlite:///`` file share it too), or in this home when the
        store is on a server. A store file other than a home's ``hermes_store.db`` prefixes it
        with its own name (``x.db`` -> ``x.db.<name>``), so two stores in one directory never
        share it."""
        path = self.sqlite_path
        if path is None or path.name == DB_FILENAME:
            return (path or self.db_path).parent / name
        return path.with_name(f"{path.name}.{name}")

    def shared_beside_store(self, name: str) -> Path | None:
        """Where an older version kept ``name`` for a store file other than ``hermes_store.db``
        (beside it, unprefixed, so every store of that directory shared it); None when that is
        :meth:`beside_store` itself."""
        path = self.sqlite_path
        if path is None or path.name == DB_FILENAME:
            return None
        return path.parent / name

    def store_location(self) -> str:
        """Where the store is, fit to print: the local file's path or the server URL with its
        password masked and what this environment adds to it written in (the engine's
        ``url_to_pass``: ``postgresql://`` with ``PGDATABASE=b`` is ``postgresql://?dbname=b``),
        so two databases chosen by the environment are never one place (the vectors' cache
        files are named after it)."""
        path = self.sqlite_path
        if path is not None:
            return str(path)
        from hermes_store.engines import display_url

        return display_url(self.store_engine().passed_url(self.database_url() or ""))

    def store_exists(self) -> bool:
        """True when there is a store to read without creating one: the local file (this
        home's, or the one a ``sqlite:///`` URL names) exists, or the server database holds a
        store (the engine's :attr:`~hermes_store.engines.Engine.store_check`), so a read of an
        empty PostgreSQL database creates nothing there, as on SQLite."""
        path = self.sqlite_path
        if path is not None:
            return path.exists()
        from hermes_store.engines import load

        check = self.store_engine().store_check
        return bool(load(check)(self.database_url())) if check else True

    def open_db(self, **kwargs: Any):  # -> StoreDatabase (imports lazy for CLI start-up)
        """Open (create, migrate) this home's store: its ``hermes_store.db``, or the
        database named by :meth:`database_url`, through the opener its engine registers in
        :data:`hermes_store.engines.ENGINES` (options an engine does not have are ignored).

        ``readonly=True`` opens an existing store without writing to it (an absent SQLite
        file raises :class:`~hermes_store.db.DatabaseError` instead of being created)."""
        from hermes_store.engines import load

        settings = self.redaction_settings()
        engine = self.store_engine()
        if not engine.opener:
            raise ConfigError(f"database URL: the {engine.label} engine has no opener")
        db = load(engine.opener)(self, self.database_url(), **kwargs)
        db.redaction_settings = settings
        return db

    def redaction_settings(self):  # -> RedactionSettings (import lazy for CLI start-up)
        """The ``store.redact`` / ``store.redact_patterns`` / ``store.redact_allow`` settings of
        config.yaml (redaction on by default); a bad value raises :class:`ConfigError`."""
        from hermes_store.redaction.settings import RedactionConfigError, RedactionSettings

        try:
            return RedactionSettings.from_store_section(self.config().get("store"), str(self.config_path))
        except RedactionConfigError as exc:  # named the file and key: the line is added
            raise ConfigError(located(self.config_path, str(exc))) from exc

    def open_existing_db(self, **kwargs: Any):  # -> Database | PgDatabase | None
        """:meth:`open_db` when the store exists, else None: a read never creates a store."""
        return self.open_db(**kwargs) if self.store_exists() else None

    def open_reader(self):  # -> Database | PgDatabase
        """The store for a command that only reads, or only changes or removes what is already
        stored (``forget``, ``sessions delete``, ``redact``): :meth:`open_db` when it exists, else
        an empty private in-memory database with the full schema (reads answer empty, there is
        nothing to change, and no file is created). Close it when done, like any database."""
        if self.store_exists():
            return self.open_db()
        from hermes_store.db import Database

        db = Database(":memory:")
        db.redaction_settings = self.redaction_settings()
        return db

    def __repr__(self) -> str:
        return f"Home({str(self.root)!r})"


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Parse a config.yaml; a missing or empty file is ``{}``; bad YAML names the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:  # "[Errno 21] Is a directory: '<path>'" named the path twice
        raise ConfigError(f"{path}: cannot read: {(exc.strerror or str(exc)).lower()}") from exc
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: cannot read: not UTF-8 text (byte {exc.object[exc.start]:#04x}); "
                          "save it as UTF-8") from exc
    try:
        data = _load_yaml(text, path)
    except yaml.YAMLError as exc:
        raise ConfigError(yaml_problem(path, exc)) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: expected a mapping of settings (key: value lines) at the top level, "
                          f"got a {type(data).__name__}")
    return data


def yaml_problem(path: str | os.PathLike[str], exc: yaml.YAMLError) -> str:
    """One line for a person: ``FILE:LINE: invalid YAML: what (column), and what it was in``
    (PyYAML's own message spans five lines and names ``"<unicode string>"``). LINE is where the
    parser stopped; the construct it was reading is named with the line it began on (an
    unclosed quote's opening line)."""
    context, problem = getattr(exc, "context", None), getattr(exc, "problem", None)
    start, stop = getattr(exc, "context_mark", None), getattr(exc, "problem_mark", None)
    if problem is None:
        return f"{path}: invalid YAML: {' '.join(str(exc).split())}"
    mark = stop or start
    where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
    column = f" (column {stop.column + 1})" if stop is not None else ""
    began = f", {context} begun on line {start.line + 1}" if context and start else ""
    return f"{where}: invalid YAML: {problem}{column}{began}"


MAX_CONFIG_BYTES = 1 << 20  # a config.yaml larger than this is refused unread
MAX_CONFIG_NODES = 100_000  # YAML nodes after expanding every alias and merge key (alias bombs)


def _composed(text: str, path: str | os.PathLike[str] = "config.yaml") -> yaml.Node | None:
    """The YAML node tree of ``text`` within the size and alias budget (not constructed)."""
    loader = yaml.SafeLoader(text)
    try:
        return _budgeted_node(loader, text, path)
    finally:
        loader.dispose()


def _load_yaml(text: str, path: str | os.PathLike[str]) -> Any:
    """``yaml.safe_load`` with a budget: refuses huge files, alias/merge bombs and deep nesting fast."""
    loader = yaml.SafeLoader(text)
    try:
        node = _budgeted_node(loader, text, path)
        return None if node is None else loader.construct_document(node)
    except RecursionError as exc:
        raise ConfigError(f"{path}: YAML nested too deeply") from exc
    finally:
        loader.dispose()


def load_yaml_text(text: str, path: str | os.PathLike[str] = "config.yaml") -> Any:
    """``text`` parsed as YAML within the size, alias and nesting budget (:class:`ConfigError`
    when over it; :class:`yaml.YAMLError` for invalid YAML). The one YAML loader for config files."""
    return _load_yaml(text, path)


def _budgeted_node(loader: yaml.SafeLoader, text: str, path: str | os.PathLike[str]) -> yaml.Node | None:
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: {len(text):,} characters; a config file may hold at most "
                          f"{MAX_CONFIG_BYTES:,}")
    try:
        node = loader.get_single_node()
    except RecursionError as exc:
        raise ConfigError(f"{path}: YAML nested too deeply") from exc
    if node is not None:
        _check_expansion(node, path)
    return node


def _check_expansion(root: yaml.Node, path: str | os.PathLike[str]) -> None:
    """Refuse a document whose aliases expand beyond ``MAX_CONFIG_NODES`` nodes (or recurse)."""
    sizes: dict[int, int | None] = {}

    def size(node: yaml.Node) -> int:
        known = sizes.get(id(node), 0)
        if known is None:
            raise ConfigError(f"{path}:{node.start_mark.line + 1}: recursive YAML alias refused")
        if known:
            return known
        sizes[id(node)] = None
        total = 1
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = []
        for child in children:
            total += size(child)
            if total > MAX_CONFIG_NODES:
                raise ConfigError(f"{path}:{child.start_mark.line + 1}: YAML aliases expand to more than "
                                  f"{MAX_CONFIG_NODES:,} nodes (alias bomb?); refused")
        sizes[id(node)] = total
        return total

    try:
        size(root)
    except RecursionError as exc:
        raise ConfigError(f"{path}: YAML nested too deeply") from exc


def config_node(path: str | os.PathLike[str]) -> yaml.Node | None:
    """The YAML node tree of the file at ``path`` (None when absent, empty, unreadable or
    invalid: :func:`load_config` reports those)."""
    try:
        return _composed(Path(path).read_text(encoding="utf-8"), path)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ConfigError):
        return None


def config_line(path: str | os.PathLike[str], keys: tuple[str, ...]) -> int | str:
    """The 1-based line of the nested key ``keys`` in a YAML file (``?`` when not found)."""
    node = config_node(path)
    if node is None:
        return "?"
    line: int | str = "?"
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            return line
        for key_node, value_node in reversed(node.value):  # YAML keeps the last of a key given twice
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                line, node = key_node.start_mark.line + 1, value_node
                break
        else:
            return line
    return line


_KEY_FIRST = re.compile(r"(?P<key>[A-Za-z_][\w-]*(?:\.[\w-]+)*)(?:\[\d+\])?: ")


def located(path: str | os.PathLike[str], problem: str) -> str:
    """``problem`` (a reader's ``key: what`` or ``FILE: key: what``) as ``FILE:LINE: key: what``,
    the line being where config.yaml gives the key (unchanged when it already has a line or
    names no key of the file)."""
    head = f"{path}: "
    rest = problem[len(head):] if problem.startswith(head) else problem
    if problem.startswith(f"{path}:") and not problem.startswith(head):
        return problem  # FILE:LINE: already
    match = _KEY_FIRST.match(rest)
    if match is None:
        return problem if problem.startswith(head) else f"{head}{problem}"
    line = config_line(path, tuple(match.group("key").split(".")))
    return f"{path}:{line}: {rest}" if line != "?" else f"{head}{rest}"
