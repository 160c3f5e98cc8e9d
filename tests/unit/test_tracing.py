"""Traces on OpenTelemetry: what an OTLP/HTTP collector receives from a turn.

Every test exports for real (the SDK's OTLP/HTTP exporter, to an in-process collector on
127.0.0.1) and reads the decoded `ExportTraceServiceRequest`: the span names (the intent,
then the outcome once the call settled), their parents, their attributes, and what the
redaction policy keeps out.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from sqlalchemy import Engine

from intent_ui.agent.runtime import AgentRuntime
from intent_ui.agent.session import TurnRequest, TurnSession, TurnSessions
from intent_ui.agent.tracing import (
    ENDPOINT_VARIABLES,
    LABEL_EVENT,
    Tracing,
    TurnInfo,
    TurnTracer,
)
from intent_ui.config import AppConfig, ConfigError, load_config
from intent_ui.core.events import (
    ActivityLabel,
    ArgsComplete,
    ArgsDelta,
    CallSettled,
    CallStarted,
    TurnDone,
    TurnEvent,
)
from intent_ui.store import conversations as conv
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.store.turns import EventLog
from tests.support.otlp_collector import TRACES_PATH, CollectedSpan, OtlpCollector
from tests.support.turn_scripts import subagent_with_approval

ROOT = Path(__file__).resolve().parents[2]
MESSAGE = "find where OAuth and MCP are handled"
HEADERS = "x-collector-key=s3cret"
STATUS_ERROR = 2  # OTLP's STATUS_CODE_ERROR

ARGS_A = '{"intent": "Searching for OAuth handling", "pattern": "OAuth"}'
ARGS_B = '{"intent": "Looking up issues about OAuth for jane@example.com", "query": "OAuth"}'
ARGS_C = '{"path": "src/auth.py"}'
SUMMARY = "Found 3 matches for OAuth; the issue search failed"

# The words of the arguments and everything written from them: with arguments redacted,
# none of them may reach the collector, in any span's name, attribute or event.
SECRET_WORDS = ("OAuth", "Searching", "issues about", "jane", "[email]", "src/auth.py")


def recorded_turn() -> list[TurnEvent]:
    """A turn the shape the run loop emits: two label-bearing calls of one group (one of
    them an MCP server's, which fails), a call without an intent in the next, the first
    group's summary, the end."""
    return [
        CallStarted(1, "a", "grep_search", 0, label_bearing=True, at=100.0),
        CallStarted(2, "b", "search_issues", 0, server="github", label_bearing=True, at=100.25),
        ArgsDelta(3, "a", ARGS_A[:20]),
        ArgsDelta(4, "a", ARGS_A[20:]),
        ArgsDelta(5, "b", ARGS_B),
        ArgsComplete(6, "a", ARGS_A),
        ArgsComplete(7, "b", ARGS_B),
        CallSettled(
            8, "a", "settled", output="3 matches", outcome="Found 3 matches for OAuth", at=101.0
        ),
        CallSettled(
            9, "b", "error", error="GitHub refused the query for jane@example.com", at=101.5
        ),
        CallStarted(10, "c", "read_file", 1, at=102.0),
        ArgsComplete(11, "c", ARGS_C),
        CallSettled(12, "c", "settled", output="# OAuth callback router", at=102.5),
        ActivityLabel(13, 0, SUMMARY),
        TurnDone(14, "end_turn", at=103.0),
    ]


class LiveSpans(SpanProcessor):
    """The tool spans as they are while the turn runs, by call id."""

    def __init__(self) -> None:
        self.spans: dict[str, Span] = {}

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        call_id = (span.attributes or {}).get("gen_ai.tool.call.id")
        if isinstance(call_id, str):
            self.spans[call_id] = span

    def on_end(self, span: ReadableSpan) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[OtlpCollector]:
    with OtlpCollector() as running:
        yield running


@pytest.fixture
def otel_env(monkeypatch: pytest.MonkeyPatch) -> Callable[[str | None], None]:
    """`otel_env(endpoint)`: the standard variables as a deployment sets them (None: no
    endpoint), and nothing else of the developer's own."""

    def set_env(endpoint: str | None) -> None:
        for name in [*ENDPOINT_VARIABLES, "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER"]:
            monkeypatch.delenv(name, raising=False)
        for name in ("OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", HEADERS)
        if endpoint is not None:
            monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)

    return set_env


