"""`run_tools_with_code` in a real browser, on the offline demo model and real bubblewrap.

The agent "Counter" may call `grep_search` from code. Asked to count the TODOs with code,
the demo writes one program that calls `grep_search` through the bridge: the page shows
one card for the whole program, labelled by its intent while the arguments stream and
while it runs, settled under the same intent (the runner authors no outcome); the
program's `grep_search` calls get no card of their own. Opening the card shows the
program and what it printed. A program that reads outside the workspace settles as an
error, and the card shows why. With the sandbox switched off, the builder offers neither
sandboxed tool and says why.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from reflex.testing import AppHarness

from intent_ui.store import agents as agent_store
from intent_ui.store.db import init_db
from intent_ui.store.models import LOCAL_USER_ID
from tests.e2e.harness import database_path, running_app
from tests.e2e.tabs import ask
from tests.support.sandbox import readable_folder, requires_sandbox

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
"""The first page of a module waits for the dev build."""

COUNT = "count the TODOs with code"
INTENT = "Counting the lines that mention TODO with a program"
PRINTED = "3 lines mention TODO in 2 files"
DEFAULT = "Running run_tools_with_code"
ESCAPE = "print(open('/etc/shadow').read())"

# Every distinct (state, label) a card of the page showed, recorded as the page changes,
# so the test sees the card while it streams and runs however briefly that lasts.
RECORD_CARDS = """
window.__cards = [];
const record = () => {
  for (const card of document.querySelectorAll('[data-testid="tool-call"]')) {
    const label = card.querySelector('[data-testid="tool-call-label"]');
    const entry = card.dataset.state + '|' + (label ? label.textContent : '');
    const seen = window.__cards;
    if (seen[seen.length - 1] !== entry) seen.push(entry);
  }
};
new MutationObserver(record).observe(document.body, {
  subtree: true, childList: true, characterData: true, attributes: true,
});
"""


def test_without_the_sandbox_the_builder_offers_no_runner_and_says_why(
    tmp_path: Path, workspace: Path, browser: Browser
) -> None:
    # First, and an app of its own that stops before the module's app starts.
    config = f"endpoints:\n  - kind: demo\nworkspace: {workspace}\nsandbox:\n  enabled: false\n"
    with running_app(tmp_path, config) as app:
        context = browser.new_context()
        page = context.new_page()
        assert app.frontend_url is not None
        page.goto(app.frontend_url.rstrip("/") + "/agents")
        native = page.locator('[data-testid="tool-group-section"][data-kind="native"]')
        expect(native).to_contain_text(
            "bash_tool and run_tools_with_code are not offered: the sandbox is switched off "
            "in the configuration (sandbox: enabled: false).",
            timeout=FIRST_LOAD_MS,
        )
        expect(native.locator('[data-testid="tool-pick"][data-tool="read_file"]')).to_have_count(1)
        for tool in ("run_tools_with_code", "bash_tool"):
            expect(page.locator(f'[data-testid="tool-pick"][data-tool="{tool}"]')).to_have_count(0)
        context.close()


@pytest.fixture(scope="module")
def workspace() -> Iterator[Path]:
    # Outside pytest's private temporary folders: the sandbox runs as `nobody` when the
    # app runs as root, and must read the workspace.
    with readable_folder() as folder:
        (folder / "src").mkdir()
        (folder / "src" / "app.py").write_text("x = 1  # TODO one\n# TODO two\n")
        (folder / "notes.md").write_text("TODO write the notes\n")
        yield folder


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, workspace: Path) -> Iterator[AppHarness]:
    workdir = tmp_path_factory.mktemp("code_runner")
    url = f"sqlite:///{database_path(workdir)}"
    with mock.patch.dict(os.environ, {"DB_URL": url}):
        agent_store.create_agent(
            init_db(url),
            owner=LOCAL_USER_ID,
            name="Counter",
            tools=["run_tools_with_code", "grep_search"],
            tool_options={"grep_search": {"allowed_callers": ["direct", "code_execution"]}},
        )
    config = f"endpoints:\n  - kind: demo\n    pacing_ms: 15\nworkspace: {workspace}\n"
    with running_app(workdir, config) as harness:
        yield harness


@pytest.fixture
def page(app: AppHarness, browser: Browser) -> Iterator[Page]:
    """A new chat with the Counter agent."""
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    assert app.frontend_url is not None
    page.goto(app.frontend_url)
    expect(page.get_by_test_id("chat-input")).to_be_visible(timeout=FIRST_LOAD_MS)
    page.get_by_test_id("new-chat").click()
    page.get_by_test_id("agent-select").select_option(label="Counter")
    yield page
    context.close()
    assert not errors, f"page errors: {errors}"


def finished(page: Page, text: str) -> Locator:
    """Ask `text`; its turn once complete."""
    ask(page, text)
    turn = page.get_by_test_id("assistant-message").last
    expect(turn).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
    return turn


def open_card(card: Locator) -> None:
    card.locator(".iu-card-head").first.click()
    expect(card.get_by_test_id("tool-call-args")).to_be_visible()


@requires_sandbox
def test_one_card_carries_the_programs_intent_and_its_tool_calls_get_none(page: Page) -> None:
    page.evaluate(RECORD_CARDS)
    turn = finished(page, COUNT)

    # One card for the sandbox: the program's grep_search calls are not cards.
    card = turn.get_by_test_id("tool-call")
    expect(card).to_have_count(1)
    expect(card).to_have_attribute("data-state", "settled")
    expect(card.get_by_test_id("tool-call-label")).to_have_text(INTENT)
    expect(turn).to_contain_text(PRINTED)
    # The intent was the label while the program streamed and while it ran.
    seen: list[str] = page.evaluate("window.__cards")
    assert f"streaming|{INTENT}" in seen, seen
    assert f"running|{INTENT}" in seen, seen
    assert seen[-1] == f"settled|{INTENT}", seen
    # No other card ever showed: before its intent the card reads the tool's default.
    labels = {entry.split("|", 1)[1] for entry in seen}
    assert all(INTENT.startswith(label) or label == DEFAULT for label in labels), seen

    # Opening the card shows the program (it called grep_search) and what it printed.
    open_card(card)
    program = card.get_by_test_id("tool-call-args")
    expect(program).to_contain_text("grep_search(")
    expect(program).to_contain_text(INTENT)
    result = card.get_by_test_id("tool-call-result")
    expect(result).to_contain_text(PRINTED)
    expect(result).to_contain_text("- src/app.py: 2")

    # A reload shows the same single card.
    page.reload()
    turn = page.get_by_test_id("assistant-message").last
    expect(turn.get_by_test_id("tool-call")).to_have_count(1, timeout=FIRST_LOAD_MS)
    expect(turn.get_by_test_id("tool-call-label")).to_have_text(INTENT)


@requires_sandbox
def test_a_program_reading_outside_the_workspace_settles_as_an_error_saying_why(
    page: Page,
) -> None:
    turn = finished(page, f"run `{ESCAPE}` in python")
    card = turn.get_by_test_id("tool-call")
    expect(card).to_have_count(1)
    expect(card).to_have_attribute("data-state", "error")
    expect(card.get_by_test_id("tool-call-label")).to_have_text(
        f"Failed: Running {ESCAPE} in the Python sandbox"
    )
    expect(turn).to_contain_text("The program exited with status 1.")

    open_card(card)
    result = card.get_by_test_id("tool-call-result")
    expect(result).to_contain_text("The program exited with status 1.")
    expect(result).to_contain_text("FileNotFoundError")
    expect(result).to_contain_text("/etc/shadow")
