"""A running turn is a session, not a tab: it runs once, and any number of views follow it.

`TurnSessions` (one per process) starts turns and finds the one running in a
conversation. A `TurnSession` owns everything about its turn:

- It stores the user message and the assistant message row where the request puts them
  in the conversation's tree (`TurnRequest.kind`: at the end of the shown path, or as a
  reply regenerated, a message edited, a stopped turn continued), builds the history
  along that path and the picked agent's settings, and starts the run loop with its own
  `SeqCounter`: every seq of the turn comes from that one counter, including the
  `TurnDone` the session writes itself when the run crashes. Views mint none.
- Every event enters here, through `publish`, and that is where its texts are made
  storable: a lone surrogate (a tool listing a file name that is not UTF-8, a search
  result's JSON) becomes U+FFFD (`scrub_fields`), so what is shown, stored and replayed is
  one and the same text.
- It stamps the wall-clock time on the events that start or end something, folds every
  event into its one `TurnView` (the only intent decode in the process: each argument
  fragment is read once), appends it to the turn's `EventLog`, and hands the event and
  what it changed to the turn's feeds, so a page re-renders only what changed.
- Pages follow it as patches: `feed(lang)` makes the turn's `PatchFeed` in a language on
  first use (`intent_ui.agent.feeds`), every published event is marked on each feed, and
  `subscribe(lang, last_id)` streams that feed's frames as SSE bytes. A session nobody
  asked a feed of (the CLI's) makes no frames.
- Event observers (`observers`, e.g. the turn's trace, `intent_ui.agent.tracing`) are
  called with each published event and the view that applied it; a session without any
  spends nothing on them.
- The end is unconditional: whatever fails (the provider, a tool, the run loop, the
  store), the feeds get a `TurnDone` and the message is recorded as ended. A failing
  flush loses nothing: the rows stay buffered and the next flush retries them. When the
  database refuses rows themselves (any error but a `StoreError`), the log writes them one
  by one (`EventLog.salvage`): only the refused rows are lost, and the turn ends as an
  error saying how many and why. Only a database that stays unreachable leaves the
  message `streaming`, for the next start to mark interrupted.

Only one turn runs per conversation at a time (`TurnAlreadyRunning`), whichever tab asks.

A turn's approvals and questions wait in its `pauses` (`intent_ui.agent.pauses`), which
any of the owner's tabs decides through. A turn still waiting when the process stops is
suspended, not ended (only when nothing else of it is in flight:
`core.resume.can_resume`): its log stays `streaming` and the next start resumes it
(`intent_ui.agent.resume`), or with several workers the worker that takes its lease next
(`intent_ui.agent.cluster.orphans`). Any other waiting turn ends saying so
(`core.pauses.RESTARTED_ERROR`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

from sqlalchemy import Engine

from intent_ui.agent.checkpoints import TurnCheckpoints, WorkspaceScanner, workspace_scanner
from intent_ui.agent.dashboard_copies import turn_copies
from intent_ui.agent.feeds import PatchFeed, TurnFeeds
from intent_ui.agent.pauses import Pauses, pause_policy
from intent_ui.agent.runtime import AgentRuntime
from intent_ui.agent.subagents import agent_directory
from intent_ui.agent.tokenizer import get_tokenizer
from intent_ui.config import AppConfig
from intent_ui.core.compaction import ContextBudget
from intent_ui.core.events import (
    ApprovalRequested,
    ArgsComplete,
    ArgsDelta,
    CallSettled,
    CallStarted,
    PauseEvent,
    QuestionAsked,
    SeqCounter,
    SubagentStarted,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.history import CONTINUE_PROMPT
from intent_ui.core.pauses import RESTARTED_ERROR
from intent_ui.core.resume import can_resume
from intent_ui.core.text import scrub_fields, scrub_surrogates
from intent_ui.core.turn import TurnView
from intent_ui.store import conversations as conv_store
from intent_ui.store.db import NotFoundError, StoreError
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.store.turns import EventLog, turn_status

if TYPE_CHECKING:
    from intent_ui.agent.tracing import Tracing

__all__ = [
    "DEFAULT_AGENT_ID",
    "FLUSH_INTERVAL_S",
    "SPEC_PREFIX",
    "EventObserver",
    "TurnAlreadyRunning",
    "TurnClaim",
    "TurnCoordinator",
    "TurnKind",
    "TurnRequest",
    "TurnSession",
    "TurnSessions",
    "agent_settings",
    "context_budget",
    "place_turn",
]

logger = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.1
"""How often streamed fragments reach the database: a crash loses at most this much."""

SPEC_PREFIX = "spec:"
"""Agent-picker ids of model specs (`spec:NAME`); saved agents use their database id."""

DEFAULT_AGENT_ID = "default"

ORPHAN_ERROR = "The turn ended before this background call reported back."

EventObserver = Callable[[TurnEvent, TurnView], None]
"""Called with each published event and the turn's view, which has already applied it."""


