"""The workspace: the one folder the file tools may touch.

Every path a model writes goes through `Workspace.resolve`, which resolves `..` and
symlinks first and only then checks containment, so neither `../etc/passwd`, an
absolute path elsewhere, nor a symlink pointing out of the folder gets through.
A path a tool writes goes through `Workspace.writable`, which also refuses the app's own
files (`ProtectedFiles`), wherever the workspace points.
"""

from __future__ import annotations

from pathlib import Path

from intent_ui.agent.tools.protected import ProtectedFiles

__all__ = ["OutsideWorkspaceError", "Workspace"]


class OutsideWorkspaceError(ValueError):
    """A path resolves outside the workspace (or is not a usable path at all)."""


class Workspace:
    """A root folder and the rules for paths inside it.

    `protected` are the files no tool may write; without it, those of the app this
    process runs, as its environment names them (`ProtectedFiles.for_app()`).
    """

    def __init__(self, root: str | Path, *, protected: ProtectedFiles | None = None) -> None:
        self.root = Path(root).expanduser().resolve()
        self.protected = ProtectedFiles.for_app() if protected is None else protected

    def resolve(self, path: str | Path) -> Path:
        """The absolute, symlink-free path for `path` (relative paths start at the root).

        Raises `OutsideWorkspaceError` when the result is not the root or inside it.
        """
        text = str(path)
        if "\x00" in text:
            raise OutsideWorkspaceError(f"Path {text!r} contains a NUL character")
        candidate = Path(text).expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        try:
            resolved = candidate.resolve()
        except (OSError, RuntimeError) as exc:  # symlink loops, unreadable parents
            raise OutsideWorkspaceError(f"Path '{text}' cannot be resolved: {exc}") from None
        if not self.contains(resolved):
            raise OutsideWorkspaceError(f"Path '{text}' is outside the workspace {self.root}")
        return resolved

    def writable(self, path: str | Path, *, tool: str) -> Path:
        """`resolve(path)`, for a path `tool` is about to create or change.

        Raises `ProtectedPathError` when the path is one of the app's own files.
        """
        resolved = self.resolve(path)
        self.protected.check_write(
            resolved, tool=tool, shown=self.display(resolved), requested=str(path)
        )
        return resolved

    def contains(self, resolved: Path) -> bool:
        """Whether an already-resolved path is the root or below it."""
        return resolved == self.root or self.root in resolved.parents

    def display(self, resolved: Path) -> str:
        """How a resolved path is shown to the model and the user: relative, `/`-separated."""
        if resolved == self.root:
            return "."
        try:
            return resolved.relative_to(self.root).as_posix()
        except ValueError:
            return str(resolved)
