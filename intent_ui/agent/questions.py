"""Questions: `ask_user_question` waits here until the user answers.

One `Questions` per turn, reached through the turn's `Pauses` (`agent/pauses.py`).
`ask(call, args)` emits `QuestionAsked` (the question and the answers offered, if any)
and waits; like an approval, the wait is not the tool's (no `tool_timeout_s`), and
stopping the turn ends it. `answer(call_id, text)` takes the first answer, from any of
the owner's tabs or the terminal: it is emitted as `QuestionAnswered` at once and becomes
the call's result, which the model reads; later answers are refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from intent_ui.agent.approvals import PausedCall, Verdict
from intent_ui.agent.tools.base import ToolResult
from intent_ui.core.events import QuestionAnswered, QuestionAsked, TurnEvent
from intent_ui.core.pauses import MAX_ANSWER_CHARS

__all__ = ["MAX_CHOICES", "NO_ANSWER", "Questions"]

MAX_CHOICES = 10
"""The most answers a question offers; the rest are dropped."""
MAX_QUESTION_CHARS = 2000

NO_ANSWER = "The user left the question unanswered."


@dataclass(slots=True)
class Questions:
    """One turn's questions."""

    emit: Callable[[TurnEvent], None]
    next_seq: Callable[[], int]
    asked: set[str] = field(default_factory=set)
    """Calls whose question was asked before a restart: they wait without asking again."""
    _waiting: dict[str, asyncio.Future[str]] = field(default_factory=dict)

    @property
    def waiting(self) -> tuple[str, ...]:
        """The ids of the calls waiting for an answer."""
        return tuple(self._waiting)

    async def ask(self, call: PausedCall, args: dict[str, Any]) -> ToolResult:
        """Ask, wait for the answer, and return it as the call's result."""
        question = args.get("question")
        if not isinstance(question, str) or not question.strip():
            return ToolResult(
                "ask_user_question needs a question: a non-empty string in 'question'.",
                is_error=True,
            )
        offered = args.get("choices")
        choices = (
            [str(choice).strip() for choice in offered if str(choice).strip()][:MAX_CHOICES]
            if isinstance(offered, list)
            else []
        )
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiting[call.call_id] = future
        if call.call_id in self.asked:
            self.asked.discard(call.call_id)
        else:
            self.emit(
                QuestionAsked(
                    self.next_seq(),
                    call.call_id,
                    question.strip()[:MAX_QUESTION_CHARS],
                    choices=choices or None,
                )
            )
        try:
            answer = await future
        finally:
            self._waiting.pop(call.call_id, None)
        return ToolResult(answer or NO_ANSWER)

    def answer(self, call_id: str, text: str, by: str = "user") -> Verdict:
        """Take the first answer to a waiting question."""
        future = self._waiting.get(call_id)
        if future is None or future.done():
            return Verdict(False, "This question is not waiting for an answer (any more).", True)
        answer = text.strip()[:MAX_ANSWER_CHARS]
        self.emit(QuestionAnswered(self.next_seq(), call_id, answer, by=by))
        future.set_result(answer)
        return Verdict(True)
