"""A running turn is a session, not a tab: it runs once, and any number of views follow it.

`TurnSessions` (one per process) starts turns and finds the one running in a
conversation. A `TurnSession` owns everything about its turn:

- It stores the user message and the assistant message row, builds the history and the
  picked agent's settings, and starts the run loop with its own `SeqCounter`: every seq of
  the turn comes from that one counter, including the `TurnDone` the session writes itself
  when the run crashes. Views mint none.
- Every event enters here, through `publish`, and that is where its texts are made
  storable: a lone surrogate (a tool listing a file name that is not UTF-8, a search
  result's JSON) becomes U+FFFD (`scrub_fields`), so what is shown, stored and replayed is
  one and the same text.
- It stamps the wall-clock time on the events that start or end something, folds every
  event into its one `TurnView` (the only intent decode in the process: each argument
  fragment is read once), appends it to the turn's `EventLog`, and publishes
  `(event, changes)` so a view re-renders only what changed.
- Any number of subscribers follow it with `follow(after_seq)`: a late subscriber that
  already shows the turn up to seq N gets exactly the events after N, then the live ones,
  until `TurnDone`. A view that joins mid-turn renders `session.view` (the same state as
  replaying the stored log) and follows from its `last_seq`.
- The end is unconditional: whatever fails (the provider, a tool, the run loop, the
  store), subscribers get a `TurnDone` and the message is recorded as ended. A failing
  flush loses nothing: the rows stay buffered and the next flush retries them. When the
  database refuses rows themselves (any error but a `StoreError`), the log writes them one
  by one (`EventLog.salvage`): only the refused rows are lost, and the turn ends as an
  error saying how many and why. Only a database that stays unreachable leaves the
  message `streaming`, for the next start to mark interrupted.

Only one turn runs per conversation at a time (`TurnAlreadyRunning`), whichever tab asks.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Engine

from intent_ui.agent.runtime import AgentRuntime
from intent_ui.config import AppConfig
from intent_ui.core.events import (
    ArgsComplete,
    ArgsDelta,
    CallSettled,
    CallStarted,
    SeqCounter,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.text import scrub_fields, scrub_surrogates
from intent_ui.core.turn import TurnView
from intent_ui.store import conversations as conv_store
from intent_ui.store.db import StoreError
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.store.turns import EventLog, turn_status

__all__ = [
    "DEFAULT_AGENT_ID",
    "FLUSH_INTERVAL_S",
    "SPEC_PREFIX",
    "TurnAlreadyRunning",
    "TurnRequest",
    "TurnSession",
    "TurnSessions",
    "agent_settings",
]

logger = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.1
"""How often streamed fragments reach the database: a crash loses at most this much."""

SPEC_PREFIX = "spec:"
"""Agent-picker ids of model specs (`spec:NAME`); saved agents use their database id."""

DEFAULT_AGENT_ID = "default"

ORPHAN_ERROR = "The turn ended before this background call reported back."

Change = tuple[TurnEvent, frozenset[str]]
"""One published event and the `TurnView.apply` change markers it caused."""


class TurnAlreadyRunning(RuntimeError):
    """A conversation has a running turn; a second one may not start beside it."""


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """What a user asked for: the message and the chat's current picks."""

    conversation_id: str
    text: str
    endpoint: str
    model: str
    agent_id: str = DEFAULT_AGENT_ID
    user_id: str = LOCAL_USER_ID


