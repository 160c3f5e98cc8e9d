"""Compaction in a real browser: on the demo model with a small context budget, the
second turn starts past it, and the chat shows a divider where the first turn's calls
were compacted; opening it lists the ledger lines the model reads instead."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect
from reflex.testing import AppHarness

from tests.e2e.axe import assert_accessible
from tests.e2e.harness import running_app
from tests.e2e.tabs import ask

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
"""The first visit compiles the page."""


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir = tmp_path_factory.mktemp("compaction")
    workspace = workdir / "workspace"
    workspace.mkdir()
    (workspace / "README.md").write_text("# Project\n\n" + "It does things. " * 40 + "\n")
    (workspace / "app.py").write_text("print('hi')\n")
    config = (
        "endpoints:\n  - kind: demo\n    pacing_ms: 0\n    context_budget: 60\n"
        f"workspace: {workspace}\n"
    )
    with running_app(workdir, config) as harness:
        yield harness


ORDER = [
    "user-message",
    "assistant-message",
    "compaction-divider",
    "user-message",
    "assistant-message",
]


def in_order(page: Page) -> list[str]:
    """The thread's questions, turns and dividers, in the order the page shows them."""
    rows = page.locator(
        "[data-testid=user-message], [data-testid=assistant-message],"
        " [data-testid=compaction-divider]"
    )
    return [
        str(testid) for testid in rows.evaluate_all("(els) => els.map((e) => e.dataset.testid)")
    ]


def test_the_divider_shows_where_compaction_happened_and_opens_to_the_ledger(
    app: AppHarness, page: Page
) -> None:
    assert app.frontend_url
    page.goto(app.frontend_url)
    ask(page, "list the files")
    turns = page.get_by_test_id("assistant-message")
    expect(turns.first).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
    divider = page.get_by_test_id("compaction-divider")
    expect(divider).to_have_count(0)

    ask(page, "read README.md")
    expect(turns).to_have_count(2)
    expect(turns.nth(1)).to_have_attribute("data-status", "complete")
    # One divider, between the first turn and the question that started past the budget.
    expect(divider).to_have_count(1)
    expect(page.get_by_test_id("user-message").nth(1)).to_contain_text("read README.md")
    assert in_order(page) == ORDER
    lines = divider.get_by_test_id("compaction-lines")
    expect(divider).to_contain_text("Conversation compacted")
    expect(lines).not_to_be_visible()

    # Opening it lists what the model reads now instead of the first turn's calls.
    divider.get_by_text("Conversation compacted").click()
    expect(lines).to_be_visible()
    expect(lines.locator("li")).to_have_count(1)
    expect(lines.locator("li").first).to_contain_text(
        "list_directory [success]: Listing the workspace files →"
    )
    expect(lines.locator("li").first).to_contain_text("· files: .")
    # Open, it passes axe-core in both themes.
    for theme in ("light", "dark"):
        page.get_by_test_id("theme-select").select_option(theme)
        expect(page.locator("html")).to_have_class(re.compile(rf"(^|\s){theme}(\s|$)"))
        assert_accessible(page)

    # It is part of the conversation: a reload shows it in the same place.
    page.reload()
    expect(page.get_by_test_id("compaction-divider")).to_have_count(1, timeout=FIRST_LOAD_MS)
    expect(page.get_by_test_id("assistant-message")).to_have_count(2)
    assert in_order(page) == ORDER
