"""The chat page's state: the shell of the page, nothing per streamed chunk.

It holds the conversation list, the pickers, the messages as rows (who said it, which
turn, whether it failed) and which turn is live. What a turn shows (its cards, headers
and reply text) reaches the page apart, as the turn's stream of keyed patches
(docs/turns.md): the page's turn store renders the stored turns and the live one with
the same components. Handlers forward to the store and to the turn sessions
(`intent_ui.agent.session`); blocking store calls run in worker threads.

Every handler resolves the signed-in user first (`AuthState.current_user`) and reaches
conversations and agents only through the owner-filtered store, so an id sent from the
browser (guessed, or another user's) finds nothing."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import reflex as rx
from sqlalchemy import Engine

from intent_ui.agent.live import LiveTurn
from intent_ui.agent.live import answer as live_answer
from intent_ui.agent.live import decide as live_decide
from intent_ui.agent.pauses import Verdict, decision_from
from intent_ui.agent.session import (
    DEFAULT_AGENT_ID,
    SPEC_PREFIX,
    TurnAlreadyRunning,
    TurnKind,
    TurnRequest,
)
from intent_ui.core.checkpoints import RewindRecord
from intent_ui.core.choices import Choice
from intent_ui.core.display import DEFAULT_DENSITY, DENSITY
from intent_ui.core.failures import describe_failure
from intent_ui.core.locale import SUPPORTED_LANGUAGES, negotiate_language, translate
from intent_ui.core.theme import THEME
from intent_ui.store import agents as agent_store
from intent_ui.store import conversations as conv_store
from intent_ui.store import shares as share_store
from intent_ui.store import users as user_store
from intent_ui.store.db import StoreError
from intent_ui.ui.auth import SECURE_SIGN_IN_COOKIE, SIGN_IN_COOKIE, AuthState
from intent_ui.ui.endpoint_picker import EndpointPicker
from intent_ui.ui.host import Host, current_host, get_host
from intent_ui.ui.stream_tokens import mint_owner_token

logger = logging.getLogger(__name__)


@dataclass
class MessageRow:
    """One message of the open conversation as the page lists it. An assistant turn's
    content is in the page's turn store, under `id`."""

    id: str = ""
    role: str = "assistant"
    text: str = ""  # a user's message; a compaction's ledger lines, one per line
    status: str = "complete"  # an assistant turn's, "streaming" while it runs
    failed: bool = False  # an assistant turn that ended with a failure note
    # Which of its versions (its siblings: `store.conversations`) this is, counting from
    # 1, of how many, and the ids of the versions before and after it ("" at either end).
    version: int = 1
    versions: int = 1
    previous_version: str = ""
    next_version: str = ""


UI_KEYS = (
    "ui.send",
    "ui.stop",
    "ui.new_chat",
    "ui.placeholder",
    "ui.arguments",
    "ui.result",
    "ui.rename",
    "ui.delete",
    "ui.language",
    "ui.agents",
    "ui.goal",
    "ui.intents",
    "ui.density",
    "ui.density_full",
    "ui.density_intents",
    "ui.density_header",
    "ui.theme",
    "ui.theme_light",
    "ui.theme_dark",
    "ui.theme_system",
    "ui.menu",
    "ui.menu_close",
    "ui.timeline",
    "ui.retry",
    "ui.error_detail",
    "ui.copy_reply",
    "ui.copy_code",
    "ui.copied",
    "ui.copy_failed",
    "ui.search",
    "ui.search_none",
    "ui.shortcuts",
    "ui.shortcut_focus_input",
    "ui.shortcut_stop",
    "ui.shortcut_help",
    "ui.shortcuts_note",
    "ui.close",
    "ui.share",
    "ui.share_url",
    "ui.share_revoke",
    "ui.shared_notice",
    "ui.share_revoked",
    "ui.regenerate",
    "ui.continue",
    "ui.edit_message",
    "ui.edit_save",
    "ui.edit_cancel",
    "ui.edit_label",
    "ui.versions",
    "ui.version_previous",
    "ui.version_next",
    "ui.compacted",
    "ui.compacted_note",
    "ui.rewind",
    "ui.rewind_preview",
    "ui.rewind_files",
    "ui.rewind_all",
    "ui.rewind_none",
    "ui.trace",
)


STORED_CONVERSATION_KEY = "intent_ui_conversation"
"""The browser's localStorage key of the conversation a tab shows (`stored_conversation`)."""