@pytest.fixture
def tracing_for(
    collector: OtlpCollector, otel_env: Callable[[str | None], None]
) -> Iterator[Callable[[AppConfig], Tracing]]:
    """`tracing_for(config)`: the process's traces, exporting to the collector."""
    otel_env(collector.endpoint)
    made: list[Tracing] = []

    def make(config: AppConfig) -> Tracing:
        tracing = Tracing.from_env(config)
        assert tracing is not None
        made.append(tracing)
        return tracing

    yield make
    for tracing in made:
        tracing.shutdown()


def make_workspace(folder: Path) -> None:
    """Files the demo model's searches find: OAuth three times, MCP twice."""
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "auth.py").write_text(
        "# OAuth callback router\ndef oauth_callback():\n    return 'OAuth ok'\n"
    )
    (folder / "src" / "mcp_client.py").write_text("# MCP wiring\nMCP_SERVERS = {}\n")


async def web_app_turn(
    engine: Engine,
    tracing_for: Callable[[AppConfig], Tracing],
    workspace: Path,
    **endpoint: Any,
) -> tuple[str, TurnSession]:
    """One turn of the demo model (`endpoint` its further settings) on the web app's
    runtime and sessions over files from `make_workspace`, its trace flushed; returns the
    conversation's id and the turn's session."""
    make_workspace(workspace)
    config = AppConfig.model_validate(
        {"endpoints": [{"kind": "demo", "pacing_ms": 0, **endpoint}], "workspace": str(workspace)}
    )
    tracing = tracing_for(config)
    async with AgentRuntime(config) as runtime:
        sessions = TurnSessions(engine=engine, runtime=runtime, config=config, tracing=tracing)
        chat = conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo")
        session = await sessions.start(TurnRequest(chat.id, MESSAGE, "demo", "demo"))
        await session.wait()
    assert tracing.flush()
    return chat.id, session


def demo_config(**tracing: Any) -> AppConfig:
    return AppConfig.model_validate(
        {
            "endpoints": [{"kind": "demo", "pacing_ms": 0, "activity_label": True}],
            "tracing": tracing,
        }
    )


def session_for(engine: Engine, tracing: Tracing, message_id: str = "m1") -> TurnSession:
    tracer = tracing.turn(
        TurnInfo(
            agent_id="agent-7",
            agent_name="Code reader",
            endpoint="openai",
            provider="openai",
            model="gpt-4.1-mini",
            conversation_id="conv-1",
            message_id=message_id,
        )
    )
    return TurnSession(
        message_id=message_id,
        conversation_id="conv-1",
        log=EventLog(engine, message_id),
        observers=[tracer],
    )


def by_call(spans: list[CollectedSpan]) -> dict[str, CollectedSpan]:
    return {
        s.attributes["gen_ai.tool.call.id"]: s
        for s in spans
        if "gen_ai.tool.call.id" in s.attributes
    }


def the_span(spans: list[CollectedSpan], prefix: str) -> CollectedSpan:
    [found] = [s for s in spans if s.name.startswith(prefix)]
    return found


def labels(span: CollectedSpan) -> list[tuple[str, str]]:
    return [
        (e.attributes["intent_ui.tool.label"], e.attributes["intent_ui.tool.status"])
        for e in span.events
        if e.name == LABEL_EVENT
    ]


# --- the setting --------------------------------------------------------------------------


def test_the_redaction_setting_is_read_from_the_file_and_checked(tmp_path: Path) -> None:
    file = tmp_path / "intent_ui.yaml"
    file.write_text("endpoints:\n  - kind: demo\n", encoding="utf-8")
    assert load_config(file, env={}).tracing.redact_arguments is False
    file.write_text("tracing:\n  redact_arguments: true\n", encoding="utf-8")
    assert load_config(file, env={}).tracing.redact_arguments is True
    for body, problem in [
        ("tracing:\n  redact_arguments: sometimes\n", "tracing.redact_arguments: should be"),
        ("tracing:\n  redact: true\n", "tracing.redact: unknown key"),
    ]:
        file.write_text(body, encoding="utf-8")
        with pytest.raises(ConfigError) as caught:
            load_config(file, env={})
        assert any(problem in line for line in caught.value.problems), caught.value.problems


