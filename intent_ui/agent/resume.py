"""Turns that waited for the user when the server stopped go on after it starts again.

The rules of when a turn can resume and where are `intent_ui.core.resume`; this module
finds such turns in the store and runs them again:

- `waiting_turns(engine)` (at start, before the other `streaming` turns are marked
  interrupted) lists the turns left `streaming` whose log can resume and says what each
  ran on (the `turn` its session stamped on its pause events).
- `resume_turns(sessions, found)` starts each as a session of this process
  (`TurnSessions.adopt`): its view is its log replayed, its seqs continue, its history is
  the conversation before it plus its earlier rounds, and its run starts at the waiting
  round, where the waiting calls wait again without asking twice (`Pauses(asked=...)`).
  The page shows the approval or question as before the restart; the decision runs the
  call with its arguments (or the edited ones, intent included) and the turn goes on.

With several workers a `streaming` turn may be another's, running: `waiting_turns` is for
one process. The cluster finds the turns of a worker that is gone by their lease, and the
worker that takes one resumes it the same way (`waiting_turn` of its log and what its
stream held, then `resume_turn`: `intent_ui.agent.cluster.orphans`). A turn that cannot
be resumed (its agent or endpoint is gone, the log says nothing of what it ran on) is left
to be marked interrupted, which says the server restarted while it waited.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from intent_ui.agent.checkpoints import TurnCheckpoints
from intent_ui.agent.dashboard_copies import turn_copies
from intent_ui.agent.pauses import Pauses, pause_policy
from intent_ui.agent.session import (
    DEFAULT_AGENT_ID,
    SPEC_PREFIX,
    TurnSession,
    TurnSessions,
    agent_settings,
)
from intent_ui.agent.subagents import agent_directory
from intent_ui.core.events import TurnEvent
from intent_ui.core.history import CONTINUE_PROMPT
from intent_ui.core.resume import ResumePoint, resume_point, resume_settings
from intent_ui.core.turn import TurnView
from intent_ui.store import conversations as conv_store
from intent_ui.store.turns import EventLog, load_events, streaming_turns

__all__ = ["WaitingTurn", "resume_turn", "resume_turns", "waiting_turn", "waiting_turns"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WaitingTurn:
    """A stored turn that can go on: its ids, its log replayed, where it picks up, and
    what it ran on (`core.resume.RESUME_KEYS`)."""

    message_id: str
    conversation_id: str
    view: TurnView
    point: ResumePoint
    turn: dict[str, str]


def waiting_turns(engine: Engine) -> list[WaitingTurn]:
    """The `streaming` turns whose log can resume (module docstring). Blocking."""
    found = []
    for message_id, conversation_id in streaming_turns(engine):
        waiting = waiting_turn(message_id, conversation_id, load_events(engine, message_id))
        if waiting is not None:
            found.append(waiting)
    return found


def waiting_turn(
    message_id: str, conversation_id: str, events: Sequence[TurnEvent]
) -> WaitingTurn | None:
    """The turn of `events` (its log, in seq order) as it goes on, or None when it cannot
    (`core.resume`)."""
    view = TurnView.replay(events)
    point = resume_point(view)
    turn = resume_settings(events)
    if point is None or turn is None:
        return None
    return WaitingTurn(message_id, conversation_id, view, point, turn)


async def resume_turns(sessions: TurnSessions, found: Sequence[WaitingTurn]) -> list[str]:
    """Start each turn again (module docstring); returns the ids of those that could not
    be, for the caller to mark interrupted."""
    failed = []
    for waiting in found:
        try:
            await resume_turn(sessions, waiting)
        except Exception:  # that turn ends as interrupted; the others still resume
            logger.exception("Could not resume turn %s", waiting.message_id)
            failed.append(waiting.message_id)
    return failed


async def resume_turn(
    sessions: TurnSessions,
    waiting: WaitingTurn,
    *,
    bind: Callable[[TurnSession], None] | None = None,
) -> TurnSession:
    """Start the turn again as a session of `sessions` (module docstring); `bind` is
    called with it before its run starts (`TurnSessions.adopt`). Raises when what it ran
    on cannot be read back (its message is gone)."""
    engine, runtime, turn = sessions.engine, sessions.runtime, waiting.turn
    agent_id, user_id = turn["agent_id"], turn["user_id"]
    settings = await asyncio.to_thread(agent_settings, sessions, agent_id, user_id)
    before = await asyncio.to_thread(
        _history_before, engine, waiting.conversation_id, waiting.message_id
    )
    saved: str | None = agent_id
    if agent_id == DEFAULT_AGENT_ID or agent_id.startswith(SPEC_PREFIX):
        saved = None
    policy = await asyncio.to_thread(pause_policy, engine, waiting.conversation_id, saved, user_id)
    pauses = Pauses(policy, asked=waiting.point.waiting)
    log = EventLog(
        engine,
        waiting.message_id,
        copies=turn_copies(
            runtime,
            owner_id=user_id,
            agent_id=agent_id,
            agent_tool_ids=settings.get("agent_tool_ids"),
            omit=sessions.config.dashboard.omit_intents,
        ),
    )
    start: dict[str, Any] = {"endpoint": turn["endpoint"], "model": turn["model"], **settings}

    def run(session: TurnSession) -> AsyncIterator[TurnEvent]:
        started = runtime.start_turn(
            history=[*before, *waiting.point.messages],
            user_message="",  # already in the history: the run goes on after it
            stop=session.stop_requested,
            seq=session.seq,
            user_id=user_id,
            pauses=pauses,
            resume=waiting.point,
            # What every turn of the process runs with (`TurnSessions.start`).
            agents=agent_directory(engine, user_id),
            checkpoints=TurnCheckpoints(
                sessions.scanner,
                engine,
                conversation_id=waiting.conversation_id,
                message_id=waiting.message_id,
            ),
            **start,
        )
        return started.events()

    session = sessions.adopt(
        message_id=waiting.message_id,
        conversation_id=waiting.conversation_id,
        log=log,
        view=waiting.view,
        pauses=pauses,
        turn=dict(turn),
        run=run,
        bind=bind,
    )
    logger.info("Resumed turn %s, waiting for the user", waiting.message_id)
    return session


def _history_before(engine: Engine, conversation_id: str, message_id: str) -> list[dict[str, Any]]:
    """What the model read before the turn: the conversation up to the message it
    answers, then the user's words (or the prompt a continued turn reads). Blocking."""
    message = conv_store.get_message(engine, conversation_id, message_id)
    if message is None or message.parent_id is None:
        raise LookupError(f"The turn {message_id!r} answers no stored message.")
    asked = conv_store.get_message(engine, conversation_id, message.parent_id)
    if asked is None:
        raise LookupError(f"The turn {message_id!r} answers no stored message.")
    history = conv_store.history(engine, conversation_id, through=asked.id)
    if asked.role != "user":  # a continued turn follows the stopped one
        history.append({"role": "user", "content": CONTINUE_PROMPT})
    return history