class ChatState(EndpointPicker, AuthState):
    conversations: list[dict[str, str]] = []
    conversation_id: str = ""
    stored_conversation: str = rx.LocalStorage("", name=STORED_CONVERSATION_KEY)
    messages: list[MessageRow] = []
    running: bool = False
    # The turn streaming in this conversation ("" when none) and the token the page
    # reads the conversation's turns with (`ui.stream_tokens`; "" before one is open).
    live_id: str = ""
    # The turn the live region speaks for: the live one, and after it ended the one that
    # was, so what it said last stays readable until another conversation opens.
    announced_id: str = ""
    stream_token: str = ""
    # The open conversation's live read-only link (`store.shares`; "" when it has none).
    share_id: str = ""
    error: str = ""
    agents: list[dict[str, str]] = []
    agent_id: str = "default"
    lang_override: str = rx.LocalStorage("", name="intent_ui_lang")
    browser_lang: str = "en"
    renaming: str = ""
    _viewer: str = ""  # who opened `conversation_id` (its owner, checked when it was set)
    density: str = DEFAULT_DENSITY  # the signed-in user's, loaded with the page
    # The signed-in user's colour theme, loaded with the page; "" until then, so the
    # browser keeps the mode it remembers instead of flashing another.
    theme: str = ""
    # What the conversation list is filtered by ("": every conversation).
    conversation_query: str = ""
    # The user message being edited in place ("": none).
    editing: str = ""
    # Whether this state asked the browser which conversation it remembers (`load_page`).
    _asked_browser: bool = False

    @rx.var
    def lang(self) -> str:
        return self.lang_override or self.browser_lang or "en"

    @rx.var
    def t(self) -> dict[str, str]:
        return {key: translate(key, self.lang) for key in UI_KEYS}

    @rx.var
    def languages(self) -> list[str]:
        return list(SUPPORTED_LANGUAGES)

    # --- page lifecycle -------------------------------------------------------------------

    @rx.event
    async def load_page(self) -> Any:
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            self._forget_everything()
            if self._may_have_lost_sign_in(host):
                # The state may be one the tab lost (see below), and with it the sign-in
                # cookie the browser still holds: the page is asked before the sign-in.
                self._asked_browser = True
                return rx.call_script(_HAS_SIGN_IN_COOKIE, callback=ChatState.recover_sign_in)
            return await self.sign_in_redirect(host)
        await asyncio.to_thread(self._load_pickers, host, user)
        await self._refresh_conversations(host, user)
        events: list[Any] = [
            rx.call_script("navigator.language || ''", callback=ChatState.set_browser_lang),
            # Running times are stamped by the server's clock and counted by the
            # browser's: tell the browser how far apart they are.
            rx.call_script(f"window.iuClockOffset = {round(time.time() * 1000)} - Date.now()"),
        ]
        wanted = self.conversation_id or self.stored_conversation
        if not wanted and not self._asked_browser:
            # A state that knows no conversation may be one the tab lost (a Redis that
            # restarted empty): Reflex runs this load again before the tab's next event,
            # but without what the browser stores, so the page is asked (once per state).
            self._asked_browser = True
            events.append(
                rx.call_script(
                    f"window.localStorage.getItem({STORED_CONVERSATION_KEY!r}) || ''",
                    callback=ChatState.open_remembered,
                )
            )
        # A reload finds the tab's state as it was: Stop shows only while a turn runs.
        self.running = bool(wanted) and await self._open(host, user, wanted)
        if self.running:
            events.append(_live_view().follow)
        return events

    def _may_have_lost_sign_in(self, host: Host) -> bool:
        auth = host.config.auth
        no_cookie = not (self.sign_in_cookie or self.secure_sign_in_cookie)
        return (
            auth is not None and auth.mode == "password" and no_cookie and not self._asked_browser
        )

    @rx.event
    async def recover_sign_in(self, has_cookie: bool) -> Any:
        """The browser's answer to `load_page`: a tab that holds a sign-in cookie its state
        lost loads again (with it); any other goes to the sign-in."""
        if has_cookie:
            return rx.call_script("window.location.reload()")
        return await self.sign_in_redirect(await get_host())

    @rx.event
    async def open_remembered(self, conversation_id: str) -> Any:
        """Show the conversation the browser remembers for this tab, when the tab shows
        none (its state was lost, see `load_page`); "" or a conversation the user does not
        own opens nothing."""
        if not conversation_id or self.conversation_id:
            return None
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return None
        self.running = await self._open(host, user, conversation_id)
        return _live_view().follow if self.running else None

    def _forget_everything(self) -> None:
        """Show nothing of anyone's (a browser that is not, or no longer, signed in)."""
        self.conversations = []
        self._viewer = ""
        self.conversation_id = ""
        self.messages = []
        self.live_id = ""
        self.announced_id = ""
        self.stream_token = ""
        self.share_id = ""
        self.agents = []
        self.renaming = ""
        self.theme = ""
        self.conversation_query = ""
        self.editing = ""

    @rx.event
    def set_browser_lang(self, value: str) -> None:
        self.browser_lang = negotiate_language(value or "")

    @rx.event
    async def set_lang(self, value: str) -> None:
        # The page's turn store reads every turn again in the new language.
        self.lang_override = value if value in SUPPORTED_LANGUAGES else ""

    def _load_pickers(self, host: Host, user: str) -> None:
        endpoints = host.config.endpoints
        self.endpoints = [e.name for e in endpoints]
        if self.endpoint not in self.endpoints:
            self.endpoint = self.endpoints[0] if self.endpoints else ""
        self._sync_models(host)
        self.agents = [
            {"id": DEFAULT_AGENT_ID, "name": "Default agent"},
            *(
                {"id": f"{SPEC_PREFIX}{spec.name}", "name": f"{spec.name} (model spec)"}
                for spec in host.config.model_specs
            ),
            *(
                {"id": str(a.id), "name": a.name}
                for a in agent_store.list_agents(host.engine, owner=user)
            ),
        ]
        if self.agent_id not in {a["id"] for a in self.agents}:
            self.agent_id = DEFAULT_AGENT_ID
        self.density = user_store.user_density(host.engine, user)
        self.theme = user_store.user_theme(host.engine, user)

    @rx.event
    async def set_density(self, value: str) -> None:
        """Show the chat at another density and remember it for this user. Only the
        rendering changes: every view model already carries what each density shows."""
        await self._choose("density", DENSITY, value, user_store.set_density)

    @rx.event
    async def set_theme(self, value: str) -> None:
        """Show every page in another colour theme and remember it for this user (the
        page applies `theme` as it changes: `pages/chat.py`, `theme_applier`)."""
        await self._choose("theme", THEME, value, user_store.set_theme)

    async def _choose(
        self,
        var: str,
        choice: Choice[Any],
        value: str,
        remember: Callable[[Engine, str, str], bool],
    ) -> None:
        if value not in choice.values:
            return  # only what the picker offers
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return
        setattr(self, var, value)
        await asyncio.to_thread(remember, host.engine, user, value)

    @rx.event
    async def set_agent(self, value: str) -> None:
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return
        await asyncio.to_thread(self._load_pickers, host, user)  # what this user may use now
        if value in {a["id"] for a in self.agents}:
            self.agent_id = value

    # --- conversations --------------------------------------------------------------------

    async def _refresh_conversations(self, host: Host, user: str) -> None:
        if query := self.conversation_query.strip():
            found = await asyncio.to_thread(
                conv_store.search_conversations, host.engine, query, owner=user
            )
        else:
            found = await asyncio.to_thread(conv_store.list_conversations, host.engine, owner=user)
        self.conversations = [{"id": str(c.id), "title": c.title or "New chat"} for c in found]

    @rx.event
    async def search_chats(self, value: str) -> None:
        """List only this user's conversations whose title or messages contain `value`
        (the page sends it as the user pauses typing)."""
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return
        # Kept as typed (the box shows it); the search ignores surrounding spaces.
        self.conversation_query = value[: conv_store.SEARCH_MAX_CHARS]
        await self._refresh_conversations(host, user)

    async def _owned_session(self, host: Host) -> LiveTurn | None:
        """The running turn of this tab's conversation (on any worker), if the signed-in
        user owns it."""
        user = await self.current_user(host)
        if user is None or not self.conversation_id:
            return None
        owned = await asyncio.to_thread(
            conv_store.get_conversation, host.engine, self.conversation_id, owner=user
        )
        return None if owned is None else await host.live.running(self.conversation_id)

    async def _open(self, host: Host, user: str, conversation_id: str) -> bool:
        """Show the conversation; True when a turn is running in it (the caller follows it)."""
        found = await asyncio.to_thread(
            conv_store.get_conversation, host.engine, conversation_id, owner=user
        )
        if found is None:
            self.conversation_id = ""
            self.stored_conversation = ""
            self.messages = []
            self.share_id = ""
            return False
        if self.conversation_id != str(found.id):
            self.editing = ""
        self.conversation_id = str(found.id)
        self.stored_conversation = self.conversation_id
        self._viewer = user
        shared = await asyncio.to_thread(
            share_store.live_share, host.engine, self.conversation_id, owner=user
        )
        self.share_id = shared or ""
        if found.endpoint in self.endpoints:
            self.endpoint = found.endpoint
            self._sync_models(host)
            if found.model in self.models:
                self.model = found.model
        await self._rerender(host, user)
        return await host.live.running(self.conversation_id) is not None

    async def _rerender(self, host: Host | None = None, user: str | None = None) -> None:
        """List the conversation's messages again (a chat opened, a turn started or
        ended) and renew the token its turns are read with. `user` is for callers
        without a request (a background task); handlers resolve it here."""
        host = host or current_host()
        if host is None or not self.conversation_id:
            return
        user = user or await self.current_user(host)
        owned = user is not None and (
            await asyncio.to_thread(
                conv_store.get_conversation, host.engine, self.conversation_id, owner=user
            )
            is not None
        )
        if not owned or user is None:
            self._forget_everything()
            return
        session = await host.live.running(self.conversation_id)
        live_id = session.message_id if session is not None else ""
        conversation_id = self.conversation_id
        messages = await asyncio.to_thread(message_rows, host, conversation_id, live_id)
        # A reload hydrates the tab with the rows it showed: sending them again is noise.
        if messages != self.get_value("messages"):
            self.messages = messages
        if live_id != self.live_id:
            self.live_id = live_id
        if live_id:
            self.announced_id = live_id
        self.stream_token = await _owner_token(host, user, conversation_id)
        await self._list_rewinds(host, conversation_id)

    async def _list_rewinds(self, host: Host, conversation_id: str) -> None:
        """Which of the conversation's calls offer a rewind (`ui/rewind_state.py`)."""
        from intent_ui.ui.rewind_state import RewindState

        try:
            rewinds = await self.get_state(RewindState)
        except LookupError:
            # No event is being handled (a handler called on its own): no state tree to
            # reach; the next event lists them.
            return
        await rewinds.refresh(host, conversation_id)

    @rx.event
    async def renew_stream_token(self) -> None:
        """The page's token expired (it reconnects to a live turn after a long while)."""
        host = await get_host()
        user = await self.current_user(host)
        if user is None or not self.conversation_id:
            return
        found = await asyncio.to_thread(
            conv_store.get_conversation, host.engine, self.conversation_id, owner=user
        )
        if found is not None:
            self.stream_token = await _owner_token(host, user, self.conversation_id)

    @rx.event
    async def new_chat(self) -> Any:
        self.conversation_id = ""
        self.stored_conversation = ""
        self.messages = []
        self.editing = ""
        self.error = ""
        self.running = False
        self.live_id = ""
        self.announced_id = ""
        self.stream_token = ""
        self.share_id = ""
        # Here, not chained: a chained `leave` waits its turn in the tab's queue, and a
        # send right after this would start following before it undid that.
        _live_view().stop_watching(self.router.session.client_token)

    @rx.event
    async def select_chat(self, conversation_id: str) -> Any:
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return None
        self.error = ""
        self.running = False
        self.live_id = ""
        self.announced_id = ""
        # Left here, not chained: a chained background `follow` starts at once, before a
        # chained `leave` (which waits its turn in the tab's queue) would undo it.
        _live_view().stop_watching(self.router.session.client_token)
        running = await self._open(host, user, conversation_id)
        return _live_view().follow if running else None

    @rx.event
    async def start_rename(self, conversation_id: str) -> None:
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return
        found = await asyncio.to_thread(
            conv_store.get_conversation, host.engine, conversation_id, owner=user
        )
        if found is not None:
            self.renaming = conversation_id

    @rx.event
    async def rename_chat(self, form: dict[str, Any]) -> None:
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return
        title = str(form.get("title", "")).strip()
        if self.renaming and title:
            await asyncio.to_thread(
                conv_store.rename_conversation,
                host.engine,
                self.renaming,
                title[:200],
                owner=user,
            )
        self.renaming = ""
        await self._refresh_conversations(host, user)

    @rx.event
    async def delete_chat(self, conversation_id: str) -> Any:
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return None
        found = await asyncio.to_thread(
            conv_store.get_conversation, host.engine, conversation_id, owner=user
        )
        if found is None:
            return None
        session = await host.live.running(conversation_id)
        if session is not None:
            session.stop()
            await session.wait()
        await asyncio.to_thread(
            conv_store.delete_conversation, host.engine, conversation_id, owner=user
        )
        await self._refresh_conversations(host, user)
        if conversation_id == self.conversation_id:
            self.conversation_id = ""
            self.stored_conversation = ""
            self.messages = []
            self.running = False
            self.live_id = ""
            self.announced_id = ""
            self.stream_token = ""
            self.share_id = ""
            return _live_view().leave
        return None

    # --- sharing --------------------------------------------------------------------------

    @rx.event
    async def create_share(self) -> None:
        """Give the open conversation a read-only link (`/share/{id}`), or show the one it
        has: anyone holding it follows the conversation without signing in."""
        host = await get_host()
        user = await self.current_user(host)
        if user is None or not self.conversation_id:
            return
        try:
            shared = await asyncio.to_thread(
                share_store.create_share, host.engine, self.conversation_id, owner=user
            )
        except StoreError as exc:
            self.error = str(exc)
            return
        self.share_id = shared or ""

    @rx.event
    async def revoke_share(self) -> None:
        """End the open conversation's link: its viewers stop receiving the conversation
        (their stream re-checks the link every second), and the URL opens nothing again."""
        host = await get_host()
        user = await self.current_user(host)
        if user is None or not self.conversation_id:
            return
        try:
            await asyncio.to_thread(
                share_store.revoke_share, host.engine, self.conversation_id, owner=user
            )
        except StoreError as exc:
            self.error = str(exc)
            return
        self.share_id = ""

    # --- turns ----------------------------------------------------------------------------

    @rx.event
    async def send(self, form: dict[str, Any]) -> Any:
        text = str(form.get("message", "")).strip()
        if not text or self.running:
            return None
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return None
        if self.endpoint not in self.endpoints:
            # A state whose page load has not run (or was lost with its Redis) knows no
            # endpoint yet: a turn starts on the configured one, never on "".
            await asyncio.to_thread(self._load_pickers, host, user)
        if self.conversation_id and not await asyncio.to_thread(
            conv_store.get_conversation, host.engine, self.conversation_id, owner=user
        ):
            self._forget_everything()
            self.error = "That conversation is not available; start a new chat."
            return None
        if not self.conversation_id:
            agent = None
            if self.agent_id != DEFAULT_AGENT_ID and not self.agent_id.startswith(SPEC_PREFIX):
                agent = await asyncio.to_thread(
                    agent_store.get_agent, host.engine, self.agent_id, owner=user
                )
            created = await asyncio.to_thread(
                conv_store.create_conversation,
                host.engine,
                owner=user,
                title=conv_store.title_from(text),
                endpoint=self.endpoint,
                model=self.model,
                agent_id=str(agent.id) if agent is not None else None,
            )
            self.conversation_id = str(created.id)
            self.stored_conversation = self.conversation_id
            self._viewer = user
            await self._refresh_conversations(host, user)
        return await self._begin(host, user, self._turn_request(user, text))

    def _turn_request(
        self, user: str, text: str, kind: TurnKind = "send", target: str = ""
    ) -> TurnRequest:
        """A turn in the open conversation with the tab's current picks."""
        return TurnRequest(
            conversation_id=self.conversation_id,
            text=text,
            endpoint=self.endpoint,
            model=self.model,
            agent_id=self.agent_id,
            user_id=user,
            kind=kind,
            target=target,
        )

    async def _begin(self, host: Host, user: str, request: TurnRequest) -> Any:
        """Start the turn and follow it here; a refusal is shown instead."""
        try:
            await host.sessions.start(request)
        except (TurnAlreadyRunning, StoreError) as exc:
            self.error = str(exc)
            return None
        self.error = ""
        self.running = True
        self.editing = ""
        await self._rerender(host, user)
        return _live_view().follow

    @rx.event
    async def stop(self) -> None:
        host = current_host()
        session = None if host is None else await self._owned_session(host)
        if session is not None:
            session.stop()

    # --- approvals and questions (agent/pauses.py) ----------------------------------------

    @rx.event
    async def decide_approval(
        self, message_id: str, call_id: str, decision: str, reason: str = "", arguments: str = ""
    ) -> None:
        """The owner's decision on a call of the running turn that waits for approval:
        `decision` is `once`, `conversation`, `agent` or `deny` (with `reason`, which the
        model reads); `arguments`, unless empty, the rewritten arguments to run with. The
        first decision from any of the owner's tabs wins; a later one changes nothing."""
        turn = await self._waiting_turn(message_id)
        if turn is not None:
            choice = decision_from(str(decision), str(reason or ""), str(arguments or ""))
            self._said(await live_decide(turn, str(call_id), choice))

    @rx.event
    async def answer_question(self, message_id: str, call_id: str, answer: str) -> None:
        """The owner's answer to the running turn's question; the first answer wins."""
        turn = await self._waiting_turn(message_id)
        if turn is not None:
            self._said(await live_answer(turn, str(call_id), str(answer or "")))

    async def _waiting_turn(self, message_id: str) -> LiveTurn | None:
        """The signed-in owner's running turn `message_id`, on whichever worker runs it."""
        host = current_host()
        session = None if host is None else await self._owned_session(host)
        return session if session is not None and session.message_id == message_id else None

    def _said(self, verdict: Verdict) -> None:
        # A call another tab decided first needs no note: its card shows the decision.
        self.error = "" if verdict.ok or verdict.stale else verdict.problem

    @rx.var
    def retry_id(self) -> str:
        """The failed turn that offers Retry: the conversation's last message, when it
        is a turn that failed and nothing runs ("" otherwise)."""
        if self.running or not self.messages:
            return ""
        last = self.messages[-1]
        return last.id if last.role == "assistant" and last.failed else ""

    @rx.event
    async def retry(self) -> Any:
        """Ask the failed turn's question again, as a new turn (the failed one stays in
        the conversation). `send` checks the user and the conversation as ever."""
        if not self.retry_id:
            return None
        asked = next((m.text for m in reversed(self.messages) if m.role == "user"), "")
        return ChatState.send({"message": asked}) if asked else None

    # --- versions: regenerate, edit and resend, continue, flip between them -----------------

    @rx.var
    def regenerate_id(self) -> str:
        """The turn that offers Regenerate: the conversation's last message, when it is a
        turn that ended without failing (a failed one offers Retry) and nothing runs."""
        if self.running or not self.messages:
            return ""
        last = self.messages[-1]
        ended = last.role == "assistant" and last.status != "streaming" and not last.failed
        return last.id if ended else ""

    @rx.var
    def continue_id(self) -> str:
        """The turn that offers Continue: the conversation's last message, when it is a
        turn the user stopped and nothing runs ("" otherwise)."""
        if self.running or not self.messages:
            return ""
        last = self.messages[-1]
        return last.id if last.role == "assistant" and last.status == "cancelled" else ""

    @rx.event
    async def regenerate(self, message_id: str) -> Any:
        """Answer the last turn's question again: a new version of the reply beside the
        old one, which stays a flip away."""
        if not message_id or message_id != self.regenerate_id:
            return None
        return await self._versioned_turn("regenerate", message_id)

    @rx.event
    async def continue_reply(self, message_id: str) -> Any:
        """Go on with the stopped turn: a new turn after it, reading it (its text and its
        calls) and `CONTINUE_PROMPT` as the user's words, which the chat does not show."""
        if not message_id or message_id != self.continue_id:
            return None
        return await self._versioned_turn("continue", message_id)

    @rx.event
    def start_edit(self, message_id: str) -> None:
        """Edit a sent message in place (not while a turn runs)."""
        if not self.running and any(m.id == message_id and m.role == "user" for m in self.messages):
            self.editing = message_id

    @rx.event
    def cancel_edit(self) -> None:
        self.editing = ""

    @rx.event
    async def save_edit(self, form: dict[str, Any]) -> Any:
        """Send the edited message as a new version of the one edited, with a new turn
        answering it; the old message and what followed it stay a flip away."""
        text = str(form.get("message", "")).strip()
        if not text or not self.editing:
            return None
        return await self._versioned_turn("edit", self.editing, text)

    async def _versioned_turn(self, kind: TurnKind, target: str, text: str = "") -> Any:
        """Start a turn that `kind` places at `target`, a message of the open conversation
        (`TurnRequest`: the session checks it is there and of the role the kind needs)."""
        if self.running:
            return None
        host = await get_host()
        user = await self.current_user(host)
        if user is None or not await self._owns_open_conversation(host, user):
            return None
        return await self._begin(host, user, self._turn_request(user, text, kind, target))

    async def _owns_open_conversation(self, host: Host, user: str) -> bool:
        """Whether `user` owns the open conversation; when not, the tab forgets it."""
        if not self.conversation_id:
            return False
        found = await asyncio.to_thread(
            conv_store.get_conversation, host.engine, self.conversation_id, owner=user
        )
        if found is None:
            self._forget_everything()
        return found is not None

    @rx.event
    async def show_version(self, message_id: str) -> None:
        """Show another version of a message (one of its siblings) and the branch below
        it, which is what the model reads next. Not while a turn runs, in any tab: its
        reply would leave the page."""
        if self.running or not message_id:
            return
        host = await get_host()
        user = await self.current_user(host)
        if user is None or not await self._owns_open_conversation(host, user):
            return
        if await host.live.running(self.conversation_id) is not None:
            return
        shown = await asyncio.to_thread(
            conv_store.choose_branch, host.engine, self.conversation_id, message_id
        )
        if shown:
            self.editing = ""
            await self._rerender(host, user)
            await self._refresh_conversations(host, user)  # a first message names the chat


