"""The chat on a phone (390 x 844, touch): the conversation takes the width, a turn's
labels stay readable on one line, the pickers wrap within the screen, and the sidebar is
a menu that opens and closes by tap and opens a conversation."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Page, expect
from reflex.testing import AppHarness

from tests.e2e.axe import assert_accessible
from tests.e2e.harness import running_app

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
WIDTH = PHONE["viewport"]["width"]  # type: ignore[index]
PROMPT = "find where OAuth and MCP are handled"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir = tmp_path_factory.mktemp("phone")
    workspace = workdir / "workspace"
    workspace.mkdir()
    (workspace / "auth.py").write_text("# OAuth: the MCP client refreshes its token here\n")
    config = f"endpoints:\n  - kind: demo\n    pacing_ms: 0\nworkspace: {workspace}\n"
    with running_app(workdir, config) as harness:
        yield harness


@pytest.fixture
def phone(app: AppHarness, open_page: Callable[..., Page]) -> Page:
    page = open_page(**PHONE)
    assert app.frontend_url is not None
    page.goto(app.frontend_url)
    expect(page.get_by_test_id("chat-input")).to_be_visible(timeout=FIRST_LOAD_MS)
    return page


def width(page: Page, testid: str) -> float:
    box = page.get_by_test_id(testid).first.bounding_box()
    assert box is not None, f"{testid} is not on the screen"
    return float(box["width"])


def ask(page: Page, text: str) -> None:
    page.get_by_test_id("chat-input").fill(text)
    page.get_by_test_id("send-button").tap()
    turn = page.get_by_test_id("assistant-message").last
    expect(turn).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)


def test_a_turn_takes_the_width_and_its_labels_read_on_one_line(phone: Page) -> None:
    expect(phone.get_by_test_id("new-chat")).to_be_hidden()  # the sidebar is in the menu
    expect(phone.get_by_test_id("menu-toggle")).to_be_visible()
    assert width(phone, "chat-input") > WIDTH / 2
    ask(phone, PROMPT)
    assert width(phone, "assistant-message") > WIDTH * 0.85
    assert width(phone, "user-message") > WIDTH / 2  # not a syllable per line
    labels = phone.get_by_test_id("tool-call-label")
    expect(labels.first).to_be_visible()
    # Each label shows at least half the screen's width of its text, or all of it.
    shown = labels.evaluate_all(
        """labels => labels.map(label => ({
            text: label.textContent,
            width: label.clientWidth,
            needs: label.scrollWidth,
            lines: Math.round(label.getBoundingClientRect().height
                / parseFloat(getComputedStyle(label).lineHeight)),
        }))"""
    )
    assert shown
    for label in shown:
        assert label["width"] >= min(label["needs"], WIDTH / 2), label
        assert label["lines"] == 1, label
    # The pickers wrap within the screen: nothing scrolls sideways.
    assert phone.evaluate("document.documentElement.scrollWidth") <= WIDTH
    for picker in ("endpoint-select", "model-select", "density-select", "theme-select"):
        expect(phone.get_by_test_id(picker)).to_be_in_viewport()
    assert_accessible(phone)


def test_the_menu_opens_and_closes_by_tap_and_opens_a_conversation(phone: Page) -> None:
    ask(phone, PROMPT)
    menu = phone.get_by_test_id("menu-toggle")
    menu.tap()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(phone.get_by_test_id("new-chat")).to_be_in_viewport()
    assert_accessible(phone)
    phone.touchscreen.tap(WIDTH - 20, 400)  # beside the drawer, on the dimmed chat
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(phone.get_by_test_id("new-chat")).to_be_hidden()

    menu.tap()
    phone.get_by_test_id("new-chat").tap()  # choosing closes the menu
    expect(phone.get_by_test_id("new-chat")).to_be_hidden()
    expect(phone.get_by_test_id("user-message")).to_have_count(0)
    menu.tap()
    rows = phone.get_by_test_id("conversation-row")
    expect(rows.first).to_be_in_viewport()
    rows.filter(has_text=PROMPT).first.get_by_test_id("conversation-title").tap()
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(phone.get_by_test_id("user-message").last).to_have_text(PROMPT)
    expect(phone.get_by_test_id("assistant-message").last).to_be_in_viewport()
