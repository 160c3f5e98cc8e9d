"""`bash_tool` for real (bubblewrap): a native tool with an intent, whose every way out of
the sandbox comes back as the call's error; and where the sandboxed tools are offered."""

from __future__ import annotations

from pathlib import Path

import pytest

from intent_ui.agent.providers.base import TextChunk
from intent_ui.agent.runtime import AgentRuntime
from intent_ui.agent.tools import registry
from intent_ui.agent.tools.bash import BashTool
from intent_ui.agent.tools.memory import InMemoryMemoryStore
from intent_ui.agent.tools.protected import ProtectedFiles
from intent_ui.agent.tools.registry import app_sandbox, build_tools
from intent_ui.agent.tools.sandbox import Sandbox, SandboxLimits
from intent_ui.config import AppConfig, EndpointConfig, SandboxConfig
from intent_ui.core.capabilities.intent import INTENT_ARG, is_intent_label_property
from intent_ui.core.events import CallStarted
from tests.support.run_loop import ScriptedProvider, call, collect, end, make_run, of, settled
from tests.support.sandbox import requires_sandbox

LIMITS = SandboxLimits(wall_s=3, cpu_s=2, processes=16, output_bytes=4096)
SANDBOXED = ["bash_tool", "run_tools_with_code"]


@pytest.fixture
def bash(sandbox_workspace: Path) -> BashTool:
    return BashTool(Sandbox(sandbox_workspace, limits=LIMITS))


def test_bash_tool_declares_a_required_intent_first(bash: BashTool) -> None:
    schema = bash.definition["parameters"]
    assert bash.definition["name"] == "bash_tool" and bash.definition["intent"] is True
    assert list(schema["properties"]) == [INTENT_ARG, "command"]
    assert is_intent_label_property(schema["properties"][INTENT_ARG])
    assert schema["required"] == [INTENT_ARG, "command"]


@requires_sandbox
async def test_a_command_runs_in_the_workspace_and_its_card_carries_the_intent(
    bash: BashTool,
) -> None:
    args = {INTENT_ARG: "Counting the notes' lines", "command": "wc -l notes.md; echo oops >&2"}
    provider = ScriptedProvider([*call("b1", "bash_tool", args), end()], [TextChunk("1."), end()])
    events = await collect(make_run(provider, [bash]))
    (card,) = of(events, CallStarted)
    assert (card.tool, card.label_bearing) == ("bash_tool", True)
    result = settled(events, "b1")
    assert (result.state, result.output) == ("settled", "1 notes.md\noops\n")


@requires_sandbox
async def test_a_failing_status_is_the_calls_error(bash: BashTool) -> None:
    result = await bash.call({"command": "echo half; exit 3"})
    assert result.is_error
    assert result.output == "The command exited with status 3.\nhalf"


@requires_sandbox
async def test_a_command_without_output_says_so(bash: BashTool) -> None:
    result = await bash.call({"command": "true"})
    assert (result.is_error, result.output) == (False, "(no output)")


@requires_sandbox
@pytest.mark.parametrize(
    ("command", "first_line", "detail"),
    [
        ("cat /etc/shadow", "The command exited with status 1.", "No such file or directory"),
        ("ls ~root /root /home", "The command exited with status 2.", "No such file"),
        (
            "echo changed > notes.md",
            "The command exited with status 1.",
            "Read-only file system",
        ),
        (
            "exec 3<>/dev/tcp/1.1.1.1/80",
            "The command exited with status 1.",
            "Network is unreachable",
        ),
        (
            "for n in $(seq 40); do sleep 30 & done; wait",
            "Stopped: the command ran past its 3 s time limit.",
            "fork: retry: Resource temporarily unavailable",
        ),
        ("sleep 60", "Stopped: the command ran past its 3 s time limit.", ""),
        ("yes flood", "Stopped: the output passed 4 KB, the sandbox's output limit.", "flood"),
    ],
    ids=["etc-shadow", "host-home", "write-workspace", "socket", "fork-bomb", "time", "flood"],
)
async def test_each_escape_is_refused_and_reported_as_the_calls_error(
    bash: BashTool, sandbox_workspace: Path, command: str, first_line: str, detail: str
) -> None:
    args = {INTENT_ARG: "Trying to get out", "command": command}
    provider = ScriptedProvider([*call("b1", "bash_tool", args), end()], [TextChunk("No."), end()])
    events = await collect(make_run(provider, [bash]))
    result = settled(events, "b1")
    assert result.state == "error"
    assert (result.error or "").splitlines()[0] == first_line
    assert detail in (result.error or "")
    assert (sandbox_workspace / "notes.md").read_text() == "TODO write the notes\n"


