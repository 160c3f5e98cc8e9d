"""The workspace: the one folder the file tools may touch.

Every path a model writes goes through `Workspace.resolve`, which resolves `..` and
symlinks first and only then checks containment, so neither `../etc/passwd`, an
absolute path elsewhere, nor a symlink pointing out of the folder gets through.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["OutsideWorkspaceError", "Workspace"]


class OutsideWorkspaceError(ValueError):
    """A path resolves outside the workspace (or is not a usable path at all)."""


class Workspace:
    """A root folder and the rules for paths inside it."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser().resolve()

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
