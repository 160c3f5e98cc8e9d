"""The app's own files: paths no tool call may create, change or delete.

Whatever `workspace:` points at, a write that would land on Intent UI itself is refused:
its configuration, code, assets, database, Reflex state and build folders, its Python
environment, installed tools and the checkout's git folder. Each of them is something
the app runs, loads or unpickles later, so one write there is code execution at the next
start (a new `mcp_servers` entry), at once (a module under hot reload), or a forged
session (a pickled state). Like a sandbox's mandatory deny paths, the list holds whatever
the caller allows, and where it cannot be worked out every write is refused rather than
run half-protected.

`ProtectedFiles.for_app` works the list out once, when the tools are built, from the
configuration and the running process; `check_write` is the one question every writing
tool asks before touching a path. Paths are compared after `..` and symlinks are resolved,
without regard to case (the file system may ignore it), and by file identity, so a hard
link or a second name for a protected file or folder is caught as well.
"""

from __future__ import annotations

import logging
import os
import re
import site
import sys
import sysconfig
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib.machinery import all_suffixes
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

from sqlalchemy import make_url
from sqlalchemy.exc import SQLAlchemyError

from intent_ui.config import DEFAULT_CONFIG_FILE, AppConfig
from intent_ui.store.db import DB_URL_ENV, DEFAULT_DB_URL, MIGRATION_LOCK_SUFFIX

__all__ = [
    "ProtectedFiles",
    "ProtectedPath",
    "ProtectedPathError",
]

logger = logging.getLogger(__name__)

CONFIGURATION = "its configuration"
CODE = "its code"
ASSETS = "its assets"
DATABASE = "its database"
STATE = "its saved Reflex state"
BUILD = "its built web app"
CACHES = "its build caches"
PYTHON = "its Python environment"
TOOLS = "its installed tools"
GIT = "its git repository"

PACKAGE_DIR = Path(__file__).resolve().parents[2]
"""The `intent_ui` package this process runs, wherever it was imported from."""
APP_ROOT_MARKERS = ("rxconfig.py", "pyproject.toml")
"""A folder holding one of these next to the package is the app's checkout."""
SQLITE_SIBLINGS = ("", "-wal", "-shm", "-journal", MIGRATION_LOCK_SUFFIX)
"""The files SQLite (and the store's migration lock) keep for one database."""
_IMPORT_SUFFIXES = tuple(suffix.casefold() for suffix in all_suffixes())
_GITDIR = re.compile(r"^gitdir:\s*(.+?)\s*$", re.MULTILINE)
_SECTION = re.compile(r"^\s*\[\s*([A-Za-z0-9.-]+)")
_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.IGNORECASE)

Scope = Literal["file", "tree", "modules"]
"""`file`: that path; `tree`: the folder and everything below; `modules`: any importable
module directly in the folder (`x.py`, `x.so`, `x/__init__.py`), since the folder is on
the import path when the app starts and such a file would shadow a real import."""


class ProtectedPathError(ValueError):
    """A write would change the app's own files (or they could not be listed)."""


@dataclass(frozen=True, slots=True)
class ProtectedPath:
    """One protected location: an absolute, resolved path, what it is to the app, its scope."""

    path: Path
    what: str
    scope: Scope = "file"


