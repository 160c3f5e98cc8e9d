"""MCP client: connect configured servers, list their tools, call them as `Tool`s.

Design (why a task per server). The SDK's transports and `ClientSession` are anyio
context managers that open task groups and cancel scopes; anyio requires a cancel scope
to be exited by the task that entered it. An app handles each chat turn in a different
task, so a session entered in turn 1's task could not be closed from turn 5's. Each
server therefore gets one long-lived asyncio task (`_ServerWorker._own`) that enters the
transport + session, waits until it is told to stop or the server's output ends, and
exits them — always in that same task. Requests are different: `session.call_tool` is a
stream send plus a wait for the matching response, safe from any task on the loop, so
callers issue it directly from their own task. Parallel calls to one server therefore
run concurrently, and cancelling a turn cancels exactly that turn's request.

Failure handling. A server that cannot start is logged with a reason and recorded in
`McpManager.failures`; its tools are simply absent. A server that dies mid-call makes that
call an error result (`MCP server 'github' exited during search_code: ...`), and the next
call to it starts it again. Every call runs under a timeout. Nothing here raises into
the run loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from datetime import timedelta
from types import TracebackType
from typing import IO, Any

import anyio
import httpx
from mcp import ClientSession, McpError, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from intent_ui.agent.tools.base import ToolKind, ToolResult
from intent_ui.agent.tools.native import cap_output
from intent_ui.config import McpServerConfig
from intent_ui.core.capture import redact_intent
from intent_ui.core.text import scrub_decoded, scrub_surrogates, terminal_text

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "McpManager",
    "McpServerConnection",
    "McpTool",
    "McpUnavailableError",
]

logger = logging.getLogger(__name__)
# A log line that quotes a server's words (its errors, its stderr, which often echoes the
# arguments it was called with) is a copy leaving the conversation: it goes through
# `redact_intent`. The tool result the conversation keeps quotes them unchanged.

DEFAULT_CONNECT_TIMEOUT = 20.0
"""Seconds a server gets to start, initialize and list its tools."""
DEFAULT_CALL_TIMEOUT = 120.0
"""Seconds one tool call may take."""
SHUTDOWN_TIMEOUT = 10.0
"""Upper bound for one server's shutdown (the stdio client itself escalates to SIGKILL)."""
_STDERR_TAIL_CHARS = 400
_STDERR_MAX_BYTES = 1024 * 1024
"""A chatty server's stderr file is emptied past this size: only its tail is ever read."""


def _open_errlog(server: str) -> IO[bytes]:
    """An anonymous append-only file for a stdio server's stderr.

    O_APPEND makes the server's writes land at the end whatever we do to the file, so it
    can be emptied (`ftruncate`) while the server runs; we read with `pread`, which leaves
    the shared offset alone.
    """
    fd, path = tempfile.mkstemp(prefix=f"mcp-{server}-", suffix=".stderr")
    try:
        os.close(fd)
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
    finally:
        os.unlink(path)
    return os.fdopen(fd, "a+b")


class McpUnavailableError(Exception):
    """A server could not be started or reached; `reason` is readable and says why."""

    def __init__(self, server: str, reason: str) -> None:
        super().__init__(f"MCP server '{server}' is unavailable: {reason}")
        self.server = server
        self.reason = reason


