"""The chat page's state: thin. Handlers forward to the store and to the turn sessions
(`intent_ui.agent.session`); a tab showing a running turn follows its session, reading the
session's one `TurnView` and pushing through a leading-edge coalescer, so the browser gets
at most one delta per frame with every changed label. Any tab on the conversation (a
reload, a second tab, a reopened chat) follows the same session, and Stop works from any.
Blocking store calls run in worker threads.

Every handler resolves the signed-in user first (`AuthState.current_user`) and reaches
conversations and agents only through the owner-filtered store, so an id sent from the
browser (guessed, or another user's) finds nothing."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import reflex as rx
from sqlalchemy import Engine

from intent_ui.agent.session import (
    DEFAULT_AGENT_ID,
    SPEC_PREFIX,
    TurnAlreadyRunning,
    TurnRequest,
    TurnSession,
)
from intent_ui.core.choices import Choice
from intent_ui.core.display import DEFAULT_DENSITY, DENSITY
from intent_ui.core.events import CallSettled, CallStarted, TurnDone
from intent_ui.core.failures import describe_failure
from intent_ui.core.locale import SUPPORTED_LANGUAGES, negotiate_language, translate
from intent_ui.core.sanitize import sanitize_label
from intent_ui.core.theme import THEME
from intent_ui.store import agents as agent_store
from intent_ui.store import conversations as conv_store
from intent_ui.store import users as user_store
from intent_ui.store.db import StoreError
from intent_ui.ui.auth import AuthState
from intent_ui.ui.coalescer import LeadingEdgeCoalescer
from intent_ui.ui.endpoint_picker import EndpointPicker
from intent_ui.ui.host import Host, current_host, get_host
from intent_ui.ui.live_titles import TitleFeed
from intent_ui.ui.viewmodels import (
    CardCache,
    CardVM,
    HeaderHold,
    MessageVM,
    PartVM,
    build_turn_parts,
    compact_key,
    goal_line,
    has_timeline,
    settled_prefix,
    slotted_parts,
)

logger = logging.getLogger(__name__)

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
)


class ChatState(EndpointPicker, AuthState):
    conversations: list[dict[str, str]] = []
    conversation_id: str = ""
    stored_conversation: str = rx.LocalStorage("", name="intent_ui_conversation")
    messages: list[MessageVM] = []
    running: bool = False
    error: str = ""
    agents: list[dict[str, str]] = []
    agent_id: str = "default"
    lang_override: str = rx.LocalStorage("", name="intent_ui_lang")
    browser_lang: str = "en"
    renaming: str = ""
    expanded: list[str] = []
    group_open: dict[str, bool] = {}
    _viewer: str = ""  # who opened `conversation_id` (its owner, checked when it was set)
    density: str = DEFAULT_DENSITY  # the signed-in user's, loaded with the page
    # The signed-in user's colour theme, loaded with the page; "" until then, so the
    # browser keeps the mode it remembers instead of flashing another.
    theme: str = ""
    # What the conversation list is filtered by ("": every conversation).
    conversation_query: str = ""

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
        if wanted and await self._open(host, user, wanted):
            events.append(LiveState.follow)
        return events

    def _forget_everything(self) -> None:
        """Show nothing of anyone's (a browser that is not, or no longer, signed in)."""
        self.conversations = []
        self._viewer = ""
        self.conversation_id = ""
        self.messages = []
        self.agents = []
        self.renaming = ""
        self.theme = ""
        self.conversation_query = ""

    @rx.event
    def set_browser_lang(self, value: str) -> None:
        self.browser_lang = negotiate_language(value or "")

    @rx.event
    async def set_lang(self, value: str) -> None:
        self.lang_override = value if value in SUPPORTED_LANGUAGES else ""
        await self._rerender()

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

    async def _owned_session(self, host: Host) -> TurnSession | None:
        """The running turn of this tab's conversation, if the signed-in user owns it."""
        user = await self.current_user(host)
        if user is None or not self.conversation_id:
            return None
        owned = await asyncio.to_thread(
            conv_store.get_conversation, host.engine, self.conversation_id, owner=user
        )
        return None if owned is None else host.sessions.running(self.conversation_id)

    async def _open(self, host: Host, user: str, conversation_id: str) -> bool:
        """Show the conversation; True when a turn is running in it (the caller follows it)."""
        found = await asyncio.to_thread(
            conv_store.get_conversation, host.engine, conversation_id, owner=user
        )
        if found is None:
            self.conversation_id = ""
            self.stored_conversation = ""
            self.messages = []
            return False
        self.conversation_id = str(found.id)
        self.stored_conversation = self.conversation_id
        self._viewer = user
        if found.endpoint in self.endpoints:
            self.endpoint = found.endpoint
            self._sync_models(host)
            if found.model in self.models:
                self.model = found.model
        await self._rerender(host, user)
        return host.sessions.running(self.conversation_id) is not None

    async def _rerender(self, host: Host | None = None, user: str | None = None) -> None:
        """Rebuild the stored messages (the language or an expansion changed, or a chat
        opened). A turn still running is left out: the live view shows it. `user` is for
        callers without a request (a background task); handlers resolve it here."""
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
        if not owned:
            self._forget_everything()
            return
        session = host.sessions.running(self.conversation_id)
        live_id = session.message_id if session is not None else ""
        lang, expanded, group_open = self.lang, set(self.expanded), dict(self.group_open)

        def build() -> list[MessageVM]:
            out: list[MessageVM] = []
            for message in conv_store.messages(host.engine, self.conversation_id):
                message_id = str(message.id)
                if message_id == live_id:
                    continue
                if message.role == "user":
                    out.append(MessageVM(id=message_id, role="user", text=message.content))
                    continue
                turn = host.turn(message_id)
                # A turn that ended moments ago may not have its summary written yet.
                ended = host.sessions.get(message_id)
                recorded = message.error if ended is None else ended.view.error
                failure = describe_failure(turn, lang, error=recorded)
                out.append(
                    MessageVM(
                        id=message_id,
                        role="assistant",
                        status=message.status if ended is None else ended.status,
                        failure=failure.message if failure is not None else "",
                        failure_hint=failure.hint if failure is not None else "",
                        error=failure.detail if failure is not None else "",
                        goal=goal_line(turn),
                        timeline=has_timeline(turn),
                        parts=build_turn_parts(
                            turn,
                            message_id=message_id,
                            lang=lang,
                            expanded=expanded,
                            group_open=group_open,
                        ),
                    )
                )
            return out

        messages = await asyncio.to_thread(build)
        # A reload hydrates the tab with the messages it showed; sending an identical
        # list again would make the browser parse and reconcile every card a second time.
        if messages != self.get_value("messages"):
            self.messages = messages

    @rx.event
    async def new_chat(self) -> Any:
        self.conversation_id = ""
        self.stored_conversation = ""
        self.messages = []
        self.error = ""
        self.running = False
        return LiveState.leave

    @rx.event
    async def select_chat(self, conversation_id: str) -> Any:
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return None
        self.error = ""
        self.running = False
        # Left here, not chained: a chained background `follow` starts at once, before a
        # chained `leave` (which waits its turn in the tab's queue) would undo it.
        await (await self.get_state(LiveState))._hide()
        running = await self._open(host, user, conversation_id)
        return LiveState.follow if running else None

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
        session = host.sessions.running(conversation_id)
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
            return LiveState.leave
        return None

    # --- cards and groups -----------------------------------------------------------------

    @rx.event
    async def toggle_card(self, call_id: str) -> None:
        if call_id in self.expanded:
            self.expanded = [c for c in self.expanded if c != call_id]
        else:
            self.expanded = [*self.expanded, call_id]
        await self._rerender_live_or_history()

    @rx.event
    async def open_card(self, call_id: str, group_key: str) -> None:
        """Open a call's card and its group (a timeline mark was chosen); never closes."""
        if call_id not in self.expanded:
            self.expanded = [*self.expanded, call_id]
        self.group_open = {**self.group_open, group_key: True, compact_key(group_key): True}
        await self._rerender_live_or_history()

    @rx.event
    async def toggle_group(self, key: str, currently_open: bool) -> None:
        if self.density == "intents":
            return  # groups stay open at this density
        if self.density == "header":
            key = compact_key(key)
        self.group_open = {**self.group_open, key: not currently_open}
        await self._rerender_live_or_history()

    async def _rerender_live_or_history(self) -> None:
        host = current_host()
        user = None if host is None else await self.current_user(host)
        if user is None:
            return
        wake = _WAKE.get(self.router.session.client_token)
        if wake is not None and user == self._viewer:
            wake()
        await self._rerender(host, user)

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
                title=text.splitlines()[0][:60],
                endpoint=self.endpoint,
                model=self.model,
                agent_id=str(agent.id) if agent is not None else None,
            )
            self.conversation_id = str(created.id)
            self.stored_conversation = self.conversation_id
            self._viewer = user
            await self._refresh_conversations(host, user)
        request = TurnRequest(
            conversation_id=self.conversation_id,
            text=text,
            endpoint=self.endpoint,
            model=self.model,
            agent_id=self.agent_id,
            user_id=user,
        )
        try:
            await host.sessions.start(request)
        except (TurnAlreadyRunning, StoreError) as exc:
            self.error = str(exc)
            return None
        self.error = ""
        self.running = True
        await self._rerender(host, user)
        return LiveState.follow

    @rx.event
    async def stop(self) -> None:
        host = current_host()
        session = None if host is None else await self._owned_session(host)
        if session is not None:
            session.stop()

    @rx.var
    def retry_id(self) -> str:
        """The failed turn that offers Retry: the conversation's last message, when it
        is a turn that failed and nothing runs ("" otherwise)."""
        if self.running or not self.messages:
            return ""
        last = self.messages[-1]
        return last.id if last.role == "assistant" and last.failure else ""

    @rx.event
    async def retry(self) -> Any:
        """Ask the failed turn's question again, as a new turn (the failed one stays in
        the conversation). `send` checks the user and the conversation as ever."""
        if not self.retry_id:
            return None
        asked = next((m.text for m in reversed(self.messages) if m.role == "user"), "")
        return ChatState.send({"message": asked}) if asked else None


