"""The agents page's state (ui.builder_state): what its handlers write and show, for whom,
and that their blocking work stays off the event loop."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from intent_ui.agent.tools import actions
from intent_ui.agent.tools.actions import MAX_DOCUMENT_BYTES
from intent_ui.agent.tools.native import file_tools
from intent_ui.agent.tools.workspace import Workspace
from intent_ui.config import AppConfig
from intent_ui.core.builder import CAPABILITY_OPTIONS
from intent_ui.store import actions as action_store
from intent_ui.store import agents as agent_store
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.ui import builder_catalogue, builder_state
from intent_ui.ui.builder_catalogue import catalogue
from intent_ui.ui.builder_goals import GOAL, SCOPE
from intent_ui.ui.builder_state import AgentsState
from intent_ui.ui.builder_view import SourceVM
from intent_ui.ui.host import Host
from tests.support.openapi_bombs import ref_bomb
from tests.support.sign_in import sign_in_as

ALL = frozenset(CAPABILITY_OPTIONS)
SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}}
SLACK_DOC = {
    "openapi": "3.0.0",
    "info": {"title": "Slack"},
    "servers": [{"url": "https://slack.com/api"}],
    "paths": {"/chat.postMessage": {"post": {"operationId": "postMessage"}}},
}
SLACK_ID = "postMessage_action_slack---com"


@dataclass
class FakeMcpTool:
    name: str
    server: str = "github"
    parameters: dict[str, Any] = field(default_factory=lambda: dict(SCHEMA))
    kind: str = "mcp"

    @property
    def tool_id(self) -> str:
        return f"{self.name}_mcp_{self.server}"

    @property
    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "description": f"{self.name}.", "parameters": self.parameters}


ISSUE_PARAMS = {"type": "object", "properties": {"title": {}, "intent": {"type": "string"}}}


@dataclass
class FakeRuntime:
    tools: list[Any]
    mcp_failures: dict[str, str] = field(default_factory=dict)
    sandbox_unavailable: str | None = None

    actions: dict[str, list[Any]] = field(default_factory=dict)

    def set_action_tools(self, actions_by_owner: dict[str, list[Any]]) -> None:
        self.actions = {owner: list(tools) for owner, tools in actions_by_owner.items()}


# --- the state ------------------------------------------------------------------------------


def make_host(
    serve_host: Callable[..., Host],
    tmp_path: Path,
    capabilities: Any = ALL,
    endpoints: list[dict[str, Any]] | None = None,
    sandbox_unavailable: str | None = None,
) -> Host:
    tools = [
        *file_tools(Workspace(tmp_path)),
        FakeMcpTool("search_code"),
        FakeMcpTool("create_issue", parameters=ISSUE_PARAMS),
        FakeMcpTool("slow"),
    ]
    config = AppConfig.model_validate(
        {
            "workspace": tmp_path,
            "capabilities": capabilities,
            "endpoints": endpoints or [{"kind": "demo"}],
        }
    )
    host = serve_host(config, FakeRuntime(tools, sandbox_unavailable=sandbox_unavailable))
    catalogue(host, LOCAL_USER_ID, refresh=True)
    return host


@pytest.fixture
def host(serve_host: Callable[..., Host], tmp_path: Path) -> Host:
    return make_host(serve_host, tmp_path)


async def loaded() -> AgentsState:
    state = AgentsState()
    await AgentsState.load_page.fn(state)
    return state


def row(state: AgentsState, tool_id: str) -> Any:
    return next(r for s in state.sources for r in s.tools if r.tool_id == tool_id)


def source(state: AgentsState, key: str) -> SourceVM:
    return next(s for s in state.sources if s.key == key)


async def saved_agent(state: AgentsState, name: str = "Reviewer") -> str:
    await AgentsState.save.fn(state, {"name": name, "instructions": "Be brief."})
    return state.agent_id


async def test_where_the_sandbox_cannot_run_the_page_says_why(
    serve_host: Callable[..., Host], tmp_path: Path
) -> None:
    make_host(serve_host, tmp_path, sandbox_unavailable="bubblewrap is not installed")
    state = await loaded()
    assert source(state, "native").note == (
        "bash_tool and run_tools_with_code are not offered: bubblewrap is not installed."
    )


async def test_load_starts_a_draft_when_there_are_no_agents(host: Host) -> None:
    state = await loaded()
    assert state.editing is True and state.agent_id == ""
    assert [s.key for s in state.sources] == ["native", "github"]
    assert "cl100k_base" in state.tokenizer


async def test_new_agents_describe_native_tools_and_not_mcp_tools(host: Host) -> None:
    state = await loaded()
    assert row(state, "read_file").intent.pressed is True
    assert row(state, "search_code_mcp_github").intent.pressed is False


async def test_save_creates_the_agent_with_its_draft_choices(host: Host) -> None:
    state = await loaded()
    await AgentsState.toggle_pick.fn(state, "search_code_mcp_github")
    await AgentsState.toggle_option.fn(state, "search_code_mcp_github", "describe_intent")
    agent_id = await saved_agent(state)
    agent = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert agent is not None and agent.name == "Reviewer" and agent.instructions == "Be brief."
    assert agent.tools == ["search_code_mcp_github"]
    assert agent.tool_options == {"search_code_mcp_github": {"describe_intent": True}}
    assert [a.name for a in state.agents] == ["Reviewer"]


async def test_save_without_a_name_explains_what_to_do(host: Host) -> None:
    state = await loaded()
    await AgentsState.save.fn(state, {"name": "  "})
    assert "name" in state.error and state.agent_id == ""
    assert agent_store.list_agents(host.engine, owner=LOCAL_USER_ID) == []


async def test_toggle_on_a_saved_agent_persists_at_once(host: Host) -> None:
    state = await loaded()
    agent_id = await saved_agent(state)
    await AgentsState.toggle_option.fn(state, "search_code_mcp_github", "describe_intent")
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None
    assert stored.tool_options == {"search_code_mcp_github": {"describe_intent": True}}
    reloaded = await loaded_with(state)
    assert row(reloaded, "search_code_mcp_github").intent.pressed is True


async def loaded_with(state: AgentsState) -> AgentsState:
    await AgentsState.load_page.fn(state)
    return state


async def test_toggle_keeps_sibling_options(host: Host) -> None:
    state = await loaded()
    agent_id = await saved_agent(state)
    await AgentsState.toggle_option.fn(state, "search_code_mcp_github", "defer_loading")
    await AgentsState.toggle_option.fn(state, "search_code_mcp_github", "describe_intent")
    await AgentsState.toggle_option.fn(state, "search_code_mcp_github", "describe_intent")
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None
    assert stored.tool_options == {"search_code_mcp_github": {"defer_loading": True}}


async def test_turning_a_native_tool_off_is_remembered(host: Host) -> None:
    state = await loaded()
    agent_id = await saved_agent(state)
    await AgentsState.toggle_option.fn(state, "read_file", "describe_intent")
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None and stored.tool_options == {"read_file": {"describe_intent": False}}
    assert row(state, "read_file").intent.pressed is False


async def test_clicks_on_an_ineligible_tool_change_nothing(host: Host) -> None:
    state = await loaded()
    agent_id = await saved_agent(state)
    await AgentsState.toggle_option.fn(state, "create_issue_mcp_github", "describe_intent")
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None and stored.tool_options == {}
    assert row(state, "create_issue_mcp_github").intent.disabled is True


async def test_describe_all_across_a_server_and_back(host: Host) -> None:
    state = await loaded()
    agent_id = await saved_agent(state)
    await AgentsState.toggle_describe_all.fn(state, "github")
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None
    assert stored.tool_options == {
        "search_code_mcp_github": {"describe_intent": True},
        "slow_mcp_github": {"describe_intent": True},
    }
    assert source(state, "github").describe_all.pressed is True
    await AgentsState.toggle_describe_all.fn(state, "github")
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None and stored.tool_options == {}
    assert source(state, "github").describe_all.pressed is False


async def test_capability_off_hides_switches_and_ignores_clicks(
    engine: Engine, serve_host: Callable[..., Host], tmp_path: Path
) -> None:
    make_host(serve_host, tmp_path, capabilities=["run_in_background"])
    state = await loaded()
    assert (state.show_intent, state.show_background) == (False, True)
    assert (state.show_defer, state.show_code_only) == (False, False)
    agent_id = await saved_agent(state)
    await AgentsState.toggle_option.fn(state, "search_code_mcp_github", "describe_intent")
    await AgentsState.toggle_describe_all.fn(state, "github")
    stored = agent_store.get_agent(engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None and stored.tool_options == {}


async def test_pick_persists_for_a_saved_agent(host: Host) -> None:
    state = await loaded()
    agent_id = await saved_agent(state)
    await AgentsState.toggle_pick.fn(state, "slow_mcp_github")
    await AgentsState.toggle_pick.fn(state, "read_file")
    await AgentsState.toggle_pick.fn(state, "slow_mcp_github")
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None and stored.tools == ["read_file"]


async def test_the_agents_endpoint_and_model_are_only_configured_ones(
    engine: Engine, serve_host: Callable[..., Host], tmp_path: Path
) -> None:
    openai = {"kind": "openai", "api_key": "k", "models": ["gpt-a", "gpt-b"]}
    make_host(serve_host, tmp_path, endpoints=[{"kind": "demo"}, openai])
    state = await loaded()
    assert (state.endpoints, state.endpoint, state.models) == (["demo", "openai"], "demo", ["demo"])
    await AgentsState.set_endpoint.fn(state, "evil")
    assert state.endpoint == "demo"
    await AgentsState.set_endpoint.fn(state, "openai")
    assert (state.models, state.model) == (["gpt-a", "gpt-b"], "gpt-a")
    AgentsState.set_model.fn(state, "demo")  # another endpoint's model
    AgentsState.set_model.fn(state, "gpt-b")
    agent_id = await saved_agent(state)
    stored = agent_store.get_agent(engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None and (stored.endpoint, stored.model) == ("openai", "gpt-b")


async def test_reload_reopens_the_last_edited_agent(host: Host) -> None:
    first = await loaded()
    agent_id = await saved_agent(first)
    fresh = await loaded()
    assert fresh.agent_id == agent_id and fresh.name == "Reviewer"


async def test_duplicate_and_delete(host: Host) -> None:
    state = await loaded()
    agent_id = await saved_agent(state)
    await AgentsState.toggle_option.fn(state, "slow_mcp_github", "describe_intent")
    await AgentsState.duplicate.fn(state, agent_id)
    copy_id = state.agent_id
    assert copy_id != agent_id
    copy = agent_store.get_agent(host.engine, copy_id, owner=LOCAL_USER_ID)
    assert copy is not None and copy.tool_options == {"slow_mcp_github": {"describe_intent": True}}
    await AgentsState.delete.fn(state, copy_id)
    assert [a.id for a in state.agents] == [agent_id]
    assert state.agent_id == ""


@dataclass
class FakeUpload:
    """An upload as Reflex hands it over: a spooled file read with `read(size)`."""

    name: str
    data: bytes
    offset: int = 0

    async def read(self, size: int = -1) -> bytes:
        end = len(self.data) if size < 0 else min(len(self.data), self.offset + size)
        chunk, self.offset = self.data[self.offset : end], end
        return chunk


async def test_uploaded_openapi_document_adds_an_action_source(host: Host) -> None:
    state = await loaded()
    await AgentsState.handle_upload.fn(
        state, [FakeUpload("slack.json", json.dumps(SLACK_DOC).encode())]
    )
    assert state.error == ""
    assert [r.tool_id for r in source(state, "slack.com").tools] == [SLACK_ID]
    assert row(state, SLACK_ID).intent.pressed is False


async def test_bad_upload_shows_the_problem(host: Host) -> None:
    state = await loaded()
    await AgentsState.handle_upload.fn(state, [FakeUpload("notes.txt", b"hello: [")])
    assert state.error.startswith("notes.txt")


@dataclass
class EndlessUpload:
    """An upload that never ends (a 10 GB file, say); counts the bytes it handed out."""

    name: str
    handed_out: int = 0

    async def read(self, size: int = -1) -> bytes:
        assert size > 0, "an upload must be read in chunks, never whole"
        self.handed_out += size
        return b" " * size


async def test_an_upload_past_the_cap_is_refused_after_reading_about_the_cap(
    host: Host,
) -> None:
    state = await loaded()
    upload = EndlessUpload("huge.json")
    await AgentsState.handle_upload.fn(state, [upload])
    assert state.error == (
        "huge.json: the file is larger than 5 MiB (reading stopped there); import a smaller "
        "OpenAPI file"
    )
    assert MAX_DOCUMENT_BYTES < upload.handed_out <= MAX_DOCUMENT_BYTES + 1
    assert action_store.list_action_documents(host.engine, owner=LOCAL_USER_ID) == []


async def test_an_import_bomb_upload_shows_the_limit(host: Host) -> None:
    state = await loaded()
    bomb = json.dumps(ref_bomb(levels=6)).encode()
    await AgentsState.handle_upload.fn(state, [FakeUpload("bomb.json", bomb)])
    assert state.error.startswith(
        "bomb.json: the OpenAPI document expands to more than 100,000 schema nodes"
    )
    assert action_store.list_action_documents(host.engine, owner=LOCAL_USER_ID) == []


async def test_a_stored_document_is_not_parsed_again_at_each_page_load(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = await loaded()
    parsed: list[str] = []
    real = actions.parse_openapi

    def counting(*args: Any, **kwargs: Any) -> Any:
        parsed.append(kwargs.get("source", ""))
        return real(*args, **kwargs)

    monkeypatch.setattr(actions, "parse_openapi", counting)
    document = {**SLACK_DOC, "info": {"title": f"Slack {uuid.uuid4()}"}}  # new to this process
    await AgentsState.handle_upload.fn(
        state, [FakeUpload("slack.json", json.dumps(document).encode())]
    )
    after_import = len(parsed)
    for _ in range(3):
        state = await loaded()
    assert [r.tool_id for r in source(state, "slack.com").tools] == [SLACK_ID]
    assert len(parsed) == after_import


async def test_handlers_do_their_database_and_tokenizer_work_off_the_event_loop(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop that runs a handler also streams every user's turn: a database query or a
    token count on it stalls them all."""
    loop_thread = threading.get_ident()
    on_loop: list[str] = []

    def watched(module: Any, name: str) -> None:
        real = getattr(module, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == loop_thread:
                on_loop.append(name)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, call)

    for name in (
        "list_agents",
        "get_agent",
        "get_own_agent",
        "create_agent",
        "update_agent",
        "duplicate_agent",
        "delete_agent",
    ):
        watched(agent_store, name)
    for name in ("list_action_documents", "save_action_document"):
        watched(action_store, name)
    watched(builder_state, "get_tokenizer")
    watched(builder_state, "catalogue")
    watched(builder_state, "priced_catalogue")
    watched(builder_catalogue, "get_tokenizer")
    builder_catalogue._COSTS.clear()  # so token costs are counted again
    state = await loaded()
    agent_id = await saved_agent(state)
    await AgentsState.toggle_pick.fn(state, "search_code_mcp_github")
    await AgentsState.toggle_option.fn(state, "search_code_mcp_github", "describe_intent")
    await AgentsState.toggle_describe_all.fn(state, "github")
    await AgentsState.toggle_shared.fn(state)
    await AgentsState.add_row.fn(state, GOAL)
    await AgentsState.handle_upload.fn(
        state, [FakeUpload("slack.json", json.dumps(SLACK_DOC).encode())]
    )
    await AgentsState.duplicate.fn(state, agent_id)
    await AgentsState.open_agent.fn(state, agent_id)
    await AgentsState.delete.fn(state, state.agents[-1].id)
    await AgentsState.new_agent.fn(state)
    assert on_loop == []


