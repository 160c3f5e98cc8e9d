"""Native tools: the file tools over a `Workspace`, and the base every native tool shares.

Native tools are self-describing: the intent property is injected at the schema
definition (`with_intent`, required), and the definition carries `"intent": True`. A tool
body validates its (already intent-stripped) arguments with a pydantic model, does its
file I/O in a worker thread, and returns a `ToolResult` whose `output` is what the model
reads and whose `outcome` is set only where the tool knows something the intent could
not (`Read 120 lines of src/app.py`). Failures come back as error results, never raised.

No call can stall the process: file work runs on an abandonable worker thread
(`run_in_worker`), only regular files are ever opened (a named pipe or a device would block
a read for ever), and `grep_search` uses RE2, whose matching time is linear in the text, so
no pattern can backtrack for ever while holding the GIL.

The tools that write (`write_file`, `edit_file`) take their path from
`Workspace.writable`, so none of them can change the app's own files.
"""

from __future__ import annotations

import codecs
import fnmatch
import functools
import logging
import os
import re
import stat
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import re2
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from intent_ui.agent.tools.base import ToolKind, ToolResult
from intent_ui.agent.tools.protected import ProtectedPathError
from intent_ui.agent.tools.worker import run_in_worker
from intent_ui.agent.tools.workspace import OutsideWorkspaceError, Workspace
from intent_ui.core.capabilities.intent import strip_intent, with_intent
from intent_ui.core.pauses import CHANGES_WORKSPACE_FLAG

__all__ = [
    "MAX_OUTPUT_BYTES",
    "EditFileTool",
    "GlobSearchTool",
    "GrepSearchTool",
    "ListDirectoryTool",
    "NativeTool",
    "ReadFileTool",
    "ToolError",
    "WriteFileTool",
    "file_tools",
]

logger = logging.getLogger(__name__)

MAX_OUTPUT_BYTES = 256 * 1024
"""Cap on what one call returns to the model; longer output is cut with a note."""
MAX_SEARCH_FILE_BYTES = 1024 * 1024
"""grep_search skips files larger than this (generated bundles, data dumps)."""
MAX_READ_FILE_BYTES = 20 * 1024 * 1024
"""read_file and edit_file refuse larger files (both hold the whole file in memory)."""
SEARCH_TIME_BUDGET_S = 30.0
"""grep_search stops walking after this long and returns what it found so far."""
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})
"""Besides every dot-folder (.git, .venv, .web, ...), folders search never enters."""
_LABEL_TEXT_CHARS = 40


class ToolError(Exception):
    """A failure the model should read about: becomes `ToolResult(is_error=True)`."""


class Args(BaseModel):
    """Base for tool argument models: unknown arguments are refused, not ignored."""

    model_config = ConfigDict(extra="forbid")


def _compact_schema(value: Any) -> Any:
    """A pydantic JSON schema without `title` keys: they cost tokens and say nothing new."""
    if isinstance(value, dict):
        return {
            key: _compact_schema(item)
            for key, item in value.items()
            if not (key == "title" and isinstance(item, str))
        }
    if isinstance(value, list):
        return [_compact_schema(item) for item in value]
    return value