@dataclass(frozen=True, slots=True)
class ProtectedFiles:
    """The app's own files, and the check every writing tool goes through.

    `problem` is set when the list could not be worked out: then every write is refused.
    `config_name` names the configuration file in messages (where `workspace:` is set).
    """

    entries: tuple[ProtectedPath, ...]
    problem: str | None = None
    config_name: str = DEFAULT_CONFIG_FILE

    @classmethod
    def for_app(
        cls,
        config: AppConfig | None = None,
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ProtectedFiles:
        """The files of the app this process runs, for `config` (None: the environment only).

        `cwd` and `env` default to the process's. Never raises: when something cannot be
        read, the result refuses every write and says why.
        """
        env = os.environ if env is None else env
        source = config.source_file if config is not None else None
        name = source.name if source is not None else DEFAULT_CONFIG_FILE
        try:
            entries = tuple(_dedupe(_app_entries(config, cwd or Path.cwd(), env)))
        except (OSError, RuntimeError, ValueError, SQLAlchemyError) as exc:
            problem = _describe_problem(exc)
            logger.warning(
                "The app's own files could not be listed (%s); the file tools will refuse "
                "every write",
                problem,
            )
            return cls((), problem=problem, config_name=name)
        return cls(entries, config_name=name)

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every protected path (for a runner that mounts them read-only)."""
        return tuple(entry.path for entry in self.entries)

    def covering(self, path: Path) -> ProtectedPath | None:
        """The entry that covers an already-resolved `path` by name alone (no I/O)."""
        key = _fold(path)
        for entry in self.entries:
            own = _fold(entry.path)
            if entry.scope == "file" and key == own:
                return entry
            if entry.scope == "tree" and (key == own or key.startswith(own + os.sep)):
                return entry
            if entry.scope == "modules" and _is_module_in(path, own):
                return entry
        return None

    def find(self, path: Path) -> tuple[ProtectedPath, str | None] | None:
        """The entry covering a resolved `path`, by name or as another name for it.

        The second item is None when `path` itself is covered, else how it aliases the
        entry ("the same file as ...": a hard link or a differently cased name).
        """
        entry = self.covering(path)
        if entry is not None:
            return entry, None
        return self._same_identity(path)

    def check_write(self, path: Path, *, tool: str, shown: str, requested: str) -> None:
        """Raise `ProtectedPathError` saying why and what to do, if `tool` may not write `path`.

        `path` is resolved; `shown` is how it reads to the model; `requested` is the path
        the model wrote (named too when a symlink led somewhere else).
        """
        hint = f"Point `workspace:` in {self.config_name} at the folder the agent should work in."
        if self.problem is not None:
            raise ProtectedPathError(
                f"{tool} refused: the app's own files could not be listed ({self.problem}), "
                "so no file is written rather than risk changing Intent UI itself. Fix that "
                "and restart the app."
            )
        found = self.find(path)
        if found is None:
            return
        entry, alias = found
        if alias is not None:
            where = f"'{shown}' is {alias}, which"
        elif (
            os.path.normpath(requested) != os.path.normpath(shown)
            and not Path(requested).is_absolute()
        ):
            where = f"'{requested}' leads to '{shown}', which"
        else:
            where = f"'{shown}'"
        raise ProtectedPathError(
            f"{tool} refused: {where} is part of Intent UI itself ({entry.what}); the file "
            f"tools never change the app. {hint}"
        )

    def _same_identity(self, path: Path) -> tuple[ProtectedPath, str] | None:
        target = _identity(path)
        parents = {ident for ident in map(_identity, path.parents) if ident is not None}
        for entry in self.entries:
            own = _identity(entry.path)
            if own is None:
                continue
            if target == own:
                return entry, f"the same file as {entry.path}"
            if (entry.scope == "tree" and own in parents) or (
                entry.scope == "modules" and _module_in_identity(path, own)
            ):
                return entry, f"inside {entry.path} under another name"
        return None


# --- the list --------------------------------------------------------------------------------


def _app_entries(
    config: AppConfig | None, cwd: Path, env: Mapping[str, str]
) -> Iterator[ProtectedPath]:
    cwd = cwd.resolve()
    roots = _app_roots(PACKAGE_DIR, cwd)
    # Configuration: the file loaded, the one the next start would load, and Reflex's.
    if config is not None and config.source_file is not None:
        yield _entry(config.source_file, CONFIGURATION)
    if env.get("INTENT_UI_CONFIG"):
        yield _entry(cwd / Path(env["INTENT_UI_CONFIG"]).expanduser(), CONFIGURATION)
    yield _entry(cwd / DEFAULT_CONFIG_FILE, CONFIGURATION)
    yield _entry(cwd / "rxconfig.py", CONFIGURATION)
    for root in roots:
        yield _entry(root / DEFAULT_CONFIG_FILE, CONFIGURATION)
        yield _entry(root / "rxconfig.py", CONFIGURATION)
    # The database: the configured SQLite file and its siblings, and the default one.
    urls = [env.get(DB_URL_ENV, "").strip(), config.database_url if config else None]
    for url in [*(u for u in urls if u), DEFAULT_DB_URL]:
        database = _sqlite_file(url, cwd)
        if database is not None:
            for suffix in SQLITE_SIBLINGS:
                yield _entry(database.with_name(database.name + suffix), DATABASE)
    yield _entry(PACKAGE_DIR, CODE, "tree")
    if config is not None:
        yield from _mcp_server_files(config, cwd)
    for root in roots:
        yield from _checkout_entries(root)
    for variable, what in (
        ("REFLEX_WEB_WORKDIR", BUILD),
        ("REFLEX_STATES_WORKDIR", STATE),
        ("REFLEX_DIR", CACHES),
    ):
        if env.get(variable):
            yield _entry(cwd / Path(env[variable]).expanduser(), what, "tree")
    yield from _python_entries()


def _app_roots(package: Path, cwd: Path) -> list[Path]:
    """The app's checkout (next to the package) and the Reflex app folder being run."""
    roots = []
    checkout = package.parent
    if any((checkout / marker).is_file() for marker in APP_ROOT_MARKERS):
        roots.append(checkout)
    if (cwd / "rxconfig.py").is_file() and cwd not in roots:
        roots.append(cwd)
    return roots


def _checkout_entries(root: Path) -> Iterator[ProtectedPath]:
    yield _entry(root / "intent_ui", CODE, "tree")
    for folder in ("scripts", ".ci"):
        yield _entry(root / folder, CODE, "tree")
    yield _entry(root / "pyproject.toml", CODE)
    requirements = {"requirements.txt", "requirements-dev.txt"}
    requirements |= {file.name for file in root.glob("requirements*.txt")}
    for name in sorted(requirements):
        yield _entry(root / name, CODE)
    yield _entry(root, CODE, "modules")
    yield _entry(root / "assets", ASSETS, "tree")
    yield _entry(root / ".data", DATABASE, "tree")
    yield _entry(root / ".states", STATE, "tree")
    yield _entry(root / ".web", BUILD, "tree")
    yield _entry(root / ".cache", CACHES, "tree")
    yield _entry(root / ".venv", PYTHON, "tree")
    yield _entry(root / "tools", TOOLS, "tree")
    yield from _git_entries(root)


def _git_entries(root: Path) -> Iterator[ProtectedPath]:
    """The checkout's git folder, wherever a `.git` file points, and its hooks folder.

    Hooks and config are code git runs later, so they count as the app's own files.
    """
    dot = root / ".git"
    yield _entry(dot, GIT, "tree")
    if not dot.is_file():
        git_dir = dot
    else:
        pointer = _GITDIR.search(dot.read_text(encoding="utf-8", errors="replace"))
        if pointer is None:
            return
        git_dir = (root / pointer.group(1)).resolve()
        yield _entry(git_dir, GIT, "tree")
        common = git_dir / "commondir"
        if common.is_file():
            git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
            yield _entry(git_dir, GIT, "tree")
    hooks = _hooks_path(git_dir / "config")
    if hooks is not None:
        yield _entry(root / Path(hooks).expanduser(), GIT, "tree")


def _hooks_path(config: Path) -> str | None:
    """`core.hooksPath` from a git config file, or None (absent, or no such setting)."""
    if not config.is_file():
        return None
    section = ""
    found = None
    for line in config.read_text(encoding="utf-8", errors="replace").splitlines():
        header = _SECTION.match(line)
        if header is not None:
            section = header.group(1).casefold()
            continue
        setting = _HOOKS_PATH.match(line)
        if section == "core" and setting is not None:
            found = setting.group(1).strip('"')
    return found


def _mcp_server_files(config: AppConfig, cwd: Path) -> Iterator[ProtectedPath]:
    """Files a stdio MCP server runs: its command and arguments that name existing files."""
    for name, server in config.mcp_servers.items():
        if server.command is None:
            continue
        base = cwd / Path(server.cwd).expanduser() if server.cwd else cwd
        for item in (server.command, *server.args):
            candidate = base / Path(item).expanduser()
            if candidate.is_file():
                yield _entry(candidate, f"the code of its MCP server '{name}'")


def _python_entries() -> Iterator[ProtectedPath]:
    """The interpreter's environment: the whole virtualenv, else the library folders."""
    if sys.prefix != sys.base_prefix:
        yield _entry(Path(sys.prefix), PYTHON, "tree")
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib", "scripts"):
        if paths.get(key):
            yield _entry(Path(paths[key]), PYTHON, "tree")
    if site.ENABLE_USER_SITE:
        yield _entry(Path(site.getusersitepackages()), PYTHON, "tree")


def _sqlite_file(url: str, cwd: Path) -> Path | None:
    """The file of a SQLite URL (relative ones start at `cwd`), None for other databases."""
    try:
        parsed = make_url(url)
    except SQLAlchemyError:
        raise ValueError(
            "the database URL (DB_URL) cannot be parsed; write it as sqlite:///path or "
            "postgresql://user@host/db"
        ) from None
    if not parsed.drivername.startswith("sqlite"):
        return None
    database = parsed.database or ""
    if database.startswith("file:"):  # the `?uri=true` form
        parts = urlsplit(database)
        if "mode=memory" in parts.query:
            return None
        database = unquote(parts.path)
    if not database or database == ":memory:":
        return None
    return cwd / Path(database).expanduser()


# --- comparing paths -------------------------------------------------------------------------


def _entry(path: Path, what: str, scope: Scope = "file") -> ProtectedPath:
    return ProtectedPath(path.resolve(), what, scope)


def _dedupe(entries: Iterable[ProtectedPath]) -> Iterator[ProtectedPath]:
    seen: set[tuple[str, Scope]] = set()
    for entry in entries:
        key = (_fold(entry.path), entry.scope)
        if key not in seen:
            seen.add(key)
            yield entry


def _fold(path: Path) -> str:
    return str(path).casefold()


def _is_importable(name: str) -> bool:
    return name.casefold().endswith(_IMPORT_SUFFIXES)


def _is_module_in(path: Path, folded_root: str) -> bool:
    """Whether `path` is a module directly in the root, or a package's `__init__` there."""
    if _fold(path.parent) == folded_root:
        return _is_importable(path.name)
    return (
        _fold(path.parent.parent) == folded_root
        and path.name.casefold().startswith("__init__.")
        and _is_importable(path.name)
    )


def _module_in_identity(path: Path, root: tuple[int, int]) -> bool:
    if _identity(path.parent) == root:
        return _is_importable(path.name)
    return (
        path.name.casefold().startswith("__init__.")
        and _is_importable(path.name)
        and _identity(path.parent.parent) == root
    )


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of an existing path, None when there is nothing there."""
    try:
        info = path.stat()
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino)


def _describe_problem(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.strerror or type(exc).__name__}: {exc.filename}"
    return str(exc) or type(exc).__name__
