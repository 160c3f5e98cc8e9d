"""The agent runtime: configuration in, providers, tools and turns out.

`AgentRuntime` owns what outlives a single turn: the MCP servers, the tool list, one
shared `httpx.AsyncClient` for every HTTP provider, the memory store, and what one turn's
request build leaves to the next (`RequestCache`: frozen tool definitions, the capability
pipeline's results). A turn runs for one user (`start_turn(user_id=...)`): it gets that
user's imported actions and memories. The web app keeps one for the process; the CLI makes
one per command.

    runtime = AgentRuntime(load_config())
    await runtime.start()
    run = runtime.start_turn(user_message="find where OAuth and MCP are handled")
    async for event in run:
        ...
    await runtime.aclose()
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from intent_ui.agent.activity import DemoSummarizer, ModelSummarizer, Summarizer
from intent_ui.agent.pauses import Pauses
from intent_ui.agent.providers.anthropic import AnthropicProvider
from intent_ui.agent.providers.base import Provider
from intent_ui.agent.providers.demo import DemoProvider
from intent_ui.agent.providers.openai import OpenAIProvider
from intent_ui.agent.request_cache import RequestCache
from intent_ui.agent.run import TurnRun, run_turn
from intent_ui.agent.subagents import (
    AgentDirectory,
    ChildAgent,
    ChildRun,
    Subagents,
    SubagentTool,
)
from intent_ui.agent.tools.base import Tool
from intent_ui.agent.tools.mcp import McpManager
from intent_ui.agent.tools.memory import (
    MEMORY_DEFAULT_OWNER,
    InMemoryMemoryStore,
    MemoryStore,
    MemoryTool,
)
from intent_ui.agent.tools.registry import build_tools, sandbox_unavailable, tool_family_of
from intent_ui.config import DEFAULT_DEMO_PACING_MS, AppConfig, EndpointConfig, ModelSpec
from intent_ui.core.capabilities.intent import (
    TOOL_INTENTS_CAPABILITY,
    intent_refusal,
    synthesize_intent_tool_options,
)
from intent_ui.core.capabilities.selection import (
    TOOL_SELECTION_WILDCARD,
    merge_tool_options,
    synthesize_selection_tool_options,
)
from intent_ui.core.events import SeqCounter
from intent_ui.core.goals import goal_registry, scope_registry
from intent_ui.core.pauses import REQUIRE_APPROVAL_OPTION
from intent_ui.core.resume import ResumePoint

if TYPE_CHECKING:
    from intent_ui.agent.checkpoints import TurnCheckpoints

__all__ = ["AgentRuntime", "UnknownEndpointError"]


logger = logging.getLogger(__name__)


def spec_tool_warnings(specs: Sequence[ModelSpec], tools: Sequence[Tool]) -> list[str]:
    """Readable warnings for model specs whose `describe_intent` list names a tool that
    never gets an intent: no such tool, or one that cannot carry a label (with why); and
    whose `require_approval` list names no tool.

    A name may be a tool id (`search_code_mcp_github`) or a tool name (`search_code`).
    """
    known_ids = sorted({tool.tool_id for tool in tools})
    warnings = []
    for index, spec in enumerate(specs):
        if not isinstance(spec.describe_intent, list):
            continue
        where = f"model_specs[{index}] ({spec.name}): describe_intent names"
        unknown, refused = [], []
        for name in spec.describe_intent:
            named = [tool for tool in tools if name in (tool.tool_id, tool.name)]
            reasons = [intent_refusal(tool.definition) for tool in named]
            if not named:
                unknown.append(name)
            elif all(reasons):
                refused.append(f"{name} ({reasons[0]})")
        if unknown:
            warnings.append(
                f"{where} unknown tools {', '.join(unknown)}; "
                f"known tools: {', '.join(known_ids) or 'none'}"
            )
        if refused:
            warnings.append(f"{where} tools that never get an intent: {'; '.join(refused)}")
    for index, spec in enumerate(specs):
        if not isinstance(spec.require_approval, list):
            continue
        names = {name for tool in tools for name in (tool.tool_id, tool.name)}
        unknown = [name for name in spec.require_approval if name not in names]
        if unknown:
            warnings.append(
                f"model_specs[{index}] ({spec.name}): require_approval names unknown tools "
                f"{', '.join(unknown)}; known tools: {', '.join(known_ids) or 'none'}"
            )
    return warnings


def _spec_tool_ids(selection: object, tools: Sequence[Tool]) -> object:
    """A spec's selection with each tool name replaced by the ids of the tools so named
    (options are keyed by id); ids and unknown names stay as written."""
    if not isinstance(selection, list):
        return selection
    ids = {tool.tool_id for tool in tools}
    out: list[str] = []
    for name in selection:
        same_name = [tool.tool_id for tool in tools if tool.name == name]
        out.extend([name] if name in ids or not same_name else same_name)
    return out


class UnknownEndpointError(LookupError):
    """A turn named an endpoint the configuration does not define."""


class AgentRuntime:
    """Providers, tools and turns for one configuration.

    `memory_store` defaults to a process-local store; the app passes its database-backed
    one. `pacing_ms` overrides the demo endpoints' pacing (the CLI's `--pacing-ms`).
    """

    def __init__(
        self,
        config: AppConfig,
        *,
        memory_store: MemoryStore | None = None,
        http_client: httpx.AsyncClient | None = None,
        pacing_ms: float | None = None,
    ) -> None:
        self.config = config
        self.memory_store: MemoryStore = memory_store or InMemoryMemoryStore()
        self._pacing_ms = pacing_ms
        self._owns_client = http_client is None
        self._client = http_client
        self._providers: dict[str, Provider] = {}
        self._mcp: McpManager | None = None
        self._tools: list[Tool] = []
        self._actions: dict[str, list[Tool]] = {}
        self._request_cache = RequestCache()
        self._started = False

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect the MCP servers (failures are recorded, not raised) and list the tools."""
        if self._started:
            return
        if self.config.mcp_servers:
            self._mcp = McpManager(self.config.mcp_servers)
            await self._mcp.start()
        self._tools = build_tools(
            self.config, memory_store=self.memory_store, mcp_manager=self._mcp
        )
        self._started = True
        for warning in spec_tool_warnings(self.config.model_specs, self._tools):
            logger.warning("%s", warning)

    def set_action_tools(self, actions_by_owner: Mapping[str, Sequence[Tool]]) -> None:
        """Replace the imported OpenAPI action tools, per owning user (after an import)."""
        self._actions = {owner: list(tools) for owner, tools in actions_by_owner.items()}

    async def aclose(self) -> None:
        """Close providers, the shared HTTP client and the MCP servers; safe to call twice."""
        providers, self._providers = list(self._providers.values()), {}
        for provider in providers:
            closer = getattr(provider, "aclose", None)
            if closer is not None:
                await closer()
        if self._client is not None and self._owns_client:
            await self._client.aclose()
            self._client = None
        if self._mcp is not None:
            mcp, self._mcp = self._mcp, None
            await mcp.aclose()
        self._started = False

    async def __aenter__(self) -> AgentRuntime:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def sandbox_unavailable(self) -> str | None:
        """Why `bash_tool` and `run_tools_with_code` are not offered (None when they are):
        no bubblewrap, user namespaces switched off, or the sandbox switched off."""
        return sandbox_unavailable(self.config)

    @property
    def mcp_failures(self) -> dict[str, str]:
        """MCP server name -> why it is unavailable (empty when all connected)."""
        return {} if self._mcp is None else dict(self._mcp.failures)

    # --- endpoints ------------------------------------------------------------------------

    def endpoint(self, name: str | None = None) -> EndpointConfig:
        """The named endpoint (the default one when `name` is None)."""
        if name is None:
            return self.config.default_endpoint
        found = self.config.endpoint(name)
        if found is None:
            known = ", ".join(e.name for e in self.config.endpoints) or "none"
            raise UnknownEndpointError(f"Unknown endpoint '{name}' (configured: {known})")
        return found

    def default_model(self, endpoint_name: str | None = None) -> str:
        endpoint = self.endpoint(endpoint_name)
        return endpoint.models[0] if endpoint.models else "demo"

    def provider_for(self, endpoint_name: str | None = None) -> Provider:
        """The endpoint's provider (built once, sharing one HTTP client)."""
        endpoint = self.endpoint(endpoint_name)
        cached = self._providers.get(endpoint.name)
        if cached is not None:
            return cached
        provider: Provider
        if endpoint.kind == "demo":
            pacing = self._pacing_ms
            if pacing is None:
                pacing = endpoint.pacing_ms
            provider = DemoProvider(pacing_ms=DEFAULT_DEMO_PACING_MS if pacing is None else pacing)
        elif endpoint.kind == "openai":
            provider = OpenAIProvider(
                endpoint.base_url or "", endpoint.api_key or "", http_client=self._http()
            )
        else:
            provider = AnthropicProvider(
                endpoint.base_url or "", endpoint.api_key or "", http_client=self._http()
            )
        self._providers[endpoint.name] = provider
        return provider

    def summarizer_for(self, endpoint_name: str | None = None) -> Summarizer | None:
        """The endpoint's summarizer, or None when its `activity_label` is off."""
        endpoint = self.endpoint(endpoint_name)
        if not endpoint.activity_label:
            return None
        if endpoint.kind == "demo":
            return DemoSummarizer()
        model = endpoint.activity_model or self.default_model(endpoint.name)
        return ModelSummarizer(self.provider_for(endpoint.name), model)

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            # Long read timeout: a model may think for a while between stream events.
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=300.0))
        return self._client

    # --- tools ----------------------------------------------------------------------------

    @property
    def tools(self) -> list[Tool]:
        """Every tool available to all users (after `start()`): no imported actions."""
        return list(self._tools)

    def user_tools(self, user_id: str | None = None) -> list[Tool]:
        """Every tool available to one user: the shared tools bound to the user (their
        memories), then the actions they imported. None is the local user."""
        owner = user_id or MEMORY_DEFAULT_OWNER
        bound = [t.for_owner(owner) if isinstance(t, MemoryTool) else t for t in self._tools]
        return [*bound, *self._actions.get(owner, ())]

    def tools_for(
        self, agent_tool_ids: Sequence[str] | None, user_id: str | None = None
    ) -> list[Tool]:
        """The agent's tools in offer order; None is the default agent (every tool).

        Ids that name no available tool (an MCP server that is down) are skipped.
        """
        tools = self.user_tools(user_id)
        if agent_tool_ids is None:
            return tools
        wanted = set(agent_tool_ids)
        return [tool for tool in tools if tool.tool_id in wanted]

    def default_tool_options(self) -> dict[str, Any]:
        """The default (ephemeral) agent's options: describe every eligible tool."""
        if TOOL_INTENTS_CAPABILITY not in self.config.capabilities:
            return {}
        return {TOOL_SELECTION_WILDCARD: {"describe_intent": True}}

    def spec_tool_options(self, spec: ModelSpec | str) -> dict[str, Any]:
        """A model spec's synthesised `tool_options`: its `describe_intent` policy, and its
        `require_approval` one (true: the tools that change the workspace ask first; a list:
        those tools ask)."""
        if isinstance(spec, str):
            found = next((s for s in self.config.model_specs if s.name == spec), None)
            if found is None:
                known = ", ".join(s.name for s in self.config.model_specs) or "none"
                raise LookupError(f"Unknown model spec '{spec}' (configured: {known})")
            spec = found
        tool_ids = [tool.tool_id for tool in self._tools]
        approvals = synthesize_selection_tool_options(
            REQUIRE_APPROVAL_OPTION, _spec_tool_ids(spec.require_approval, self._tools), tool_ids
        )
        if TOOL_INTENTS_CAPABILITY not in self.config.capabilities:
            return dict(approvals or {})
        synthesized = synthesize_intent_tool_options(
            _spec_tool_ids(spec.describe_intent, self._tools), tool_ids
        )
        intents = dict(synthesized) if synthesized else self.default_tool_options()
        return dict(merge_tool_options(intents, approvals) or {})

    # --- turns ----------------------------------------------------------------------------

    def start_turn(
        self,
        *,
        user_message: str,
        history: Sequence[Mapping[str, Any]] = (),
        endpoint: str | None = None,
        model: str | None = None,
        agent_tool_ids: Sequence[str] | None = None,
        tool_options: Mapping[str, Any] | None = None,
        system: str | None = None,
        stop: asyncio.Event | None = None,
        max_rounds: int = 8,
        seq: SeqCounter | None = None,
        user_id: str | None = None,
        goals: Sequence[Mapping[str, Any]] = (),
        scopes: Sequence[Mapping[str, Any]] = (),
        pauses: Pauses | None = None,
        agents: AgentDirectory | None = None,
        child: bool = False,
        inherited: bool = False,
        checkpoints: TurnCheckpoints | None = None,
        resume: ResumePoint | None = None,
    ) -> TurnRun:
        """Prepare a turn on an endpoint; iterate the returned `TurnRun` to run it.

        `tool_options` None means the default agent's options. `user_id` is whose turn it
        is (their memories and actions); None is the local user. `goals` are the agent's
        stored goals: when there are any, the model chooses one first and it narrows the
        turn's tools; `scopes` are the scopes those goals work on, listed to the model with
        the chosen goal (raises `GoalError` when either is invalid). `pauses` is where the
        turn's approvals and questions wait (`agent/pauses.py`); whoever started the turn
        decides and answers through it. `agents` are the saved agents a `subagent` call
        may name (`agent/subagents.py`); `child` prepares a subagent's turn, which is
        offered no `subagent` tool, and `inherited` a copy of its parent's agent.
        `checkpoints` takes one before each workspace-changing call (`agent/checkpoints.py`).
        `resume` goes on with a turn that waited when its server stopped (`core/resume.py`):
        `history` then ends with that turn's earlier rounds.
        """
        found = self.endpoint(endpoint)
        tools = self.tools_for(agent_tool_ids, user_id)
        if child:
            tools = [tool for tool in tools if not isinstance(tool, SubagentTool)]
        chosen_model = model or self.default_model(found.name)

        def start_child(agent: ChildAgent | None, task: str, child_pauses: Pauses) -> ChildRun:
            if agent is None:  # a copy of this turn's agent, on its endpoint and model
                name, wanted, tool_ids = found.name, chosen_model, agent_tool_ids
                options, instructions = tool_options, system
            else:
                known = agent.endpoint and self.config.endpoint(agent.endpoint) is not None
                name = agent.endpoint if known and agent.endpoint else found.name
                wanted = agent.model or self.default_model(name)
                tool_ids, options, instructions = agent.tool_ids, agent.tool_options, agent.system
            run = self.start_turn(
                user_message=task,
                endpoint=name,
                model=wanted,
                agent_tool_ids=tool_ids,
                tool_options=options,
                system=instructions,
                max_rounds=max_rounds,
                user_id=user_id,
                pauses=child_pauses,
                child=True,
                inherited=agent is None,
            )
            return ChildRun(run, wanted)

        registry = goal_registry(goals) if goals else None
        scoped = scope_registry(scopes, registry.ids() if registry else []) if scopes else None
        return run_turn(
            provider=self.provider_for(found.name),
            model=chosen_model,
            history=list(history),
            user_message=user_message,
            tools=tools,
            tool_options=self.default_tool_options() if tool_options is None else tool_options,
            capabilities=frozenset(self.config.capabilities),
            system=system,
            strict=found.strict,
            max_tokens=found.max_tokens,
            max_rounds=max_rounds,
            stop=stop,
            summarizer=self.summarizer_for(found.name),
            seq=seq,
            tool_timeout=self.config.tool_timeout_s,
            goals=registry,
            scopes=scoped,
            families={tool.tool_id: tool_family_of(tool) for tool in tools},
            request_cache=self._request_cache,
            pauses=pauses,
            subagents=None if child else Subagents(start_child, agents),
            inherited=inherited,
            checkpoints=checkpoints,
            resume=resume,
        )