class McpServerConnection:
    """One live connection: transport + initialized `ClientSession` + the tool list.

    An async context manager that must be entered and exited in the same task (see the
    module docstring). `on_closed` is called when the server's output ends (process
    exit, HTTP stream closed), which is how a crash is noticed without a call in flight.
    """

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        timeout: float = DEFAULT_CONNECT_TIMEOUT,
        errlog: IO[Any] | None = None,
        on_closed: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.timeout = timeout
        self.errlog = errlog
        self.on_closed = on_closed
        self.tools: list[types.Tool] = []
        self._stack = AsyncExitStack()
        self._session: ClientSession | None = None

    @property
    def session(self) -> ClientSession:
        if self._session is None:
            raise RuntimeError(f"MCP server '{self.name}' is not connected")
        return self._session

    async def __aenter__(self) -> McpServerConnection:
        try:
            read, write = await self._open_transport()
            pumps = await self._stack.enter_async_context(anyio.create_task_group())
            self._stack.callback(pumps.cancel_scope.cancel)
            relay_send, relay_receive = anyio.create_memory_object_stream[Any](0)
            pumps.start_soon(self._relay, read, relay_send)
            self._session = await self._stack.enter_async_context(
                ClientSession(relay_receive, write)
            )
            with anyio.fail_after(self.timeout):
                await self._session.initialize()
                self.tools = await self._list_tools()
        except BaseException as exc:
            await self._stack.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        self._session = None
        return await self._stack.__aexit__(exc_type, exc, tb)

    async def _open_transport(self) -> tuple[Any, Any]:
        cfg = self.config
        if cfg.command is not None:
            params = StdioServerParameters(
                command=cfg.command, args=list(cfg.args), env=dict(cfg.env) or None, cwd=cfg.cwd
            )
            errlog = self.errlog if self.errlog is not None else open(os.devnull, "w")  # noqa: SIM115
            if self.errlog is None:
                self._stack.callback(errlog.close)
            # mcp annotates `errlog` as TextIO, but only hands it to the server process as
            # its stderr, which takes any file: ours is a binary one (`_open_errlog`).
            stdio = stdio_client(params, errlog=errlog)  # type: ignore[arg-type]
            return await self._stack.enter_async_context(stdio)
        client = create_mcp_http_client(headers=dict(cfg.headers) or None)
        await self._stack.enter_async_context(client)
        read, write, _ = await self._stack.enter_async_context(
            streamable_http_client(str(cfg.url), http_client=client)
        )
        return read, write

    async def _relay(self, source: Any, sink: Any) -> None:
        """Forward server messages to the session; report when the server's output ends."""
        try:
            # The relay owns both ends it reads and writes: the streamable HTTP client
            # leaves closing its read stream to the caller (stdio closes its own).
            async with source, sink:
                async for item in source:
                    await sink.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            if self.on_closed is not None:
                self.on_closed()

    async def _list_tools(self) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            page = await self.session.list_tools(cursor)
            tools.extend(page.tools)
            cursor = page.nextCursor
            if not cursor:
                return tools


