"""A checkpoint before every workspace-changing call (docs/rewind.md).

The run loop asks `TurnCheckpoints.around` to wrap each call it runs; for the tools that
change the workspace (`core.checkpoints.CHECKPOINTED_TOOLS`) it scans what the call may
touch before the call, again after it, and records what differs as the call's
checkpoint, with the content each changed file had before (in the store, by SHA-256).

- `write_file`, `edit_file`, `delete_file`: the path they name (a folder: everything
  below it).
- `bash_tool`, `run_tools_with_code`: the whole workspace, since a command or a
  program's inner calls can change any file. The scan compares each file's size, times
  and inode with the last scan's and hashes only what moved, so a call in a workspace
  nobody changed costs one `stat` per file; the first scan reads everything.

Bounds (`ScanLimits`): a file larger than `max_file_bytes`, or read past the
`max_scan_bytes` one scan may read anew, is watched by size and times only: a change to
it is listed, but it cannot be put back. Past `max_files` files the scan stops (in path
order) and the checkpoint says so: changes beyond them are not caught.
The app's own files (`ProtectedFiles`: its database, `.git`, `.venv`, ...) are never
scanned: no tool may change them. Symbolic links and special files are not followed or
kept.

A checkpoint that cannot be taken (an unreadable folder, the store out of reach) is
logged and the call runs without one: a rewind is worth less than the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import stat
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from intent_ui.agent.tools.protected import ProtectedFiles
from intent_ui.agent.tools.workspace import OutsideWorkspaceError, Workspace
from intent_ui.config import AppConfig
from intent_ui.core.checkpoints import (
    CHECKPOINTED_TOOLS,
    SCANNED_TOOLS,
    Change,
    FileState,
    changes_between,
)
from intent_ui.store import checkpoints as checkpoint_store

__all__ = [
    "DEFAULT_LIMITS",
    "Scan",
    "ScanLimits",
    "TurnCheckpoints",
    "WorkspaceScanner",
    "workspace_scanner",
]

logger = logging.getLogger(__name__)

_BLOB_BATCH_BYTES = 8 * 1024 * 1024
"""Contents are written to the store in batches of about this size while a scan reads."""


@dataclass(frozen=True, slots=True)
class ScanLimits:
    max_files: int = 20_000
    """Files one scan looks at; past it the rest of the workspace is not watched."""
    max_file_bytes: int = 8 * 1024 * 1024
    """A larger file is watched by size and times only, and cannot be restored."""
    max_scan_bytes: int = 256 * 1024 * 1024
    """Contents one scan reads anew (the first scan of a workspace reads them all); past
    it the rest is watched by size and times only, and the checkpoint says so."""


DEFAULT_LIMITS = ScanLimits()

_Key = tuple[int, int, int, int]
"""What says a file did not change between scans: size, mtime, ctime (ns) and inode."""


@dataclass(slots=True)
class Scan:
    """What one scan found: each file's state and stat key, and a note when it was cut
    short by `max_files`."""

    files: dict[str, FileState] = field(default_factory=dict)
    keys: dict[str, _Key] = field(default_factory=dict)
    note: str = ""


class WorkspaceScanner:
    """Scans a workspace into manifests and keeps the contents in the store.

    One per process and workspace: it remembers each file's hash by its stat key, and
    which contents the store already has, so a scan rereads only files that changed.
    Thread-safe (scans run in worker threads).
    """

    def __init__(
        self, workspace: Workspace, engine: Engine, *, limits: ScanLimits = DEFAULT_LIMITS
    ) -> None:
        self.workspace = workspace
        self.limits = limits
        self._engine = engine
        self._lock = threading.Lock()
        self._hashes: dict[str, tuple[_Key, str]] = {}
        self._stored: set[str] = set()

    # --- scanning ----------------------------------------------------------------------

    def scan(self, targets: list[str] | None, *, keep: bool) -> Scan:
        """The files under `targets` (workspace-relative paths; None: the whole
        workspace). With `keep`, every content read is stored, so each can be restored."""
        out = Scan()
        pending: dict[str, bytes] = {}
        read = 0
        for path, shown in self._files(targets, out):
            try:
                info = path.lstat()
            except OSError:
                continue
            key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
            out.keys[shown] = key
            if info.st_size > self.limits.max_file_bytes:
                out.files[shown] = FileState(None, info.st_size)
                continue
            with self._lock:
                cached = self._hashes.get(shown)
                known = cached[1] if cached is not None and cached[0] == key else None
                stored = known is not None and known in self._stored
            if known is not None and (stored or not keep):
                out.files[shown] = FileState(known, info.st_size)
                continue
            if read + info.st_size > self.limits.max_scan_bytes:
                out.files[shown] = FileState(None, info.st_size)
                out.note = out.note or (
                    f"More than {self.limits.max_scan_bytes} bytes of files changed since the "
                    "last scan: the rest are watched by size and times only and cannot be "
                    "restored."
                )
                continue
            read += info.st_size
            try:
                content = path.read_bytes()
            except OSError:
                continue
            sha = hashlib.sha256(content).hexdigest()
            with self._lock:
                self._hashes[shown] = (key, sha)
            out.files[shown] = FileState(sha, len(content))
            if keep and sha not in self._stored:
                pending[sha] = content
                if sum(len(v) for v in pending.values()) >= _BLOB_BATCH_BYTES:
                    self._keep(pending)
        if keep:
            self._keep(pending)
        return out

    def _keep(self, pending: dict[str, bytes]) -> None:
        if pending:
            checkpoint_store.put_blobs(self._engine, pending)
            with self._lock:
                self._stored.update(pending)
            pending.clear()

    def _files(self, targets: list[str] | None, out: Scan) -> Iterator[tuple[Path, str]]:
        """Regular files under the targets, in path order, the app's own files left out."""
        root = self.workspace.root
        tops = [root] if targets is None else [self._target(t) for t in targets]
        count = 0
        for top in tops:
            if top is None:
                continue
            for path in self._walk(top):
                count += 1
                if count > self.limits.max_files:
                    out.note = (
                        f"The workspace has more than {self.limits.max_files} files: only the "
                        "first of them in path order were watched, so changes to the others "
                        "are not in this checkpoint."
                    )
                    return
                yield path, self.workspace.display(path)

    def _target(self, text: str) -> Path | None:
        """Where a path a file tool names lies (its folder resolved, not the entry: a
        link is the thing changed), None when outside the workspace."""
        given = Path(text)
        try:
            parent = self.workspace.resolve(given.parent)
        except OutsideWorkspaceError:
            return None
        return parent / given.name if given.name not in ("", ".", "..") else parent

    def _walk(self, top: Path) -> Iterator[Path]:
        protected = self.workspace.protected
        try:
            info = top.lstat()
        except OSError:
            return
        if protected.covering(top) is not None and top != self.workspace.root:
            return
        if stat.S_ISREG(info.st_mode):
            yield top
            return
        if not stat.S_ISDIR(info.st_mode):
            return
        try:
            entries = sorted(os.scandir(top), key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            yield from self._walk(Path(entry.path))

    def contents(self, shas: list[str]) -> dict[str, bytes]:
        """Stored contents by SHA-256."""
        return checkpoint_store.read_blobs(self._engine, shas)


def _targets(tool: str, args: Mapping[str, Any]) -> list[str] | None:
    """What a call may change: None for the whole workspace, else the paths it names."""
    if tool in SCANNED_TOOLS:
        return None
    path = args.get("path")
    return [path] if isinstance(path, str) and path else []


class TurnCheckpoints:
    """The checkpoints of one turn: `around` wraps each call the run loop runs."""

    def __init__(
        self,
        scanner: WorkspaceScanner,
        engine: Engine,
        *,
        conversation_id: str,
        message_id: str,
        now: Callable[[], float] = time.time,
        on_recorded: Callable[[str], None] | None = None,
    ) -> None:
        self._scanner = scanner
        self._engine = engine
        self._conversation_id = conversation_id
        self._message_id = message_id
        self._now = now
        self._on_recorded = on_recorded

    @contextlib.asynccontextmanager
    async def around(self, call_id: str, tool: str, args: Mapping[str, Any]) -> AsyncIterator[None]:
        """Scan before the call (inside the block: the call runs), then record what it
        changed. Other tools pass straight through."""
        if tool not in CHECKPOINTED_TOOLS:
            yield
            return
        targets = _targets(tool, args)
        taken = self._now()
        try:
            before = await asyncio.to_thread(self._scanner.scan, targets, keep=True)
        except Exception:
            logger.exception("No checkpoint before call %s: the workspace scan failed", call_id)
            yield
            return
        record = (call_id, tool, targets, before, taken)
        try:
            yield
        except BaseException:
            # A cancelled call (a stop) still leaves the checkpoint of what it may have
            # changed, recorded in a thread of its own since this task cannot wait.
            threading.Thread(target=self._record, args=record, daemon=True).start()
            raise
        # Recorded before the call settles: a card that shows it ran has its checkpoint.
        await asyncio.to_thread(self._record, *record)

    def _record(
        self, call_id: str, tool: str, targets: list[str] | None, before: Scan, taken: float
    ) -> None:
        try:
            after = self._scanner.scan(targets, keep=False)
            unchanged = [
                path
                for path, key in before.keys.items()
                if after.keys.get(path) == key and not before.files[path].kept
            ]
            changes: list[Change] = changes_between(before.files, after.files, unchanged=unchanged)
            checkpoint_store.add_checkpoint(
                self._engine,
                conversation_id=self._conversation_id,
                message_id=self._message_id,
                call_id=call_id,
                tool=tool,
                changes=changes,
                note=before.note or after.note,
                now=taken,
            )
        except Exception:
            logger.exception("The checkpoint of call %s could not be recorded", call_id)
            return
        if self._on_recorded is not None:
            self._on_recorded(call_id)


def workspace_scanner(config: AppConfig, engine: Engine) -> WorkspaceScanner:
    """The scanner of the configuration's workspace, the app's own files left out."""
    protected = ProtectedFiles.for_app(config)
    return WorkspaceScanner(Workspace(config.workspace, protected=protected), engine)