def message_rows(host: Host, conversation_id: str, live_id: str) -> list[MessageRow]:
    """The conversation's messages as a page lists them, `live_id` being its running turn
    ("" when none). Blocking (store reads, replays of failed turns): run it in a thread.
    Only for a conversation the caller may read (its owner's, or a live share's)."""
    out: list[MessageRow] = []
    for shown in conv_store.thread(host.engine, conversation_id):
        message, message_id = shown.message, str(shown.message.id)
        versions = _versions(message_id, shown.siblings)
        if message.role == "user":
            out.append(MessageRow(id=message_id, role="user", text=message.content, **versions))
            continue
        if message.role == conv_store.COMPACTION_ROLE:
            # A divider; its text is the ledger lines the model reads instead.
            out.append(MessageRow(id=message_id, role="compaction", text=message.content))
            continue
        if message.role == conv_store.REWIND_ROLE:
            # What was put back, and to before which call.
            summary = RewindRecord.from_json(message.content).summary()
            out.append(MessageRow(id=message_id, role="rewind", text=summary))
            continue
        if message_id == live_id:
            out.append(MessageRow(id=message_id, status="streaming", **versions))
            continue
        # A turn that ended moments ago may not have its summary written yet.
        ended = host.sessions.get(message_id)
        recorded = message.error if ended is None else ended.view.error
        failure = describe_failure(host.turn(message_id), error=recorded)
        out.append(
            MessageRow(
                id=message_id,
                status=message.status if ended is None else ended.status,
                failed=failure is not None,
                **versions,
            )
        )
    return out