class _ServerWorker:
    """One configured server: owns its connection task, (re)connects on demand, calls tools."""

    def __init__(
        self, name: str, config: McpServerConfig, *, connect_timeout: float, call_timeout: float
    ) -> None:
        self.name = name
        self.config = config
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self.tool_specs: list[types.Tool] | None = None  # None until the first connection
        self.failure: str | None = None
        self._conn: McpServerConnection | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: anyio.Event | None = None
        self._gone = False  # the server's output ended: the connection cannot serve calls
        self._errlog: IO[Any] | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    # lifetime ------------------------------------------------------------------------------

    def alive(self) -> bool:
        return (
            self._conn is not None
            and self._task is not None
            and not self._task.done()
            and self._stop is not None
            and not self._stop.is_set()
            and not self._gone
        )

    async def ensure(self) -> ClientSession:
        """The live session, starting (or restarting) the server if needed."""
        if self.alive() and self._conn is not None:
            return self._conn.session
        async with self._lock:
            if self.alive() and self._conn is not None:
                return self._conn.session
            if self._closed:
                raise McpUnavailableError(self.name, "the MCP client has been shut down")
            await self._retire()
            try:
                await self._start()
            except McpUnavailableError as exc:
                self.failure = exc.reason
                raise
            self.failure = None
            assert self._conn is not None
            return self._conn.session

    async def _start(self) -> list[types.Tool]:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[list[types.Tool]] = loop.create_future()
        # Read the result even if nobody awaits it any more (no "never retrieved" noise).
        ready.add_done_callback(lambda f: None if f.cancelled() else f.exception())
        self._stop = anyio.Event()
        self._gone = False
        if self.config.command is not None:
            self._errlog = _open_errlog(self.name)
        self._task = asyncio.create_task(
            self._own(ready, self._stop), name=f"mcp-server-{self.name}"
        )
        try:
            # The worker enforces connect_timeout itself (inside its own cancel scope);
            # this outer bound only guards against a transport that ignores it.
            return await asyncio.wait_for(asyncio.shield(ready), self.connect_timeout + 5)
        except TimeoutError:
            reason = f"it did not start within {self.connect_timeout:g} s"
        except McpUnavailableError:
            raise
        except Exception as exc:
            reason = self._explain(exc)
        self._stop.set()
        raise McpUnavailableError(self.name, reason)

    async def _own(self, ready: asyncio.Future[list[types.Tool]], stop: anyio.Event) -> None:
        """The connection's owner task: enter, serve until stopped or closed, exit."""
        try:
            async with McpServerConnection(
                self.name,
                self.config,
                timeout=self.connect_timeout,
                errlog=self._errlog,
                on_closed=self._server_closed,
            ) as conn:
                self._conn = conn
                self.tool_specs = conn.tools  # also when the caller who asked has gone
                if not ready.done():
                    ready.set_result(conn.tools)
                await stop.wait()
        except Exception as exc:  # reported, never raised: nobody awaits this task
            reason = self._explain(exc)
            if not ready.done():
                ready.set_exception(McpUnavailableError(self.name, reason))
            elif not self._closed:
                logger.warning(
                    "MCP server %r closed with an error: %s", self.name, redact_intent(reason)
                )
        finally:
            self._conn = None
            if not ready.done():
                ready.set_exception(McpUnavailableError(self.name, "its connection was cancelled"))

    def _server_closed(self) -> None:
        # Only marks the connection dead. Stopping the owner task here would cancel the
        # session's receive loop while it fails the pending requests, leaving their
        # callers waiting for a timeout; the next `ensure` retires the connection instead.
        self._gone = True

    async def _retire(self) -> None:
        """Let a finished or stopping connection task end (bounded), and free its files."""
        task, self._task = self._task, None
        if self._stop is not None:
            self._stop.set()
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), SHUTDOWN_TIMEOUT)
            except TimeoutError:
                logger.warning("MCP server %r did not shut down in time; cancelling", self.name)
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    async def aclose(self) -> None:
        async with self._lock:
            self._closed = True
            await self._retire()

    # calls ---------------------------------------------------------------------------------

    async def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        try:
            session = await self.ensure()
        except McpUnavailableError as exc:
            logger.warning("%s (call to %s skipped)", redact_intent(str(exc)), tool)
            return ToolResult(str(exc), is_error=True)
        try:
            # The session's own read timeout answers first; the outer bound covers a write
            # that blocks on a wedged pipe.
            async with asyncio.timeout(self.call_timeout + 5):
                result = await session.call_tool(
                    tool, args, read_timeout_seconds=timedelta(seconds=self.call_timeout)
                )
        except McpError as exc:
            if exc.error.code == 408:
                return self._timed_out(tool)
            if exc.error.code == types.CONNECTION_CLOSED or not self.alive():
                return self._died(tool, exc)
            said = terminal_text(exc.error.message, multiline=False)
            logger.warning("MCP server %r rejected %s: %s", self.name, tool, redact_intent(said))
            return ToolResult(f"MCP server '{self.name}' rejected {tool}: {said}", is_error=True)
        except TimeoutError:
            return self._timed_out(tool)
        except Exception as exc:
            if not self.alive():
                return self._died(tool, exc)
            logger.warning("MCP call %s on %r failed", tool, self.name, exc_info=True)
            return ToolResult(
                f"MCP server '{self.name}' failed during {tool}: {self._explain(exc)}",
                is_error=True,
            )
        self._trim_errlog()
        return _to_tool_result(result)

    def _trim_errlog(self) -> None:
        if self._errlog is not None and not self._errlog.closed:
            fd = self._errlog.fileno()
            if os.fstat(fd).st_size > _STDERR_MAX_BYTES:
                os.ftruncate(fd, 0)

    def _timed_out(self, tool: str) -> ToolResult:
        message = f"MCP server '{self.name}' did not answer {tool} within {self.call_timeout:g} s"
        logger.warning(message)
        return ToolResult(message, is_error=True)

    def _died(self, tool: str, exc: BaseException) -> ToolResult:
        self._gone = True  # the next call starts the server again
        reason = self._explain(exc)
        logger.warning("MCP server %r exited during %s: %s", self.name, tool, redact_intent(reason))
        return ToolResult(f"MCP server '{self.name}' exited during {tool}: {reason}", is_error=True)

    # reasons -------------------------------------------------------------------------------

    def _explain(self, exc: BaseException) -> str:
        """A one-line reason for `exc`, with the tail of the server's stderr when there is one."""
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        command = self.config.command
        if isinstance(exc, FileNotFoundError) and command is not None:
            reason = f"command '{command}' was not found; check 'command' and PATH"
            if shutil.which(command) is not None:
                reason = f"cannot start '{command}': {exc}"
        elif isinstance(exc, TimeoutError):
            reason = f"it did not start within {self.connect_timeout:g} s"
        elif isinstance(exc, httpx.HTTPStatusError):
            reason = f"{self.config.url} answered HTTP {exc.response.status_code}"
        elif isinstance(exc, httpx.HTTPError):
            reason = f"cannot reach {self.config.url}: {exc}"
        elif isinstance(exc, McpError) and exc.error.code == types.CONNECTION_CLOSED:
            reason = "the server closed the connection"
        elif isinstance(exc, McpError):
            reason = exc.error.message
        else:
            reason = str(exc) or type(exc).__name__
        tail = self._stderr_tail()
        # The server's own words (its error text, its stderr) reach logs, the terminal and
        # the browser: escape sequences are removed here, where they are read.
        return terminal_text(f"{reason} (stderr: {tail})" if tail else reason, multiline=False)

    def _stderr_tail(self) -> str:
        if self._errlog is None or self._errlog.closed:
            return ""
        fd = self._errlog.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - 4096)
        text = os.pread(fd, size - start, start).decode("utf-8", errors="replace")
        lines = [terminal_text(line, multiline=False) for line in text.splitlines()]
        lines = [line for line in lines if line]
        tail = " | ".join(lines[-3:])
        return tail[-_STDERR_TAIL_CHARS:]


