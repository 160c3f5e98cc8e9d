"""`delete_file`: remove a file, or a folder with everything in it, from the workspace.

It changes the workspace, so an agent may ask before each call (`core/pauses.py`: its
definition carries `"changes_workspace": true`). Every path it removes goes through
`Workspace.writable`, each file of a folder too, so none of the app's own files can go;
a symbolic link is removed itself, never what it points to; the workspace root cannot be
deleted; a folder is deleted only when the call says `recursive: true`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pydantic import Field

from intent_ui.agent.tools.base import ToolResult
from intent_ui.agent.tools.native import Args, ToolError, WorkspaceTool, plural
from intent_ui.agent.tools.worker import run_in_worker

__all__ = ["DeleteFileTool"]


class DeleteFileArgs(Args):
    path: str = Field(description="File or folder path, relative to the workspace.")
    recursive: bool = Field(
        default=False, description="Required to delete a folder and everything in it."
    )


class DeleteFileTool(WorkspaceTool):
    name = "delete_file"
    changes_workspace = True
    description = (
        "Delete a file from the workspace, or a folder with everything in it (set recursive "
        "to true for a folder). A symbolic link is removed itself, not what it points to."
    )
    Arguments = DeleteFileArgs

    async def run(self, args: DeleteFileArgs) -> ToolResult:
        return await run_in_worker(self._delete, args)

    def _delete(self, args: DeleteFileArgs) -> ToolResult:
        given = Path(args.path)
        # The folder holding it is resolved, not the entry: a link is the thing deleted.
        parent = self.workspace.writable(given.parent, tool=self.name)
        if given.name in ("", ".", ".."):
            raise ToolError(f"'{args.path}' names no file or folder to delete")
        target = parent / given.name
        shown = self.workspace.display(parent / given.name)
        if target.is_symlink():
            self.workspace.protected.check_write(
                target, tool=self.name, shown=shown, requested=args.path
            )
            target.unlink()
            return ToolResult(f"Deleted the link {shown}", outcome=f"Deleted {shown}")
        target = self.workspace.writable(target, tool=self.name)
        if target == self.workspace.root:
            raise ToolError("The workspace itself cannot be deleted")
        if not target.exists():
            raise ToolError(f"'{shown}' does not exist")
        if not target.is_dir():
            target.unlink()
            return ToolResult(f"Deleted {shown}", outcome=f"Deleted {shown}")
        if not args.recursive:
            raise ToolError(
                f"'{shown}' is a folder; set recursive to true to delete it and everything in it"
            )
        count = 0
        for folder, dirs, files in os.walk(target):
            for name in [*dirs, *files]:
                # Refuses the whole call before anything is removed.
                self.workspace.writable(Path(folder) / name, tool=self.name)
            count += len(files)
        shutil.rmtree(target)
        return ToolResult(
            f"Deleted the folder {shown} ({plural(count, 'file')})",
            outcome=f"Deleted {shown} ({plural(count, 'file')})",
        )
