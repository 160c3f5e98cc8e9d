"""Traces of agent turns on OpenTelemetry, exported over OTLP/HTTP; the shape in words:
docs/traces.md.

Off unless the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or its traces-only sibling
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set. Then `Tracing.from_env` builds a tracer
provider whose batch processor hands finished spans to the SDK's own OTLP/HTTP exporter,
which reads the endpoint, `OTEL_EXPORTER_OTLP_HEADERS` and the other standard variables
itself. Without it nothing is built and the OpenTelemetry SDK is not even imported: a turn
then has no observer, so its events cost nothing extra.

A turn is traced by a `TurnTracer`, an event observer: it is called with every event of
the turn after the turn's `TurnView` applied it, and reads the call records and labels
from that view (the same reading of the streamed intent the cards show, never a second
decode). The web app's `TurnSession` and the headless CLI feed it alike.

- The turn is one `invoke_agent` span; each tool call is a child span started with the
  call, named by its card label: "Running {tool}" until the intent is known, then the
  intent, and at settle the label it settled to, so a trace list reads as a narrative.
  Each rename is also a span event (`intent_ui.tool.label`), since an exporter only sends
  the last name.
- Each activity-label generation (a group's summary) is one span in the turn's trace,
  from when its group's last call settled to the summary's arrival, linked to the calls
  it summarises.
- What a span may carry is decided by one `TracePolicy` (`tracing.redact_arguments`):
  when a turn's arguments are redacted from traces, so is everything written from them,
  the intents, the settled labels, error texts and summaries, and spans are named by the
  tool's neutral label ("Running read_file", "Ran read_file"). Text that does leave goes
  through `redact_intent` (PII backstop, clamped), as every copy of an intent does.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanContext, SpanKind, Status, StatusCode

from intent_ui.core.capture import redact_intent, strip_pii
from intent_ui.core.events import (
    ActivityLabel,
    ApprovalDecided,
    ApprovalRequested,
    ArgsComplete,
    ArgsDelta,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.labels import CallView, card_label
from intent_ui.core.sanitize import DEFAULT_LABEL_LIMIT, has_label_text, sanitize_label
from intent_ui.core.states import FINAL_STATES
from intent_ui.core.text import clip
from intent_ui.core.turn import CallRecord, TurnView

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from intent_ui.agent.session import TurnRequest, TurnSessions
    from intent_ui.config import AppConfig, EndpointConfig

__all__ = [
    "ACTIVITY_LABEL_TAG",
    "APPROVAL_DECIDED_EVENT",
    "APPROVAL_REQUESTED_EVENT",
    "ENDPOINT_VARIABLES",
    "LABEL_EVENT",
    "TAGS_ATTRIBUTE",
    "TOOL_INTENT_TAG",
    "TracePolicy",
    "Tracing",
    "TurnInfo",
    "TurnTracer",
    "activity_model_of",
    "tracing_enabled",
    "turn_trace_id",
]

logger = logging.getLogger(__name__)

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
"""Either one switches traces on (the exporter appends `/v1/traces` to the second)."""

TRACER_NAME = "intent_ui.agent"
DEFAULT_SERVICE_NAME = "intent_ui"
"""`service.name` unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` names one."""

TAGS_ATTRIBUTE = "intent_ui.tags"
TOOL_INTENT_TAG = "tool-intent"
"""The tag of a tool span that carries its intent, so intent-named spans are one query."""
ACTIVITY_LABEL_TAG = "activity-label"
"""The tag of an activity-label generation's span."""

LABEL_EVENT = "intent_ui.tool.label"
APPROVAL_REQUESTED_EVENT = "intent_ui.approval.requested"
"""The span event of a call that waits for the user's approval."""
APPROVAL_DECIDED_EVENT = "intent_ui.approval.decided"
"""The span event of the user's decision (`intent_ui.approval.verdict`, `.scope`, `.by`,
`.edited`, and the denial's `.reason` unless arguments are redacted)."""
"""The span event each rename of a tool span adds: the name it took, and when."""

MAX_ARGUMENT_CHARS = 4_096
"""A call's argument text in a span (`gen_ai.tool.call.arguments`) is cut to this: a
written file's whole content would swell every trace batch."""

FLUSH_TIMEOUT_S = 5.0
"""How long `Tracing.flush` waits for the exporter by default."""

_TOOL_TYPE_EXTENSION = "extension"
_TOOL_TYPE_FUNCTION = "function"
_TOOL_ERROR = "tool_error"
_OTHER_ERROR = "_OTHER"


def tracing_enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether the environment asks for traces: an OTLP endpoint is set, and neither
    `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none` turns them off."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return False
    return any(env.get(name, "").strip() for name in ENDPOINT_VARIABLES)


# --- what a span may carry -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TracePolicy:
    """What of a turn its trace may carry: the one place redaction is decided.

    With `redact_arguments`, the arguments stay out of traces and so does everything the
    model or a tool wrote from them: an intent distils the arguments and would otherwise
    leak them by another way. Text that is kept passes through `redact_intent`.
    """

    redact_arguments: bool = False

    @classmethod
    def from_config(cls, config: AppConfig) -> TracePolicy:
        return cls(redact_arguments=config.tracing.redact_arguments)

    def label(self, call: CallView) -> str:
        """The call's card label as it may leave: with arguments redacted, the label of a
        call without an intent ("Running {tool}", "Ran {tool}", "Failed: Ran {tool}")."""
        shown = replace(call, carries_intent=False) if self.redact_arguments else call
        return redact_intent(card_label(shown))

    def intent(self, record: CallRecord) -> str | None:
        """The call's intent, when it has one and it may leave."""
        if self.redact_arguments or not record.carries_intent:
            return None
        return _kept(record.intent)

    def arguments(self, text: str) -> str | None:
        """The call's argument text (intent included), PII-stripped and cut."""
        if self.redact_arguments or not text:
            return None
        return clip(strip_pii(text[: 4 * MAX_ARGUMENT_CHARS]), MAX_ARGUMENT_CHARS)

    def text(self, text: str | None) -> str | None:
        """Other text written from the arguments: a settled label, a tool's error (they
        often quote what they were called with), a group's summary."""
        return None if self.redact_arguments else _kept(text)


def _kept(text: str | None) -> str | None:
    if not isinstance(text, str) or not has_label_text(text):
        return None
    return redact_intent(text) or None


def _span_name(label: str) -> str:
    return sanitize_label(label, DEFAULT_LABEL_LIMIT).text


# --- one turn ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnInfo:
    """What the turn span says about the turn: where it ran, for whom, with what."""

    agent_id: str
    agent_name: str | None = None
    endpoint: str | None = None
    provider: str | None = None
    model: str | None = None
    conversation_id: str | None = None
    message_id: str | None = None
    activity_model: str | None = None

    def attributes(self) -> dict[str, Any]:
        found = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.id": self.agent_id,
            "gen_ai.agent.name": self.agent_name,
            "gen_ai.conversation.id": self.conversation_id,
            "gen_ai.request.model": self.model,
            "gen_ai.provider.name": self.provider,
            "intent_ui.endpoint": self.endpoint,
            "intent_ui.message.id": self.message_id,
        }
        return {key: value for key, value in found.items() if value}


@dataclass(slots=True)
class _ToolSpan:
    span: Span
    name: str
    group: int
    intent_shown: bool
    """Whether the span has its intent name yet (or never will: no intent, redacted)."""


class TurnTracer:
    """One turn's spans, driven by its events: call it with each event and the turn's
    `TurnView` after the view applied the event. Never raises into the turn."""

    def __init__(
        self,
        tracer: trace.Tracer,
        policy: TracePolicy,
        info: TurnInfo,
        *,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self._tracer = tracer
        self._policy = policy
        self._info = info
        self._clock = clock
        name = f"invoke_agent {info.agent_name}" if info.agent_name else "invoke_agent"
        wanted = turn_trace_id(info.message_id)
        # The turn's trace id is its message id, so a card names its trace without storing it.
        token = _NEXT_TRACE_ID.set(None if wanted is None else int(wanted, 16))
        try:
            self._turn = tracer.start_span(
                name, kind=SpanKind.INTERNAL, attributes=info.attributes(), start_time=clock()
            )
        finally:
            _NEXT_TRACE_ID.reset(token)
        self._context = trace.set_span_in_context(self._turn)
        self._calls: dict[str, _ToolSpan] = {}
        self._span_ids: dict[str, SpanContext] = {}
        self._group_spans: dict[int, list[SpanContext]] = {}
        self._group_settled: dict[int, int] = {}
        self._ended = False
        self._handlers: dict[type, Callable[[Any, TurnView], None]] = {
            CallStarted: self._start,
            ArgsDelta: self._delta,
            ArgsComplete: self._complete,
            CallBackgrounded: self._background,
            CallSettled: self._settle,
            ActivityLabel: self._activity,
            TurnDone: self._done,
            ApprovalRequested: self._approval_requested,
            ApprovalDecided: self._approval_decided,
        }

    @property
    def trace_id(self) -> str:
        """The turn's trace id, as trace backends show it (32 hex digits)."""
        return trace.format_trace_id(self._turn.get_span_context().trace_id)

    def span_id(self, call_id: str) -> str | None:
        """The span id of a call's span (16 hex digits), once the call started."""
        context = self._span_ids.get(call_id)
        return None if context is None else trace.format_span_id(context.span_id)

    def __call__(self, event: TurnEvent, view: TurnView) -> None:
        handler = self._handlers.get(type(event))
        if handler is None or self._ended:
            return
        try:
            handler(event, view)
        except Exception:  # a trace is worth less than the turn it describes
            logger.exception("Tracing a turn failed; its trace ends here")
            self.close()

    def close(self) -> None:
        """End whatever is still open (a turn that ended without `TurnDone`)."""
        if self._ended:
            return
        now = self._clock()
        for entry in self._calls.values():
            entry.span.end(now)
        self._calls.clear()
        self._turn.end(now)
        self._ended = True

    # --- tool calls ----------------------------------------------------------------------

    def _start(self, event: CallStarted, view: TurnView) -> None:
        record = view.call(event.call_id)
        call = view.call_view(event.call_id)
        if record is None or call is None or event.call_id in self._span_ids:
            return
        name = _span_name(self._policy.label(call))
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": record.tool,
            "gen_ai.tool.call.id": record.call_id,
            "gen_ai.tool.type": _TOOL_TYPE_EXTENSION if record.server else _TOOL_TYPE_FUNCTION,
            "intent_ui.tool.status": record.state,
            "intent_ui.tool.group": record.group,
        }
        if record.server:
            attributes["intent_ui.tool.server"] = record.server
        context = self._context
        parent = self._calls.get(record.parent) if record.parent is not None else None
        if parent is not None:
            # A subagent's call is a span of the `subagent` call it ran in.
            attributes["intent_ui.tool.parent_call_id"] = record.parent
            context = trace.set_span_in_context(parent.span, self._context)
        span = self._tracer.start_span(
            name,
            context=context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=self._time(event.at),
        )
        shown = self._policy.redact_arguments or not record.carries_intent
        self._calls[record.call_id] = _ToolSpan(span, name, record.group, shown)
        self._span_ids[record.call_id] = span.get_span_context()

    def _delta(self, event: ArgsDelta, view: TurnView) -> None:
        entry = self._calls.get(event.call_id)
        if entry is None or entry.intent_shown:
            return
        record = view.call(event.call_id)
        # The name changes once, when the whole intent is known, not with every fragment.
        if record is not None and record.intent_complete:
            self._show_intent(entry, record, view)

    def _complete(self, event: ArgsComplete, view: TurnView) -> None:
        entry = self._calls.get(event.call_id)
        record = view.call(event.call_id)
        if entry is None or record is None:
            return
        entry.span.set_attribute("intent_ui.tool.status", record.state)
        arguments = self._policy.arguments(view.arguments(event.call_id))
        if arguments is not None:
            entry.span.set_attribute("gen_ai.tool.call.arguments", arguments)
        if not entry.intent_shown:
            self._show_intent(entry, record, view)

    def _background(self, event: CallBackgrounded, view: TurnView) -> None:
        entry = self._calls.get(event.call_id)
        if entry is not None:
            entry.span.set_attributes(
                {"intent_ui.tool.status": "background", "intent_ui.tool.background": True}
            )

    def _show_intent(self, entry: _ToolSpan, record: CallRecord, view: TurnView) -> None:
        intent = self._policy.intent(record)
        call = view.call_view(record.call_id)
        if intent is None or call is None:
            return
        entry.intent_shown = True
        entry.span.set_attributes(
            {"intent_ui.tool.intent": intent, TAGS_ATTRIBUTE: (TOOL_INTENT_TAG,)}
        )
        self._rename(entry, self._policy.label(call), record.state)

    def _settle(self, event: CallSettled, view: TurnView) -> None:
        entry = self._calls.pop(event.call_id, None)
        record = view.call(event.call_id)
        if entry is None or record is None:
            return
        self._end_call(entry, record, view, self._time(event.at))

    def _end_call(
        self, entry: _ToolSpan, record: CallRecord, view: TurnView, end_time: int
    ) -> None:
        call = view.call_view(record.call_id)
        if call is None:
            return
        span = entry.span
        label = self._policy.label(call)
        span.set_attribute("intent_ui.tool.status", record.state)
        intent = self._policy.intent(record)
        if intent is not None:
            outcome = self._policy.text(label)
            span.set_attributes(
                {"intent_ui.tool.intent": intent, TAGS_ATTRIBUTE: (TOOL_INTENT_TAG,)}
            )
            if outcome is not None:
                span.set_attribute("intent_ui.tool.outcome", outcome)
        if record.state == "error":
            span.set_attribute("error.type", _TOOL_ERROR)
            span.set_status(Status(StatusCode.ERROR, self._policy.text(record.error)))
        self._rename(entry, label, record.state)
        span.end(end_time)
        if record.parent is not None:
            return  # in no group of the turn: no group summary links to it
        self._group_settled[entry.group] = max(self._group_settled.get(entry.group, 0), end_time)
        self._group_spans.setdefault(entry.group, []).append(span.get_span_context())

    def _rename(self, entry: _ToolSpan, label: str, state: str) -> None:
        name = _span_name(label)
        if name == entry.name:
            return
        entry.name = name
        entry.span.update_name(name)
        entry.span.add_event(
            LABEL_EVENT, {"intent_ui.tool.label": name, "intent_ui.tool.status": state}
        )

    # --- approvals -----------------------------------------------------------------------

    def _approval_requested(self, event: ApprovalRequested, view: TurnView) -> None:
        entry = self._calls.get(event.call_id)
        if entry is not None:
            entry.span.add_event(
                APPROVAL_REQUESTED_EVENT,
                {"intent_ui.approval.tool_id": event.tool_id},
                timestamp=self._time(event.at),
            )

    def _approval_decided(self, event: ApprovalDecided, view: TurnView) -> None:
        entry = self._calls.get(event.call_id)
        if entry is None:
            return
        attributes: dict[str, Any] = {
            "intent_ui.approval.verdict": event.verdict,
            "intent_ui.approval.scope": event.scope,
            "intent_ui.approval.by": event.by,
            "intent_ui.approval.edited": bool(event.arguments),
        }
        reason = self._policy.text(event.reason) if event.reason else None
        if reason is not None:
            attributes["intent_ui.approval.reason"] = reason
        entry.span.add_event(APPROVAL_DECIDED_EVENT, attributes, timestamp=self._time(event.at))

    # --- the rest of the turn -----------------------------------------------------------

    def _activity(self, event: ActivityLabel, view: TurnView) -> None:
        now = self._clock()
        calls = self._group_spans.get(event.block, [])
        attributes: dict[str, Any] = {
            "intent_ui.activity.group": event.block,
            "intent_ui.activity.calls": len(calls),
            TAGS_ATTRIBUTE: (ACTIVITY_LABEL_TAG,),
        }
        if self._info.activity_model:
            attributes["gen_ai.request.model"] = self._info.activity_model
        summary = self._policy.text(event.label)
        if summary is not None:
            attributes["intent_ui.activity.label"] = summary
        span = self._tracer.start_span(
            "activity_label",
            context=self._context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=[Link(context) for context in calls],
            start_time=min(self._group_settled.get(event.block, now), now),
        )
        span.end(now)

    def _done(self, event: TurnDone, view: TurnView) -> None:
        end_time = self._time(event.at)
        # The view settled what the end cut short (cancelled); a call still in the
        # background ends here with the state it has, since no event will end it later.
        for call_id, entry in list(self._calls.items()):
            record = view.call(call_id)
            if record is not None and record.state in FINAL_STATES:
                self._end_call(entry, record, view, end_time)
            else:
                entry.span.end(end_time)
        self._calls.clear()
        turn = self._turn
        turn.set_attributes(
            {
                "gen_ai.response.finish_reasons": (event.stop_reason,),
                "intent_ui.turn.stop_reason": event.stop_reason,
            }
        )
        if event.stop_reason == "error":
            turn.set_attribute("error.type", event.error_kind or _OTHER_ERROR)
            turn.set_status(Status(StatusCode.ERROR, self._policy.text(event.error)))
        turn.end(end_time)
        self._ended = True

    def _time(self, at: float) -> int:
        """An event's wall-clock time in nanoseconds (now when it carries none)."""
        return int(at * 1e9) if at else self._clock()


# --- the process's traces --------------------------------------------------------------------


class Tracing:
    """The process's traces: a tracer provider exporting over OTLP/HTTP, and the policy."""

    def __init__(self, provider: TracerProvider, policy: TracePolicy) -> None:
        self.provider = provider
        self.policy = policy
        self._tracer = provider.get_tracer(TRACER_NAME)

    @classmethod
    def from_env(cls, config: AppConfig) -> Tracing | None:
        """Traces as the environment asks for them; None (nothing built) when it does not."""
        if not tracing_enabled():
            return None
        # Imported only now: a process without traces never loads the SDK.
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        protocol = os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "").strip()
        if protocol and protocol != "http/protobuf":
            logger.warning(
                "OTEL_EXPORTER_OTLP_PROTOCOL is %r; traces are sent as http/protobuf", protocol
            )
        resource = Resource.create()
        if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
            resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
        provider = TracerProvider(resource=resource, id_generator=_turn_ids())
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        return cls(provider, TracePolicy.from_config(config))

    def turn(self, info: TurnInfo) -> TurnTracer:
        """The tracer of one turn, its turn span started now."""
        return TurnTracer(self._tracer, self.policy, info)

    def session_turn(
        self,
        sessions: TurnSessions,
        request: TurnRequest,
        settings: Mapping[str, Any],
        message_id: str,
    ) -> TurnTracer:
        """The tracer of a turn the web app starts (blocking: reads a saved agent's name)."""
        config, runtime = sessions.config, sessions.runtime
        endpoint_name = settings.get("endpoint") or request.endpoint
        endpoint = config.endpoint(endpoint_name) if endpoint_name else config.default_endpoint
        model = settings.get("model") or request.model
        if not model and endpoint is not None:
            model = runtime.default_model(endpoint.name)
        info = TurnInfo(
            agent_id=request.agent_id,
            agent_name=_agent_name(sessions, request),
            endpoint=endpoint.name if endpoint is not None else endpoint_name,
            provider=endpoint.kind if endpoint is not None else None,
            model=model,
            conversation_id=request.conversation_id,
            message_id=message_id,
            activity_model=activity_model_of(endpoint),
        )
        return self.turn(info)

    def flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> bool:
        """Export every ended span now (blocking, at most `timeout_s`)."""
        return self.provider.force_flush(int(timeout_s * 1000))

    def shutdown(self) -> None:
        """Flush and stop exporting (blocking; a collector that is down holds it for the
        exporter's timeout, `OTEL_EXPORTER_OTLP_TIMEOUT`, 10 s by default)."""
        self.provider.shutdown()


def activity_model_of(endpoint: EndpointConfig | None) -> str | None:
    """The model an endpoint's activity labels are generated by (None without them, and
    for the demo endpoint, which derives them without a model)."""
    if endpoint is None or not endpoint.activity_label or endpoint.kind == "demo":
        return None
    return endpoint.activity_model or (endpoint.models[0] if endpoint.models else None)


def _agent_name(sessions: TurnSessions, request: TurnRequest) -> str | None:
    from intent_ui.agent.session import DEFAULT_AGENT_ID, SPEC_PREFIX

    agent_id = request.agent_id
    if agent_id == DEFAULT_AGENT_ID:
        return DEFAULT_AGENT_ID
    if agent_id.startswith(SPEC_PREFIX):
        return agent_id[len(SPEC_PREFIX) :]
    from intent_ui.store import agents as agent_store

    try:
        agent = agent_store.get_agent(sessions.engine, agent_id, owner=request.user_id)
    except Exception:  # the turn's own read of the agent reports a failing store
        return None
    return agent.name if agent is not None else None


_NEXT_TRACE_ID: ContextVar[int | None] = ContextVar("intent_ui_next_trace_id", default=None)
"""The trace id the turn span being started takes (see `_turn_ids`)."""
_TRACE_ID = re.compile(r"[0-9a-f]{32}")


def turn_trace_id(message_id: str | None) -> str | None:
    """The trace id of a turn's spans: its message id (32 hex digits, as the store makes
    them); None for a turn without one (the CLI's), whose trace id is random."""
    if message_id and _TRACE_ID.fullmatch(message_id) and int(message_id, 16):
        return message_id
    return None


def _turn_ids() -> Any:
    """The SDK's random ids, except a turn span's trace id, which `TurnTracer` sets."""
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

    class TurnIds(RandomIdGenerator):
        def generate_trace_id(self) -> int:
            wanted = _NEXT_TRACE_ID.get()
            return wanted if wanted is not None else super().generate_trace_id()

    return TurnIds()
