"""Errors a person can act on: each failure shows what happened and what to do, with a
Retry that asks the question again once the cause is gone.

The app has two endpoints: `replay`, the loopback SSE server answering with `scenario`
(a status code, tool calls or a reply), and `down`, whose base_url is a loopback port
nothing listens on until a test starts a server there. `index` is a real stdio MCP
server whose `lookup` tool fails until a file exists.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from reflex.testing import AppHarness

from tests.e2e.harness import running_app
from tests.e2e.scenario import Scenario, calls_script, openai_config, reply
from tests.support.loopback import free_port
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import openai_chunks

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
INDEX_SERVER = ROOT / "tests" / "support" / "mcp_index_server.py"
SHOWN = 20_000  # ms: a refused connection is retried twice before the turn gives up
ASKED = "Where is OAuth handled?"


@pytest.fixture(scope="module")
def down_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def index_ready(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file whose existence makes the `lookup` tool work."""
    return tmp_path_factory.mktemp("index") / "ready"


@pytest.fixture(scope="module")
def app(
    server: ReplayServer,
    down_port: int,
    index_ready: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[AppHarness]:
    config = (
        openai_config(server) + "  - name: down\n"
        "    kind: openai\n"
        f"    base_url: http://127.0.0.1:{down_port}/v1\n"
        "    api_key: test-key\n"
        "    models: [gpt-4o-mini]\n"
        "mcp_servers:\n"
        "  index:\n"
        f'    command: "{sys.executable}"\n'
        f'    args: ["{INDEX_SERVER}"]\n'
        f'    env: {{INDEX_READY: "{index_ready}"}}\n'
    )
    with running_app(tmp_path_factory.mktemp("errors"), config) as harness:
        yield harness


def ask(page: Page, app: AppHarness, endpoint: str = "replay") -> None:
    assert app.frontend_url is not None
    page.goto(app.frontend_url)
    page.get_by_test_id("endpoint-select").select_option(endpoint)
    page.get_by_test_id("chat-input").fill(ASKED)
    page.get_by_test_id("send-button").click()


def expect_failure(page: Page, message: str, hint: str) -> None:
    """The failed turn says what happened and what to do, offers Retry, and nothing of
    it reads like a stack trace."""
    error = page.get_by_test_id("chat-error")
    expect(error).to_have_count(1, timeout=SHOWN)
    expect(error).to_contain_text(message)
    expect(error).to_contain_text(hint)
    expect(error).not_to_contain_text("Traceback")
    expect(page.get_by_test_id("chat-retry")).to_be_visible()
    expect(page.get_by_test_id("send-button")).to_be_visible()  # the turn is over


def expect_retried(page: Page, answer: str) -> None:
    """Retry asked the same question as a new turn, which answered; the failed turn
    keeps its note, and no Retry is left."""
    page.get_by_test_id("chat-retry").click()
    turns = page.get_by_test_id("assistant-message")
    expect(turns).to_have_count(2)
    expect(turns.nth(1)).to_have_attribute("data-status", "complete")
    expect(turns.nth(1)).to_contain_text(answer)
    expect(turns.nth(1).get_by_test_id("chat-error")).to_have_count(0)
    expect(page.get_by_test_id("chat-retry")).to_have_count(0)
    expect(page.get_by_test_id("user-message")).to_have_text([ASKED, ASKED])


def test_a_rate_limit_says_to_wait_and_retry_works_once_it_lifts(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    limited = {"error": {"message": "Rate limit reached for gpt-4o-mini", "type": "requests"}}
    scenario.first = Script.json(429, limited, headers={"retry-after-ms": "1"})
    ask(page, app)
    expect_failure(
        page,
        "The model provider is limiting requests, or the quota is used up.",
        "Wait a moment and retry",
    )
    expect(page.get_by_test_id("chat-error")).to_contain_text("Rate limit reached")
    scenario.first = reply("OAuth is handled in the callback router.")
    expect_retried(page, "OAuth is handled in the callback router.")


def test_a_refused_api_key_says_to_set_one_and_retry_works_once_it_is_set(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    refused = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
    scenario.first = Script.json(401, refused)
    ask(page, app)
    expect_failure(
        page, "The model provider refused the API key.", "Set a valid api_key for this endpoint"
    )
    scenario.first = reply("Signed in: OAuth lives in auth.py.")
    expect_retried(page, "Signed in: OAuth lives in auth.py.")


def test_a_provider_that_is_down_says_to_check_it_and_retry_works_once_it_is_up(
    app: AppHarness, page: Page, down_port: int
) -> None:
    ask(page, app, endpoint="down")
    expect_failure(
        page,
        "The model provider could not be reached.",
        "Check that its server is running",
    )
    expect(page.get_by_test_id("chat-error")).to_contain_text(f"127.0.0.1:{down_port}")
    answer = Script.sse(openai_chunks(text="Up again: OAuth is in auth.py.", finish_reason="stop"))
    with ReplayServer(default=answer, port=down_port):
        expect_retried(page, "Up again: OAuth is in auth.py.")


def test_a_tool_that_fails_is_named_and_retry_works_once_it_recovers(
    app: AppHarness, page: Page, scenario: Scenario, index_ready: Path
) -> None:
    scenario.first = calls_script(
        [("call_l", "lookup", {"intent": "Looking up OAuth in the index", "key": "OAuth"})]
    )
    scenario.followup = reply("The index could not answer.")
    ask(page, app)
    expect(page.get_by_test_id("tool-call")).to_have_attribute("data-state", "error")
    expect_failure(
        page,
        "A tool failed: lookup in index.",
        "Check the tool (its MCP server, action or arguments), then retry.",
    )
    expect(page.get_by_test_id("chat-error")).to_contain_text("being rebuilt")
    index_ready.write_text("ok")
    scenario.followup = reply("OAuth is defined in src/auth.py.")
    expect_retried(page, "OAuth is defined in src/auth.py.")
    cards = page.get_by_test_id("tool-call")
    expect(cards).to_have_count(2)
    expect(cards.nth(1)).to_have_attribute("data-state", "settled")
    expect(cards.nth(1).get_by_test_id("tool-call-label")).to_have_text(re.compile("OAuth"))
