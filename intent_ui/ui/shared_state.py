"""The shared page's state (`/share/{id}`): a conversation shown through its read-only
link, to anyone holding the link, signed in or not.

Not built on `AuthState`: the link is the permission, so nothing here asks who the
browser is. Each event that shows anything (opening the page, a new token, the end of a
turn) asks the store again whether the link still shares its conversation
(`store.shares.find_share`); once it does not, the tab forgets all it held of the
conversation and says the link was revoked. Like the chat, the state holds
the shell only (the listed messages, which turn is live, the token the page reads the
turns with); the turns themselves reach the page's turn store through the share token,
whose stream ends within `SHARE_RECHECK_S` of a revocation (`ui.turn_routes`).

While a turn runs, `follow` waits for its end, as the chat's live view does
(`ui.live_view`), and lists the messages again then; it also checks the link every
`SHARE_RECHECK_S`, so a revoked link empties the page about as soon as its stream ends.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import reflex as rx

from intent_ui.agent.live import LiveTurn
from intent_ui.core.locale import negotiate_language, translate
from intent_ui.store.db import StoreError
from intent_ui.store.shares import find_share
from intent_ui.ui.chat_state import UI_KEYS, MessageRow, message_rows
from intent_ui.ui.host import Host, get_host
from intent_ui.ui.stream_tokens import mint_share_token
from intent_ui.ui.turn_routes import SHARE_RECHECK_S

__all__ = ["SHARE_ROUTE", "SharedState"]

logger = logging.getLogger(__name__)

SHARE_ROUTE = "/share/[share_id]"
"""The shared page's route; its `share_id` is the link's id (`store.shares`)."""


class SharedState(rx.State):
    """One tab's view of a shared conversation."""

    # "loading" until the link was looked up, then "shared" or "revoked" (also: unknown).
    status: str = "loading"
    messages: list[MessageRow] = []
    live_id: str = ""
    stream_token: str = ""
    browser_lang: str = "en"
    link: str = ""  # the link this tab shows (its id), checked when it was set
    _conversation: str = ""  # the conversation it shared then

    @rx.var
    def lang(self) -> str:
        return self.browser_lang or "en"

    @rx.var
    def t(self) -> dict[str, str]:
        return {key: translate(key, self.lang) for key in UI_KEYS}

    @rx.event
    def set_browser_lang(self, value: str) -> None:
        self.browser_lang = negotiate_language(value or "")

    @rx.event
    async def load_page(self) -> Any:
        host = await get_host()
        # The route's argument, which Reflex installs as a var of the root state when the
        # page is added (hence not declared here).
        share_id = str(getattr(self, "share_id", "") or "")
        events: list[Any] = [
            rx.call_script("navigator.language || ''", callback=SharedState.set_browser_lang),
            # Running times are stamped by the server's clock and counted by the
            # browser's, as on the chat page.
            rx.call_script(f"window.iuClockOffset = {round(time.time() * 1000)} - Date.now()"),
        ]
        if await self._show(host, share_id) and self.live_id:
            events.append(SharedState.follow)
        return events

    @rx.event
    async def renew_stream_token(self) -> None:
        """The page's token was refused (expired, or the link was revoked)."""
        host = await get_host()
        if await self._still_shared(host):
            self.stream_token = mint_share_token(host.config.auth, self.link)
        else:
            self._forget()

    async def _show(self, host: Host, share_id: str) -> bool:
        """List what the link shares; False (and the tab says so) when it shares nothing."""
        try:
            conversation_id = await asyncio.to_thread(find_share, host.engine, share_id)
        except StoreError:
            logger.warning("Opening a shared conversation failed", exc_info=True)
            conversation_id = None
        if conversation_id is None:
            self._forget()
            return False
        session = await host.live.running(conversation_id)
        live_id = session.message_id if session is not None else ""
        messages = await asyncio.to_thread(message_rows, host, conversation_id, live_id)
        self.link, self._conversation = share_id, conversation_id
        if messages != self.get_value("messages"):
            self.messages = messages
        self.live_id = live_id
        self.stream_token = mint_share_token(host.config.auth, share_id)
        self.status = "shared"
        return True

    async def _still_shared(self, host: Host) -> bool:
        if not self.link:
            return False
        found = await asyncio.to_thread(find_share, host.engine, self.link)
        return found is not None and found == self._conversation

    def _forget(self) -> None:
        """Nothing of the conversation stays in the tab."""
        self.status = "revoked"
        self.messages = []
        self.live_id = ""
        self.stream_token = ""
        self.link = ""
        self._conversation = ""

    @rx.event(background=True)
    async def follow(self) -> None:
        """Until the shared conversation's running turn ends and its log is written, then
        list the messages again; or until the link no longer shares it, then forget it."""
        host = await get_host()
        async with self:
            token = self.router.session.client_token
            share_id, conversation_id = self.link, self._conversation
            # An ended turn is waited for too while its log is written (`latest`), so the
            # list does not show it as still running.
            session = await host.live.latest(conversation_id) if conversation_id else None
            if session is None or _FOLLOWING.get(token) is session:
                return  # nothing runs, or a reload's second trigger: the first one waits
            _FOLLOWING[token] = session
        ended = await _until_ended_or_unshared(host, session, share_id, conversation_id)
        async with self:
            if _FOLLOWING.get(token) is not session:
                return
            del _FOLLOWING[token]
            if self.link != share_id:
                return  # the tab opened another link meanwhile
            if ended:
                await self._show(host, share_id)
            else:
                self._forget()


async def _until_ended_or_unshared(
    host: Host, session: LiveTurn, share_id: str, conversation_id: str
) -> bool:
    """True once the turn ended and its log was written; False as soon as the link no
    longer shares the conversation (checked every `SHARE_RECHECK_S`)."""
    while True:
        try:
            await asyncio.wait_for(session.wait(), SHARE_RECHECK_S)
            return True
        except TimeoutError:
            pass
        try:
            shared = await asyncio.to_thread(find_share, host.engine, share_id)
        except StoreError:  # no answer is not a revocation; the stream thinks so too
            logger.warning("Checking share %s failed", share_id, exc_info=True)
            continue
        if shared != conversation_id:
            return False


_FOLLOWING: dict[str, LiveTurn] = {}
"""Per tab (client token): the running turn its shared page waits for. Kept in the
process, beside the sessions: it describes a task of this process."""