# --- off -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": ""},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_SDK_DISABLED": "true"},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_TRACES_EXPORTER": "none"},
    ],
    ids=["unset", "blank", "sdk-disabled", "exporter-none"],
)
def test_without_an_endpoint_to_send_to_nothing_is_built(
    otel_env: Callable[[str | None], None], monkeypatch: pytest.MonkeyPatch, extra: dict[str, str]
) -> None:
    otel_env(None)
    for name, value in extra.items():
        monkeypatch.setenv(name, value)
    assert Tracing.from_env(demo_config()) is None


def run_cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {
        key: value
        for key, value in os.environ.items()
        if key not in ("INTENT_UI_CONFIG", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
        and not key.startswith("OTEL_")
    }
    full.update(env, INTENT_UI_DEMO_PACING_MS="0")
    full["PYTHONPATH"] = str(ROOT) + os.pathsep + full.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def cli_config(tmp_path: Path) -> Path:
    make_workspace(tmp_path / "ws")
    file = tmp_path / "intent_ui.yaml"
    file.write_text(
        "endpoints:\n  - kind: demo\n    activity_label: true\nworkspace: ws\n", encoding="utf-8"
    )
    return file


def test_a_cli_turn_without_an_endpoint_sends_nothing_and_never_loads_the_sdk(
    tmp_path: Path, cli_config: Path, collector: OtlpCollector
) -> None:
    probe = (
        "import sys\n"
        "from intent_ui.agent.cli import main\n"
        f"code = main(['run', {MESSAGE!r}, '--config', {str(cli_config)!r}])\n"
        "print('sdk loaded:', 'opentelemetry.sdk.trace' in sys.modules, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = run_cli("-c", probe, cwd=tmp_path, env={"OTEL_EXPORTER_OTLP_HEADERS": HEADERS})
    assert done.returncode == 0, done.stderr
    assert "Found 3 matches for OAuth" in done.stdout
    assert "sdk loaded: False" in done.stderr
    assert collector.received == []


# --- on --------------------------------------------------------------------------------------


def test_a_cli_turn_reaches_the_collector_before_the_command_exits(
    tmp_path: Path, cli_config: Path, collector: OtlpCollector
) -> None:
    done = run_cli(
        "-m",
        "intent_ui",
        "run",
        MESSAGE,
        "--json",
        "--config",
        str(cli_config),
        cwd=tmp_path,
        env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
            "OTEL_EXPORTER_OTLP_HEADERS": HEADERS,
        },
    )
    assert done.returncode == 0, done.stderr
    assert {r.path for r in collector.received} == {TRACES_PATH}
    assert all(r.headers.get("x-collector-key") == "s3cret" for r in collector.received)
    spans = collector.spans()
    turn = the_span(spans, "invoke_agent")
    assert turn.name == "invoke_agent default"
    assert turn.resource["service.name"] == "intent_ui"
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["gen_ai.provider.name"] == "demo"
    tools = sorted(by_call(spans).values(), key=lambda s: s.start_ns)
    assert [s.name for s in tools] == ["Found 3 matches for OAuth", "Found 2 matches for MCP"]
    assert [labels(s)[0][0] for s in tools] == [
        "Searching for OAuth handling",
        "Searching for MCP handling",
    ]
    assert {s.parent_span_id for s in tools} == {turn.span_id}
    summary = the_span(spans, "activity_label")
    assert summary.attributes["intent_ui.activity.label"] == (
        "Found 3 matches for OAuth; found 2 matches for MCP"
    )
    assert {s.trace_id for s in spans} == {turn.trace_id}


def test_a_recorded_turn_names_each_call_by_its_intent_then_its_outcome(
    engine: Engine, tracing_for: Callable[[AppConfig], Tracing], collector: OtlpCollector
) -> None:
    tracing = tracing_for(demo_config())
    live = LiveSpans()
    tracing.provider.add_span_processor(live)
    session = session_for(engine, tracing)
    events = recorded_turn()
    for event in events[:3]:
        session.publish(event)
    # Half an intent is not a name yet.
    assert live.spans["a"].name == "Running grep_search"
    session.publish(events[3])
    assert live.spans["a"].name == "Searching for OAuth handling"
    for event in events[4:]:
        session.publish(event)
    assert tracing.flush()

    spans = collector.spans()
    assert all(r.headers.get("x-collector-key") == "s3cret" for r in collector.received)
    turn = the_span(spans, "invoke_agent")
    calls = by_call(spans)
    a, b, c = calls["a"], calls["b"], calls["c"]
    assert a.name == "Found 3 matches for OAuth"
    assert labels(a) == [
        ("Searching for OAuth handling", "streaming"),
        ("Found 3 matches for OAuth", "settled"),
    ]
    assert (a.start_ns, a.end_ns) == (100_000_000_000, 101_000_000_000)
    assert {s.parent_span_id for s in calls.values()} == {turn.span_id}
    assert {s.trace_id for s in spans} == {turn.trace_id}
    tracer = session.observers[0]
    assert isinstance(tracer, TurnTracer)
    assert tracer.trace_id == turn.trace_id  # the id a card can show

    assert a.attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "grep_search",
        "gen_ai.tool.call.id": "a",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.arguments": ARGS_A,
        "intent_ui.tool.group": 0,
        "intent_ui.tool.status": "settled",
        "intent_ui.tool.intent": "Searching for OAuth handling",
        "intent_ui.tool.outcome": "Found 3 matches for OAuth",
        "intent_ui.tags": ("tool-intent",),
    }
    # An intent leaves like every copy of one: through the PII backstop.
    assert b.name == "Failed: Looking up issues about OAuth for [email]"
    assert b.attributes["intent_ui.tool.intent"] == "Looking up issues about OAuth for [email]"
    assert b.attributes["gen_ai.tool.type"] == "extension"
    assert b.attributes["intent_ui.tool.server"] == "github"
    assert b.attributes["error.type"] == "tool_error"
    assert (b.status_code, b.status_message) == (
        STATUS_ERROR,
        "GitHub refused the query for [email]",
    )
    assert "jane" not in b.attributes["gen_ai.tool.call.arguments"]
    # A call without an intent keeps the tool's own label and is not tagged as one.
    assert c.name == "Ran read_file"
    assert labels(c) == [("Ran read_file", "settled")]
    assert "intent_ui.tool.intent" not in c.attributes
    assert "intent_ui.tags" not in c.attributes

    summary = the_span(spans, "activity_label")
    assert summary.parent_span_id == turn.span_id
    assert summary.links == [a.span_id, b.span_id]
    assert summary.start_ns == b.end_ns  # generated once its group's last call settled
    assert summary.attributes["intent_ui.activity.label"] == SUMMARY
    assert summary.attributes["intent_ui.tags"] == ("activity-label",)

    assert turn.name == "invoke_agent Code reader"
    assert turn.attributes == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.id": "agent-7",
        "gen_ai.agent.name": "Code reader",
        "gen_ai.conversation.id": "conv-1",
        "gen_ai.request.model": "gpt-4.1-mini",
        "gen_ai.provider.name": "openai",
        "intent_ui.endpoint": "openai",
        "intent_ui.message.id": "m1",
        "gen_ai.response.finish_reasons": ("end_turn",),
        "intent_ui.turn.stop_reason": "end_turn",
    }
    assert turn.end_ns == 103_000_000_000


