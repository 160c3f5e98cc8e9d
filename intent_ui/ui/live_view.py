"""Which turn of the open conversation is live, for as long as it runs.

What the live turn shows travels as its stream of keyed patches, straight from the
session to the page's turn store (docs/turns.md); this state carries nothing per chunk.
A tab showing a conversation with a running turn waits here for the turn's end, then
lists the conversation's messages again, once: the Stop button turns back into Send,
the finished turn gets its actions, the conversation list its new title. Any tab on
the conversation (a reload, a second tab, a reopened chat) does the same, and Stop
works from any of them (`ChatState.stop`).
"""

from __future__ import annotations

import reflex as rx

from intent_ui.agent.live import LiveTurn
from intent_ui.ui.chat_state import ChatState
from intent_ui.ui.host import get_host

__all__ = ["LiveView"]


class LiveView(ChatState):
    """Waits for the end of the conversation's running turn, per tab."""

    @rx.event
    async def leave(self) -> None:
        """Stop waiting for a live turn here (the turn itself keeps running)."""
        self.stop_watching(self.router.session.client_token)

    @staticmethod
    def stop_watching(token: str) -> None:
        _WATCHING.pop(token, None)

    def _stop_tab_work(self) -> None:
        self.stop_watching(self.router.session.client_token)

    @rx.event(background=True)
    async def follow(self) -> None:
        """Until the running turn of this tab's conversation ends and its log is
        written, then show it as stored."""
        host = await get_host()
        async with self:
            chat = await self.get_state(ChatState)
            # Only for whoever opened the conversation, if they are still signed in here.
            user = await chat.current_user(host)
            viewing = user is not None and user == chat._viewer
            # A turn that already ended is waited for too while its log is written:
            # listed before, it would show as running, and the tab would keep Stop.
            session = (
                await host.live.latest(chat.conversation_id)
                if viewing and chat.conversation_id
                else None
            )
            token = self.router.session.client_token
            if session is None:
                chat.running = False
                if viewing:
                    await chat._rerender(host, user)
                return
            if _WATCHING.get(token) is session:
                return  # a second trigger (a reload): the first one waits already
            _WATCHING[token] = session
            chat.running = True
        await session.wait()
        async with self:
            if _WATCHING.get(token) is not session:
                return  # the tab moved on
            del _WATCHING[token]
            chat = await self.get_state(ChatState)
            viewer = chat._viewer
            if await chat.current_user(host) != viewer:
                # The tab's sign-in ended or changed hands during the turn.
                await chat._forget_tab()
                return
            chat.running = False
            chat.error = ""  # a failed turn says so in its own message (`retry_id`)
            if viewer:
                if chat.conversation_id == session.conversation_id:
                    await chat._rerender(host, viewer)
                await chat._refresh_conversations(host, viewer)


_WATCHING: dict[str, LiveTurn] = {}
"""Per tab (client token): the running turn it waits for. Kept in the process, beside the
sessions, rather than in the tab's state: it describes a task of this process."""