class TurnSession:
    """One running turn: its run, its view, its log, its subscribers."""

    def __init__(
        self,
        *,
        message_id: str,
        conversation_id: str,
        log: EventLog,
        clock: Callable[[], float] = time.time,
        flush_interval: float = FLUSH_INTERVAL_S,
    ) -> None:
        self.message_id = message_id
        self.conversation_id = conversation_id
        self.view = TurnView()
        self.seq = SeqCounter()
        self.stop_requested = asyncio.Event()
        self._log = log
        self._clock = clock
        self._flush_interval = flush_interval
        # What was published, kept for subscribers joining late: one object per event
        # (the event itself), since a long turn holds tens of thousands and each tracked
        # object lengthens the garbage collector's full passes, which stop the loop. The
        # change sets repeat (a call's fragments all change that call): one copy each.
        self._events: list[TurnEvent] = []
        self._changes: list[frozenset[str]] = []
        self._change_sets: dict[frozenset[str], frozenset[str]] = {}
        self._seqs: list[int] = []
        self._changed = asyncio.Event()
        self._flush_wanted = asyncio.Event()
        self._done = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None

    @property
    def log(self) -> EventLog:
        return self._log

    @property
    def status(self) -> str:
        """The message status the turn is shown with (`streaming` until it ends)."""
        return turn_status(self.view.stop_reason if self.view.done else None, self.view.error)

    @property
    def done(self) -> bool:
        """True once `TurnDone` was published (the log may still be flushing)."""
        return self.view.done

    def stop(self) -> None:
        """Ask the run to stop; calls in flight settle as cancelled. Any view may ask."""
        self.stop_requested.set()

    async def wait(self) -> None:
        """Until the turn ended and its log was written (or writing it gave up)."""
        await self._done.wait()

    async def follow(self, after_seq: int = 0) -> AsyncIterator[Change]:
        """Every published `(event, changes)` with a seq above `after_seq`, then the live
        ones, ending after `TurnDone`. Never misses or repeats an event."""
        index = bisect.bisect_right(self._seqs, after_seq)
        while True:
            while index < len(self._events):
                event = self._events[index]
                yield event, self._changes[index]
                index += 1
                if isinstance(event, TurnDone):
                    return
            if self.view.done:
                return
            changed = self._changed
            await changed.wait()

    # --- running ------------------------------------------------------------------------------

    def start(self, events: AsyncIterator[TurnEvent]) -> None:
        """Run the turn from `events` (the run loop's iterator) in a task of its own."""
        self._task = asyncio.create_task(self._run(events), name=f"turn {self.message_id}")

    async def _run(self, events: AsyncIterator[TurnEvent]) -> None:
        flusher = asyncio.create_task(self._flush_loop())
        try:
            async for event in events:
                if isinstance(event, TurnDone):
                    self._end_with(event)
                    break
                self.publish(event)
        except asyncio.CancelledError:
            self._end("cancelled", None)
            raise
        except Exception as exc:  # the turn must end visibly, whatever broke
            logger.exception("Turn %s failed", self.message_id)
            self._end("error", f"The turn failed: {type(exc).__name__}: {exc}")
        finally:
            self._end("error", "The turn ended without saying how.")
            closer = getattr(events, "aclose", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()
            # Not cancelled: asyncio.wait_for can swallow a cancellation that races its
            # timeout (Python 3.11), which would leave this await hanging.
            self._closing = True
            self._flush_wanted.set()
            try:
                await flusher
                await self._final_flush()
            finally:
                self._done.set()

    def _end(self, stop_reason: str, error: str | None) -> None:
        if not self.view.done:
            self._end_with(TurnDone(self.seq.next(), stop_reason, error))

    def _end_with(self, done: TurnDone) -> None:
        """Publish the end. A call still in the background can no longer report back once
        the turn is over (nothing waits for it), so it is cancelled first rather than left
        in flight on every later reload."""
        orphans = [c.call_id for c in self.view.calls() if c.state == "background"]
        for call_id in orphans:
            self.publish(CallSettled(self.seq.next(), call_id, "cancelled", error=ORPHAN_ERROR))
        self.publish(replace(done, seq=self.seq.next()) if orphans else done)

    def publish(self, event: TurnEvent) -> frozenset[str]:
        """Fold one event in, log it, and wake the subscribers; returns what changed."""
        event = scrub_fields(event)
        if isinstance(event, CallStarted | CallSettled | TurnDone) and not event.at:
            event = replace(event, at=self._clock())
        logged: TurnEvent = event
        label_seq = None
        if isinstance(event, ArgsDelta):
            record = self.view.call(event.call_id)
            label_seq = record.label_seq if record is not None else None
        elif isinstance(event, ArgsComplete) and event.arguments == self.view.arguments(
            event.call_id
        ):
            logged = replace(event, arguments="")  # the fragments already hold it
        applied = frozenset(self.view.apply(event))
        changes = self._change_sets.setdefault(applied, applied)
        label_moved = False
        if label_seq is not None:
            record = self.view.call(event.call_id)  # type: ignore[union-attr]
            label_moved = record is not None and record.label_seq != label_seq
        self._log.append(logged, label_moved=label_moved)
        if isinstance(event, TurnDone):
            self._log.finish(self.view, event)
        self._events.append(event)
        self._changes.append(changes)
        self._seqs.append(event.seq)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
        if EventLog.should_flush_now(event):
            self._flush_wanted.set()
        return changes

    async def _flush_loop(self) -> None:
        """Flush at once after a state change, else every `flush_interval` while busy."""
        while not self._closing:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._flush_wanted.wait(), self._flush_interval)
            self._flush_wanted.clear()
            if self._log.needs_flush:
                try:
                    await self._save()
                except StoreError as exc:
                    logger.warning("%s", exc)
                except Exception:  # a bug here must not stop the turn's end being saved
                    logger.exception("Saving turn %s failed", self.message_id)

    async def _save(self) -> None:
        """One flush. Rows the database refuses (any error but `StoreError`, which means the
        store itself failed) are saved one by one instead, dropping only the refused ones.
        Raises `StoreError` with everything still buffered."""
        try:
            await asyncio.to_thread(self._log.flush)
        except StoreError:
            raise
        except Exception as exc:
            logger.warning(
                "Saving turn %s failed (%s: %s); saving its events one by one",
                self.message_id,
                type(exc).__name__,
                exc,
            )
            await asyncio.to_thread(self._log.salvage)

    async def _final_flush(self, attempts: int = 3) -> None:
        for attempt in range(attempts):
            try:
                await self._save()
                return
            except StoreError as exc:
                logger.warning("%s (attempt %d of %d)", exc, attempt + 1, attempts)
                await asyncio.sleep(0.2 * (attempt + 1))
            except Exception:
                logger.exception("Saving turn %s failed", self.message_id)
                break
        logger.error(
            "Turn %s could not be saved; the next start marks it interrupted.", self.message_id
        )