class LiveState(ChatState):
    """The turn being streamed, apart from the history: a delta for a growing label
    carries this small substate only, and only the components reading it re-render
    (docs/turns.md). The turn's leading parts that streaming no longer changes
    (`live_head`, see `settled_prefix`) are a var of their own, sent when they change,
    so a push in a long turn carries its current round rather than every earlier one;
    the page renders `live_head` followed by `live.parts` as one list."""

    live: MessageVM = MessageVM()
    live_head: list[PartVM] = []
    live_active: bool = False
    announcement: str = ""

    @rx.event
    async def leave(self) -> None:
        """Stop showing a live turn here (the turn itself keeps running in its session)."""
        await self._hide()

    def _stop_tab_work(self) -> None:
        """Stop pushing a running turn into this tab (it forgets its user); the turn
        itself keeps running in its session."""
        token = self.router.session.client_token
        _FOLLOWING.pop(token, None)
        _WAKE.pop(token, None)

    async def _hide(self) -> None:
        _FOLLOWING.pop(self.router.session.client_token, None)
        self.live = MessageVM()
        self.live_head = []
        self.live_active = False
        await _clear_round(self)

    @rx.event(background=True)
    async def follow(self) -> None:
        """Show the running turn of this tab's conversation until it ends."""
        host = await get_host()
        async with self:
            chat = await self.get_state(ChatState)
            # Only for whoever opened the conversation, if they are still signed in here.
            user = await chat.current_user(host)
            viewing = user is not None and user == chat._viewer
            # A turn that already ended is followed too while its log is written: the
            # follower renders it from the store once it is (rendering before would show
            # it unfinished, and the tab would keep its Stop button).
            session = (
                host.sessions.latest(chat.conversation_id)
                if viewing and chat.conversation_id
                else None
            )
            token = self.router.session.client_token
            if session is None:
                # It may have ended before this event arrived: show it from the log.
                chat.running = False
                if viewing:
                    await chat._rerender(host, user)
                return
            current = _FOLLOWING.get(token)
            if current is not None and current.session is session:
                # This tab already follows it (a second trigger after a reload): the page
                # lost the titles it held, so the next push sends them in full.
                current.titles.resync()
                current.coalescer.mark()
                return
            follower = _FOLLOWING[token] = _Follower(self, host, session, token, chat.lang)
            chat.running = True
        await follower.run()


