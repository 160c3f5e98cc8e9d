"""The running turns a page can show, wherever they run.

A page asks for a turn by message or by conversation. `LiveTurns` answers with this
process's `TurnSession` when it runs the turn, and, when the process is one worker of a
cluster (`intent_ui.agent.cluster`), with the `RemoteTurn` that follows the turn here when
another worker runs it. Both have the small interface of `LiveTurn`, all a page uses.
Without a cluster every answer is the sessions' own. A decision or an answer for a
waiting call goes through `decide` and `answer` here: at once to this process's session,
else to the worker running the turn, which says whether it was taken.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Protocol

from intent_ui.agent.approvals import Decision, Verdict
from intent_ui.agent.cluster.remote import RemoteTurn
from intent_ui.agent.feeds import PatchFeed
from intent_ui.agent.session import TurnSession, TurnSessions
from intent_ui.core.turn import TurnView

if TYPE_CHECKING:
    from intent_ui.agent.cluster import Cluster

__all__ = ["LiveTurn", "LiveTurns", "answer", "decide"]

_NOT_RUNNING = Verdict(False, "This turn is not running.", stale=True)


class LiveTurn(Protocol):
    """What a page uses of a running turn (a `TurnSession` or a `RemoteTurn`)."""

    message_id: str
    conversation_id: str

    @property
    def view(self) -> TurnView: ...

    @property
    def done(self) -> bool: ...

    @property
    def status(self) -> str: ...

    def stop(self) -> None: ...

    async def wait(self) -> None: ...

    def feed(self, lang: str) -> PatchFeed: ...

    def subscribe(self, lang: str, last_id: str | None = None) -> AsyncIterator[bytes]: ...


class LiveTurns:
    """This process's sessions, and with a cluster the turns of the other workers."""

    def __init__(self, sessions: TurnSessions, cluster: Cluster | None = None) -> None:
        self.sessions = sessions
        self.cluster = cluster

    async def get(self, message_id: str) -> LiveTurn | None:
        """The turn while it runs (or its log is still being written)."""
        session = self.sessions.get(message_id)
        if session is not None or self.cluster is None:
            return session
        return await self.cluster.follow(message_id)

    async def get_many(self, message_ids: Iterable[str]) -> dict[str, LiveTurn]:
        """`get` of each of `message_ids` that is live (one question to Redis for all)."""
        ids = list(message_ids)
        found: dict[str, LiveTurn] = {}
        for message_id in ids:
            session = self.sessions.get(message_id)
            if session is not None:
                found[message_id] = session
        if self.cluster is not None:
            rest = [i for i in ids if i not in found]
            if rest:
                found.update(await self.cluster.follow_many(rest))
        return found

    async def running(self, conversation_id: str) -> LiveTurn | None:
        """The turn running in the conversation, if any (an ended one no longer counts)."""
        session = self.sessions.running(conversation_id)
        if session is not None or self.cluster is None:
            return session
        remote = await self.cluster.running_elsewhere(conversation_id)
        return None if remote is None or remote.done else remote

    async def latest(self, conversation_id: str) -> LiveTurn | None:
        """The conversation's turn while it runs or its log is still being written (a
        view that renders from the store before that would show the turn unfinished)."""
        session = self.sessions.latest(conversation_id)
        if session is not None or self.cluster is None:
            return session
        return await self.cluster.running_elsewhere(conversation_id)


async def decide(turn: LiveTurn, call_id: str, decision: Decision) -> Verdict:
    """A decision on the turn's waiting call `call_id`; the first one wins."""
    if isinstance(turn, TurnSession):
        return _NOT_RUNNING if turn.pauses is None else turn.pauses.decide(call_id, decision)
    return await turn.decide(call_id, decision) if isinstance(turn, RemoteTurn) else _NOT_RUNNING


async def answer(turn: LiveTurn, call_id: str, text: str, by: str = "user") -> Verdict:
    """An answer to the turn's waiting question `call_id`; the first one wins."""
    if isinstance(turn, TurnSession):
        return _NOT_RUNNING if turn.pauses is None else turn.pauses.answer(call_id, text, by)
    return await turn.answer(call_id, text, by) if isinstance(turn, RemoteTurn) else _NOT_RUNNING
