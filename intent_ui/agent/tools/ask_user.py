"""`ask_user_question`: the model asks the user, and the turn waits for the answer.

A native tool with an intent ("Asking which database to migrate"); its group header
counts questions under the question glyph (`core/header.py`). The run loop never runs its
body: the turn's `Pauses` asks the question, waits, and settles the call with the answer
(`agent/pauses.py`, `agent/questions.py`). The body answers only a call that reached it
some other way (a turn run without anyone to ask), saying that no one can answer.
"""

from __future__ import annotations

from pydantic import Field

from intent_ui.agent.tools.base import ToolResult
from intent_ui.agent.tools.native import Args, NativeTool
from intent_ui.core.pauses import ASK_USER_QUESTION_NAME

__all__ = ["AskUserQuestionTool"]


class AskUserQuestionArgs(Args):
    question: str = Field(description="The question, in one or two sentences.")
    choices: list[str] | None = Field(
        default=None,
        description="Answers to offer, when there are a few obvious ones (the user may "
        "still write another).",
    )


class AskUserQuestionTool(NativeTool):
    name = ASK_USER_QUESTION_NAME
    description = (
        "Ask the user a question and wait for the answer, when you cannot go on without "
        "their decision or a fact only they know. Offer choices when there are a few."
    )
    Arguments = AskUserQuestionArgs

    async def run(self, args: AskUserQuestionArgs) -> ToolResult:
        return ToolResult(
            "No one can answer questions in this conversation; go on without asking.",
            is_error=True,
        )