class _Follower:
    """Pushes one session's changes into one tab's `LiveState`, coalesced per frame."""

    def __init__(
        self, state: LiveState, host: Host, session: TurnSession, token: str, lang: str
    ) -> None:
        self.state = state
        self.host = host
        self.session = session
        self.token = token
        self.lang = lang
        self.hold = HeaderHold()
        self.cards = CardCache()
        self.spoken = ""
        self.round = _RoundCards()
        self.titles = TitleFeed()
        self.coalescer = LeadingEdgeCoalescer(self.push)

    def following(self) -> bool:
        return _FOLLOWING.get(self.token) is self

    async def push(self) -> None:
        try:
            await self._push()
        except Exception:  # one failed push must not end the live view; the next retries
            logger.exception("Pushing the live turn %s failed", self.session.message_id)

    async def _push(self) -> None:
        self.hold.now_ms = time.monotonic() * 1000
        async with self.state:
            if not self.following():
                return
            chat = await self.state.get_state(ChatState)
            parts = build_turn_parts(
                self.session.view,
                message_id=self.session.message_id,
                lang=self.lang,
                expanded=set(chat.expanded),
                group_open=chat.group_open,
                header_hold=self.hold,
                cache=self.cards,
            )
            settled = settled_prefix(self.session.view)
            head = parts[:settled]
            if head != self.state.get_value("live_head"):
                self.state.live_head = head
            tail, title_ops = self.titles.split(parts[settled:])
            if title_ops:
                titles = await self.state.get_state(LiveTitles)
                titles.title_turn = self.session.message_id
                titles.title_ops = title_ops
            tail = await self.round.slot_or_embed(self.state, tail)
            live = MessageVM(
                id=self.session.message_id,
                role="assistant",
                status="streaming",
                goal=goal_line(self.session.view),
                timeline=has_timeline(self.session.view),
                parts=tail,
            )
            # Only what changed is set: a push that only grew titles carries their appends.
            if live != self.state.get_value("live"):
                self.state.live = live
            if not self.state.live_active:
                self.state.live_active = True
            if self.spoken != self.state.announcement:
                self.state.announcement = self.spoken
        due = self.hold.due_ms()
        if due is not None:
            self.coalescer.mark_later(due / 1000)

    async def run(self) -> None:
        session = self.session
        self.coalescer.start()
        _WAKE[self.token] = self.coalescer.mark
        try:
            self.coalescer.mark()
            async for event, _changes in session.follow(session.view.last_seq):
                if isinstance(event, CallStarted):
                    self.spoken = translate("live.running", self.lang, tool=event.tool)
                elif isinstance(event, CallSettled):
                    label = session.view.card_label(event.call_id, self.lang)
                    self.spoken = sanitize_label(label).text
                if isinstance(event, TurnDone):
                    break
                self.coalescer.mark()
                if not self.following():
                    break
        finally:
            await self.coalescer.close()
            if _WAKE.get(self.token) == self.coalescer.mark:
                _WAKE.pop(self.token, None)
        await session.wait()  # the log is written: the stored messages include this turn
        async with self.state:
            if not self.following():
                return
            chat = await self.state.get_state(ChatState)
            viewer = chat._viewer
            del _FOLLOWING[self.token]
            if await chat.current_user(self.host) != viewer:
                # The tab's session ended or changed hands during the turn.
                await chat._forget_tab()
                return
            self.state.live = MessageVM()
            self.state.live_head = []
            await _clear_round(self.state)
            self.state.live_active = False
            chat.running = False
            chat.error = ""  # a failed turn says so in its own message (`retry_id`)
            if viewer:
                if chat.conversation_id == session.conversation_id:
                    await chat._rerender(self.host, viewer)
                await chat._refresh_conversations(self.host, viewer)


