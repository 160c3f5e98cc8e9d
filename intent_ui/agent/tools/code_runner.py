"""`run_tools_with_code`: a short Python program, run in the sandbox, that calls tools.

The model writes one program instead of a chain of calls (count the TODOs of every file a
search found, read ten files and keep the lines that matter); the program runs in the
sandbox (`sandbox.py`) and calls the agent's tools through a bridge: each tool the turn
lets code call is a Python function in the program's globals, which sends one JSON line
over a socket the host answers (`{"id", "tool", "args"}` out, `{"id", "output",
"is_error"}` back). A function returns the tool's text output and raises `ToolError` with
the tool's message when the tool fails.

The runner's card carries the program's intent; the calls the program makes are inner
calls: no card, no label. The bridge's signatures are built from the schemas without
the label, and the host strips a stray `intent` from an inner call's arguments before any
tool body runs (`core/capabilities/programmatic.py`). Which tools the program may call is
the turn's business (`allowed_callers`): the host hands the runner a `ToolBridge` for each
call (`agent/code_calls.py`); without one, the program runs with no tools.
"""

from __future__ import annotations

import builtins
import json
import keyword
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from pydantic import Field

from intent_ui.agent.tools.base import ToolKind, ToolResult
from intent_ui.agent.tools.native import Args, NativeTool
from intent_ui.agent.tools.sandbox import (
    BRIDGE_FD_ENV,
    SANDBOX_FILES,
    SANDBOX_HOME,
    SANDBOX_WORKSPACE,
    Sandbox,
    SandboxResult,
)

__all__ = [
    "MAX_CODE_CHARS",
    "MAX_INNER_CALLS",
    "RUN_TOOLS_WITH_CODE_NAME",
    "BoundCodeRunner",
    "RunToolsWithCodeTool",
    "ToolBridge",
    "describe_functions",
    "program_result",
    "python_names",
]

RUN_TOOLS_WITH_CODE_NAME = "run_tools_with_code"
MAX_CODE_CHARS = 100_000
MAX_INNER_CALLS = 200
"""Tool calls one program may make; past it each call fails with a `ToolError`."""
_SUMMARY_CHARS = 160
_RESERVED = frozenset({"call_tool", "ToolError", "tools"}) | frozenset(dir(builtins))

# The program's side of the bridge: runs inside the sandbox before the program, with the
# tool table the host wrote. Plain standard library, one lock so threads may call too.
_RUNNER = f"""\
import json, os, socket, sys, threading, traceback


class ToolError(Exception):
    "A tool called from this program failed; the message is the tool's."


_lock = threading.Lock()
_fd = os.environ.pop({BRIDGE_FD_ENV!r}, None)
_stream = socket.socket(fileno=int(_fd)).makefile("rwb") if _fd else None
_sent = 0


def call_tool(name, /, **arguments):
    "Call the tool `name` with keyword arguments; returns its text output."
    global _sent
    if _stream is None:
        raise ToolError("no tools can be called from this program")
    with _lock:
        _sent += 1
        request = {{"id": _sent, "tool": name, "args": arguments}}
        _stream.write(json.dumps(request).encode("utf-8") + b"\\n")
        _stream.flush()
        line = _stream.readline()
    if not line:
        raise ToolError("the connection to the tools closed")
    reply = json.loads(line)
    if reply.get("is_error") or "error" in reply:
        raise ToolError(reply.get("output") or reply.get("error") or name + " failed")
    return reply.get("output", "")


def _function(name, function, order):
    def call(*args, **kwargs):
        if len(args) > len(order):
            raise TypeError(f"{{function}}() takes at most {{len(order)}} positional arguments")
        for key, value in zip(order, args):
            if key in kwargs:
                raise TypeError(f"{{function}}() got multiple values for argument {{key!r}}")
            kwargs[key] = value
        return call_tool(name, **kwargs)

    call.__name__ = call.__qualname__ = function
    return call


with open("{SANDBOX_FILES}/tools.json", encoding="utf-8") as _file:
    _table = json.load(_file)
tools = {{entry["name"]: _function(**entry) for entry in _table}}
_globals = {{"__name__": "__main__", "ToolError": ToolError, "call_tool": call_tool,
            "tools": tools}}
for _entry in _table:
    _globals[_entry["function"]] = tools[_entry["name"]]
with open("{SANDBOX_FILES}/program.py", encoding="utf-8") as _file:
    _source = _file.read()
try:
    exec(compile(_source, "{SANDBOX_FILES}/program.py", "exec"), _globals)
except SystemExit:
    raise
except BaseException as error:
    # The traceback starts at the program: this runner's frame says nothing to its author.
    traceback.print_exception(type(error), error, error.__traceback__.tb_next)
    sys.exit(1)
"""