async def test_action_option_under_the_underscore_spelling_shows_on(host: Host) -> None:
    state = await loaded()
    await AgentsState.handle_upload.fn(
        state, [FakeUpload("slack.json", json.dumps(SLACK_DOC).encode())]
    )
    agent_id = await saved_agent(state)
    agent_store.update_agent(
        host.engine,
        agent_id,
        tool_options={"postMessage_action_slack_com": {"describe_intent": True}},
        owner=LOCAL_USER_ID,
    )
    state = await loaded_with(state)
    assert row(state, SLACK_ID).intent.pressed is True
    await AgentsState.toggle_option.fn(state, SLACK_ID, "describe_intent")
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None and stored.tool_options == {}


# --- users ------------------------------------------------------------------------------------


async def test_another_users_agent_cannot_be_opened_duplicated_or_deleted(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    alices = agent_store.create_agent(host.engine, owner="alice", name="Alice's")
    sign_in_as(monkeypatch, "bob")
    state = await loaded()
    assert state.agents == []
    await AgentsState.open_agent.fn(state, alices.id)
    assert state.agent_id == "" and state.name == ""
    await AgentsState.duplicate.fn(state, alices.id)
    assert agent_store.list_agents(host.engine, owner="bob") == []
    await AgentsState.delete.fn(state, alices.id)
    assert agent_store.get_agent(host.engine, alices.id, owner="alice") is not None


async def test_a_shared_agent_opens_read_only_for_others(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    sign_in_as(monkeypatch, "alice")
    state = await loaded()
    agent_id = await saved_agent(state, "Reviewer")
    await AgentsState.toggle_shared.fn(state)
    sign_in_as(monkeypatch, "bob")
    other = await loaded()
    assert [(a.name, a.shared, a.own) for a in other.agents] == [("Reviewer", True, False)]
    await AgentsState.open_agent.fn(other, agent_id)
    assert other.read_only and other.name == "Reviewer"
    await AgentsState.toggle_pick.fn(other, "read_file")
    await AgentsState.save.fn(other, {"name": "Bob's now"})
    assert "read-only" in other.error
    stored = agent_store.get_agent(host.engine, agent_id, owner="alice")
    assert stored is not None and (stored.name, stored.tools) == ("Reviewer", [])
    await AgentsState.duplicate.fn(other, agent_id)
    assert not other.read_only and other.name == "Copy of Reviewer"


# --- goals ------------------------------------------------------------------------------------


async def test_goals_are_edited_validated_and_written_only_when_valid(host: Host) -> None:
    state = await loaded()
    agent_id = await saved_agent(state)
    for tool_id in ("read_file", "grep_search", "search_code_mcp_github"):
        await AgentsState.toggle_pick.fn(state, tool_id)
    await AgentsState.add_row.fn(state, GOAL)
    (goal,) = state.goals
    assert goal.id == "goal-1"
    assert [(d.family, d.tools, d.checked) for d in goal.delegates] == [
        ("read", "read_file, grep_search", False),
        ("mcp:github", "search_code", False),
    ]
    # A goal without a description is refused with the goal and the rule; nothing is written.
    assert state.goal_error == "Goal 'goal-1': describe when the model should choose it"
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None and stored.goals == []
    await AgentsState.set_row_text.fn(state, GOAL, 0, "id", " research ")
    await AgentsState.set_row_text.fn(state, GOAL, 0, "description", "Find things in the code")
    await AgentsState.toggle_row_choice.fn(state, GOAL, 0, "read")
    assert state.goal_error == ""
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None
    assert stored.goals == [
        {"id": "research", "description": "Find things in the code", "delegates": ["read"]}
    ]
    assert [d.checked for d in state.goals[0].delegates] == [True, False]
    # A second goal with the same id is refused; the first stays stored.
    await AgentsState.add_row.fn(state, GOAL)
    await AgentsState.set_row_text.fn(state, GOAL, 1, "description", "Also research")
    await AgentsState.set_row_text.fn(state, GOAL, 1, "id", "research")
    assert (
        state.goal_error == "Goal 'research': another goal already has this id; ids must be unique"
    )
    await AgentsState.save.fn(state, {"name": "Reviewer"})
    assert state.error == state.goal_error
    await AgentsState.remove_row.fn(state, GOAL, 1)
    assert state.goal_error == "" and [g.id for g in state.goals] == ["research"]
    reopened = await loaded()
    assert [(g.id, g.description) for g in reopened.goals] == [
        ("research", "Find things in the code")
    ]


async def test_a_family_a_goal_names_stays_listed_after_its_tools_are_unpicked(host: Host) -> None:
    state = await loaded()
    await AgentsState.toggle_pick.fn(state, "read_file")
    await AgentsState.add_row.fn(state, GOAL)
    await AgentsState.set_row_text.fn(state, GOAL, 0, "description", "Read files")
    await AgentsState.toggle_row_choice.fn(state, GOAL, 0, "read")
    await AgentsState.toggle_pick.fn(state, "read_file")
    (delegate,) = state.goals[0].delegates
    assert (delegate.family, delegate.checked) == ("read", True)
    assert delegate.tools == "No picked tool is in this family"
    agent_id = await saved_agent(state)
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None
    assert stored.goals == [{"id": "goal-1", "description": "Read files", "delegates": ["read"]}]


async def test_scopes_serve_the_agents_goals_and_follow_a_renamed_or_removed_goal(
    host: Host,
) -> None:
    state = await loaded()
    agent_id = await saved_agent(state)
    await AgentsState.add_row.fn(state, GOAL)
    await AgentsState.set_row_text.fn(state, GOAL, 0, "description", "Find things in the code")
    await AgentsState.add_row.fn(state, SCOPE)
    assert state.goal_error.startswith("Scope 'scope-1': 'category' must be a non-blank")
    await AgentsState.set_row_text.fn(state, SCOPE, 0, "category", "source")
    assert state.goal_error.startswith("Scope 'scope-1': 'description' must be a non-blank")
    await AgentsState.set_row_text.fn(state, SCOPE, 0, "description", "The repository")
    await AgentsState.toggle_row_choice.fn(state, SCOPE, 0, "goal-1")
    assert state.goal_error == ""
    (scope,) = state.scopes
    assert [(g.goal_id, g.checked, g.label) for g in scope.goals] == [
        ("goal-1", True, "scope-1 serves goal-1")
    ]
    await AgentsState.set_row_text.fn(state, GOAL, 0, "id", "research")
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None and stored.scopes == [
        {
            "id": "scope-1",
            "description": "The repository",
            "category": "source",
            "goal_ids": ["research"],
        }
    ]
    await AgentsState.remove_row.fn(state, GOAL, 0)
    assert state.goal_error == "" and state.scopes[0].goals == []
    stored = agent_store.get_agent(host.engine, agent_id, owner=LOCAL_USER_ID)
    assert stored is not None and stored.goals == [] and stored.scopes[0]["goal_ids"] == []
    await AgentsState.remove_row.fn(state, SCOPE, 0)
    reopened = await loaded()
    assert reopened.scopes == []