LIVE_SLOTS = 256
"""Cards of the live round that travel one var each (`LiveSlots`); a round with more
cards sends them inside its groups, as one var."""


def _slot(index: int) -> str:
    return f"slot_{index}"


LiveSlots = type(
    "LiveSlots",
    (LiveState,),
    {
        "__module__": __name__,
        "__qualname__": "LiveSlots",
        "__doc__": (
            "The live round's cards, one var per card: a delta carries the cards whose "
            "view model changed. The page reads slot `first_slot + i` of a group "
            "(`ui.components.tool_call.slot_card`); what is not in use is None."
        ),
        "__annotations__": {_slot(i): CardVM | None for i in range(LIVE_SLOTS)},
        **{_slot(i): None for i in range(LIVE_SLOTS)},
    },
)


class _RoundCards:
    """The live round's cards as one tab has them: as it last received them (`sent`),
    and what its slot vars hold (`held`; read from the state once, then kept here, so a
    push compares against a list rather than reading 256 state vars)."""

    def __init__(self) -> None:
        self.sent: list[CardVM] = []
        self.held: list[CardVM | None] | None = None

    async def slot_or_embed(self, live: Any, parts: list[PartVM]) -> list[PartVM]:
        """The live round's parts as this push sends them.

        When a few of the round's cards changed since the tab got them (one call
        streaming among settled ones, the usual case), the cards go to their slots and
        only slots that differ are set. When most changed (every call of a wide round
        streaming at once), one var carrying the round costs less than a var per card,
        and the cards stay inside their groups. The page renders both the same way,
        keyed by position, so switching keeps every element."""
        structure, cards = slotted_parts(parts, LIVE_SLOTS)
        sent = self.sent
        if not cards:
            sent[:] = []
            return parts
        changed = sum(
            1
            for index, card in enumerate(cards)
            if index >= len(sent) or (sent[index] is not card and sent[index] != card)
        )
        sent[:] = cards
        if changed * 2 > len(cards):
            return parts
        slots = await live.get_state(LiveSlots)
        if self.held is None:
            self.held = [slots.get_value(_slot(index)) for index in range(LIVE_SLOTS)]
        held = self.held
        for index, card in enumerate(cards):
            current = held[index]
            if current is not card and current != card:
                setattr(slots, _slot(index), card)
                held[index] = card
        return structure


class LiveTitles(LiveState):
    """The live round's streaming titles, sent as appends (`ui.live_titles`):
    `title_ops` holds the operations of the latest push that had any, for the message
    `title_turn`. The page applies each push's operations as it receives them
    (`assets/live_titles.js`)."""

    title_turn: str = ""
    title_ops: list[tuple[str, int, str]] = []


async def _clear_round(live: Any) -> None:
    """Empty the live round's slots and titles, so a page loaded later is not sent a
    finished round."""
    slots = await live.get_state(LiveSlots)
    for index in range(LIVE_SLOTS):
        if slots.get_value(_slot(index)) is not None:
            setattr(slots, _slot(index), None)
    titles = await live.get_state(LiveTitles)
    if titles.title_turn or titles.title_ops:
        titles.title_turn = ""
        titles.title_ops = []


_WAKE: dict[str, Any] = {}
"""Per tab (client token): wakes the tab's follower to re-render (an expansion changed)."""

_FOLLOWING: dict[str, _Follower] = {}
"""Per tab (client token): the one follower pushing a running turn into it. Kept in the
process, beside the sessions, rather than in the tab's state: it describes a task of this
process, and must not depend on how the state is stored."""