class TurnSessions:
    """The running turns of this process, by message and by conversation."""

    def __init__(
        self,
        *,
        engine: Engine,
        runtime: AgentRuntime,
        config: AppConfig,
        clock: Callable[[], float] = time.time,
        flush_interval: float = FLUSH_INTERVAL_S,
    ) -> None:
        self._engine = engine
        self._runtime = runtime
        self._config = config
        self._clock = clock
        self._flush_interval = flush_interval
        self._by_message: dict[str, TurnSession] = {}
        self._by_conversation: dict[str, TurnSession] = {}
        self._starting: set[str] = set()

    def get(self, message_id: str) -> TurnSession | None:
        return self._by_message.get(message_id)

    def running(self, conversation_id: str) -> TurnSession | None:
        """The turn running in the conversation, if any (an ended one no longer counts,
        even while its log is still being written)."""
        session = self._by_conversation.get(conversation_id)
        return None if session is None or session.done else session

    def latest(self, conversation_id: str) -> TurnSession | None:
        """The conversation's turn while it runs or its log is still being written: a view
        that renders from the store before that would show the turn unfinished."""
        return self._by_conversation.get(conversation_id)

    async def start(self, request: TurnRequest) -> TurnSession:
        """Store the user message, open the assistant message and start the turn.

        Raises TurnAlreadyRunning when the conversation has one running, and the store's
        NotFoundError when the conversation does not exist.
        """
        # A browser can send a lone surrogate (JSON escapes it); it could be neither stored
        # nor sent to a provider.
        request = replace(request, text=scrub_surrogates(request.text))
        conversation_id = request.conversation_id
        if self.running(conversation_id) is not None or conversation_id in self._starting:
            raise TurnAlreadyRunning(
                "A turn is already running in this conversation; stop it or wait for it."
            )
        # Claimed before the first await, so two starts cannot both pass the check.
        self._starting.add(conversation_id)
        try:
            settings = await asyncio.to_thread(
                agent_settings, self, request.agent_id, request.user_id
            )
            history = await asyncio.to_thread(
                conv_store.history, self._engine, request.conversation_id
            )
            await asyncio.to_thread(
                conv_store.add_user_message,
                self._engine,
                request.conversation_id,
                request.text,
            )
            message_id = await asyncio.to_thread(
                conv_store.start_assistant_message, self._engine, request.conversation_id
            )
        finally:
            self._starting.discard(conversation_id)
        session = TurnSession(
            message_id=str(message_id),
            conversation_id=request.conversation_id,
            log=EventLog(self._engine, str(message_id), now=self._clock),
            clock=self._clock,
            flush_interval=self._flush_interval,
        )
        self._by_conversation[request.conversation_id] = session
        self._by_message[session.message_id] = session
        try:
            run = self._runtime.start_turn(
                history=history,
                user_message=request.text,
                stop=session.stop_requested,
                seq=session.seq,
                user_id=request.user_id,
                **{"endpoint": request.endpoint, "model": request.model, **settings},
            )
            events = run.events()
        except Exception as exc:  # an unknown endpoint, a broken agent: the turn still ends
            logger.exception("Could not start the turn")
            events = _failed(session.seq, f"The turn could not start: {exc}")
        session.start(events)
        asyncio.get_running_loop().create_task(self._forget_when_done(session))
        return session

    async def _forget_when_done(self, session: TurnSession) -> None:
        await session.wait()
        if self._by_conversation.get(session.conversation_id) is session:
            del self._by_conversation[session.conversation_id]
        self._by_message.pop(session.message_id, None)

    async def aclose(self) -> None:
        """Stop every running turn and wait (bounded) until each is recorded."""
        sessions = list(self._by_message.values())
        for session in sessions:
            session.stop()
        if sessions:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.gather(*(s.wait() for s in sessions), return_exceptions=True), 10
                )

    @property
    def config(self) -> AppConfig:
        return self._config

    @property
    def runtime(self) -> AgentRuntime:
        return self._runtime

    @property
    def engine(self) -> Engine:
        return self._engine


