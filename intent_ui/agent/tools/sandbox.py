"""A sandbox for model-written programs: Linux namespaces through bubblewrap, plus limits.

`bash_tool` and `run_tools_with_code` run what the model wrote here, never on the host.
The isolation is bubblewrap's (`bwrap`, Debian's `bubblewrap`; the mechanism Claude Code's
sandbox uses on Linux), not a hand-made one:

- every namespace bubblewrap can unshare: no network at all (a socket finds no route),
  its own process tree, host name and IPC, and a user namespace that may not nest;
- a file system of its own: the system folders (`/usr` and its links) read-only, the
  workspace read-only at `/workspace` (the working folder), two empty writable folders
  of bounded size (`/scratch`, the home, and `/tmp`) that vanish with the call, and
  nothing else of the host: no home folder, no `/etc` beyond what programs need to
  start, no devices beyond `/dev/null` and its kind. The app's database and saved
  sessions are hidden even when they lie in the workspace (they hold every user's data);
- resource limits set inside the sandbox, after its user namespace exists, so the
  kernel counts only the sandbox's own processes: CPU time, address space, processes
  (threads count), file size and open files; and from the host, wall time and output
  (read up to the limit, then the whole sandbox is killed).

Root is exempt from the kernel's process limit, so when the app runs as root the
sandbox runs as `nobody` (65534): the workspace must then be readable by that user.
`sandbox_available` tries the whole mechanism once and says why it cannot work (no
`bwrap`, user namespaces switched off, an unreachable workspace); the tools built on it
are not offered then.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "BRIDGE_FD_ENV",
    "DEFAULT_LIMITS",
    "SANDBOX_FILES",
    "SANDBOX_HOME",
    "SANDBOX_UID",
    "SANDBOX_WORKSPACE",
    "BridgeHandler",
    "Sandbox",
    "SandboxLimits",
    "SandboxResult",
    "sandbox_available",
]

logger = logging.getLogger(__name__)

SANDBOX_WORKSPACE = "/workspace"
"""Where the workspace appears inside the sandbox (read-only; the working folder)."""
SANDBOX_HOME = "/scratch"
"""The writable scratch folder, also `HOME`; emptied when the call ends."""
SANDBOX_FILES = "/run/intent_ui"
"""Read-only files the host puts in for one run (the limits launcher, a program)."""
BRIDGE_FD_ENV = "INTENT_UI_BRIDGE_FD"
"""Names the descriptor of the bridge socket inside the sandbox, when there is one."""
SANDBOX_UID = 65534
"""`nobody`: who the sandbox runs as when the app runs as root."""
PROBE_TIMEOUT_S = 20.0
STOP_GRACE_S = 5.0
"""How long a stopped sandbox may take to end its processes before bubblewrap is killed."""
MAX_BRIDGE_LINE = 4 * 1024 * 1024
"""Longest request line the bridge reads (a tool call's JSON arguments)."""

_SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
"""Top-level folders that are links into /usr on a merged-/usr system, folders otherwise."""
_ETC_FILES = (
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
)
"""The part of /etc programs need to start (Debian's command links, the loader's cache)."""
_PATH = "/usr/local/bin:/usr/bin:/bin"

# Runs inside the sandbox, after its namespaces exist: the limits it sets count only the
# sandbox's processes, and no process inside can raise them again (that takes a capability
# in the host's user namespace).
_LAUNCHER = """\
import os, resource, sys
cpu, memory, processes, file_size, open_files = (int(v) for v in sys.argv[1].split(","))
for kind, value in (
    (resource.RLIMIT_CPU, cpu), (resource.RLIMIT_AS, memory),
    (resource.RLIMIT_NPROC, processes), (resource.RLIMIT_FSIZE, file_size),
    (resource.RLIMIT_NOFILE, open_files), (resource.RLIMIT_CORE, 0),
):
    # CPU: the soft limit sends SIGXCPU, the hard one a second later SIGKILL.
    resource.setrlimit(kind, (value, value + 1 if kind == resource.RLIMIT_CPU else value))
os.execvp(sys.argv[2], sys.argv[2:])
"""

BridgeHandler = Callable[[Any], Awaitable[Any]]
"""Answers one request the sandboxed program sent over the bridge (a decoded JSON value)
with the reply to send back (any JSON value)."""


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """What one run may use. Wall time and output are enforced by the host, the rest by
    the kernel inside the sandbox."""

    wall_s: float = 30.0
    cpu_s: int = 20
    memory_bytes: int = 1024 * 1024 * 1024
    """Address space of each process (RLIMIT_AS)."""
    processes: int = 64
    """Processes and threads of the sandbox at once (RLIMIT_NPROC, in its namespace)."""
    output_bytes: int = 64 * 1024
    """Of stdout and stderr together; past it the run is stopped."""
    file_bytes: int = 16 * 1024 * 1024
    """Largest file a process may write (RLIMIT_FSIZE)."""
    scratch_bytes: int = 64 * 1024 * 1024
    """Size of each writable folder (`/scratch`, `/tmp`), which live in memory."""
    open_files: int = 256


DEFAULT_LIMITS = SandboxLimits()


@dataclass(frozen=True, slots=True)
class SandboxResult:
    """How a run ended. `problem` says why it did not succeed (None when it did): the host
    stopped it (time, output), a limit killed it, or it exited with a failure status."""

    output: str
    exit_code: int | None
    problem: str | None
    truncated: bool = False
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.problem is None


@functools.lru_cache(maxsize=16)
def sandbox_available(workspace: Path | None = None) -> str | None:
    """Why no sandbox can run here (None when one can): tried once per workspace.

    The whole mechanism is tried, not only looked for: bubblewrap must start a program
    in fresh namespaces with the workspace bound, as the user the sandbox runs as.
    """
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux namespaces; this is {sys.platform}"
    if _bwrap() is None:
        return (
            "bubblewrap is not installed (no `bwrap` on PATH); install the Debian package "
            "`bubblewrap` (scripts/setup.sh does)"
        )
    python = _sandbox_python()
    if python is None:
        return "no Python interpreter the sandbox can run was found (looked for /usr/bin/python3)"
    sandbox = Sandbox(workspace or Path("/usr"), limits=DEFAULT_LIMITS)
    argv = sandbox.command([python[0], "-I", "-c", "print('ok')"], files={})
    try:
        done = subprocess.run(
            argv.args,
            pass_fds=argv.fds,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
            **_drop_privileges(),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap could not be started: {exc}"
    finally:
        argv.close()
    if done.returncode == 0 and done.stdout.strip() == b"ok":
        return None
    said = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
    detail = said[-1] if said else f"exit status {done.returncode}"
    return _explain_probe_failure(detail, workspace)


def _explain_probe_failure(detail: str, workspace: Path | None) -> str:
    hint = ""
    lowered = detail.lower()
    if "namespace" in lowered or "uid map" in lowered or "operation not permitted" in lowered:
        hint = (
            "; unprivileged user namespaces look switched off (sysctl "
            "kernel.unprivileged_userns_clone=1, or on Ubuntu "
            "kernel.apparmor_restrict_unprivileged_userns=0)"
        )
    elif "permission denied" in lowered and os.geteuid() == 0 and workspace is not None:
        hint = (
            f"; running as root, the sandbox runs as uid {SANDBOX_UID} (root is exempt from "
            f"the kernel's process limit), and that user cannot reach {workspace}"
        )
    return f"bubblewrap cannot create a sandbox here: {detail}{hint}"


def _bwrap() -> str | None:
    """bubblewrap's path: on the app's PATH, else in the system folders."""
    return shutil.which("bwrap") or shutil.which("bwrap", path=_PATH)


def _drop_privileges() -> dict[str, Any]:
    """Popen arguments that run bubblewrap as `nobody` when the app runs as root."""
    if os.geteuid() != 0:
        return {}
    return {"user": SANDBOX_UID, "group": SANDBOX_UID, "extra_groups": []}


@functools.lru_cache(maxsize=1)
def _sandbox_python() -> tuple[str, tuple[str, ...]] | None:
    """The interpreter programs run with, and the host folders it needs bound.

    The system's `python3` under /usr when there is one; else the one this app runs on
    (its installation bound read-only where it lies).
    """
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate, ()
    base = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    prefix = Path(sys.base_prefix).resolve()
    if base.is_file() and prefix in base.parents:
        return str(base), (str(prefix),)
    return None


@dataclass(slots=True)
class _Command:
    """A bubblewrap command line and the descriptors it reads its files from."""

    args: list[str]
    fds: tuple[int, ...]

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = ()


class Sandbox:
    """Runs commands in a fresh bubblewrap sandbox over one workspace.

    `hidden` are host paths inside the workspace the sandbox must not show (shown empty).
    With `writable`, the workspace is bound writable, except `read_only`: host paths
    inside it bound read-only over it (the app's own files).
    """

    def __init__(
        self,
        workspace: str | Path,
        *,
        limits: SandboxLimits = DEFAULT_LIMITS,
        hidden: Iterable[Path] = (),
        writable: bool = False,
        read_only: Iterable[Path] = (),
    ) -> None:
        self.workspace = Path(workspace).expanduser().resolve()
        self.limits = limits
        self.hidden = tuple(hidden)
        self.writable = writable
        self.read_only = tuple(read_only)

    @property
    def unavailable(self) -> str | None:
        """Why this sandbox cannot run (None when it can); see `sandbox_available`."""
        return sandbox_available(self.workspace)

    @property
    def python(self) -> str:
        """The interpreter inside the sandbox (the sandbox must be available)."""
        found = _sandbox_python()
        if found is None:
            raise RuntimeError("no Python interpreter for the sandbox")
        return found[0]

    def command(
        self,
        argv: Sequence[str],
        *,
        files: Mapping[str, str],
        env: Mapping[str, str] | None = None,
        limits: SandboxLimits | None = None,
        keep_fds: Sequence[int] = (),
    ) -> _Command:
        """The bubblewrap command running `argv` inside; `files` (name -> text) appear
        read-only in `SANDBOX_FILES`. The caller closes the command's descriptors."""
        limits = limits or self.limits
        python = _sandbox_python()
        fds: list[int] = []

        def data(text: str) -> str:
            # A memory file: bubblewrap copies it in while it sets up, nothing touches disk.
            fd = os.memfd_create("sandbox-file")
            os.write(fd, text.encode("utf-8"))
            os.lseek(fd, 0, os.SEEK_SET)
            fds.append(fd)
            return str(fd)

        args = [
            _bwrap() or "bwrap",
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--hostname",
            "sandbox",
            "--ro-bind",
            "/usr",
            "/usr",
        ]
        for name in _SYSTEM_LINKS:
            host = Path("/") / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                args += ["--ro-bind", str(host), str(host)]
        for etc in _ETC_FILES:
            args += ["--ro-bind-try", etc, etc]
        for folder in python[1] if python else ():
            args += ["--ro-bind", folder, folder]
        args += ["--proc", "/proc", "--dev", "/dev"]
        for folder in ("/tmp", SANDBOX_HOME):
            args += ["--size", str(limits.scratch_bytes), "--tmpfs", folder]
        args += ["--bind" if self.writable else "--ro-bind", str(self.workspace), SANDBOX_WORKSPACE]
        for path in self.read_only if self.writable else ():
            inside = self._inside(path)
            if inside is not None and path.exists():
                args += ["--ro-bind", str(path), inside]
        for path in self.hidden:
            inside = self._inside(path)
            if inside is None:
                continue
            if path.is_dir():
                args += ["--tmpfs", inside, "--remount-ro", inside]
            elif path.exists():
                args += ["--ro-bind-data", data(""), inside]
        launcher = {"launch.py": _LAUNCHER, **files}
        for name, text in launcher.items():
            args += ["--ro-bind-data", data(text), f"{SANDBOX_FILES}/{name}"]
        args += ["--chdir", SANDBOX_WORKSPACE, "--clearenv"]
        environment = {
            "PATH": _PATH,
            "HOME": SANDBOX_HOME,
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            # stdout and stderr share one pipe: unbuffered, they interleave as printed.
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        for key, value in environment.items():
            args += ["--setenv", key, value]
        interpreter = python[0] if python else "python3"
        rlimits = ",".join(
            str(value)
            for value in (
                max(1, int(limits.cpu_s)),
                limits.memory_bytes,
                limits.processes,
                limits.file_bytes,
                limits.open_files,
            )
        )
        args += ["--", interpreter, "-I", f"{SANDBOX_FILES}/launch.py", rlimits, *argv]
        return _Command(args, (*fds, *keep_fds))

    def _inside(self, path: Path) -> str | None:
        """Where a host path inside the workspace appears in the sandbox (None: outside)."""
        try:
            relative = path.resolve().relative_to(self.workspace)
        except (OSError, ValueError):
            return None
        return None if str(relative) == "." else f"{SANDBOX_WORKSPACE}/{relative.as_posix()}"

    async def run(
        self,
        argv: Sequence[str],
        *,
        files: Mapping[str, str] | None = None,
        bridge: BridgeHandler | None = None,
        limits: SandboxLimits | None = None,
        subject: str = "the program",
    ) -> SandboxResult:
        """Run `argv` in a fresh sandbox and return how it ended; never raises for what the
        program does. With `bridge`, the program can send JSON lines on the descriptor
        named by `BRIDGE_FD_ENV`; each is answered by `bridge` on one line. `subject` is
        what the problem messages call the program ("the command")."""
        limits = limits or self.limits
        host_end = child_end = None
        env: dict[str, str] = {}
        if bridge is not None:
            host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            env[BRIDGE_FD_ENV] = str(child_end.fileno())
        # bubblewrap writes the host pid of the sandbox's pid 1 here once it is set up.
        info_read, info_write = os.pipe()
        os.set_blocking(info_read, False)
        command = self.command(
            argv,
            files=files or {},
            env=env,
            limits=limits,
            keep_fds=(info_write,) if child_end is None else (info_write, child_end.fileno()),
        )
        command.args[1:1] = ["--info-fd", str(info_write)]
        started = time.monotonic()
        try:
            process = await asyncio.create_subprocess_exec(
                *command.args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=command.fds,
                start_new_session=True,
                **_drop_privileges(),
            )
        except OSError as exc:
            command.close()
            os.close(info_read)
            for end in (host_end, child_end):
                if end is not None:
                    end.close()
            return SandboxResult("", None, f"the sandbox could not be started: {exc}")
        # The child has its copies now; ours would keep the bridge open after it exits.
        command.fds = tuple(
            fd for fd in command.fds if child_end is None or fd != child_end.fileno()
        )
        command.close()
        if child_end is not None:
            child_end.close()
        running = _Running(process, info_read)
        serving = (
            asyncio.create_task(_serve_bridge(host_end, bridge))
            if host_end is not None and bridge is not None
            else None
        )
        try:
            return await self._watch(running, limits, started, subject)
        finally:
            if process.returncode is None:
                await running.stop()
            os.close(info_read)
            if serving is not None:
                serving.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await serving
            if host_end is not None:
                host_end.close()

    async def _watch(
        self, running: _Running, limits: SandboxLimits, started: float, subject: str
    ) -> SandboxResult:
        process = running.process
        assert process.stdout is not None
        chunks: list[bytes] = []
        size = 0
        stopped: str | None = None
        try:
            async with asyncio.timeout(limits.wall_s):
                while True:
                    chunk = await process.stdout.read(64 * 1024)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > limits.output_bytes:
                        stopped = (
                            f"stopped: the output passed {_size(limits.output_bytes)}, the "
                            "sandbox's output limit"
                        )
                        break
                if stopped is None:
                    await process.wait()
        except TimeoutError:
            stopped = f"stopped: {subject} ran past its {limits.wall_s:g} s time limit"
        if stopped is not None:
            await running.stop()
        elapsed = time.monotonic() - started
        data = b"".join(chunks)
        truncated = len(data) > limits.output_bytes
        output = data[: limits.output_bytes].decode("utf-8", errors="replace")
        code = process.returncode
        problem = stopped or _exit_problem(code, limits, subject)
        return SandboxResult(output, None if stopped else code, problem, truncated, elapsed)


def _exit_problem(code: int | None, limits: SandboxLimits, subject: str) -> str | None:
    """Why an exit status is a failure, in words (None for success)."""
    if code == 0:
        return None
    if code is None:
        return f"{subject} did not finish"
    # bubblewrap reports a program killed by a signal as 128 + the signal's number.
    signals = {
        signal.SIGXCPU: f"stopped: {subject} used more than {limits.cpu_s} s of CPU time",
        signal.SIGXFSZ: f"stopped: {subject} wrote a file larger than {_size(limits.file_bytes)}",
        signal.SIGKILL: f"{subject} was killed (CPU time or memory ran out)",
        signal.SIGSEGV: f"{subject} crashed (segmentation fault)",
    }
    if code > 128:
        try:
            number = signal.Signals(code - 128)
        except ValueError:
            number = None
        if number is not None:
            return signals.get(number, f"{subject} was killed by {number.name}")
    return f"{subject} exited with status {code}"


def _size(count: int) -> str:
    if count >= 1024 * 1024 and count % (1024 * 1024) == 0:
        return f"{count // (1024 * 1024)} MB"
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024} KB"
    return f"{count} bytes"


@dataclass(slots=True)
class _Running:
    """A started sandbox: bubblewrap's process, and the pipe it names its pid 1 on."""

    process: asyncio.subprocess.Process
    info_fd: int

    def _pid_one(self) -> int | None:
        try:
            info = json.loads(os.read(self.info_fd, 64 * 1024) or b"null")
        except (BlockingIOError, OSError, ValueError):
            return None
        pid = info.get("child-pid") if isinstance(info, dict) else None
        return pid if isinstance(pid, int) and pid > 1 else None

    async def stop(self) -> None:
        """End every process of the sandbox before returning.

        Killing its pid 1 makes the kernel end every process in its namespace, and that
        pid 1 is gone only once they all are; bubblewrap, which waits for it, exits then.
        Killing bubblewrap first would leave the namespace to die a moment after the call
        returned. Before pid 1 exists (or if it does not end), bubblewrap's session is
        killed instead.
        """
        pid = self._pid_one()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(STOP_GRACE_S):
                    await self.process.wait()
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()
        # What is left in the pipe (its writers are gone): read to the end, so the
        # transport closes now rather than when it is collected.
        if self.process.stdout is not None:
            with contextlib.suppress(TimeoutError, OSError):
                async with asyncio.timeout(STOP_GRACE_S):
                    while await self.process.stdout.read(64 * 1024):
                        pass


async def _serve_bridge(sock: socket.socket, handler: BridgeHandler) -> None:
    """Answer the program's JSON lines one by one until it closes its end."""
    reader, writer = await asyncio.open_unix_connection(sock=sock, limit=MAX_BRIDGE_LINE)
    try:
        while True:
            try:
                line = await reader.readline()
            except (ValueError, asyncio.LimitOverrunError):
                reply: Any = {"error": f"request longer than {_size(MAX_BRIDGE_LINE)}"}
                writer.write(json.dumps(reply).encode() + b"\n")
                await writer.drain()
                return
            if not line:
                return
            try:
                request = json.loads(line)
            except ValueError:
                reply = {"error": "the request is not one line of JSON"}
            else:
                try:
                    reply = await handler(request)
                except Exception as exc:  # a bug on the host must not hang the program
                    logger.exception("The sandbox bridge failed to answer")
                    reply = {"error": f"the host failed to answer: {type(exc).__name__}"}
            writer.write(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
            await writer.drain()
    except (ConnectionError, OSError):
        return
    finally:
        writer.close()