class ToolBridge(Protocol):
    """The tools one call's program may use, and how an inner call reaches them.

    `definitions` are the code-callable tools under the names code calls them by, their
    labels already removed; `call` runs one inner call (its arguments as the program sent
    them) and never raises for a tool failure.
    """

    @property
    def definitions(self) -> Sequence[Mapping[str, Any]]: ...

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult: ...


class RunToolsWithCodeArgs(Args):
    code: str = Field(
        min_length=1,
        max_length=MAX_CODE_CHARS,
        description="A short Python 3 program. print() what you want to read back.",
    )


class RunToolsWithCodeTool(NativeTool):
    """The runner. Offered only where the sandbox works; the host binds it to the turn's
    bridge (`bound`) so the program may call tools."""

    name = RUN_TOOLS_WITH_CODE_NAME
    description = (
        "Run a short Python 3 program in a sandbox and get back what it prints. Use it to "
        "call tools in a loop or to combine their results in one step instead of many "
        "calls. The tools listed below are Python functions in the program: each takes "
        "the tool's parameters (keyword arguments, or positional in the order shown), "
        "returns the tool's text output, and raises ToolError when the tool fails; "
        "call_tool(name, **args) calls one by its name. The workspace is the current "
        f"folder ({SANDBOX_WORKSPACE}, read-only), {SANDBOX_HOME} and /tmp are writable and "
        "emptied afterwards, there is no network, and time, memory, processes and output "
        "are limited."
    )
    Arguments = RunToolsWithCodeArgs

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    async def run(self, args: RunToolsWithCodeArgs) -> ToolResult:
        return await self.run_program(args.code, None)

    def bound(self, bridge: ToolBridge) -> BoundCodeRunner:
        """This runner for one call whose program may use `bridge`'s tools."""
        return BoundCodeRunner(self, bridge)

    async def run_program(self, code: str, bridge: ToolBridge | None) -> ToolResult:
        """Run `code` in the sandbox; its functions call `bridge`'s tools."""
        definitions = list(bridge.definitions) if bridge is not None else []
        names = python_names(definitions)
        table = [
            {"name": name, "function": names[name], "order": _parameter_order(definition)}
            for definition in definitions
            if (name := str(definition.get("name"))) in names
        ]
        calls = 0

        async def answer(request: Any) -> Any:
            nonlocal calls
            ident = request.get("id") if isinstance(request, dict) else None
            tool = request.get("tool") if isinstance(request, dict) else None
            args = request.get("args", {}) if isinstance(request, dict) else None
            if not isinstance(tool, str) or not isinstance(args, dict):
                return _reply(ident, "a request names a tool and its arguments", True)
            if bridge is None:
                return _reply(ident, "no tools can be called from this program", True)
            calls += 1
            if calls > MAX_INNER_CALLS:
                return _reply(
                    ident,
                    f"this program made more than {MAX_INNER_CALLS} tool calls, the most one "
                    "program may make",
                    True,
                )
            result = await bridge.call(tool, args)
            return _reply(ident, result.output, result.is_error)

        files = {
            "runner.py": _RUNNER,
            "tools.json": json.dumps(table, ensure_ascii=False),
            "program.py": code,
        }
        result = await self.sandbox.run(
            [self.sandbox.python, "-I", "-u", f"{SANDBOX_FILES}/runner.py"],
            files=files,
            bridge=answer if bridge is not None else None,
        )
        return program_result(result)


