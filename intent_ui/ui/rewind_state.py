"""Rewinding from the chat: which calls offer it, the preview, and the restore
(`agent/rewind.py` does the work; docs/rewind.md).

`rewindable` holds the calls of the open conversation that have a checkpoint, as
`{message_id}/{call_id}`, listed again whenever the conversation's messages are
(`ChatState._rerender`); their cards and timeline marks show the rewind button. It is a
substate of its own, so only those buttons follow it. `show` opens the preview of one
call: the files a restore would change, each with its diff; `restore` does it (files,
or files and conversation) and lists the conversation again, where the rewind now shows.
Nothing is offered while a turn runs in the conversation.
"""

from __future__ import annotations

import asyncio
import logging

import reflex as rx

from intent_ui.agent.rewind import RewindError, plan_rewind, rewind
from intent_ui.core.checkpoints import RewindMode, rewind_label
from intent_ui.core.locale import translate
from intent_ui.store import checkpoints as checkpoint_store
from intent_ui.store import conversations as conv_store
from intent_ui.store.db import StoreError
from intent_ui.ui.chat_state import ChatState
from intent_ui.ui.host import Host, get_host

__all__ = ["RewindState"]

logger = logging.getLogger(__name__)


class RewindState(ChatState):
    rewindable: list[str] = []
    showing: bool = False
    target_message: str = ""
    target_call: str = ""
    title: str = ""
    files: list[dict[str, str]] = []
    notes: list[str] = []
    problem: str = ""
    words: dict[str, str] = {}
    """What the buttons inside the cards say, here so those cards read no other state."""

    async def refresh(self, host: Host, conversation_id: str) -> None:
        """List the open conversation's calls that have a checkpoint."""
        records = await asyncio.to_thread(
            checkpoint_store.conversation_checkpoints, host.engine, conversation_id
        )
        found = [f"{record.message_id}/{record.call_id}" for record in records]
        if found != self.get_value("rewindable"):
            self.rewindable = found
        words = {key: translate(key, self.lang) for key in ("ui.rewind", "ui.trace")}
        if words != self.get_value("words"):
            self.words = words

    async def _owned(self, host: Host) -> str | None:
        """The open conversation's id when the signed-in user owns it and no turn runs."""
        user = await self.current_user(host)
        if user is None or not self.conversation_id:
            return None
        owned = await asyncio.to_thread(
            conv_store.get_conversation, host.engine, self.conversation_id, owner=user
        )
        if owned is None:
            return None
        if await host.live.running(self.conversation_id) is not None:
            self.problem = "A turn is running in this conversation; wait for it, then rewind."
            return None
        return self.conversation_id

    @rx.event
    async def show(self, message_id: str, call_id: str) -> None:
        """Open the preview of rewinding to before the call."""
        host = await get_host()
        self.problem = ""
        self.showing = True
        self.target_message, self.target_call = message_id, call_id
        self.files, self.notes, self.title = [], [], ""
        conversation_id = await self._owned(host)
        if conversation_id is None:
            return
        try:
            plan = await asyncio.to_thread(
                plan_rewind,
                host.sessions.scanner,
                host.engine,
                conversation_id,
                message_id,
                call_id,
            )
        except (RewindError, StoreError) as exc:
            self.problem = str(exc)
            return
        self.title = rewind_label(plan.label)
        self.notes = list(plan.notes)
        self.files = [
            {"path": f.path, "action": f.action, "diff": f.diff, "reason": f.reason}
            for f in plan.files
        ]

    @rx.event
    def close(self) -> None:
        self.showing = False
        self.problem = ""

    @rx.event
    async def restore(self, mode: str) -> None:
        """Restore the files (`files`), or the files and the conversation (`all`)."""
        host = await get_host()
        conversation_id = await self._owned(host)
        if conversation_id is None or not self.target_call:
            return
        chosen: RewindMode = "all" if mode == "all" else "files"
        try:
            record = await asyncio.to_thread(
                rewind,
                host.sessions.scanner,
                host.engine,
                conversation_id,
                self.target_message,
                self.target_call,
                mode=chosen,
            )
        except (RewindError, StoreError) as exc:
            self.problem = str(exc)
            return
        logger.info("Rewound conversation %s: %s", conversation_id, record.summary())
        self.showing = False
        await self._rerender(host)
