"""Turn-level goals in a real browser: an agent with two goals and a scope, built in the
builder, whose turn starts with the model choosing a goal; the turn shows that goal's line
above its tool calls, is offered only that goal's tools (and told the goal's scopes), and
keeps its goal line after a reload.

The model is an OpenAI-shaped SSE server on loopback that answers by what it is offered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from reflex.testing import AppHarness

from tests.e2e.axe import assert_accessible
from tests.e2e.harness import running_app
from tests.e2e.scenario import calls_script, openai_config, reply
from tests.support.sse_server import ReplayServer, Script

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
RESEARCH = "Find where things are handled in the code"
REMEMBER = "Remember a fact about the user"


def respond(request: Any, attempt: int) -> Script:
    """Choose `research` when offered the selection tool, then search, then answer."""
    del attempt
    offered = [tool["function"]["name"] for tool in (request or {}).get("tools") or []]
    messages = (request or {}).get("messages") or []
    if offered == ["select_intent"]:
        chosen = {"intent": "Choosing the research goal", "intent_id": "research", "input": {}}
        return calls_script([("call_goal", "select_intent", chosen)])
    last_calls = [
        call["function"]["name"]
        for message in messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
    ]
    if last_calls and last_calls[-1] == "select_intent":
        search = {"intent": "Searching for OAuth handling", "pattern": "OAuth"}
        return calls_script([("call_grep", "grep_search", search)])
    return reply("OAuth is handled in auth.py.")


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    replay = ReplayServer(responder=respond).start()
    yield replay
    replay.stop()


@pytest.fixture(scope="module")
def app(server: ReplayServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir = tmp_path_factory.mktemp("goals")
    workspace = workdir / "workspace"
    workspace.mkdir()
    (workspace / "auth.py").write_text("def oauth_callback():\n    # OAuth handling\n")
    config = openai_config(server, f"workspace: {workspace}\n")
    with running_app(workdir, config) as harness:
        yield harness


def add_goal(page: Page, index: int, goal_id: str, description: str, family: str) -> None:
    page.get_by_test_id("goal-add").click()
    row = page.get_by_test_id("goal-row").nth(index)
    expect(row.get_by_test_id("goal-id")).to_have_value(f"goal-{index + 1}")
    row.get_by_test_id("goal-id").fill(goal_id)
    row.get_by_test_id("goal-description").fill(description)
    delegate = row.locator(f'[data-testid="goal-delegate"][data-family="{family}"]')
    delegate.check()
    expect(delegate).to_be_checked()
    expect(row).to_have_attribute("data-goal-id", goal_id)


def test_a_goal_turn_shows_its_goal_and_offers_only_its_tools(
    app: AppHarness, page: Page, server: ReplayServer, tmp_path: Path
) -> None:
    assert app.frontend_url
    page.goto(app.frontend_url.rstrip("/") + "/agents")
    expect(page.get_by_test_id("agent-new")).to_be_visible(timeout=FIRST_LOAD_MS)
    page.get_by_test_id("agent-new").click()
    page.get_by_test_id("agent-name").fill("Goal keeper")
    page.get_by_test_id("agent-save").click()
    expect(page.get_by_test_id("agent-row").filter(has_text="Goal keeper")).to_have_count(1)
    for tool_id in ("read_file", "grep_search", "set_memory"):
        pick = page.locator(f'[data-testid="tool-pick"][data-tool="{tool_id}"]')
        pick.check()
        expect(pick).to_be_checked()

    # A goal starts without a description: the builder says which goal and what to do.
    page.get_by_test_id("goal-add").click()
    expect(page.get_by_test_id("goal-error")).to_have_text(
        "Goal 'goal-1': describe when the model should choose it"
    )
    page.get_by_test_id("goal-remove").click()
    expect(page.get_by_test_id("goal-row")).to_have_count(0)
    expect(page.get_by_test_id("goal-error")).to_have_count(0)

    add_goal(page, 0, "research", RESEARCH, "read")
    add_goal(page, 1, "remember", REMEMBER, "memory")
    expect(page.get_by_test_id("goal-error")).to_have_count(0)
    families = page.get_by_test_id("goal-row").nth(0).get_by_test_id("goal-delegate")
    expect(families).to_have_count(2)  # the families of the picked tools: read, memory
    # A scope the research goal works on: told to the model with the goal it chose.
    page.get_by_test_id("scope-add").click()
    scope = page.get_by_test_id("scope-row")
    expect(scope.get_by_test_id("scope-id")).to_have_value("scope-1")
    scope.get_by_test_id("scope-id").fill("code")
    scope.get_by_test_id("scope-description").fill("The repository")
    scope.get_by_test_id("scope-category").fill("source")
    serves = scope.locator('[data-testid="scope-goal"][data-goal="research"]')
    serves.check()
    expect(serves).to_be_checked()
    expect(scope).to_have_attribute("data-scope-id", "code")
    expect(page.get_by_test_id("goal-error")).to_have_count(0)
    assert_accessible(page)

    page.goto(app.frontend_url)
    page.get_by_test_id("agent-select").select_option(label="Goal keeper")
    page.get_by_test_id("chat-input").fill("Where is OAuth handled?")
    page.get_by_test_id("send-button").click()

    turn = page.get_by_test_id("assistant-message").last
    goal = turn.get_by_test_id("goal-line")
    expect(goal).to_have_text(RESEARCH)
    search = turn.locator('[data-testid="tool-call"][data-call-id="call_grep"]')
    expect(search).to_have_attribute("data-state", "settled")
    expect(search.get_by_test_id("tool-call-label")).to_have_text("Found 2 matches for OAuth")
    expect(turn).to_contain_text("OAuth is handled in auth.py.")
    # The goal line sits above the turn's tool calls (the selection's and the search's).
    below = goal.evaluate(
        """line => [...line.closest('[data-testid="assistant-message"]')
            .querySelectorAll('[data-testid="tool-call"], [data-testid="tool-group"]')]
            .map(call => !!(line.compareDocumentPosition(call) &
                Node.DOCUMENT_POSITION_FOLLOWING))"""
    )
    assert below == [True, True]

    requests = [r.json for r in server.requests]
    offered = [[t["function"]["name"] for t in body["tools"]] for body in requests]
    assert offered[0] == ["select_intent"]
    schema = requests[0]["tools"][0]["function"]["parameters"]["properties"]
    assert next(iter(schema)) == "intent"
    assert schema["intent_id"]["enum"] == ["research", "remember"]
    # After the choice: only the research goal's tools (the `read` family), not set_memory.
    assert sorted(offered[1]) == ["grep_search", "read_file"]
    chosen = json.loads(requests[1]["messages"][-1]["content"])
    assert chosen["goal"] == "research"
    assert chosen["scopes"] == [
        {"id": "code", "description": "The repository", "category": "source"}
    ]

    page.reload()
    expect(page.get_by_test_id("assistant-message").last.get_by_test_id("goal-line")).to_have_text(
        RESEARCH
    )
    assert_accessible(page)