class NativeTool(ABC):
    """Base for native tools: subclasses set `name`, `description`, `Arguments`, `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    Arguments: ClassVar[type[Args]]
    kind: ClassVar[ToolKind] = "native"
    server: ClassVar[str | None] = None
    changes_workspace: ClassVar[bool] = False
    """Set on the tools that change files: their definition says so, and an agent may ask
    before each of their calls (`core/pauses.py`)."""

    @property
    def tool_id(self) -> str:
        return self.name

    @functools.cached_property
    def definition(self) -> dict[str, Any]:
        schema = _compact_schema(self.Arguments.model_json_schema())
        definition = {
            "name": self.name,
            "description": self.description,
            "parameters": dict(with_intent(schema)),
            "intent": True,
        }
        if self.changes_workspace:
            definition[CHANGES_WORKSPACE_FLAG] = True
        return definition

    async def call(self, args: dict[str, Any]) -> ToolResult:
        return await self.call_with(args, self.run)

    async def call_with(
        self, args: dict[str, Any], run: Callable[[Any], Awaitable[ToolResult]]
    ) -> ToolResult:
        """`call`, with `run` doing the work on the validated arguments (a tool the host
        binds to one turn runs its own body this way, with the same checks)."""
        # No tool body sees a parameter it did not declare. The run loop strips the label
        # already; stripping again costs nothing and keeps a stray label out of
        # validation when a caller forgets.
        stripped = strip_intent(args)
        if not isinstance(stripped, dict):
            return ToolResult(f"{self.name}: arguments must be a JSON object", is_error=True)
        try:
            parsed = self.Arguments.model_validate(stripped)
        except ValidationError as exc:
            return ToolResult(self._describe_invalid(exc), is_error=True)
        try:
            return await run(parsed)
        except (ToolError, OutsideWorkspaceError, ProtectedPathError) as exc:
            return ToolResult(str(exc), is_error=True)
        except Exception as exc:  # a tool bug must not end the turn
            logger.exception("Tool %s failed", self.name)
            return ToolResult(f"{self.name} failed: {type(exc).__name__}: {exc}", is_error=True)

    @abstractmethod
    async def run(self, args: Any) -> ToolResult:
        """Do the tool's work with arguments already validated by `Arguments`."""

    def _describe_invalid(self, exc: ValidationError) -> str:
        allowed = ", ".join(self.Arguments.model_fields)
        lines = []
        for err in exc.errors():
            field = ".".join(str(part) for part in err["loc"]) or "arguments"
            if err["type"] == "extra_forbidden":
                lines.append(f"unknown argument '{field}' (allowed: {allowed})")
            elif err["type"] == "missing":
                lines.append(f"missing required argument '{field}'")
            else:
                lines.append(f"argument '{field}': {err['msg']} (got {err.get('input')!r})")
        return f"{self.name}: invalid arguments: " + "; ".join(lines)


class WorkspaceTool(NativeTool):
    """A native tool bound to a workspace folder."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace


# --- shared helpers --------------------------------------------------------------------------


def short(text: str, limit: int = _LABEL_TEXT_CHARS) -> str:
    """Text quoted in an outcome label: one line, at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def human_size(size: int) -> str:
    if size < 1024:
        return plural(size, "byte")
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def cap_output(text: str, note: str = "") -> str:
    """`text` cut to `MAX_OUTPUT_BYTES` (UTF-8), with a note saying so and how to get more.

    A lone surrogate (a file name that is not UTF-8) is measured and kept, not refused: the
    run loop replaces it with U+FFFD, which has the same three bytes.
    """
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= MAX_OUTPUT_BYTES:
        return text
    # Not final: a character cut in half at the end is left out rather than mangled.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogatepass")
    cut = decoder.decode(data[:MAX_OUTPUT_BYTES], final=False)
    cut = cut[: cut.rfind("\n") + 1] or cut
    return f"{cut}\n[output truncated at {human_size(MAX_OUTPUT_BYTES)}{note}]"


def is_binary(sample: bytes) -> bool:
    return b"\x00" in sample


