"""A turn's calls reach the intents dashboard when it ends: which intents were required,
which tools the operator opted out, and a real demo turn copied end to end."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, select

from intent_ui.agent.dashboard_copies import turn_copies
from intent_ui.agent.runtime import AgentRuntime
from intent_ui.agent.session import TurnRequest, TurnSessions
from intent_ui.config import AppConfig, DashboardConfig
from intent_ui.core.capabilities.intent import with_intent
from intent_ui.store import conversations as conv
from intent_ui.store import users as user_store
from intent_ui.store.dashboard import DashboardCall


@dataclass
class FakeTool:
    name: str
    server: str | None
    tool_id: str
    definition: dict[str, Any] = field(default_factory=dict)


SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}
NATIVE = FakeTool("grep", None, "grep", {"parameters": dict(with_intent(SCHEMA))})
MCP = FakeTool("search_issues", "github", "search_issues_mcp_github", {"parameters": SCHEMA})
ACTION = FakeTool("getWeather", None, "getWeather_action_api", {"parameters": SCHEMA})


class FakeRuntime:
    def __init__(self, *tools: FakeTool) -> None:
        self.tools = list(tools)
        self.asked: list[tuple[Any, str]] = []

    def tools_for(self, agent_tool_ids: Any, user_id: str) -> list[FakeTool]:
        self.asked.append((agent_tool_ids, user_id))
        return self.tools


def test_a_tool_whose_schema_requires_the_intent_is_required_and_an_injected_one_optional() -> None:
    runtime = FakeRuntime(NATIVE, MCP, ACTION)
    copies = turn_copies(runtime, owner_id="alice", agent_id="a1", agent_tool_ids=["grep"])
    assert runtime.asked == [(["grep"], "alice")]
    assert copies.required("grep", None)
    assert not copies.required("search_issues", "github")
    # An imported action has no server, but its intent was injected: optional.
    assert not copies.required("getWeather", None)
    # Tools the turn was not offered by name (the loop's own tool_search): by server.
    assert copies.required("tool_search", None)
    assert not copies.required("other", "somewhere")
    assert (copies.owner_id, copies.agent_id) == ("alice", "a1")


def test_tools_are_opted_out_by_id_or_by_name() -> None:
    copies = turn_copies(
        FakeRuntime(NATIVE, MCP),
        owner_id="alice",
        agent_id="default",
        agent_tool_ids=None,
        omit=["search_issues_mcp_github", "grep"],
    )
    assert copies.omitted("search_issues", "github")
    assert copies.omitted("grep", None)
    assert not copies.omitted("read_file", None)


def test_a_runtime_that_cannot_list_tools_falls_back_to_the_server_rule() -> None:
    copies = turn_copies(object(), owner_id="u", agent_id="default", agent_tool_ids=None)
    assert copies.required("grep", None) and not copies.required("x", "github")


async def test_a_real_demo_turn_is_copied_for_its_user_when_it_ends(
    engine: Engine, oauth_demo: AppConfig
) -> None:
    config = oauth_demo
    opted_out = config.model_copy(
        update={"dashboard": DashboardConfig(omit_intents=("grep_search",))}
    )
    alice = user_store.ensure_user(engine, "alice").id
    chat = conv.create_conversation(engine, owner=alice, endpoint="demo", model="demo")
    async with AgentRuntime(config) as runtime:
        turns = []
        for settings in (config, opted_out):
            sessions = TurnSessions(engine=engine, runtime=runtime, config=settings)
            request = TurnRequest(
                chat.id, "search for OAuth and MCP", "demo", "demo", user_id=alice
            )
            session = await sessions.start(request)
            await session.wait()
            turns.append(session)
    copied, omitted = (_rows(engine, session.message_id) for session in turns)
    calls = turns[0].view.calls()
    assert [r.tool for r in copied] == [c.tool for c in calls] == ["grep_search"] * 2
    assert {(r.owner_id, r.agent_id) for r in copied} == {(alice, "default")}
    # The app's own tools declare their intent: required, and the model wrote each one.
    assert {(r.intent_context, r.has_intent, r.status) for r in copied} == {
        ("required", True, "ok")
    }
    assert [r.intent for r in copied] == [c.intent for c in calls]
    # Opted out: counted the same, with no text of the intent kept.
    assert [(r.intent_context, r.has_intent) for r in omitted] == [("required", True)] * 2
    assert [(r.intent, r.outcome, r.intent_hash) for r in omitted] == [(None, None, None)] * 2


def _rows(engine: Engine, message_id: str) -> list[Any]:
    table = DashboardCall.__table__  # type: ignore[attr-defined]
    with engine.connect() as connection:
        return list(
            connection.execute(
                select(table).where(table.c.message_id == message_id).order_by(table.c.position)
            ).all()
        )
