"""The agent builder at `/agents` in a real browser: per-tool switches persist, "Describe all"
across an MCP server, the admin gate hides switches, and OpenAPI actions on a short hostname
keep their options under either spelling of the encoded domain.

`github` is the real stdio MCP test server; the database is a real SQLite file per module
fixture, read back here through the store to check what was written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from reflex.testing import AppHarness
from sqlalchemy import Engine

from intent_ui.core.capabilities.selection import canonical_tool_options, resolve_opt_in
from intent_ui.store import agents as agent_store
from intent_ui.store.db import init_db
from intent_ui.store.models import LOCAL_USER_ID
from tests.e2e.harness import LOOPBACK_ACTIONS, github_mcp_block, running_app
from tests.e2e.tabs import new_agent
from tests.support.loopback import serve_get

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
"""The first visit starts the MCP server and loads the tokenizer."""

GITHUB_ELIGIBLE = ("search_code_mcp_github", "crash_mcp_github", "slow_mcp_github")
SLACK_ACTION = "postMessage_action_slack---com"
SLACK_RUNTIME_ID = "postMessage_action_slack_com"
SLACK_OPENAPI = {
    "openapi": "3.0.3",
    "info": {"title": "Slack", "version": "1"},
    "servers": [{"url": "https://slack.com/api"}],
    "paths": {
        "/chat.postMessage": {
            "post": {
                "operationId": "postMessage",
                "summary": "Send a message to a channel.",
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"channel": {"type": "string"}, "text": {}},
                            }
                        }
                    }
                },
            }
        }
    },
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("builder")


@pytest.fixture(scope="module")
def app(workdir: Path) -> Iterator[AppHarness]:
    with running_app(workdir, github_mcp_block() + LOOPBACK_ACTIONS) as harness:
        yield harness


@pytest.fixture(scope="module")
def engine(app: AppHarness, workdir: Path) -> Engine:
    return init_db(f"sqlite:///{workdir / 'intent_ui.db'}")


def open_builder(page: Page, app: AppHarness) -> None:
    assert app.frontend_url is not None
    page.goto(app.frontend_url.rstrip("/") + "/agents")
    expect(page.get_by_test_id("describe-all-toggle").first).to_be_visible(timeout=FIRST_LOAD_MS)


def toggle(page: Page, tool_id: str) -> Locator:
    return page.locator(f'[data-testid="describe-intent-toggle"][data-tool="{tool_id}"]')


def stored_options(engine: Engine, agent_id: str) -> dict[str, dict[str, object]]:
    agent = agent_store.get_agent(engine, agent_id, owner=LOCAL_USER_ID)
    assert agent is not None
    return agent.tool_options


def test_toggle_one_tool_persists_across_a_reload(
    app: AppHarness, engine: Engine, page: Page
) -> None:
    open_builder(page, app)
    agent_id = new_agent(page, "Reviewer")
    search = toggle(page, "search_code_mcp_github")
    expect(search).to_have_attribute("aria-pressed", "false")
    expect(toggle(page, "read_file")).to_have_attribute("aria-pressed", "true")
    search.click()
    expect(search).to_have_attribute("aria-pressed", "true")
    page.reload()
    expect(toggle(page, "search_code_mcp_github")).to_have_attribute(
        "aria-pressed", "true", timeout=FIRST_LOAD_MS
    )
    assert stored_options(engine, agent_id) == {"search_code_mcp_github": {"describe_intent": True}}


def test_toggle_is_a_keyboard_operable_button_with_a_cost(app: AppHarness, page: Page) -> None:
    open_builder(page, app)
    new_agent(page, "Keyboard")
    slow = toggle(page, "slow_mcp_github")
    expect(slow).to_have_attribute("aria-pressed", "false")
    expect(slow).to_contain_text("tokens")
    slow.focus()
    page.keyboard.press("Enter")
    expect(slow).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("Space")
    expect(slow).to_have_attribute("aria-pressed", "false")
    expect(page.get_by_test_id("tokenizer-name").first).to_contain_text("cl100k_base")


def test_the_builder_speaks_the_browsers_language_unless_the_reader_chose_one(
    app: AppHarness, browser: Browser
) -> None:
    assert app.frontend_url is not None
    context = browser.new_context(locale="es-ES")
    try:
        page = context.new_page()
        page.goto(app.frontend_url.rstrip("/") + "/agents")
        expect(page.get_by_test_id("agent-save")).to_have_text("Guardar", timeout=FIRST_LOAD_MS)
        expect(page.get_by_test_id("describe-all-toggle").first).to_contain_text(
            "Describir todas las herramientas"
        )
        # The language chosen on the chat page (stored in the browser) wins.
        page.evaluate("localStorage.setItem('intent_ui_lang', 'ja')")
        page.reload()
        expect(page.get_by_test_id("agent-save")).to_have_text("保存", timeout=FIRST_LOAD_MS)
        expect(toggle(page, "read_file")).to_contain_text("説明")
    finally:
        context.close()


def test_describe_all_across_the_github_server_and_back(
    app: AppHarness, engine: Engine, page: Page
) -> None:
    open_builder(page, app)
    agent_id = new_agent(page, "Bulk")
    bulk = page.locator('[data-testid="describe-all-toggle"][data-server="github"]')
    expect(bulk).to_have_attribute("aria-pressed", "false")
    bulk.click()
    expect(bulk).to_have_attribute("aria-pressed", "true")
    for tool_id in GITHUB_ELIGIBLE:
        expect(toggle(page, tool_id)).to_have_attribute("aria-pressed", "true")
    # create_issue has its own business `intent` parameter: not eligible, left alone.
    issue = toggle(page, "create_issue_mcp_github")
    expect(issue).to_have_attribute("aria-disabled", "true")
    expect(issue).to_have_attribute("aria-pressed", "false")
    assert stored_options(engine, agent_id) == {
        tool_id: {"describe_intent": True} for tool_id in GITHUB_ELIGIBLE
    }
    bulk.click()
    expect(bulk).to_have_attribute("aria-pressed", "false")
    for tool_id in GITHUB_ELIGIBLE:
        expect(toggle(page, tool_id)).to_have_attribute("aria-pressed", "false")
    page.reload()
    expect(toggle(page, "search_code_mcp_github")).to_have_attribute(
        "aria-pressed", "false", timeout=FIRST_LOAD_MS
    )
    assert stored_options(engine, agent_id) == {}


def test_code_only_tool_keeps_its_intent_state_visible_but_disabled(
    app: AppHarness, page: Page
) -> None:
    open_builder(page, app)
    new_agent(page, "Code only")
    search = toggle(page, "search_code_mcp_github")
    search.click()
    expect(search).to_have_attribute("aria-pressed", "true")
    page.locator('[data-testid="code-only-toggle"][data-tool="search_code_mcp_github"]').click()
    expect(search).to_have_attribute("aria-disabled", "true")
    expect(search).to_have_attribute("aria-pressed", "true")
    search.click(force=True)  # ignored while not eligible
    expect(search).to_have_attribute("aria-pressed", "true")


def test_openapi_action_on_a_short_hostname_persists_and_resolves(
    app: AppHarness, engine: Engine, page: Page, tmp_path: Path
) -> None:
    open_builder(page, app)
    agent_id = new_agent(page, "Slack poster")
    spec = tmp_path / "slack.json"
    spec.write_text(json.dumps(SLACK_OPENAPI))
    page.locator('[data-testid="action-upload"] input[type="file"]').set_input_files(spec)
    action = toggle(page, SLACK_ACTION)
    expect(action).to_have_attribute("aria-pressed", "false", timeout=FIRST_LOAD_MS)
    page.locator(f'[data-testid="tool-pick"][data-tool="{SLACK_ACTION}"]').check()
    action.click()
    expect(action).to_have_attribute("aria-pressed", "true")
    page.reload()
    expect(toggle(page, SLACK_ACTION)).to_have_attribute(
        "aria-pressed", "true", timeout=FIRST_LOAD_MS
    )
    options = stored_options(engine, agent_id)
    # Stored under the `---` spelling, read by the runtime under the `_` one: the same tool.
    folded = canonical_tool_options(options, [SLACK_RUNTIME_ID])
    assert resolve_opt_in(folded, "describe_intent", SLACK_RUNTIME_ID) is True
    # And an option stored under the `_` spelling shows on the `---` switch.
    agent_store.update_agent(
        engine,
        agent_id,
        tool_options={SLACK_RUNTIME_ID: {"describe_intent": True}},
        owner=LOCAL_USER_ID,
    )
    page.reload()
    action = toggle(page, SLACK_ACTION)
    expect(action).to_have_attribute("aria-pressed", "true", timeout=FIRST_LOAD_MS)
    action.click()
    expect(action).to_have_attribute("aria-pressed", "false")
    assert stored_options(engine, agent_id) == {}


PETS_OPENAPI = {
    "openapi": "3.1.0",
    "info": {"title": "Pets"},
    "servers": [{"url": "/v1"}],
    "paths": {"/pets": {"get": {"operationId": "listPets", "summary": "List pets."}}},
}


@pytest.fixture
def openapi_url() -> Iterator[str]:
    """A loopback server answering every GET with the Pets document."""
    with serve_get(json.dumps(PETS_OPENAPI).encode()) as site:
        yield f"{site}/openapi.json"


def test_openapi_import_from_a_url(app: AppHarness, page: Page, openapi_url: str) -> None:
    open_builder(page, app)
    new_agent(page, "Pet shop")
    page.get_by_test_id("action-url").fill(openapi_url)
    page.get_by_test_id("action-import-url").click()
    port = openapi_url.split(":")[2].split("/")[0]
    # The relative server resolves against the document's address: 127.0.0.1:<port>/v1.
    pets = toggle(page, f"listPets_action_127---0---0---1_{port}")
    expect(pets).to_have_attribute("aria-pressed", "false", timeout=FIRST_LOAD_MS)
    expect(page.get_by_test_id("builder-notice")).to_contain_text("Imported 1 action")


# --- the admin gate: a configuration that enables only run_in_background --------------------


@pytest.fixture(scope="module")
def gated_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    config = "capabilities: [run_in_background]\n" + github_mcp_block()
    with running_app(tmp_path_factory.mktemp("gated"), config) as harness:
        yield harness


def test_capability_off_hides_the_intent_switches(gated_app: AppHarness, page: Page) -> None:
    assert gated_app.frontend_url is not None
    page.goto(gated_app.frontend_url.rstrip("/") + "/agents")
    background = page.locator(
        '[data-testid="run-in-background-toggle"][data-tool="search_code_mcp_github"]'
    )
    expect(background).to_be_visible(timeout=FIRST_LOAD_MS)
    expect(
        page.locator('[data-testid="tool-pick"][data-tool="search_code_mcp_github"]')
    ).to_be_visible()
    expect(page.get_by_test_id("describe-intent-toggle")).to_have_count(0)
    expect(page.get_by_test_id("describe-all-toggle")).to_have_count(0)
    expect(page.get_by_test_id("defer-loading-toggle")).to_have_count(0)
    expect(page.get_by_test_id("code-only-toggle")).to_have_count(0)