async def _failed(seq: SeqCounter, error: str) -> AsyncIterator[TurnEvent]:
    yield TurnDone(seq.next(), "error", error)


def agent_settings(
    sessions: TurnSessions, agent_id: str, user_id: str = LOCAL_USER_ID
) -> Mapping[str, Any]:
    """What the picked agent changes about a turn: tools, options, instructions, goals
    and scopes, and its own endpoint/model when it has one. The default (ephemeral) agent
    changes nothing: every tool, every eligible tool described. A model spec synthesises
    its options. An agent `user_id` may not read changes nothing either. Blocking (reads
    the row)."""
    config, runtime = sessions.config, sessions.runtime
    if agent_id.startswith(SPEC_PREFIX):
        name = agent_id[len(SPEC_PREFIX) :]
        spec = next((s for s in config.model_specs if s.name == name), None)
        if spec is None:
            return {}
        return {
            "endpoint": spec.endpoint,
            "model": spec.model,
            "tool_options": runtime.spec_tool_options(spec),
            "system": spec.instructions or None,
        }
    if agent_id == DEFAULT_AGENT_ID:
        return {}
    from intent_ui.store import agents as agent_store

    agent = agent_store.get_agent(sessions.engine, agent_id, owner=user_id)
    if agent is None:
        return {}
    settings: dict[str, Any] = {
        "agent_tool_ids": agent.tools,
        "tool_options": agent.tool_options,
        "system": agent.instructions or None,
        "goals": agent.goals,
        "scopes": agent.scopes,
    }
    if agent.endpoint and config.endpoint(agent.endpoint) is not None:
        settings["endpoint"] = agent.endpoint
        if agent.model:
            settings["model"] = agent.model
    return settings
