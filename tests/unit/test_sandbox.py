"""The sandbox itself, run for real (bubblewrap): what a program inside can reach, and how
each way out is refused and reported."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from pathlib import Path

import pytest

from intent_ui.agent.tools import sandbox as sandbox_module
from intent_ui.agent.tools.sandbox import (
    SANDBOX_WORKSPACE,
    Sandbox,
    SandboxLimits,
    SandboxResult,
    sandbox_available,
)
from tests.support.sandbox import readable_folder, requires_sandbox

SMALL = SandboxLimits(wall_s=3, cpu_s=1, processes=16, output_bytes=4096)


async def sh(
    workspace: Path, command: str, *, limits: SandboxLimits = SMALL, hidden: Iterable[Path] = ()
) -> SandboxResult:
    sandbox = Sandbox(workspace, limits=limits, hidden=hidden)
    return await sandbox.run(["bash", "--norc", "-c", command])


async def py(workspace: Path, code: str, *, limits: SandboxLimits = SMALL) -> SandboxResult:
    sandbox = Sandbox(workspace, limits=limits)
    return await sandbox.run([sandbox.python, "-I", "-u", "-c", code])


# --- availability (no bubblewrap needed) ------------------------------------------------


def test_without_bwrap_the_reason_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda *args, **kwargs: None)
    why = sandbox_available.__wrapped__(None)
    assert why is not None and "bubblewrap" in why and "`bwrap`" in why


@pytest.mark.parametrize(
    ("said", "hint"),
    [
        ("bwrap: No permissions to creating new namespace", "user namespaces look switched off"),
        ("bwrap: setting up uid map: Permission denied", "user namespaces look switched off"),
    ],
)
def test_a_bwrap_that_cannot_make_a_sandbox_is_reported_in_its_own_words(
    monkeypatch: pytest.MonkeyPatch, said: str, hint: str
) -> None:
    with readable_folder() as folder:
        fake = folder / "bwrap"
        fake.write_text(f"#!/bin/sh\necho '{said}' >&2\nexit 1\n")
        fake.chmod(0o755)
        monkeypatch.setattr(sandbox_module.shutil, "which", lambda *args, **kwargs: str(fake))
        why = sandbox_available.__wrapped__(folder)
    assert why is not None
    assert why.startswith(f"bubblewrap cannot create a sandbox here: {said}")
    assert hint in why


# --- the file system -------------------------------------------------------------------


@requires_sandbox
async def test_the_workspace_is_the_working_folder_and_readable(sandbox_workspace: Path) -> None:
    result = await sh(sandbox_workspace, "pwd; cat notes.md")
    assert result.ok
    assert result.output == f"{SANDBOX_WORKSPACE}\nTODO write the notes\n"


@requires_sandbox
@pytest.mark.parametrize(
    "path",
    ["/etc/shadow", "/etc/passwd", "HOST_HOME", "HOST_WORKSPACE", "APP_CHECKOUT"],
)
async def test_reading_outside_the_workspace_finds_nothing(
    sandbox_workspace: Path, path: str
) -> None:
    target = {
        "HOST_HOME": str(Path.home()),
        # The workspace is only at /workspace: its host path does not exist inside.
        "HOST_WORKSPACE": str(sandbox_workspace / "notes.md"),
        "APP_CHECKOUT": str(Path(sandbox_module.__file__).resolve()),
    }.get(path, path)
    result = await sh(sandbox_workspace, f"cat '{target}'")
    assert not result.ok
    assert result.problem == "the program exited with status 1"
    assert "No such file or directory" in result.output


@requires_sandbox
async def test_writing_the_workspace_is_refused(sandbox_workspace: Path) -> None:
    result = await sh(sandbox_workspace, "echo changed > notes.md; touch new.txt")
    assert not result.ok
    assert result.output.count("Read-only file system") == 2
    assert (sandbox_workspace / "notes.md").read_text() == "TODO write the notes\n"
    assert not (sandbox_workspace / "new.txt").exists()


@requires_sandbox
async def test_the_scratch_folders_are_writable_and_vanish_with_the_call(
    sandbox_workspace: Path,
) -> None:
    first = await sh(sandbox_workspace, "echo kept > ~/a; echo kept > /tmp/b; cat ~/a /tmp/b")
    assert first.ok and first.output == "kept\nkept\n"
    second = await sh(sandbox_workspace, "ls -A ~ /tmp")
    assert second.ok and second.output.split() == ["/scratch:", "/tmp:"]


@requires_sandbox
async def test_hidden_paths_in_the_workspace_show_empty(sandbox_workspace: Path) -> None:
    data = sandbox_workspace / ".data"
    data.mkdir()
    (data / "intent_ui.db").write_text("every user's conversations")
    (sandbox_workspace / "app.db").write_text("more of them")
    hidden = [data, sandbox_workspace / "app.db"]
    result = await sh(sandbox_workspace, "ls -A .data; wc -c < app.db", hidden=hidden)
    assert result.ok and result.output == "0\n"


@requires_sandbox
async def test_the_hosts_environment_does_not_leak_in(
    sandbox_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-sandbox")
    result = await sh(sandbox_workspace, "env")
    assert result.ok and "sk-not-for-the-sandbox" not in result.output
    assert "HOME=/scratch" in result.output.splitlines()


# --- the network -----------------------------------------------------------------------


@requires_sandbox
async def test_no_socket_reaches_anything(sandbox_workspace: Path) -> None:
    """Not the internet, and not a server on the host's loopback either."""
    reached: list[bool] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        reached.append(True)
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    code = (
        "import socket\n"
        f"for host, port in [('1.1.1.1', 80), ('127.0.0.1', {port})]:\n"
        "    try:\n"
        "        socket.create_connection((host, port), timeout=2)\n"
        "    except OSError as error:\n"
        "        print(host, type(error).__name__)\n"
        "    else:\n"
        "        print(host, 'connected')\n"
        "socket.create_connection(('1.1.1.1', 80), timeout=2)\n"
    )
    async with server:
        result = await py(sandbox_workspace, code)
    assert not result.ok
    lines = result.output.splitlines()
    assert lines[:2] == ["1.1.1.1 OSError", "127.0.0.1 ConnectionRefusedError"]
    assert "Network is unreachable" in result.output
    assert reached == []