class TurnAlreadyRunning(RuntimeError):
    """A conversation has a running turn; a second one may not start beside it."""


class TurnClaim(Protocol):
    """A conversation held for one new turn (see `TurnCoordinator`)."""

    async def bind(self, session: TurnSession) -> None:
        """The turn's session exists and starts next: it owns the claim until it ends."""

    async def release(self) -> None:
        """The start failed before there was a session: the conversation is free again."""


class TurnCoordinator(Protocol):
    """Makes "one turn per conversation" hold across processes (`intent_ui.agent.cluster`):
    `TurnSessions.start` claims the conversation before it stores anything. Without one,
    the check is this process's alone."""

    async def claim(self, conversation_id: str) -> TurnClaim:
        """Hold the conversation for a new turn; raises `TurnAlreadyRunning` when another
        process runs one there."""
        ...


TurnKind = Literal["send", "edit", "regenerate", "continue"]
"""Where a new turn goes in the conversation's tree (see `TurnRequest`)."""


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """What a user asked for: the message and the chat's current picks.

    `kind` places the turn (`intent_ui.store.conversations`): `send` asks `text` at the
    end of the shown path; `edit` asks `text` instead of the user message `target`, as
    its sibling; `regenerate` asks again what the turn `target` answered, a sibling of
    that turn (`text` is not read); `continue` goes on after the stopped turn `target`,
    its child, the model reading `CONTINUE_PROMPT` as the user's words.
    """

    conversation_id: str
    text: str
    endpoint: str
    model: str
    agent_id: str = DEFAULT_AGENT_ID
    user_id: str = LOCAL_USER_ID
    kind: TurnKind = "send"
    target: str = ""


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
        hold_ms: float | None = None,
        observers: Sequence[EventObserver] = (),
        view: TurnView | None = None,
    ) -> None:
        self.message_id = message_id
        self.conversation_id = conversation_id
        # A turn resumed after a restart goes on from its log replayed, seqs included.
        self.view = view if view is not None else TurnView()
        self.seq = SeqCounter(self.view.last_seq)
        self.stop_requested = asyncio.Event()
        self._log = log
        self._clock = clock
        self._flush_interval = flush_interval
        self._flush_wanted = asyncio.Event()
        self._done = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self.observers: list[EventObserver] = list(observers)
        """Called with every published event, in order (see `EventObserver`)."""
        self._feeds = TurnFeeds(message_id, self.view, hold_ms=hold_ms)
        self.pauses: Pauses | None = None
        """Where the turn's approvals and questions wait (set when its run starts)."""
        self.resumable_as: dict[str, str] | None = None
        """What the turn runs on (`ApprovalRequested.turn`), stamped on its pauses."""
        self._suspended = False

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

    def suspend(self) -> None:
        """The process stops while the turn waits for the user: stop following the run
        without ending the turn, so its log, written to the last event, stays `streaming`
        and the next start resumes it (`agent/resume.py`)."""
        self._suspended = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def wait(self) -> None:
        """Until the turn ended and its log was written (or writing it gave up)."""
        await self._done.wait()

    def feed(self, lang: str) -> PatchFeed:
        """The turn's patch feed in `lang`, made on first use from the view as it is then,
        and kept for as long as the session is. Callers bound `lang` to the supported
        languages: each one asked for is a feed every event is marked on."""
        return self._feeds.feed(lang)

    def subscribe(self, lang: str, last_id: str | None = None) -> AsyncIterator[bytes]:
        """The turn in `lang` as SSE bytes: the frames after `last_id` (a snapshot when
        the feed cannot say which those are), then the live ones, then the `end` event."""
        return self._feeds.subscribe(lang, last_id)

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
        if not self.view.done and not self._suspended:
            self._end_with(TurnDone(self.seq.next(), stop_reason, error))

    def _end_with(self, done: TurnDone) -> None:
        """Publish the end. A call still in the background can no longer report back once
        the turn is over (nothing waits for it), so it is cancelled first rather than left
        in flight on every later reload. A turn stopped because the process stops while it
        waits for the user says so."""
        if self.pauses is not None and self.pauses.abandoned:
            done = replace(done, stop_reason="interrupted", error=RESTARTED_ERROR)
            done = replace(done, error_kind="restarted")
        orphans = [c.call_id for c in self.view.calls() if c.state == "background"]
        for call_id in orphans:
            self.publish(CallSettled(self.seq.next(), call_id, "cancelled", error=ORPHAN_ERROR))
        self.publish(replace(done, seq=self.seq.next()) if orphans else done)

    def publish(self, event: TurnEvent) -> frozenset[str]:
        """Fold one event in, log it, and hand it to the feeds and observers; returns what
        changed."""
        event = scrub_fields(event)
        if (
            isinstance(event, CallStarted | CallSettled | TurnDone | PauseEvent | SubagentStarted)
            and not event.at
        ):
            event = replace(event, at=self._clock())
        if isinstance(event, ApprovalRequested | QuestionAsked) and self.resumable_as:
            event = replace(event, turn=event.turn or dict(self.resumable_as))
        logged: TurnEvent = event
        label_seq = None
        if isinstance(event, ArgsDelta):
            record = self.view.call(event.call_id)
            label_seq = record.label_seq if record is not None else None
        elif isinstance(event, ArgsComplete) and event.arguments == self.view.arguments(
            event.call_id
        ):
            logged = replace(event, arguments="")  # the fragments already hold it
        changes = frozenset(self.view.apply(event))
        label_moved = False
        if label_seq is not None:
            record = self.view.call(event.call_id)  # type: ignore[union-attr]
            label_moved = record is not None and record.label_seq != label_seq
        self._log.append(logged, label_moved=label_moved)
        if isinstance(event, TurnDone):
            self._log.finish(self.view, event)
        self._feeds.mark(event, changes)
        if EventLog.should_flush_now(event):
            self._flush_wanted.set()
        for observe in self.observers:
            try:
                observe(event, self.view)
            except Exception:  # an observer's failure must not end the turn
                logger.exception("An observer of turn %s failed", self.message_id)
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
        tracing: Tracing | None = None,
        coordinator: TurnCoordinator | None = None,
    ) -> None:
        self._engine = engine
        self._runtime = runtime
        self._config = config
        self._clock = clock
        self._flush_interval = flush_interval
        self._by_message: dict[str, TurnSession] = {}
        self._by_conversation: dict[str, TurnSession] = {}
        self._starting: set[str] = set()
        self._tracing = tracing
        self._coordinator = coordinator
        self._scanner: WorkspaceScanner | None = None

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

        Raises TurnAlreadyRunning when the conversation has one running (in any process,
        with a coordinator), and the store's NotFoundError when the conversation does not
        exist.
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
        claim: TurnClaim | None = None
        try:
            if self._coordinator is not None:
                claim = await self._coordinator.claim(conversation_id)
            settings = await asyncio.to_thread(
                agent_settings, self, request.agent_id, request.user_id
            )
            budget = context_budget(self._config, settings.get("endpoint", request.endpoint))
            history, prompt, message_id = await asyncio.to_thread(
                place_turn, self._engine, request, budget
            )
            request = replace(request, text=prompt)
            observers = await self._observers(request, settings, str(message_id))
            saved: str | None = request.agent_id
            if saved == DEFAULT_AGENT_ID or request.agent_id.startswith(SPEC_PREFIX):
                saved = None
            policy = await asyncio.to_thread(
                pause_policy, self._engine, conversation_id, saved, request.user_id
            )
        except BaseException:
            if claim is not None:
                await claim.release()
            raise
        finally:
            self._starting.discard(conversation_id)
        session = TurnSession(
            message_id=str(message_id),
            conversation_id=request.conversation_id,
            log=EventLog(
                self._engine,
                str(message_id),
                now=self._clock,
                copies=turn_copies(
                    self._runtime,
                    owner_id=request.user_id,
                    agent_id=request.agent_id,
                    agent_tool_ids=settings.get("agent_tool_ids"),
                    omit=self._config.dashboard.omit_intents,
                ),
            ),
            clock=self._clock,
            flush_interval=self._flush_interval,
            observers=observers,
        )
        self._by_conversation[request.conversation_id] = session
        self._by_message[session.message_id] = session
        session.pauses = Pauses(policy)
        session.resumable_as = {
            "endpoint": request.endpoint,
            "model": request.model,
            "agent_id": request.agent_id,
            "user_id": request.user_id,
        }
        if claim is not None:
            await claim.bind(session)
        try:
            run = self._runtime.start_turn(
                history=history,
                user_message=request.text,  # the prompt `place_turn` returned
                stop=session.stop_requested,
                seq=session.seq,
                user_id=request.user_id,
                pauses=session.pauses,
                agents=agent_directory(self._engine, request.user_id),
                checkpoints=TurnCheckpoints(
                    self.scanner,
                    self._engine,
                    conversation_id=request.conversation_id,
                    message_id=session.message_id,
                ),
                **{"endpoint": request.endpoint, "model": request.model, **settings},
            )
            events = run.events()
        except Exception as exc:  # an unknown endpoint, a broken agent: the turn still ends
            logger.exception("Could not start the turn")
            events = _failed(session.seq, f"The turn could not start: {exc}")
        session.start(events)
        asyncio.get_running_loop().create_task(self._forget_when_done(session))
        return session

    def adopt(
        self,
        *,
        message_id: str,
        conversation_id: str,
        log: EventLog,
        view: TurnView,
        pauses: Pauses,
        turn: dict[str, str],
        run: Callable[[TurnSession], AsyncIterator[TurnEvent]],
        bind: Callable[[TurnSession], None] | None = None,
    ) -> TurnSession:
        """Run a turn begun by a process that stopped (resumed, `agent/resume.py`) as one
        of this process's turns: its session goes on from `view`, its log replayed, and
        `run(session)` gives the events from there. `turn` is what it runs on
        (`ApprovalRequested.turn`); `bind(session)` before the run starts (the cluster
        publishes the turn from its first new event)."""
        session = TurnSession(
            message_id=message_id,
            conversation_id=conversation_id,
            log=log,
            clock=self._clock,
            flush_interval=self._flush_interval,
            view=view,
        )
        session.pauses = pauses
        session.resumable_as = turn
        self._by_conversation[conversation_id] = session
        self._by_message[message_id] = session
        if bind is not None:
            bind(session)
        try:
            events = run(session)
        except Exception as exc:  # an endpoint or agent gone since: the turn still ends
            logger.exception("Could not resume the turn")
            events = _failed(session.seq, f"The turn could not resume: {exc}")
        session.start(events)
        asyncio.get_running_loop().create_task(self._forget_when_done(session))
        return session

    async def _observers(
        self, request: TurnRequest, settings: Mapping[str, Any], message_id: str
    ) -> list[EventObserver]:
        """The new turn's observers: its trace, when traces are on."""
        if self._tracing is None:
            return []
        try:
            tracer = await asyncio.to_thread(
                self._tracing.session_turn, self, request, settings, message_id
            )
        except Exception:  # the turn runs untraced rather than not at all
            logger.exception("Could not start the trace of turn %s", message_id)
            return []
        return [tracer]

    async def _forget_when_done(self, session: TurnSession) -> None:
        await session.wait()
        if self._by_conversation.get(session.conversation_id) is session:
            del self._by_conversation[session.conversation_id]
        self._by_message.pop(session.message_id, None)

    async def aclose(self) -> None:
        """Stop every running turn and wait (bounded) until each is recorded."""
        sessions = list(self._by_message.values())
        for session in sessions:
            if can_resume(session.view):
                session.suspend()  # the next start (or worker) resumes it where it waits
                continue
            if session.pauses is not None and session.view.waiting():
                # Stopping settles the waiting call: its end must still say why.
                session.pauses.abandon()
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

    @property
    def tracing(self) -> Tracing | None:
        return self._tracing

    @property
    def scanner(self) -> WorkspaceScanner:
        """The workspace's scanner, whose checkpoints every turn of the process takes
        (made on first use; it remembers what it read)."""
        if self._scanner is None:
            self._scanner = workspace_scanner(self._config, self._engine)
        return self._scanner