_SPECIAL_FILES = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _special_kind(mode: int) -> str | None:
    """What a non-regular file is ("a named pipe (FIFO)"), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _SPECIAL_FILES if test(mode)), "not a regular file")


def read_regular(path: Path, shown: str, *, limit: int, tool: str, hint: str) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, else a `ToolError` saying why.

    Opened without blocking and checked on the open descriptor, so a named pipe or a
    device (even one swapped in after a check) is refused instead of blocking for ever.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ToolError(f"File '{shown}' does not exist") from None
    except OSError as exc:
        raise ToolError(f"'{shown}' cannot be opened: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"'{shown}' is a directory; use list_directory to see its entries")
        kind = _special_kind(info.st_mode)
        if kind is not None:
            raise ToolError(f"'{shown}' is {kind}, not a regular file; {tool} only opens files")
        if info.st_size > limit:
            raise ToolError(
                f"'{shown}' is {human_size(info.st_size)}, too large for {tool} (limit "
                f"{human_size(limit)}); {hint}"
            )
        # Read at most one byte past the limit: a file growing meanwhile is still bounded.
        data = file.read(limit + 1)
    if len(data) > limit:
        raise ToolError(f"'{shown}' grew past {human_size(limit)} while {tool} read it")
    return data


def _walk_files(top: Path) -> Iterator[Path]:
    """Files under `top`, skipping dot-folders and `SKIPPED_DIRS`, in a stable order."""
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in sorted(files):
            yield Path(folder) / name


def _is_skipped_part(part: str) -> bool:
    return (part.startswith(".") and part not in (".", "..")) or part in SKIPPED_DIRS


# --- read_file -------------------------------------------------------------------------------


class ReadFileArgs(Args):
    path: str = Field(description="File path, relative to the workspace.")
    offset: int = Field(default=1, ge=1, description="First line to read (1-based).")
    limit: int = Field(default=2000, ge=1, le=20000, description="Maximum lines to read.")


class ReadFileTool(WorkspaceTool):
    name = "read_file"
    description = (
        "Read a text file from the workspace. Returns numbered lines; use offset and limit "
        "to page through long files."
    )
    Arguments = ReadFileArgs

    async def run(self, args: ReadFileArgs) -> ToolResult:
        return await run_in_worker(self._read, args)

    def _read(self, args: ReadFileArgs) -> ToolResult:
        path = self.workspace.resolve(args.path)
        shown = self.workspace.display(path)
        data = read_regular(
            path,
            shown,
            limit=MAX_READ_FILE_BYTES,
            tool=self.name,
            hint="use grep_search to find the relevant part",
        )
        if is_binary(data[:8192]):
            raise ToolError(
                f"'{shown}' is a binary file ({human_size(len(data))}); it cannot be read"
            )
        lines = data.decode("utf-8", errors="replace").splitlines()
        start = args.offset - 1
        window = lines[start : start + args.limit]
        if not lines:
            return ToolResult("(empty file)", outcome=f"Read 0 lines of {shown}")
        if not window:
            return ToolResult(
                f"(offset {args.offset} is past the end: '{shown}' has "
                f"{plural(len(lines), 'line')})",
                outcome=f"Read 0 lines of {shown}",
            )
        body = []
        budget = MAX_OUTPUT_BYTES
        for number, line in enumerate(window, start=args.offset):
            entry = f"{number:6}\t{line}"
            budget -= len(entry.encode("utf-8")) + 1
            if budget < 0:
                break
            body.append(entry)
        last = args.offset + len(body) - 1
        text = "\n".join(body)
        if last < len(lines):
            text += (
                f"\n[showing lines {args.offset}-{last} of {len(lines)}; "
                f"call again with offset={last + 1} for more]"
            )
        return ToolResult(text, outcome=f"Read {plural(len(body), 'line')} of {shown}")


# --- write_file ------------------------------------------------------------------------------


class WriteFileArgs(Args):
    path: str = Field(description="File path, relative to the workspace.")
    content: str = Field(description="The complete new content of the file.")


class WriteFileTool(WorkspaceTool):
    name = "write_file"
    changes_workspace = True
    description = (
        "Create or overwrite a text file in the workspace with the given content. Missing "
        "parent folders are created."
    )
    Arguments = WriteFileArgs

    async def run(self, args: WriteFileArgs) -> ToolResult:
        return await run_in_worker(self._write, args)

    def _write(self, args: WriteFileArgs) -> ToolResult:
        path = self.workspace.writable(args.path, tool=self.name)
        shown = self.workspace.display(path)
        if path.is_dir():
            raise ToolError(f"'{shown}' is a directory; give a file path")
        existed = path.exists()
        kind = _special_kind(path.stat().st_mode) if existed else None
        if kind is not None:
            raise ToolError(
                f"'{shown}' is {kind}, not a regular file; write_file only writes files"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        data = args.content.encode("utf-8")
        path.write_bytes(data)
        size = human_size(len(data))
        verb = "Overwrote" if existed else "Created"
        return ToolResult(
            f"{verb} {shown} ({size}, {plural(args.content.count(chr(10)) + 1, 'line')})",
            outcome=f"Wrote {size} to {shown}",
        )


# --- edit_file -------------------------------------------------------------------------------


class EditFileArgs(Args):
    path: str = Field(description="File path, relative to the workspace.")
    old_string: str = Field(description="Exact text to replace; must occur exactly once.")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


class EditFileTool(WorkspaceTool):
    name = "edit_file"
    changes_workspace = True
    description = (
        "Replace exact text in a workspace file. old_string must match the file exactly "
        "(including whitespace) and occur once, unless replace_all is true."
    )
    Arguments = EditFileArgs

    async def run(self, args: EditFileArgs) -> ToolResult:
        return await run_in_worker(self._edit, args)

    def _edit(self, args: EditFileArgs) -> ToolResult:
        path = self.workspace.writable(args.path, tool=self.name)
        shown = self.workspace.display(path)
        if not path.exists():
            raise ToolError(f"File '{shown}' does not exist; use write_file to create it")
        if not args.old_string:
            raise ToolError("old_string is empty; give the exact text to replace")
        if args.old_string == args.new_string:
            raise ToolError("old_string and new_string are identical; nothing to change")
        data = read_regular(
            path,
            shown,
            limit=MAX_READ_FILE_BYTES,
            tool=self.name,
            hint="it is held in memory whole to be edited; split it into smaller files",
        )
        if is_binary(data[:8192]):
            raise ToolError(f"'{shown}' is a binary file; it cannot be edited")
        # Decoded without newline translation, so a CRLF file stays CRLF.
        text = data.decode("utf-8", errors="surrogateescape")
        count = text.count(args.old_string)
        if count == 0:
            raise ToolError(
                f"old_string was not found in {shown}; read the file and copy the text exactly"
            )
        if count > 1 and not args.replace_all:
            raise ToolError(
                f"old_string occurs {count} times in {shown}; include more surrounding text "
                "to make it unique, or set replace_all to true"
            )
        updated = text.replace(args.old_string, args.new_string, -1 if args.replace_all else 1)
        path.write_bytes(updated.encode("utf-8", errors="surrogateescape"))
        done = plural(count if args.replace_all else 1, "replacement")
        return ToolResult(f"Edited {shown}: {done}", outcome=f"Edited {shown} ({done})")


# --- grep_search -----------------------------------------------------------------------------


class GrepSearchArgs(Args):
    pattern: str = Field(
        description="Regular expression (RE2 syntax: no backreferences or lookaround)."
    )
    path: str = Field(default=".", description="Folder or file to search, workspace-relative.")
    glob: str | None = Field(default=None, description="Only files matching this glob, e.g. *.py")
    case_sensitive: bool = False
    max_results: int = Field(default=200, ge=1, le=2000)


_RE2_UNSUPPORTED = (
    (
        "invalid escape sequence: \\",
        "backreferences such as \\1 are not supported; search for the repeated text itself",
    ),
    (
        "invalid perl operator: (?=",
        "lookahead (?=...) is not supported; search for the text itself",
    ),
    (
        "invalid perl operator: (?!",
        "negative lookahead (?!...) is not supported; search for the text itself",
    ),
    (
        "invalid perl operator: (?<=",
        "lookbehind (?<=...) is not supported; search for the text itself",
    ),
    (
        "invalid perl operator: (?<!",
        "negative lookbehind (?<!...) is not supported; search for the text itself",
    ),
)


def compile_search_pattern(pattern: str, *, case_sensitive: bool) -> Any:
    """`pattern` compiled by RE2 (linear-time matching), or a `ToolError` naming the problem.

    RE2 has no backtracking, so the features that need it (backreferences, lookaround)
    are refused with a message saying what to write instead.
    """
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else str(exc)
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", errors="replace")
        reason = next(
            (why for prefix, why in _RE2_UNSUPPORTED if str(detail).startswith(prefix)), None
        )
        if reason is not None:
            raise ToolError(
                f"pattern {pattern!r} cannot be used: {reason} (grep_search uses RE2, "
                "a linear-time engine, so no pattern can run for ever)"
            ) from None
        raise ToolError(
            f"pattern {pattern!r} is not a valid regular expression: {detail}"
        ) from None


class GrepSearchTool(WorkspaceTool):
    name = "grep_search"
    description = (
        "Search file contents in the workspace with a regular expression (RE2 syntax). "
        "Returns path:line: text for each match. Skips binary files and dot-folders like .git."
    )
    Arguments = GrepSearchArgs

    async def run(self, args: GrepSearchArgs) -> ToolResult:
        return await run_in_worker(self._grep, args)

    def _grep(self, args: GrepSearchArgs) -> ToolResult:
        regex = compile_search_pattern(args.pattern, case_sensitive=args.case_sensitive)
        top = self.workspace.resolve(args.path)
        if not top.exists():
            raise ToolError(f"'{self.workspace.display(top)}' does not exist")
        files = [top] if top.is_file() else _walk_files(top)
        deadline = time.monotonic() + SEARCH_TIME_BUDGET_S
        hits: list[str] = []
        truncated = out_of_time = False
        for file in files:
            if time.monotonic() > deadline:
                out_of_time = True
                break
            shown = self.workspace.display(file)
            if args.glob and not (
                fnmatch.fnmatch(file.name, args.glob) or fnmatch.fnmatch(shown, args.glob)
            ):
                continue
            for number, line in self._matching_lines(file, shown, regex):
                if len(hits) >= args.max_results:
                    truncated = True
                    break
                text = line if len(line) <= 300 else line[:299] + "…"
                hits.append(f"{shown}:{number}: {text}")
            if truncated:
                break
        label = short(args.pattern)
        stopped = (
            f"\n[search stopped after {SEARCH_TIME_BUDGET_S:g} s; narrow the path or glob]"
            if out_of_time
            else ""
        )
        if not hits:
            return ToolResult(
                f"No matches for {args.pattern!r}{stopped}", outcome=f"No matches for {label}"
            )
        text = "\n".join(hits) + stopped
        if truncated:
            text += f"\n[stopped at {args.max_results} matches; narrow the pattern or path]"
        count = f"{len(hits)}+" if truncated or out_of_time else str(len(hits))
        noun = "match" if count == "1" else "matches"
        return ToolResult(cap_output(text), outcome=f"Found {count} {noun} for {label}")

    def _matching_lines(self, file: Path, shown: str, regex: Any) -> Iterator[tuple[int, str]]:
        try:
            if file.is_symlink() and not self.workspace.contains(file.resolve()):
                return
            data = read_regular(
                file, shown, limit=MAX_SEARCH_FILE_BYTES, tool=self.name, hint="skipped"
            )
        except (OSError, ToolError):
            return  # unreadable, too large, or not a regular file (a pipe would block)
        if is_binary(data[:8192]):
            return
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                yield number, line


# --- glob_search -----------------------------------------------------------------------------


class GlobSearchArgs(Args):
    pattern: str = Field(description="Glob relative to the workspace, e.g. **/*.py")


MAX_GLOB_RESULTS = 500


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A `/`-separated glob as a regex: `**` spans folders, `*` and `?` stay inside one."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            negate = body.startswith("!")
            body = re.sub(r"([\\^])", r"\\\1", body[1:] if negate else body)
            out.append(f"[{'^' if negate else ''}{body}]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


class GlobSearchTool(WorkspaceTool):
    name = "glob_search"
    description = (
        "Find files in the workspace whose path matches a glob pattern such as **/*.py or "
        "src/**/test_*.py (relative to the workspace). Skips dot-folders like .git unless "
        "the pattern names them."
    )
    Arguments = GlobSearchArgs

    async def run(self, args: GlobSearchArgs) -> ToolResult:
        return await run_in_worker(self._glob, args)

    def _glob(self, args: GlobSearchArgs) -> ToolResult:
        pattern = args.pattern.strip().removeprefix("./")
        parts = pattern.split("/")
        if not pattern or pattern.startswith("/") or ".." in parts:
            raise ToolError(
                f"pattern {args.pattern!r} must be relative to the workspace, e.g. **/*.py"
            )
        regex = glob_regex(pattern)
        named = {part for part in parts if not any(c in part for c in "*?[")}
        found: list[str] = []
        for folder, dirs, files in os.walk(self.workspace.root):
            dirs[:] = sorted(d for d in dirs if not _is_skipped_part(d) or d in named)
            for name in files:
                file = Path(folder) / name
                rel = file.relative_to(self.workspace.root).as_posix()
                # Pipes, devices and sockets are no files to work on: a read would block.
                if regex.fullmatch(rel) and file.is_file():
                    found.append(rel)
        found.sort()
        label = short(pattern)
        if not found:
            return ToolResult(f"No files match {pattern!r}", outcome=f"No files matching {label}")
        text = "\n".join(found[:MAX_GLOB_RESULTS])
        if len(found) > MAX_GLOB_RESULTS:
            text += f"\n[{len(found) - MAX_GLOB_RESULTS} more; use a narrower pattern]"
        return ToolResult(
            cap_output(text), outcome=f"Found {plural(len(found), 'file')} matching {label}"
        )


# --- list_directory --------------------------------------------------------------------------


class ListDirectoryArgs(Args):
    path: str = Field(default=".", description="Folder, relative to the workspace.")


MAX_LIST_ENTRIES = 1000


class ListDirectoryTool(WorkspaceTool):
    name = "list_directory"
    description = (
        "List the entries of a workspace folder: sub-folders end with '/', files show their size."
    )
    Arguments = ListDirectoryArgs

    async def run(self, args: ListDirectoryArgs) -> ToolResult:
        return await run_in_worker(self._list, args)

    def _list(self, args: ListDirectoryArgs) -> ToolResult:
        folder = self.workspace.resolve(args.path)
        shown = self.workspace.display(folder)
        if folder.is_file():
            raise ToolError(f"'{shown}' is a file; use read_file to read it")
        if not folder.is_dir():
            raise ToolError(f"Folder '{shown}' does not exist")
        entries = sorted(folder.iterdir(), key=lambda p: (not p.is_dir(), p.name.lower()))
        lines = []
        for entry in entries[:MAX_LIST_ENTRIES]:
            if entry.is_dir():
                lines.append(f"{entry.name}/")
            else:
                try:
                    lines.append(f"{entry.name}  ({human_size(entry.stat().st_size)})")
                except OSError:  # a dangling symlink
                    lines.append(f"{entry.name}  (unreadable)")
        if len(entries) > MAX_LIST_ENTRIES:
            lines.append(f"[{len(entries) - MAX_LIST_ENTRIES} more entries not shown]")
        name = folder.name if shown == "." else shown
        return ToolResult(
            "\n".join(lines) if lines else "(empty folder)",
            outcome=f"Listed {plural(len(entries), 'entry', 'entries')} in {name}",
        )


def file_tools(workspace: Workspace) -> list[NativeTool]:
    """The six file tools over one workspace, in the order they are offered."""
    return [
        ReadFileTool(workspace),
        WriteFileTool(workspace),
        EditFileTool(workspace),
        GrepSearchTool(workspace),
        GlobSearchTool(workspace),
        ListDirectoryTool(workspace),
    ]
