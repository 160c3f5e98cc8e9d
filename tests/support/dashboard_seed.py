"""Seeding the intents dashboard the way the app fills it: turns written by a session
whose event log copies their calls when they end, and captured calls through
`add_capture_events` (what `StoreSink` calls)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from intent_ui.agent.session import TurnSession
from intent_ui.core.events import (
    ArgsComplete,
    ArgsDelta,
    CallSettled,
    CallStarted,
    TurnDone,
    TurnEvent,
)
from intent_ui.store import conversations as conv_store
from intent_ui.store.capture_events import add_capture_events
from intent_ui.store.dashboard import TurnCopies
from intent_ui.store.turns import EventLog

DAY = 86_400.0
TODAY = 20_500
"""The UTC day the seeded data ends on (2026-02-16), handed to queries as `today`."""
NOON = TODAY * DAY + 12 * 3600


@dataclass(frozen=True)
class Call:
    """One call of a seeded turn. `intent` None: the model wrote none; `label` False: the
    call carries no intent label at all (mode `none`)."""

    tool: str
    intent: str | None = None
    state: str = "settled"  # 'settled' | 'error' | 'cancelled'
    server: str | None = None
    label: bool = True


def turn_events(calls: Sequence[Call], *, at: float) -> list[TurnEvent]:
    seq = itertools.count(1)
    events: list[TurnEvent] = []
    for i, call in enumerate(calls):
        call_id = f"c{i}"
        args: dict[str, Any] = {} if call.intent is None else {"intent": call.intent}
        args["path"] = f"file{i}.py"
        text = json.dumps(args)
        events += [
            CallStarted(
                next(seq),
                call_id,
                call.tool,
                0,
                server=call.server,
                label_bearing=call.label,
                at=at,
            ),
            ArgsDelta(next(seq), call_id, text),
            ArgsComplete(next(seq), call_id, text),
        ]
    for i, call in enumerate(calls):
        error = "It broke" if call.state == "error" else None
        events.append(
            CallSettled(next(seq), f"c{i}", call.state, output="ok", error=error, at=at + 0.25)  # type: ignore[arg-type]
        )
    events.append(TurnDone(next(seq), "end_turn", at=at + 1))
    return events


def copies_for(
    owner_id: str,
    agent_id: str = "default",
    *,
    optional_servers: bool = True,
    omit: Iterable[str] = (),
) -> TurnCopies:
    """Copy rules as the app has them for tools it was not told about: required without
    a server, optional with one; `omit` names the opted-out tools."""
    omitted = set(omit)
    return TurnCopies(
        owner_id=owner_id,
        agent_id=agent_id,
        required=lambda tool, server: server is None or not optional_servers,
        omitted=lambda tool, server: tool in omitted,
    )


def record_turn_with_calls(
    engine: Engine,
    owner_id: str,
    calls: Sequence[Call],
    *,
    at: float = NOON,
    agent_id: str = "default",
    omit: Iterable[str] = (),
) -> str:
    """A conversation of `owner_id` with one turn making `calls`; returns its message id."""
    chat = conv_store.create_conversation(
        engine, owner=owner_id, endpoint="demo", model="demo", now=lambda: at
    )
    message_id = conv_store.start_assistant_message(engine, chat.id, now=lambda: at)
    log = EventLog(
        engine, message_id, now=lambda: at + 1, copies=copies_for(owner_id, agent_id, omit=omit)
    )
    session = TurnSession(message_id=message_id, conversation_id=chat.id, log=log, clock=lambda: at)
    for event in turn_events(calls, at=at):
        session.publish(event)
    session.log.flush()
    return message_id


def captured(
    tool: str,
    intent: str | None,
    *,
    mode: str = "required",
    status: str = "ok",
    at: float = NOON,
    server: str | None = "bookings",
    source: str | None = None,
) -> dict[str, Any]:
    """One captured call record, as `CallEvent.to_record()` makes it."""
    return {
        "tool": tool,
        "server": server,
        "intent": intent,
        "intent_context": mode,
        "intent_source": source or ("context_parameter" if intent else None),
        "status": status,
        "duration_ms": 3.0,
        "timestamp": at,
    }


def capture(engine: Engine, records: Iterable[dict[str, Any]]) -> None:
    add_capture_events(engine, list(records))
