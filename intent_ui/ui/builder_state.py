"""The agents page's state: thin. Rules live in `core.builder` and `core.goals`, costs in
`core.tokens`, rows in `store.agents` and `store.actions`; what the page shows is built by
`ui.builder_view` (tools, switches, agents) and `ui.builder_goals` (goals and scopes), over
the catalogue of `ui.builder_catalogue`. The handlers here forward to those and copy the
results into vars.

The form edits one agent at a time. A saved agent's tool picks and switches are written to
the database the moment they change (so a reload shows them); its name, instructions,
endpoint and model are written by Save. A new agent is a draft until Save creates it with
everything chosen so far.

Every handler resolves the signed-in user first and reaches agents and imported actions
only through the owner-filtered store. A shared agent of someone else's opens read-only:
it can be used and duplicated, not changed. Store queries, document parsing and token
counts run in a worker thread (`asyncio.to_thread`): the event loop that runs these
handlers also streams every user's turn. An upload is read up to the document cap, never
whole.

An agent's goals and scopes are edited here too. Every change validates both lists
together; a valid pair is written at once (a saved agent), an invalid one stays on screen
with the error naming the goal or scope and the rule, and is not written until it is
fixed.

The page speaks the reader's language: the chat page's choice (its stored override, else
the browser's language).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import reflex as rx

from intent_ui.agent.tokenizer import get_tokenizer
from intent_ui.agent.tools.actions import (
    MAX_DOCUMENT_BYTES,
    ActionSpec,
    OpenApiError,
    fetch_openapi,
    parse_openapi,
)
from intent_ui.core.builder import (
    BuilderTool,
    describe_all,
    option_eligible,
    option_on,
    set_option,
    set_workspace_approval,
    visible_options,
    workspace_approval,
)
from intent_ui.core.capabilities.intent import DESCRIBE_INTENT_OPTION
from intent_ui.core.locale import DEFAULT_LANGUAGE, negotiate_language, translate
from intent_ui.core.pauses import REQUIRE_APPROVAL_OPTION
from intent_ui.store import actions as action_store
from intent_ui.store import agents as agent_store
from intent_ui.ui.auth import AuthState
from intent_ui.ui.builder_catalogue import catalogue, priced_catalogue
from intent_ui.ui.builder_goals import GoalsDraft, GoalVM, ScopeVM, goals_view
from intent_ui.ui.builder_view import (
    BUILDER_KEYS,
    AgentRowVM,
    SourceVM,
    ToggleVM,
    agent_rows,
    build_view,
)
from intent_ui.ui.chat_state import ChatState
from intent_ui.ui.endpoint_picker import EndpointPicker
from intent_ui.ui.host import Host, get_host
from intent_ui.ui.uploads import read_capped_upload

__all__ = ["AgentsState"]

_GoalsEdit = Callable[[GoalsDraft], GoalsDraft | None]
_OptionsEdit = Callable[
    [list[BuilderTool], Mapping[str, Any], frozenset[str]], Mapping[str, Any] | None
]
"""A switch click: the catalogue, the agent's options and the enabled capabilities in,
the options to write out (None: the click changes nothing)."""


class AgentsState(EndpointPicker, AuthState):
    """The agents page (`/agents`)."""

    agents: list[AgentRowVM] = []
    agent_id: str = ""
    editing: bool = False
    form_key: str = "new"
    name: str = ""
    instructions: str = ""
    sources: list[SourceVM] = []
    show_intent: bool = True
    show_background: bool = True
    show_defer: bool = True
    show_code_only: bool = True
    tokenizer: str = ""
    tokens_with: int = 0
    tokens_without: int = 0
    describing: int = 0
    # The agent's "Ask before changing the workspace" (`core.builder.workspace_approval`).
    approval_default: ToggleVM = ToggleVM()
    error: str = ""
    notice: str = ""
    import_url: str = ""
    importing: bool = False
    lang: str = DEFAULT_LANGUAGE
    shared: bool = False
    read_only: bool = False
    goals: list[GoalVM] = []
    scopes: list[ScopeVM] = []
    goal_error: str = ""
    _tool_options: dict[str, Any] = {}
    _picked: list[str] = []
    _goals_draft: GoalsDraft = GoalsDraft()

    @rx.var
    def t(self) -> dict[str, str]:
        return {key: translate(key, self.lang) for key in BUILDER_KEYS}

    def _text(self, key: str, **params: object) -> str:
        return translate(key, self.lang, **params)

    # --- who is asking --------------------------------------------------------------------

    async def _user(self, host: Host) -> str | None:
        user = await self.current_user(host)
        if user is None:
            self.agents, self.sources, self.agent_id = [], [], ""
            self.error = self.auth_error
        return user

    async def _signed_in(self) -> tuple[Host, str] | None:
        """The host and the signed-in user; None (the page emptied) when nobody is."""
        host = await get_host()
        user = await self._user(host)
        return None if user is None else (host, user)

    async def _editor(self) -> tuple[Host, str] | None:
        """The host and user when the open agent may be changed by this user."""
        found = await self._signed_in()
        if found is not None and self.read_only:
            self.error = self._text("builder.read_only")
            return None
        return found

    # --- lifecycle ------------------------------------------------------------------------

    @rx.event
    async def load_page(self) -> Any:
        host = await get_host()
        user = await self._user(host)
        if user is None:
            return await self.sign_in_redirect(host)
        shown = set(visible_options(host.config.capabilities))
        self.show_intent = "describe_intent" in shown
        self.show_background = "run_in_background" in shown
        self.show_defer = "defer_loading" in shown
        self.show_code_only = "allowed_callers" in shown
        self.endpoints = [e.name for e in host.config.endpoints]
        await asyncio.to_thread(catalogue, host, user, refresh=True)
        self.tokenizer = (await asyncio.to_thread(get_tokenizer)).name
        await self._refresh_agents(host, user)
        reopen = self.agent_id if any(a.id == self.agent_id for a in self.agents) else ""
        if not reopen and not self.editing:
            listed = await asyncio.to_thread(agent_store.list_agents, host.engine, owner=user)
            own = [a for a in listed if a.owner_id == user]
            if own:
                reopen = str(max(own, key=lambda a: a.updated_at).id)
        if reopen:
            await self._open(host, user, reopen)
        elif not self.editing or self.agent_id:
            await self._start_draft(host, user)
        else:
            await self._render(host, user)
        return rx.call_script("navigator.language || ''", callback=AgentsState.set_browser_lang)

    @rx.event
    async def set_browser_lang(self, value: str) -> None:
        # The chat page owns the reader's choice of language; the builder follows it.
        chat = await self.get_state(ChatState)
        lang = chat.lang_override or negotiate_language(value or "")
        if lang != self.lang:
            self.lang = lang
            found = await self._signed_in()
            if found is None:
                return
            await self._refresh_agents(*found)
            await self._render(*found)

    async def _render(self, host: Host, user: str) -> None:
        tools, unavailable, costs = await asyncio.to_thread(priced_catalogue, host, user)
        view = build_view(
            tools,
            tool_options=self._tool_options,
            picked=self._picked,
            capabilities=host.config.capabilities,
            costs=costs,
            unavailable=unavailable,
            sandbox_unavailable=host.runtime.sandbox_unavailable,
            lang=self.lang,
        )
        self.sources = view.sources
        self.tokens_with = view.tokens_with
        self.tokens_without = view.tokens_without
        self.describing = view.describing
        self.approval_default = view.approval_default
        self.goals, self.scopes = goals_view(self._goals_draft, tools, self._picked, self.lang)

    # --- agents ---------------------------------------------------------------------------

    async def _refresh_agents(self, host: Host, user: str) -> None:
        listed = await asyncio.to_thread(agent_store.list_agents, host.engine, owner=user)
        self.agents = agent_rows(listed, selected=self.agent_id, user=user, lang=self.lang)

    async def _start_draft(self, host: Host, user: str) -> None:
        self.agent_id = ""
        self.editing = True
        self.form_key = f"new-{time.monotonic_ns()}"
        self.name = ""
        self.instructions = ""
        self.endpoint = self.endpoints[0] if self.endpoints else ""
        self.model = ""
        self._sync_models(host)
        self._tool_options = {}
        self._picked = []
        self._goals_draft = GoalsDraft()
        self.goal_error = ""
        self.shared = False
        self.read_only = False
        self.error = ""
        await self._render(host, user)

    async def _open(self, host: Host, user: str, agent_id: str) -> None:
        agent = await asyncio.to_thread(agent_store.get_agent, host.engine, agent_id, owner=user)
        if agent is None:
            self.error = self._text("builder.error_agent_gone")
            await self._refresh_agents(host, user)
            await self._start_draft(host, user)
            return
        self.agent_id = str(agent.id)
        self.editing = True
        self.form_key = f"{agent.id}-{agent.updated_at}"
        self.name = agent.name
        self.instructions = agent.instructions
        self.endpoint = agent.endpoint or (self.endpoints[0] if self.endpoints else "")
        self.model = agent.model or ""
        self._sync_models(host)
        self._tool_options = agent.tool_options
        self._picked = agent.tools
        # Stored goals and scopes are valid: the store writes only valid ones.
        self._goals_draft = GoalsDraft.stored(agent.goals, agent.scopes, self.form_key)
        self.goal_error = ""
        self.shared = agent.shared
        self.read_only = agent.owner_id != user
        self.error = ""
        await self._refresh_agents(host, user)
        await self._render(host, user)

    @rx.event
    async def new_agent(self) -> None:
        found = await self._signed_in()
        if found is None:
            return
        self.notice = ""
        await self._start_draft(*found)
        await self._refresh_agents(*found)

    @rx.event
    async def open_agent(self, agent_id: str) -> None:
        found = await self._signed_in()
        if found is None:
            return
        self.notice = ""
        await self._open(*found, agent_id)

    @rx.event
    async def save(self, form: dict[str, Any]) -> None:
        found = await self._editor()
        if found is None:
            return
        host, user = found
        name = str(form.get("name") or "").strip()
        instructions = str(form.get("instructions") or "")
        endpoint = str(form.get("endpoint") or self.endpoint)
        if host.config.endpoint(endpoint) is not None:
            self.endpoint = endpoint
            self._sync_models(host)
        model = str(form.get("model") or self.model)
        if model in self.models:
            self.model = model
        if not name:
            self.error = self._text("builder.error_name_required")
            return
        if self.goal_error:
            self.error = self.goal_error  # an invalid goal is never written: fix it first
            return
        self.name, self.instructions = name, instructions
        fields: dict[str, Any] = {
            "name": name,
            "instructions": instructions,
            "endpoint": self.endpoint or None,
            "model": self.model or None,
            "goals": list(self._goals_draft.goals),
            "scopes": list(self._goals_draft.scopes),
        }
        if self.agent_id:
            agent = await asyncio.to_thread(
                agent_store.update_agent, host.engine, self.agent_id, owner=user, **fields
            )
            if agent is None:
                self.error = self._text("builder.error_deleted_save_again")
                self.agent_id = ""
                return
        else:
            created = await asyncio.to_thread(
                agent_store.create_agent,
                host.engine,
                owner=user,
                **fields,
                tools=self._picked,
                tool_options=self._tool_options,
                shared=self.shared,
            )
            self.agent_id = str(created.id)
        self.error = ""
        self.notice = self._text("builder.saved", name=name)
        await self._refresh_agents(host, user)

    @rx.event
    async def toggle_shared(self) -> None:
        found = await self._editor()
        if found is None:
            return
        self.shared = not self.shared
        await self._persist(*found, shared=self.shared)
        await self._refresh_agents(*found)

    @rx.event
    async def duplicate(self, agent_id: str) -> None:
        found = await self._signed_in()
        if found is None:
            return
        host, user = found
        copy = await asyncio.to_thread(
            agent_store.duplicate_agent, host.engine, agent_id, owner=user
        )
        if copy is None:
            self.error = self._text("builder.error_cannot_duplicate")
            await self._refresh_agents(host, user)
            return
        self.notice = self._text("builder.created", name=copy.name)
        await self._open(host, user, str(copy.id))

    @rx.event
    async def delete(self, agent_id: str) -> None:
        found = await self._signed_in()
        if found is None:
            return
        host, user = found
        if not await asyncio.to_thread(agent_store.delete_agent, host.engine, agent_id, owner=user):
            self.error = self._text("builder.error_not_owner_delete")
            await self._refresh_agents(host, user)
            return
        self.notice = self._text("builder.deleted")
        if agent_id == self.agent_id:
            await self._start_draft(host, user)
        await self._refresh_agents(host, user)

    # --- tools and switches ---------------------------------------------------------------

    async def _persist(self, host: Host, user: str, **fields: Any) -> None:
        if not self.agent_id:
            return  # a draft: Save writes everything
        updated = await asyncio.to_thread(
            agent_store.update_agent, host.engine, self.agent_id, owner=user, **fields
        )
        if updated is None:
            self.error = self._text("builder.error_deleted_save")
            self.agent_id = ""

    async def _current_options(self, host: Host, user: str) -> dict[str, Any]:
        # Re-read a saved agent, so two tabs editing one agent do not undo each other.
        if self.agent_id:
            agent = await asyncio.to_thread(
                agent_store.get_own_agent, host.engine, self.agent_id, owner=user
            )
            if agent is not None:
                return agent.tool_options
        return dict(self._tool_options)

    @rx.event
    async def toggle_pick(self, tool_id: str) -> None:
        found = await self._editor()
        if found is None:
            return
        picked = list(self._picked)
        picked = [t for t in picked if t != tool_id] if tool_id in picked else [*picked, tool_id]
        self._picked = picked
        await self._persist(*found, tools=picked)
        if self.agent_id:
            await self._refresh_agents(*found)
        await self._render(*found)

    async def _edit_options(self, click: _OptionsEdit) -> None:
        """Apply a switch click to the agent's current options; write what it changes."""
        found = await self._editor()
        if found is None:
            return
        host, user = found
        tools, _unavailable = await asyncio.to_thread(catalogue, host, user)
        options = await self._current_options(host, user)
        updated = click(tools, options, frozenset(host.config.capabilities))
        if updated is None or updated is options:
            return  # aria-disabled, or nothing to change: the stored state stays as it is
        self._tool_options = dict(updated)
        await self._persist(host, user, tool_options=self._tool_options)
        await self._render(host, user)

    @rx.event
    async def toggle_option(self, tool_id: str, option: str) -> None:
        def toggled(
            tools: list[BuilderTool], options: Mapping[str, Any], caps: frozenset[str]
        ) -> Mapping[str, Any] | None:
            tool = next((t for t in tools if t.tool_id == tool_id), None)
            # "Ask first" needs no admin capability: every agent has it.
            shown = option in visible_options(caps) or option == REQUIRE_APPROVAL_OPTION
            if tool is None or not shown:
                return None
            if not option_eligible(tool, options, caps, option):
                return None
            return set_option(options, tool, option, not option_on(tool, options, option))

        await self._edit_options(toggled)

    @rx.event
    async def toggle_workspace_approval(self) -> None:
        """Ask before every tool that changes the workspace, or stop asking (the agent's
        default; a tool's own "Ask first" switch outranks it)."""

        def toggled(
            tools: list[BuilderTool], options: Mapping[str, Any], caps: frozenset[str]
        ) -> Mapping[str, Any] | None:
            return set_workspace_approval(options, not workspace_approval(options))

        await self._edit_options(toggled)

    @rx.event
    async def toggle_describe_all(self, source: str) -> None:
        def described(
            tools: list[BuilderTool], options: Mapping[str, Any], caps: frozenset[str]
        ) -> Mapping[str, Any] | None:
            if DESCRIBE_INTENT_OPTION not in visible_options(caps):
                return None
            return describe_all(options, [t for t in tools if t.source == source], caps)

        await self._edit_options(described)

    # --- goals and scopes -----------------------------------------------------------------

    async def _edit_goals(self, edit: _GoalsEdit) -> None:
        """Apply one edit to the goals and scopes and validate both lists together; write
        them when valid, else show why (keeping the edit on screen)."""
        found = await self._editor()
        if found is None:
            return
        draft = edit(self._goals_draft)
        if draft is None:
            return  # nothing changed
        self._goals_draft = draft
        self.goal_error = draft.problem()
        if not self.goal_error:
            await self._persist(*found, goals=list(draft.goals), scopes=list(draft.scopes))
        await self._render(*found)

    # A goal's or a scope's row (`kind`: `GOAL` or `SCOPE`, see `ui.builder_goals`).

    @rx.event
    async def add_row(self, kind: str) -> None:
        key = f"{self.form_key}:new:{time.monotonic_ns()}"
        await self._edit_goals(lambda draft: draft.add(kind, key))

    @rx.event
    async def remove_row(self, kind: str, index: int) -> None:
        await self._edit_goals(lambda draft: draft.remove(kind, index))

    @rx.event
    async def set_row_text(self, kind: str, index: int, field: str, value: str) -> None:
        await self._edit_goals(lambda draft: draft.set_text(kind, index, field, str(value)))

    @rx.event
    async def toggle_row_choice(self, kind: str, index: int, item: str) -> None:
        await self._edit_goals(lambda draft: draft.toggle(kind, index, item))

    # --- OpenAPI actions ------------------------------------------------------------------

    @rx.event
    def set_import_url(self, value: str) -> None:
        self.import_url = value

    async def _import(
        self, host: Host, user: str, spec_source: str, loader: Awaitable[ActionSpec]
    ) -> None:
        try:
            spec = await loader
        except OpenApiError as exc:
            self.error = str(exc)
            self.notice = ""
            return
        await asyncio.to_thread(
            action_store.save_action_document,
            host.engine,
            owner=user,
            encoded_domain=spec.encoded_domain,
            domain=spec.domain,
            title=spec.title,
            source=spec_source,
            document=spec.document,
            now=time.time,
        )
        await asyncio.to_thread(catalogue, host, user, refresh=True)
        self.error = ""
        self.notice = self._text("builder.imported", n=len(spec.operations), title=spec.title)
        await self._render(host, user)

    @rx.event
    async def import_from_url(self) -> AsyncIterator[None]:
        found = await self._signed_in()
        if found is None:
            return
        host, user = found
        url = self.import_url.strip()
        if not url:
            self.error = self._text("builder.error_url_required")
            return
        self.importing = True
        yield
        allow = host.config.actions.allow_private_networks
        await self._import(host, user, url, fetch_openapi(url, allow_private_networks=allow))
        self.importing = False

    @rx.event
    async def handle_upload(self, files: list[rx.UploadFile]) -> None:
        found = await self._signed_in()
        if found is None:
            return
        for upload in files:
            name = getattr(upload, "filename", None) or upload.name or "uploaded file"
            await self._import(*found, name, _uploaded_spec(upload, name))


async def _uploaded_spec(upload: rx.UploadFile, name: str) -> ActionSpec:
    """An uploaded document, read up to the cap (never whole) and parsed off the loop."""
    data, more = await read_capped_upload(upload, MAX_DOCUMENT_BYTES)
    if more:
        raise OpenApiError(
            f"{name}: the file is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB "
            "(reading stopped there); import a smaller OpenAPI file"
        )
    return await asyncio.to_thread(parse_openapi, data, source=name)