async def _owner_token(host: Host, user_id: str, conversation_id: str) -> str:
    """The page's token for the conversation, bound to the user's sign-in epoch now."""
    epoch = await asyncio.to_thread(user_store.session_epoch, host.engine, user_id)
    return mint_owner_token(host.config.auth, user_id, conversation_id, epoch)


def _versions(message_id: str, siblings: tuple[str, ...]) -> dict[str, Any]:
    """A row's place among its versions (`MessageRow.version` and the fields after it)."""
    at = siblings.index(message_id) if message_id in siblings else 0
    return {
        "version": at + 1,
        "versions": max(len(siblings), 1),
        "previous_version": siblings[at - 1] if at > 0 else "",
        "next_version": siblings[at + 1] if at + 1 < len(siblings) else "",
    }


_HAS_SIGN_IN_COOKIE = (
    f"/(^|; )({re.escape(SIGN_IN_COOKIE)}|{re.escape(SECURE_SIGN_IN_COOKIE)})=[^;]/"
    ".test(document.cookie)"
)
"""Whether the browser holds a sign-in cookie with a value (JavaScript, run in the page)."""


def _live_view() -> Any:
    """The live view's state class (`ui.live_view`), which is built on this one."""
    from intent_ui.ui.live_view import LiveView

    return LiveView
