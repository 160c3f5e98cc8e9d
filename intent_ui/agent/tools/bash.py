"""`bash_tool`: one bash command, run in the sandbox (`sandbox.py`).

A native tool like the file tools: it declares its intent, validates its arguments and
never raises. The command sees the workspace read-only as its working folder, so what
it may change lasts only for the call (`/scratch`, `/tmp`); files are changed with
`write_file` and `edit_file`, which keep to the workspace's rules. With
`sandbox.write_workspace` the workspace is writable (the app's own files in it stay
read-only), and the description says so; each call then takes a checkpoint. Its output is stdout
and stderr together, bounded; a failing status, a limit or the time running out makes
the call an error whose first line says which.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from intent_ui.agent.tools.base import ToolResult
from intent_ui.agent.tools.code_runner import program_result
from intent_ui.agent.tools.native import Args, NativeTool
from intent_ui.agent.tools.sandbox import SANDBOX_HOME, SANDBOX_WORKSPACE, Sandbox

__all__ = ["BASH_TOOL_NAME", "MAX_COMMAND_CHARS", "BashTool"]

BASH_TOOL_NAME = "bash_tool"
"""The name the coding suite uses everywhere (intent and background defaults know it)."""
MAX_COMMAND_CHARS = 20_000


class BashArgs(Args):
    command: str = Field(
        min_length=1,
        max_length=MAX_COMMAND_CHARS,
        description="The bash command or script to run.",
    )


WRITABLE_DESCRIPTION = (
    "Run a bash command in a sandbox and get back its output (stdout and stderr). The "
    f"workspace is the current folder ({SANDBOX_WORKSPACE}), writable: the command may create, "
    f"change and delete files there; {SANDBOX_HOME} and /tmp are emptied after the call. "
    "There is no network, and time, memory, processes and output are limited."
)


class BashTool(NativeTool):
    name = BASH_TOOL_NAME
    description = (
        "Run a bash command in a sandbox and get back its output (stdout and stderr). The "
        f"workspace is the current folder ({SANDBOX_WORKSPACE}, read-only: change files with "
        f"write_file or edit_file); {SANDBOX_HOME} and /tmp are writable and emptied after "
        "the call. There is no network, and time, memory, processes and output are limited."
    )
    Arguments = BashArgs

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    @property
    def definition(self) -> dict[str, Any]:
        found = super().definition
        if not self.sandbox.writable:
            return found
        return {**found, "description": WRITABLE_DESCRIPTION}

    async def run(self, args: BashArgs) -> ToolResult:
        result = await self.sandbox.run(
            ["bash", "--noprofile", "--norc", "-c", args.command], subject="the command"
        )
        return program_result(result, empty="(no output)")
