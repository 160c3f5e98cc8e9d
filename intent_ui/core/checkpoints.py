"""Checkpoints: what a workspace-changing call changed, and what a rewind puts back.

Pure rules, no I/O (the scanning and the store are `agent/checkpoints.py` and
`store/checkpoints.py`; docs/rewind.md).

A manifest maps a workspace-relative path (`/`-separated) to the state of that file: its
SHA-256 and size, or `None` for content not kept (larger than the size bound). A file
absent from a manifest did not exist. A checkpoint is the list of changes between the
manifest before its call and the one after: each change is a path with its state before
(None: the call created it) and after (None: the call deleted it).

Rewinding to before a call puts back, for every path changed by that call or by any
later checkpointed call of the conversation, the state it had before the first of them
that changed it: the workspace as it was just before that call, wherever the tools
touched it since.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "CHECKPOINTED_TOOLS",
    "DIFF_MAX_LINES",
    "SCANNED_TOOLS",
    "Change",
    "FileState",
    "Manifest",
    "RewindMode",
    "RewindRecord",
    "changes_between",
    "rewind_label",
    "target_states",
    "text_diff",
]

SCANNED_TOOLS: frozenset[str] = frozenset({"bash_tool", "run_tools_with_code"})
"""Tools whose changes are found by comparing the whole workspace before and after: what
they write is not named by their arguments (a shell command, a program's inner calls)."""

CHECKPOINTED_TOOLS: frozenset[str] = SCANNED_TOOLS | frozenset(
    {"write_file", "edit_file", "delete_file"}
)
"""Every tool a checkpoint is taken before (the file tools by the path they name)."""

DIFF_MAX_LINES = 400
"""A preview's diff of one file stops after this many lines (it says how many more)."""


@dataclass(frozen=True, slots=True)
class FileState:
    """One file's content: its SHA-256 (hex) and size; `sha256` None when the content was
    larger than the size bound and not kept (such a file can be reported, not restored)."""

    sha256: str | None
    size: int

    @property
    def kept(self) -> bool:
        return self.sha256 is not None

    def to_record(self) -> dict[str, object]:
        return {"sha256": self.sha256, "size": self.size}

    @classmethod
    def from_record(cls, record: object) -> FileState | None:
        if not isinstance(record, Mapping):
            return None
        sha, size = record.get("sha256"), record.get("size")
        return cls(sha if isinstance(sha, str) else None, size if isinstance(size, int) else 0)


Manifest = Mapping[str, FileState]
"""Path -> state of every file scanned (an absent path did not exist)."""


@dataclass(frozen=True, slots=True)
class Change:
    """A path one call changed: its state before (None: created) and after (None: deleted)."""

    path: str
    before: FileState | None
    after: FileState | None

    def to_record(self) -> dict[str, object]:
        return {
            "path": self.path,
            "before": None if self.before is None else self.before.to_record(),
            "after": None if self.after is None else self.after.to_record(),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> Change:
        return cls(
            str(record.get("path", "")),
            FileState.from_record(record.get("before")),
            FileState.from_record(record.get("after")),
        )


def _same(a: FileState | None, b: FileState | None) -> bool:
    if a is None or b is None:
        return a is b
    if a.sha256 is None or b.sha256 is None:
        # Content not kept: only the size tells; the scanner also compares times.
        return False
    return a.sha256 == b.sha256


def changes_between(
    before: Manifest, after: Manifest, *, unchanged: Iterable[str] = ()
) -> list[Change]:
    """The files that differ between two manifests, by path. `unchanged` are paths the
    scanner found untouched although their content was not kept (same size and time)."""
    same = set(unchanged)
    out = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if path in same or _same(old, new):
            continue
        out.append(Change(path, old, new))
    return out


def target_states(checkpoints: Sequence[Sequence[Change]]) -> dict[str, FileState | None]:
    """What a rewind to before the first of `checkpoints` (oldest first: that call, then
    every later one) puts back: each path's state before the first call that changed it."""
    target: dict[str, FileState | None] = {}
    for changes in checkpoints:
        for change in changes:
            target.setdefault(change.path, change.before)
    return target


def rewind_label(label: str) -> str:
    """What a checkpoint is called: after the call's card label."""
    return f"Rewind to before: {label}"


def text_diff(path: str, current: bytes | None, target: bytes | None) -> str:
    """A unified diff from the file as it is now to what the rewind writes. Binary
    content (a NUL byte, or not UTF-8) is described, not diffed."""
    texts: list[list[str]] = []
    for content in (current, target):
        if content is None:
            texts.append([])
            continue
        if b"\x00" in content:
            return "Binary file: its content is restored as it was."
        try:
            texts.append(content.decode("utf-8").splitlines(keepends=True))
        except UnicodeDecodeError:
            return "Binary file: its content is restored as it was."
    lines = list(
        difflib.unified_diff(
            texts[0],
            texts[1],
            fromfile=f"a/{path}" if current is not None else "/dev/null",
            tofile=f"b/{path}" if target is not None else "/dev/null",
        )
    )
    shown = [line if line.endswith("\n") else line + "\n" for line in lines[:DIFF_MAX_LINES]]
    if len(lines) > DIFF_MAX_LINES:
        shown.append(f"... {len(lines) - DIFF_MAX_LINES} more lines\n")
    return "".join(shown)


RewindMode = Literal["files", "all"]
"""`files`: the workspace only; `all`: the workspace and the conversation."""


@dataclass(frozen=True, slots=True)
class RewindRecord:
    """A rewind as the conversation keeps it (a message of its own, shown in the thread):
    the call it went back to before, the files put back, and those refused."""

    call_id: str
    message_id: str
    label: str
    mode: RewindMode
    restored: tuple[str, ...] = ()
    refused: tuple[tuple[str, str], ...] = field(default=())

    def to_json(self) -> str:
        return json.dumps(
            {
                "call_id": self.call_id,
                "message_id": self.message_id,
                "label": self.label,
                "mode": self.mode,
                "restored": list(self.restored),
                "refused": [list(pair) for pair in self.refused],
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> RewindRecord:
        """The record stored by `to_json`; a corrupt one reads as an empty rewind."""
        try:
            value = json.loads(text)
        except ValueError:
            value = {}
        if not isinstance(value, dict):
            value = {}
        refused = value.get("refused")
        restored = value.get("restored")
        return cls(
            str(value.get("call_id", "")),
            str(value.get("message_id", "")),
            str(value.get("label", "")),
            "all" if value.get("mode") == "all" else "files",
            tuple(str(p) for p in restored) if isinstance(restored, list) else (),
            tuple(
                (str(pair[0]), str(pair[1]))
                for pair in (refused if isinstance(refused, list) else [])
                if isinstance(pair, list) and len(pair) == 2
            ),
        )

    def summary(self) -> str:
        """What the thread shows."""
        what = "files and conversation" if self.mode == "all" else "files"
        files = ", ".join(self.restored) if self.restored else "no file needed changing"
        text = f"{rewind_label(self.label)} ({what} restored: {files})"
        if self.refused:
            text += "; not restored: " + "; ".join(f"{p} ({why})" for p, why in self.refused)
        return text

    def model_note(self) -> str:
        """What the model reads in its place: the workspace changed under it."""
        files = ", ".join(self.restored) if self.restored else "none"
        if self.mode == "all":
            return (
                f"[The user rewound the conversation and the workspace to before the call "
                f"'{self.label}'. Files restored to how they were before it: {files}.]"
            )
        return (
            f"[The user restored the workspace files to how they were before the call "
            f"'{self.label}' (the conversation above is unchanged). Files restored: {files}.]"
        )