# --- processes, time, memory, output ---------------------------------------------------


@requires_sandbox
async def test_a_fork_bomb_stops_at_the_process_limit(sandbox_workspace: Path) -> None:
    code = (
        "import os, time\n"
        "children = 0\n"
        "try:\n"
        "    while True:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "        children += 1\n"
        "finally:\n"
        "    print('children', children, flush=True)\n"
    )
    result = await py(sandbox_workspace, code)
    assert not result.ok and result.problem == "the program exited with status 1"
    assert "BlockingIOError" in result.output
    assert "Resource temporarily unavailable" in result.output
    children = int(result.output.split("children ")[1].split()[0])
    assert 0 < children < SMALL.processes


@requires_sandbox
async def test_a_bash_fork_bomb_leaves_nothing_behind(sandbox_workspace: Path) -> None:
    """The classic bomb collapses once forks fail (or runs into the time limit); either
    way the call ends and none of its processes outlives it."""
    result = await sh(sandbox_workspace, "bomb_4242(){ bomb_4242|bomb_4242& };bomb_4242; wait")
    assert result.problem is None or result.problem.startswith("stopped:")
    assert _survivors("bomb_4242") == []


@requires_sandbox
async def test_running_past_the_time_limit_is_stopped_and_nothing_outlives_it(
    sandbox_workspace: Path,
) -> None:
    marker = "987654.25"
    result = await sh(sandbox_workspace, f"echo started; sleep {marker} & sleep {marker}")
    assert result.problem == "stopped: the program ran past its 3 s time limit"
    assert result.exit_code is None and result.output == "started\n"
    assert _survivors(marker) == []


def _survivors(marker: str) -> list[str]:
    """Processes on the host whose command line holds `marker`."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes() if pid.isdigit() else b""
        except OSError:
            continue
        if marker.encode() in line:
            found.append(pid)
    return found


@requires_sandbox
async def test_cpu_time_is_limited(sandbox_workspace: Path) -> None:
    result = await py(sandbox_workspace, "while True: pass", limits=SandboxLimits(cpu_s=1))
    assert result.problem == "stopped: the program used more than 1 s of CPU time"


@requires_sandbox
async def test_memory_is_limited(sandbox_workspace: Path) -> None:
    limits = SandboxLimits(memory_bytes=256 * 1024 * 1024)
    result = await py(sandbox_workspace, "blob = bytearray(1024 * 1024 * 1024)", limits=limits)
    assert not result.ok and "MemoryError" in result.output


@requires_sandbox
async def test_a_flood_of_output_is_cut_and_stopped(sandbox_workspace: Path) -> None:
    result = await sh(sandbox_workspace, "yes flood")
    assert result.problem == "stopped: the output passed 4 KB, the sandbox's output limit"
    assert result.truncated and result.exit_code is None
    assert len(result.output.encode()) == 4096
    assert result.output.startswith("flood\nflood\n")


@requires_sandbox
async def test_a_failing_status_is_the_problem(sandbox_workspace: Path) -> None:
    result = await sh(sandbox_workspace, "echo half; exit 3")
    assert (result.ok, result.exit_code, result.output) == (False, 3, "half\n")
    assert result.problem == "the program exited with status 3"


@requires_sandbox
async def test_the_bridge_answers_each_line_the_program_sends(sandbox_workspace: Path) -> None:
    seen: list[object] = []

    async def answer(request: object) -> object:
        seen.append(request)
        return {"echo": request}

    sandbox = Sandbox(sandbox_workspace, limits=SMALL)
    code = (
        "import json, os, socket\n"
        "stream = socket.socket(fileno=int(os.environ['INTENT_UI_BRIDGE_FD'])).makefile('rwb')\n"
        "for n in range(2):\n"
        "    stream.write(json.dumps({'n': n}).encode() + b'\\n'); stream.flush()\n"
        "    print(stream.readline().decode().strip())\n"
        "stream.write(b'not json\\n'); stream.flush()\n"
        "print(stream.readline().decode().strip())\n"
    )
    result = await sandbox.run([sandbox.python, "-I", "-c", code], bridge=answer)
    assert result.ok, result.output
    assert result.output.splitlines() == [
        '{"echo": {"n": 0}}',
        '{"echo": {"n": 1}}',
        '{"error": "the request is not one line of JSON"}',
    ]
    assert seen == [{"n": 0}, {"n": 1}]