@requires_sandbox
async def test_the_apps_database_in_the_workspace_is_hidden(
    sandbox_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = sandbox_workspace / "app.db"
    database.write_text("every user's conversations")
    monkeypatch.setenv("DB_URL", f"sqlite:///{database}")
    config = AppConfig(workspace=sandbox_workspace)
    tool = BashTool(app_sandbox(config, ProtectedFiles.for_app(config)))
    result = await tool.call({"command": "wc -c < app.db; cat notes.md"})
    assert result.output == "0\nTODO write the notes\n"


@requires_sandbox
async def test_the_demo_runs_a_quoted_command_in_bash(sandbox_workspace: Path) -> None:
    config = AppConfig(workspace=sandbox_workspace, endpoints=[EndpointConfig(kind="demo")])
    async with AgentRuntime(config, pacing_ms=0) as runtime:
        events = await collect(runtime.start_turn(user_message="run `ls` in bash"))
    (card,) = of(events, CallStarted)
    assert (card.tool, card.label_bearing) == ("bash_tool", True)
    assert settled(events, card.call_id).output == "notes.md\n"


# --- where the sandboxed tools are offered ----------------------------------------------


def _names(config: AppConfig) -> list[str]:
    return [tool.name for tool in build_tools(config, memory_store=InMemoryMemoryStore())]


@requires_sandbox
def test_both_sandboxed_tools_are_offered_where_the_sandbox_works(
    sandbox_workspace: Path,
) -> None:
    names = _names(AppConfig(workspace=sandbox_workspace))
    assert [name for name in names if name in SANDBOXED] == SANDBOXED


@requires_sandbox
def test_without_programmatic_tools_only_bash_tool_is_offered(sandbox_workspace: Path) -> None:
    config = AppConfig(workspace=sandbox_workspace, capabilities=frozenset({"tool_intents"}))
    assert [name for name in _names(config) if name in SANDBOXED] == ["bash_tool"]


async def test_without_a_sandbox_neither_is_offered_and_the_runtime_says_why(
    sandbox_workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    why = "bubblewrap is not installed (no `bwrap` on PATH)"
    monkeypatch.setattr(registry, "sandbox_available", lambda workspace: why)
    config = AppConfig(workspace=sandbox_workspace)
    assert not set(_names(config)) & set(SANDBOXED)
    async with AgentRuntime(config) as runtime:
        assert runtime.sandbox_unavailable == why
        assert not {tool.name for tool in runtime.tools} & set(SANDBOXED)


def test_switched_off_in_the_configuration_neither_is_offered(sandbox_workspace: Path) -> None:
    config = AppConfig(workspace=sandbox_workspace, sandbox=SandboxConfig(enabled=False))
    assert not set(_names(config)) & set(SANDBOXED)
    assert registry.sandbox_unavailable(config) == (
        "the sandbox is switched off in the configuration (sandbox: enabled: false)"
    )


def test_the_configured_limits_reach_the_sandbox(sandbox_workspace: Path) -> None:
    settings = SandboxConfig(time_limit_s=5, memory_mb=256, processes=20, output_kb=8)
    config = AppConfig(workspace=sandbox_workspace, sandbox=settings)
    limits = app_sandbox(config, ProtectedFiles.for_app(config)).limits
    assert (limits.wall_s, limits.memory_bytes, limits.processes, limits.output_bytes) == (
        5,
        256 * 1024 * 1024,
        20,
        8 * 1024,
    )