def test_redacted_arguments_take_the_intents_and_everything_written_from_them_along(
    engine: Engine, tracing_for: Callable[[AppConfig], Tracing], collector: OtlpCollector
) -> None:
    tracing = tracing_for(demo_config(redact_arguments=True))
    session = session_for(engine, tracing)
    for event in recorded_turn():
        session.publish(event)
    assert tracing.flush()

    spans = collector.spans()
    calls = by_call(spans)
    assert [calls[i].name for i in "abc"] == [
        "Ran grep_search",
        "Failed: Ran search_issues in github",
        "Ran read_file",
    ]
    assert labels(calls["b"]) == [("Failed: Ran search_issues in github", "error")]
    assert calls["b"].status_message == ""
    kept_out = {
        "gen_ai.tool.call.arguments",
        "intent_ui.tool.intent",
        "intent_ui.tool.outcome",
        "intent_ui.activity.label",
    }
    assert all(not kept_out & set(s.attributes) for s in spans)
    assert all("tool-intent" not in s.attributes.get("intent_ui.tags", ()) for s in spans)
    # Nowhere in what was sent, not in a name, attribute, event or status.
    for received in collector.received:
        for word in SECRET_WORDS:
            assert word.encode() not in received.body, word


async def test_a_demo_turn_of_the_web_app_is_one_trace_of_its_conversation(
    engine: Engine,
    tracing_for: Callable[[AppConfig], Tracing],
    collector: OtlpCollector,
    tmp_path: Path,
) -> None:
    chat_id, session = await web_app_turn(engine, tracing_for, tmp_path, activity_label=True)

    spans = collector.spans()
    turn = the_span(spans, "invoke_agent")
    assert turn.attributes["gen_ai.conversation.id"] == chat_id
    assert turn.attributes["intent_ui.message.id"] == session.message_id
    assert turn.attributes["gen_ai.agent.id"] == "default"
    assert turn.attributes["gen_ai.request.model"] == "demo"
    tools = sorted(by_call(spans).values(), key=lambda s: s.start_ns)
    assert [s.name for s in tools] == ["Found 3 matches for OAuth", "Found 2 matches for MCP"]
    assert all(s.attributes["intent_ui.tool.status"] == "settled" for s in tools)
    assert {s.parent_span_id for s in tools} == {turn.span_id}
    assert set(the_span(spans, "activity_label").links) == {s.span_id for s in tools}