class BoundCodeRunner:
    """The runner for one turn: a `Tool` whose program may call the bridge's tools."""

    def __init__(self, runner: RunToolsWithCodeTool, bridge: ToolBridge) -> None:
        self._runner = runner
        self._bridge = bridge

    @property
    def name(self) -> str:
        return self._runner.name

    @property
    def tool_id(self) -> str:
        return self._runner.tool_id

    @property
    def kind(self) -> ToolKind:
        return self._runner.kind

    @property
    def server(self) -> str | None:
        return self._runner.server

    @property
    def definition(self) -> dict[str, Any]:
        return self._runner.definition

    async def call(self, args: dict[str, Any]) -> ToolResult:
        runner, bridge = self._runner, self._bridge

        async def run(parsed: RunToolsWithCodeArgs) -> ToolResult:
            return await runner.run_program(parsed.code, bridge)

        return await runner.call_with(args, run)


def program_result(
    result: SandboxResult, *, empty: str = "(the program printed nothing)"
) -> ToolResult:
    """What the model reads of a sandboxed run: the output, and why it failed first when
    it did (the card shows the first line of an error)."""
    if result.ok:
        return ToolResult(result.output if result.output.strip() else empty)
    problem = result.problem or "the run failed"
    head = problem[0].upper() + problem[1:] + "."
    text = f"{head}\n{result.output}" if result.output.strip() else head
    return ToolResult(text.rstrip("\n"), is_error=True)


def _reply(ident: Any, output: str, is_error: bool) -> dict[str, Any]:
    return {"id": ident, "output": output, "is_error": is_error}


def python_names(definitions: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Tool name -> the Python function it is in a program (unique, never a keyword, a
    builtin or one of the bridge's own names)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for definition in definitions:
        name = definition.get("name")
        if not isinstance(name, str) or name in out:
            continue
        ident = re.sub(r"\W", "_", name, flags=re.ASCII) or "tool"
        if ident[0].isdigit():
            ident = "_" + ident
        if keyword.iskeyword(ident) or ident in _RESERVED:
            ident += "_tool"
        base, number = ident, 2
        while ident in taken:
            ident, number = f"{base}_{number}", number + 1
        taken.add(ident)
        out[name] = ident
    return out


def _parameters(definition: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    schema = definition.get("parameters")
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    required = schema.get("required") if isinstance(schema, Mapping) else None
    properties = dict(props) if isinstance(props, Mapping) else {}
    needed = [str(r) for r in required or () if isinstance(r, str) and r in properties]
    return properties, needed


def _parameter_order(definition: Mapping[str, Any]) -> list[str]:
    """Positional order: the required parameters first, then the others, as declared."""
    properties, needed = _parameters(definition)
    return [*needed, *(name for name in properties if name not in needed)]


def describe_functions(definitions: Sequence[Mapping[str, Any]]) -> str:
    """The functions a program may call, one line each, for the runner's description."""
    names = python_names(definitions)
    if not names:
        return "No tools can be called from code in this conversation: the program runs alone."
    lines = ["Functions the program can call:"]
    for definition in definitions:
        name = definition.get("name")
        if not isinstance(name, str) or name not in names:
            continue
        _, needed = _parameters(definition)
        params = [*needed, *(f"{p}=…" for p in _parameter_order(definition) if p not in needed)]
        summary = _first_sentence(str(definition.get("description") or ""))
        line = f"- {names[name]}({', '.join(params)})"
        if names[name] != name:
            line += f" [tool {name}]"
        lines.append(f"{line}: {summary}" if summary else line)
    return "\n".join(lines)


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(?:\s|$)", flat)
    sentence = match.group(1) if match else flat
    return sentence if len(sentence) <= _SUMMARY_CHARS else sentence[: _SUMMARY_CHARS - 1] + "…"
