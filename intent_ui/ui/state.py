"""The chat page's state: thin. Handlers forward to the store and the agent runtime;
a running turn is folded into a `TurnView` (core) and pushed through a leading-edge
coalescer, so the browser gets at most one delta per frame with every changed label.

Every handler resolves the signed-in user first (`AuthState.current_user`) and reaches
conversations and agents only through the owner-filtered store, so an id sent from the
browser (guessed, or another user's) finds nothing."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import reflex as rx

from intent_ui.core.events import CallSettled, CallStarted, TurnDone
from intent_ui.core.labels import sanitize_label
from intent_ui.core.locale import SUPPORTED_LANGUAGES, negotiate_language, translate
from intent_ui.core.turn import TurnView
from intent_ui.store import agents as agent_store
from intent_ui.store import conversations as conv_store
from intent_ui.store.turns import TurnRecorder
from intent_ui.ui.auth import AuthState
from intent_ui.ui.coalescer import LeadingEdgeCoalescer
from intent_ui.ui.host import Host, current_host, get_host
from intent_ui.ui.viewmodels import CardCache, HeaderHold, MessageVM, build_turn_parts

logger = logging.getLogger(__name__)

SPEC_PREFIX = "spec:"
"""Agent-picker ids of model specs (`spec:NAME`); saved agents use their database id."""

FLUSH_INTERVAL_S = 0.1
"""How often streamed chunks reach the database: a crash loses at most this much."""

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
)


class ChatState(AuthState):
    conversations: list[dict[str, str]] = []
    conversation_id: str = ""
    stored_conversation: str = rx.LocalStorage("", name="intent_ui_conversation")
    messages: list[MessageVM] = []
    running: bool = False
    error: str = ""
    endpoints: list[str] = []
    models: list[str] = []
    endpoint: str = ""
    model: str = ""
    agents: list[dict[str, str]] = []
    agent_id: str = "default"
    lang_override: str = rx.LocalStorage("", name="intent_ui_lang")
    browser_lang: str = "en"
    renaming: str = ""
    expanded: list[str] = []
    group_open: dict[str, bool] = {}
    # Whose turn `send` armed: backend-only (never sent to or settable by the browser), so
    # `LiveState.run_turn` runs only when `send` started it, past its "already running"
    # guard, and for the user `send` checked.
    _turn_user: str = ""

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
        self._load_pickers(host, user)
        self._refresh_conversations(host, user)
        if self.conversation_id or self.stored_conversation:
            self._open(host, user, self.conversation_id or self.stored_conversation)
        return rx.call_script("navigator.language || ''", callback=ChatState.set_browser_lang)

    def _forget_everything(self) -> None:
        """Show nothing of anyone's (a browser that is not, or no longer, signed in)."""
        self.conversations = []
        self.conversation_id = ""
        self.messages = []
        self.agents = []
        self.renaming = ""

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
            {"id": "default", "name": "Default agent"},
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
            self.agent_id = "default"

    def _sync_models(self, host: Host) -> None:
        endpoint = next((e for e in host.config.endpoints if e.name == self.endpoint), None)
        self.models = list(endpoint.models) if endpoint else []
        if self.model not in self.models:
            self.model = self.models[0] if self.models else ""

    @rx.event
    async def set_endpoint(self, value: str) -> None:
        host = await get_host()
        if host.config.endpoint(value) is None:
            return  # only configured endpoints
        self.endpoint = value
        self._sync_models(host)

    @rx.event
    def set_model(self, value: str) -> None:
        # `models` is the chosen endpoint's list, computed on the server.
        if value in self.models:
            self.model = value

    @rx.event
    async def set_agent(self, value: str) -> None:
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return
        self._load_pickers(host, user)  # the agents this user may use right now
        if value in {a["id"] for a in self.agents}:
            self.agent_id = value

    # --- conversations --------------------------------------------------------------------

    def _refresh_conversations(self, host: Host, user: str) -> None:
        self.conversations = [
            {"id": str(c.id), "title": c.title or "New chat"}
            for c in conv_store.list_conversations(host.engine, owner=user)
        ]

    def _open(self, host: Host, user: str, conversation_id: str) -> None:
        found = conv_store.get_conversation(host.engine, conversation_id, owner=user)
        if found is None:
            self.conversation_id = ""
            self.stored_conversation = ""
            self.messages = []
            return
        self.conversation_id = str(found.id)
        self.stored_conversation = self.conversation_id
        if found.endpoint in self.endpoints:
            self.endpoint = found.endpoint
            self._sync_models(host)
            if found.model in self.models:
                self.model = found.model
        self.messages = [
            self._message_vm(host, m) for m in conv_store.messages(host.engine, found.id)
        ]

    def _message_vm(self, host: Host, message: Any) -> MessageVM:
        message_id = str(message.id)
        if message.role == "user":
            return MessageVM(id=message_id, role="user", text=message.content)
        turn = host.turn(message_id)
        return MessageVM(
            id=message_id,
            role="assistant",
            status=message.status,
            error=message.error or "",
            parts=build_turn_parts(
                turn,
                message_id=message_id,
                lang=self.lang,
                expanded=set(self.expanded),
                group_open=self.group_open,
            ),
        )

    async def _rerender(self) -> None:
        if not self.conversation_id or self.running:
            return
        # Rebuild from the cached turns; cheap, and the language or an expansion changed.
        host_cache = current_host()
        if host_cache is None:
            return
        user = await self.current_user(host_cache)
        if user is None or (
            conv_store.get_conversation(host_cache.engine, self.conversation_id, owner=user) is None
        ):
            self._forget_everything()
            return
        self.messages = [
            self._message_vm(host_cache, m)
            for m in conv_store.messages(host_cache.engine, self.conversation_id)
        ]

    @rx.event
    async def new_chat(self) -> None:
        if self.running:
            return
        self.conversation_id = ""
        self.stored_conversation = ""
        self.messages = []
        self.error = ""

    @rx.event
    async def select_chat(self, conversation_id: str) -> None:
        if self.running:
            return
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return
        self.error = ""
        self._open(host, user, conversation_id)

    @rx.event
    async def start_rename(self, conversation_id: str) -> None:
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return
        if conv_store.get_conversation(host.engine, conversation_id, owner=user) is not None:
            self.renaming = conversation_id

    @rx.event
    async def rename_chat(self, form: dict[str, Any]) -> None:
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return
        title = str(form.get("title", "")).strip()
        if self.renaming and title:
            conv_store.rename_conversation(host.engine, self.renaming, title[:200], owner=user)
        self.renaming = ""
        self._refresh_conversations(host, user)

    @rx.event
    async def delete_chat(self, conversation_id: str) -> None:
        if self.running and conversation_id == self.conversation_id:
            return
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            return
        conv_store.delete_conversation(host.engine, conversation_id, owner=user)
        if conversation_id == self.conversation_id:
            self.conversation_id = ""
            self.stored_conversation = ""
            self.messages = []
        self._refresh_conversations(host, user)

    # --- cards and groups -----------------------------------------------------------------

    @rx.event
    async def toggle_card(self, call_id: str) -> None:
        if call_id in self.expanded:
            self.expanded = [c for c in self.expanded if c != call_id]
        else:
            self.expanded = [*self.expanded, call_id]
        await self._rerender_live_or_history()

    @rx.event
    async def toggle_group(self, key: str, currently_open: bool) -> None:
        self.group_open = {**self.group_open, key: not currently_open}
        await self._rerender_live_or_history()

    async def _rerender_live_or_history(self) -> None:
        if self.running:
            _WAKE.get(self.router.session.client_token, lambda: None)()
            return
        await self._rerender()

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
        if self.conversation_id and (
            conv_store.get_conversation(host.engine, self.conversation_id, owner=user) is None
        ):
            self._forget_everything()
            self.error = "That conversation is not available; start a new chat."
            return None
        if not self.conversation_id:
            agent = None
            if self.agent_id != "default" and not self.agent_id.startswith(SPEC_PREFIX):
                agent = agent_store.get_agent(host.engine, self.agent_id, owner=user)
            created = conv_store.create_conversation(
                host.engine,
                owner=user,
                title=text.splitlines()[0][:60],
                endpoint=self.endpoint,
                model=self.model,
                agent_id=str(agent.id) if agent is not None else None,
            )
            self.conversation_id = str(created.id)
            self.stored_conversation = self.conversation_id
            self._refresh_conversations(host, user)
        user_id = conv_store.add_user_message(host.engine, self.conversation_id, text)
        self.messages = [*self.messages, MessageVM(id=str(user_id), role="user", text=text)]
        self.running = True
        self._turn_user = user
        self.error = ""
        return LiveState.run_turn(text)

    @rx.event
    def stop(self) -> None:
        host = current_host()
        if host is not None:
            event = host.stops.get(self.router.session.client_token)
            if event is not None:
                event.set()