def _to_tool_result(result: types.CallToolResult) -> ToolResult:
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            parts.append(f"[{block.type}: {block.mimeType}]")
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource: {resource.uri}]")
        elif isinstance(block, types.ResourceLink):
            parts.append(f"[resource link: {block.uri}]")
    if not parts and result.structuredContent is not None:
        parts.append(json.dumps(result.structuredContent, ensure_ascii=False))
    # A server's decoded JSON may hold lone surrogates: replaced as the result enters.
    output = scrub_surrogates("\n".join(parts))
    return ToolResult(cap_output(output), is_error=bool(result.isError))


class McpTool:
    """One tool of one MCP server, as the run loop sees it.

    The definition carries the server's schema untouched: intents for third-party
    tools are injected by the capability pipeline per `tool_options` (optional: we do
    not write this server's callers; docs/capabilities.md).
    """

    kind: ToolKind = "mcp"

    def __init__(self, spec: types.Tool, worker: _ServerWorker) -> None:
        self._spec = spec
        self._worker = worker

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def server(self) -> str:
        return self._worker.name

    @property
    def tool_id(self) -> str:
        return f"{self.name}_mcp_{self.server}"

    @property
    def definition(self) -> dict[str, Any]:
        # The server's decoded JSON may hold lone surrogates, which no request body can
        # carry: replaced as the definition enters the run.
        return scrub_decoded(
            {
                "name": self.name,
                "description": self._spec.description or "",
                "parameters": dict(self._spec.inputSchema),
            }
        )

    async def call(self, args: dict[str, Any]) -> ToolResult:
        return await self._worker.call(self.name, args)

    def __repr__(self) -> str:
        return f"McpTool({self.tool_id!r})"


class McpManager:
    """All configured MCP servers.

    Use as `async with McpManager(config.mcp_servers) as mcp:` (one-shot CLI) or call
    `start()` once and `aclose()` at shutdown (long-running app). Sessions stay open
    across turns; a server that died is started again on its next call.
    """

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        self._workers = {
            name: _ServerWorker(
                name, cfg, connect_timeout=connect_timeout, call_timeout=call_timeout
            )
            for name, cfg in servers.items()
        }
        self._tools: dict[str, tuple[list[types.Tool], list[McpTool]]] = {}

    @property
    def failures(self) -> dict[str, str]:
        """Server name -> why it is unavailable (for the UI). Empty when all are up."""
        return {name: w.failure for name, w in self._workers.items() if w.failure is not None}

    @property
    def servers(self) -> list[str]:
        return list(self._workers)

    async def start(self) -> None:
        """Connect every server concurrently; failures are logged and recorded, not raised."""
        results = await asyncio.gather(
            *(worker.ensure() for worker in self._workers.values()), return_exceptions=True
        )
        for worker, result in zip(self._workers.values(), results, strict=True):
            if isinstance(result, McpUnavailableError):
                logger.warning("%s; its tools are not offered", redact_intent(str(result)))
            elif isinstance(result, BaseException):
                worker.failure = f"{type(result).__name__}: {result}"
                logger.error("MCP server %r failed to start", worker.name, exc_info=result)

    def tools(self) -> list[McpTool]:
        """Tools of every server that has connected at least once, in configuration order."""
        out: list[McpTool] = []
        for name, worker in self._workers.items():
            specs = worker.tool_specs
            if specs is None:
                continue
            cached = self._tools.get(name)
            if cached is None or cached[0] is not specs:
                cached = (specs, [McpTool(spec, worker) for spec in specs])
                self._tools[name] = cached
            out.extend(cached[1])
        return out

    async def aclose(self) -> None:
        """Shut every server down (bounded per server); safe to call twice."""
        await asyncio.gather(*(worker.aclose() for worker in self._workers.values()))

    async def __aenter__(self) -> McpManager:
        await self.start()
        return self

    async def __aexit__(self, *_exc_info: object) -> None:
        await self.aclose()