async def _failed(seq: SeqCounter, error: str) -> AsyncIterator[TurnEvent]:
    yield TurnDone(seq.next(), "error", error)


def place_turn(
    engine: Engine, request: TurnRequest, budget: ContextBudget | None = None
) -> tuple[list[dict[str, Any]], str, str]:
    """Store the new turn's messages where `request.kind` puts them; returns the history
    the model reads before the user's words, those words, and the new assistant message's
    id. A history past `budget` is compacted (`conv_store.history`). Raises the store's
    NotFoundError for a conversation or a `target` that is not there, or not what the
    kind needs. Blocking."""
    conversation_id = request.conversation_id
    if request.kind == "send":
        end = conv_store.path_end(engine, conversation_id)
        history = conv_store.history(engine, conversation_id, through=end, budget=budget)
        # A compaction that history recorded is the path's new end: the message follows it.
        end = conv_store.path_end(engine, conversation_id)
        asked = conv_store.add_user_message(engine, conversation_id, request.text, parent_id=end)
        reply = conv_store.start_assistant_message(engine, conversation_id, parent_id=asked)
        return history, request.text, reply
    target = conv_store.get_message(engine, conversation_id, request.target)
    wanted = "user" if request.kind == "edit" else "assistant"
    if target is None or target.role != wanted:
        raise NotFoundError(
            f"There is no {'message' if wanted == 'user' else 'reply'} {request.target!r} "
            f"to {request.kind} in this conversation; reload the page."
        )
    if request.kind == "edit":
        history = conv_store.history(
            engine, conversation_id, through=target.parent_id, budget=budget
        )
        asked = conv_store.add_user_message(
            engine, conversation_id, request.text, parent_id=target.parent_id
        )
        reply = conv_store.start_assistant_message(engine, conversation_id, parent_id=asked)
        return history, request.text, reply
    if request.kind == "continue":
        end = conv_store.path_end(engine, conversation_id)
        history = conv_store.history(engine, conversation_id, through=target.id, budget=budget)
        # A compaction that history recorded after the stopped turn (its path's end) comes
        # before the continuation, which the model still reads as following the turn.
        after = conv_store.path_end(engine, conversation_id) if end == target.id else target.id
        reply = conv_store.start_assistant_message(engine, conversation_id, parent_id=after)
        return history, CONTINUE_PROMPT, reply
    # Regenerate: the same words again, after the same history, beside the old reply.
    before = (
        conv_store.get_message(engine, conversation_id, target.parent_id)
        if target.parent_id is not None
        else None
    )
    if before is None:
        raise NotFoundError(
            f"The reply {request.target!r} answers nothing that is still stored; reload the page."
        )
    if before.role == "assistant":  # a continuation, continued again
        history = conv_store.history(engine, conversation_id, through=before.id, budget=budget)
        prompt = CONTINUE_PROMPT
    else:
        history = conv_store.history(
            engine, conversation_id, through=before.parent_id, budget=budget
        )
        prompt = before.content
    reply = conv_store.start_assistant_message(engine, conversation_id, parent_id=before.id)
    return history, prompt, reply


def context_budget(config: AppConfig, endpoint: str | None) -> ContextBudget | None:
    """The context budget of the endpoint a turn runs on (None: the default endpoint),
    counted with the app's tokenizer; None when that endpoint has none."""
    found = config.default_endpoint if endpoint is None else config.endpoint(endpoint)
    if found is None or found.context_budget is None:
        return None
    return ContextBudget(found.context_budget, _count_tokens)


def _count_tokens(text: str) -> int:
    # Looked up on each count, so the tokenizer loads in the thread that counts first.
    return get_tokenizer().count(text)


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