class LiveState(ChatState):
    """The turn being streamed, apart from the history: a delta for a growing label
    carries this small substate only, and only the components reading it re-render
    (REFLEX_STREAMING.md)."""

    live: MessageVM = MessageVM()
    live_active: bool = False
    announcement: str = ""

    @rx.event(background=True)
    async def run_turn(self, text: str) -> None:
        host = await get_host()
        async with self:
            chat = await self.get_state(ChatState)
            # Only `send` arms a turn; an event sent straight to run_turn finds nothing.
            user_id, chat._turn_user = chat._turn_user, ""
            if not user_id:
                return
            token = self.router.session.client_token
            conversation_id = chat.conversation_id
            endpoint, model, agent_id = chat.endpoint, chat.model, chat.agent_id
            lang = chat.lang
            self.live = MessageVM(id="live", role="assistant", status="streaming")
            self.live_active = True
        stop = asyncio.Event()
        host.stops[token] = stop
        history = await asyncio.to_thread(conv_store.history, host.engine, conversation_id)
        # history() includes the user message just stored; the run adds it itself.
        if history and history[-1].get("role") == "user":
            history = history[:-1]
        message_id = str(
            await asyncio.to_thread(
                conv_store.start_assistant_message, host.engine, conversation_id
            )
        )
        turn = TurnView()
        recorder = TurnRecorder(host.engine, message_id)
        hold = HeaderHold()
        cards = CardCache()
        spoken = {"text": ""}

        async def push() -> None:
            hold.now_ms = time.monotonic() * 1000
            async with self:
                chat = await self.get_state(ChatState)
                parts = build_turn_parts(
                    turn,
                    message_id=message_id,
                    lang=lang,
                    expanded=set(chat.expanded),
                    group_open=chat.group_open,
                    header_hold=hold,
                    cache=cards,
                )
                self.live = MessageVM(
                    id=message_id, role="assistant", status="streaming", parts=parts
                )
                if spoken["text"] != self.announcement:
                    self.announcement = spoken["text"]
            due = hold.due_ms()
            if due is not None:
                coalescer.mark_later(due / 1000)

        coalescer = LeadingEdgeCoalescer(push).start()
        _WAKE[token] = coalescer.mark
        last_flush = time.monotonic()
        final_error = ""
        try:
            settings = {
                "endpoint": endpoint,
                "model": model,
                **_agent_settings(host, agent_id, user_id),
            }
            run = host.runtime.start_turn(
                history=history, user_message=text, stop=stop, user_id=user_id, **settings
            )
            async for event in run.events():
                turn.apply(event)
                recorder.apply(event)
                if isinstance(event, CallStarted):
                    spoken["text"] = translate("live.running", lang, tool=event.tool)
                elif isinstance(event, CallSettled):
                    spoken["text"] = sanitize_label(turn.card_label(event.call_id, lang)).text
                elif isinstance(event, TurnDone) and event.error:
                    final_error = event.error
                coalescer.mark()
                now = time.monotonic()
                if recorder.should_flush_now(event) or now - last_flush >= FLUSH_INTERVAL_S:
                    last_flush = now
                    await asyncio.to_thread(recorder.flush)
        except Exception as exc:  # the turn must end visibly, whatever broke
            logger.exception("Turn failed")
            final_error = f"The turn failed: {exc}"
            done = TurnDone(seq=turn.last_seq + 1, stop_reason="error", error=final_error)
            recorder.apply(done)
            turn.apply(done)
        finally:
            await asyncio.to_thread(recorder.flush)
            await coalescer.close()
            host.stops.pop(token, None)
            _WAKE.pop(token, None)
            host.remember(message_id, turn)
        async with self:
            chat = await self.get_state(ChatState)
            parts = build_turn_parts(
                turn,
                message_id=message_id,
                lang=lang,
                expanded=set(chat.expanded),
                group_open=chat.group_open,
            )
            status = "error" if final_error else "complete"
            chat.messages = [
                *chat.messages,
                MessageVM(
                    id=message_id, role="assistant", status=status, error=final_error, parts=parts
                ),
            ]
            self.live = MessageVM()
            self.live_active = False
            chat.running = False
            chat.error = final_error
            chat._refresh_conversations(host, user_id)


_WAKE: dict[str, Any] = {}


def _agent_settings(host: Host, agent_id: str, user_id: str) -> dict[str, Any]:
    """What the picked agent changes about a turn: tools, options, instructions, and its
    own endpoint/model when it has one. The default (ephemeral) agent changes nothing:
    every tool, every eligible tool described. A model spec synthesises its options."""
    if agent_id.startswith(SPEC_PREFIX):
        name = agent_id[len(SPEC_PREFIX) :]
        spec = next((s for s in host.config.model_specs if s.name == name), None)
        if spec is None:
            return {}
        return {
            "endpoint": spec.endpoint,
            "model": spec.model,
            "tool_options": host.runtime.spec_tool_options(spec),
            "system": spec.instructions or None,
        }
    if agent_id == "default":
        return {}
    agent = agent_store.get_agent(host.engine, agent_id, owner=user_id)
    if agent is None:
        return {}
    settings: dict[str, Any] = {
        "agent_tool_ids": agent.tools,
        "tool_options": agent.tool_options,
        "system": agent.instructions or None,
    }
    if agent.endpoint and host.config.endpoint(agent.endpoint) is not None:
        settings["endpoint"] = agent.endpoint
        if agent.model:
            settings["model"] = agent.model
    return settings
