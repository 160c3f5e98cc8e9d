"""The command line's answers to a turn's approvals and questions (`python -m intent_ui run`).

On a terminal the user is asked: an approval shows the intent first, then the tool and
the exact arguments, and takes `y` (approve), `a` (approve this tool for the rest of the
turn), `e` (edit the arguments: one line of JSON, intent included, then approve) or `n`
(deny, with an optional reason the model reads); a question takes a line of text, or the
number of an offered answer. `--yes` approves every call and `--deny-all` denies every
call without asking (for scripts and CI); either leaves questions unanswered. Without a
terminal and without either flag, calls are denied: nobody is there to approve them.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from intent_ui.agent.pauses import Pauses, decision_from
from intent_ui.core.events import ApprovalRequested, QuestionAsked
from intent_ui.core.sanitize import sanitize_label
from intent_ui.core.text import terminal_text
from intent_ui.core.turn import TurnView

__all__ = ["AUTO_DENY_REASON", "NO_TERMINAL_REASON", "TerminalPauses", "stdin_is_terminal"]

AUTO_DENY_REASON = "Denied by --deny-all: no call that asks first runs in this session."
NO_TERMINAL_REASON = (
    "No one could approve it: the command was not run on a terminal (pass --yes to "
    "approve such calls, or --deny-all to deny them without this note)."
)


@dataclass
class TerminalPauses:
    """Answers one turn's pauses from the terminal or from the flags."""

    pauses: Pauses
    out: TextIO
    approve_all: bool = False
    deny_all: bool = False
    interactive: bool = False
    read: Callable[[str], str] = input

    async def answer(self, event: ApprovalRequested | QuestionAsked, view: TurnView) -> None:
        """Decide or answer the pause `event` opened (`view` has applied it)."""
        if isinstance(event, ApprovalRequested):
            await self._approval(event, view)
        else:
            await self._question(event)

    async def _approval(self, event: ApprovalRequested, view: TurnView) -> None:
        call_id = event.call_id
        if self.approve_all:
            self.pauses.decide(call_id, decision_from("once", by="auto"))
            return
        if self.deny_all or not self.interactive:
            reason = AUTO_DENY_REASON if self.deny_all else NO_TERMINAL_REASON
            self.pauses.decide(call_id, decision_from("deny", reason, by="auto"))
            return
        record = view.call(call_id)
        what = record.intent if record is not None and record.intent else None
        tool = record.tool if record is not None else "the tool"
        server = record.server if record is not None else None
        self._say(f"Approve: {_line(what or tool)}")
        self._say(f"  {_line(tool)}" + (f" in {_line(server)}" if server else ""))
        self._say(_indented(view.arguments(call_id)))
        while True:
            choice = (await self._ask("[y]es / [a]lways in this turn / [e]dit / [n]o > ")).lower()
            if choice in ("y", "yes", ""):
                decision = decision_from("once")
            elif choice in ("a", "always"):
                decision = decision_from("conversation")
            elif choice in ("e", "edit"):
                edited = await self._ask("Arguments (one line of JSON): ")
                decision = decision_from("once", arguments=edited)
            elif choice in ("n", "no"):
                reason = await self._ask("Reason (optional, the model reads it): ")
                decision = decision_from("deny", reason)
            else:
                continue
            verdict = self.pauses.decide(call_id, decision)
            if verdict.ok or verdict.stale:
                return
            self._say(verdict.problem)

    async def _question(self, event: QuestionAsked) -> None:
        if self.approve_all or self.deny_all or not self.interactive:
            self.pauses.answer(event.call_id, "", by="auto")
            return
        self._say(f"Question: {_line(event.question)}")
        choices = list(event.choices or [])
        for number, choice in enumerate(choices, 1):
            self._say(f"  {number}. {_line(choice)}")
        text = await self._ask("Answer > ")
        if text.isdigit() and 1 <= int(text) <= len(choices):
            text = choices[int(text) - 1]
        self.pauses.answer(event.call_id, text)

    async def _ask(self, prompt: str) -> str:
        try:
            return (await asyncio.to_thread(self.read, prompt)).strip()
        except EOFError:
            return ""

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()


def _line(text: str) -> str:
    return sanitize_label(text, 200).text


def _indented(arguments: str) -> str:
    try:
        shown = json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except ValueError:
        shown = arguments
    return "\n".join("    " + line for line in terminal_text(shown).splitlines())


def stdin_is_terminal() -> bool:
    """Whether someone can be asked on this terminal."""
    return sys.stdin is not None and sys.stdin.isatty()