# --- approvals and the trace a card names ----------------------------------------------


def approval_turn(verdict: str) -> list[TurnEvent]:
    """A call that asks first, decided `verdict`, then settled."""
    from intent_ui.core.events import ApprovalDecided, ApprovalRequested

    args = '{"intent": "Deleting the staging migrations", "path": "migrations/staging"}'
    settled = (
        CallSettled(6, "d", "settled", output="Deleted", outcome="Deleted migrations/staging")
        if verdict == "approved"
        else CallSettled(6, "d", "error", error="Denied by the user: not the staging ones")
    )
    return [
        CallStarted(1, "d", "delete_file", 0, label_bearing=True, at=100.0),
        ArgsComplete(2, "d", args),
        ApprovalRequested(3, "d", tool_id="delete_file", at=101.0),
        ApprovalDecided(
            4, "d", verdict, scope="once", reason="not the staging ones", by="user", at=102.5
        ),
        settled,
        TurnDone(7, "end_turn", at=103.0),
    ]


@pytest.mark.parametrize("redact", [False, True])
def test_approval_decisions_are_events_of_the_calls_span(
    engine: Engine,
    tracing_for: Callable[[AppConfig], Tracing],
    collector: OtlpCollector,
    redact: bool,
) -> None:
    from intent_ui.agent.tracing import APPROVAL_DECIDED_EVENT, APPROVAL_REQUESTED_EVENT

    tracing = tracing_for(demo_config(redact_arguments=redact))
    session = session_for(engine, tracing)
    for event in approval_turn("denied"):
        session.publish(event)
    assert tracing.flush()

    (span,) = by_call(collector.spans()).values()
    asked, decided = (e for e in span.events if e.name.startswith("intent_ui.approval."))
    assert (asked.name, decided.name) == (APPROVAL_REQUESTED_EVENT, APPROVAL_DECIDED_EVENT)
    assert asked.attributes == {"intent_ui.approval.tool_id": "delete_file"}
    assert decided.time_ns == 102_500_000_000
    expected = {
        "intent_ui.approval.verdict": "denied",
        "intent_ui.approval.scope": "once",
        "intent_ui.approval.by": "user",
        "intent_ui.approval.edited": False,
    }
    if not redact:
        expected["intent_ui.approval.reason"] = "not the staging ones"
    assert decided.attributes == expected


async def test_a_web_app_turn_is_traced_under_its_message_id_which_its_cards_show(
    engine: Engine,
    tracing_for: Callable[[AppConfig], Tracing],
    collector: OtlpCollector,
    tmp_path: Path,
) -> None:
    from intent_ui.agent.tracing import turn_trace_id

    _, session = await web_app_turn(engine, tracing_for, tmp_path)
    assert turn_trace_id(session.message_id) == session.message_id
    assert {s.trace_id for s in collector.spans()} == {session.message_id}
    # A turn without a stored message (the command line's) keeps a random trace id.
    assert turn_trace_id("m1") is None


def test_a_subagents_calls_are_spans_of_the_call_they_ran_in(
    engine: Engine, tracing_for: Callable[[AppConfig], Tracing], collector: OtlpCollector
) -> None:
    tracing = tracing_for(demo_config())
    session = session_for(engine, tracing)
    for event in subagent_with_approval():
        session.publish(event)
    assert tracing.flush()
    calls = by_call(collector.spans())
    parent = calls["s1"]
    assert parent.name == "Delegating the OAuth audit"
    for child in ("s1~c1", "s1~c2"):
        assert calls[child].parent_span_id == parent.span_id
        assert calls[child].attributes["intent_ui.tool.parent_call_id"] == "s1"
