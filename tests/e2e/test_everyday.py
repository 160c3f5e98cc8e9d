"""The chat's everyday actions in a real browser: copying a reply and a code block,
searching conversations, and the keyboard shortcuts with their `?` dialog; the page with
all of them passes axe-core in the light and the dark theme.

The provider is the loopback OpenAI-shaped SSE server (`tests/e2e/scenario.py`), so a
reply can carry a fenced code block and a tool call between two paragraphs.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Literal

import pytest
from playwright.sync_api import Page, expect
from reflex.testing import AppHarness

from tests.e2e.axe import assert_accessible
from tests.e2e.harness import running_app
from tests.e2e.scenario import Scenario, openai_config, reply, send
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import openai_chunks

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
"""The first visit compiles the page."""

CODE = 'def add(a, b):\n    """Sum."""\n    return a + b'
BEFORE = "Let me look at the project first."
AFTER = f"Here is the helper:\n\n```python\n{CODE}\n```\n\nRun it with `pytest`."


@pytest.fixture(scope="module")
def app(server: ReplayServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir = tmp_path_factory.mktemp("everyday")
    workspace = workdir / "workspace"
    workspace.mkdir()
    (workspace / "helpers.py").write_text("def add(a, b):\n    return a + b\n")
    config = openai_config(server) + f"workspace: {workspace}\n"
    with running_app(workdir, config) as harness:
        yield harness


@pytest.fixture
def clipboard_page(open_page: Callable[..., Page]) -> Page:
    """A page whose context may read and write the clipboard; fails on page errors."""
    return open_page(permissions=["clipboard-read", "clipboard-write"])


def text_then_a_call_then_code(scenario: Scenario) -> None:
    """A turn whose reply is a paragraph, a tool call, then a paragraph with code."""
    call = ("call_ls", "list_directory", {"intent": "Listing the project", "path": "."})
    scenario.first = Script.sse(
        openai_chunks(text=BEFORE, tool_calls=[(call[0], call[1], json.dumps(call[2]))])
    )
    scenario.followup = reply(AFTER)


def clipboard(page: Page) -> str:
    return str(page.evaluate("navigator.clipboard.readText()"))


def test_copy_a_reply_as_markdown_and_a_code_block_as_code(
    app: AppHarness, clipboard_page: Page, scenario: Scenario
) -> None:
    page = clipboard_page
    text_then_a_call_then_code(scenario)
    send(page, app, "Write an add helper")
    message = page.get_by_test_id("assistant-message").last
    expect(message.get_by_test_id("copy-reply")).to_be_visible(timeout=FIRST_LOAD_MS)
    # The fence is highlighted: its keyword is a token in a colour of its own.
    keyword = message.locator(".iu-code code .token").first
    expect(keyword).to_have_text("def")
    colours = keyword.evaluate(
        "(el) => [getComputedStyle(el).color, getComputedStyle(el.closest('pre')).color]"
    )
    assert colours[0] != colours[1]
    expect(message.locator(".iu-code-lang")).to_have_text("python")

    copy_code = message.get_by_test_id("copy-code")
    expect(copy_code).to_have_accessible_name("Copy code")
    copy_code.click()
    expect(copy_code).to_have_accessible_name("Copied")
    expect(copy_code).to_have_attribute("data-copied", "true")
    expect(copy_code).to_contain_text("Copied")
    expect(page.locator("#iu-copy-status")).to_have_text("Copied")
    assert clipboard(page) == CODE
    # The "Copied" state is brief.
    expect(copy_code).to_have_accessible_name("Copy code", timeout=5_000)
    expect(copy_code).not_to_have_attribute("data-copied", "true")

    copy_reply = message.get_by_test_id("copy-reply")
    expect(copy_reply).to_have_accessible_name("Copy reply")
    copy_reply.click()
    expect(copy_reply).to_have_accessible_name("Copied")
    # The reply as the model wrote it (markdown, fences included), without the tool card.
    assert clipboard(page) == f"{BEFORE}\n\n{AFTER}"
    expect(copy_reply).to_have_accessible_name("Copy reply", timeout=5_000)


def test_copy_reads_in_the_users_language(
    app: AppHarness, clipboard_page: Page, scenario: Scenario
) -> None:
    page = clipboard_page
    scenario.first = reply(f"```python\n{CODE}\n```")
    send(page, app, "Just the code")
    page.get_by_test_id("language-select").select_option("es")
    copy_code = page.get_by_test_id("assistant-message").last.get_by_test_id("copy-code")
    expect(copy_code).to_have_accessible_name("Copiar código", timeout=FIRST_LOAD_MS)
    copy_code.click()
    expect(copy_code).to_have_accessible_name("Copiado")
    assert clipboard(page) == CODE


def conversation_titles(page: Page) -> list[str]:
    return page.get_by_test_id("conversation-title").all_inner_texts()


def test_search_filters_conversations_by_title_and_text_as_you_type(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    scenario.first = reply("The session module keeps the running turn.")
    send(page, app, "Where do turns live?")
    expect(page.get_by_test_id("assistant-message").last).to_contain_text(
        "session module", timeout=FIRST_LOAD_MS
    )
    scenario.first = reply("Pasta, probably.")
    page.get_by_test_id("new-chat").click()
    page.get_by_test_id("chat-input").fill("Lunch plans for Friday")
    page.get_by_test_id("send-button").click()
    expect(page.get_by_test_id("assistant-message").last).to_contain_text("Pasta")
    rows = page.get_by_test_id("conversation-row")
    expect(rows.filter(has_text="Lunch plans")).to_have_count(1)
    total = rows.count()
    assert total >= 2

    search = page.get_by_test_id("conversation-search")
    expect(search).to_have_accessible_name("Search conversations")
    # A title, typed one key at a time and in another case: the list follows.
    search.press_sequentially("LUNCH", delay=30)
    expect(rows).to_have_count(1)
    expect(page.get_by_test_id("conversation-title")).to_have_text("Lunch plans for Friday")
    # The text of a reply, not in any title.
    search.fill("Session MODULE")
    expect(rows).to_have_count(1)
    expect(page.get_by_test_id("conversation-title")).to_have_text("Where do turns live?")
    search.fill("no such words anywhere")
    expect(rows).to_have_count(0)
    expect(page.get_by_role("status").filter(has_text="No conversation matches.")).to_be_visible()
    search.fill("")
    expect(rows).to_have_count(total)
    expect(page.get_by_text("No conversation matches.")).to_have_count(0)


def test_shortcuts_dialog_opens_with_question_mark_or_its_button_and_closes_with_escape(
    app: AppHarness, page: Page
) -> None:
    assert app.frontend_url
    page.goto(app.frontend_url)
    dialog = page.get_by_test_id("shortcuts-dialog")
    expect(page.get_by_test_id("chat-input")).to_be_visible(timeout=FIRST_LOAD_MS)
    expect(dialog).to_be_hidden()
    page.keyboard.press("?")  # nothing focused: the page has it
    expect(dialog).to_be_visible()
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    for action in ("New chat", "Go to the message box", "Stop the running turn"):
        expect(dialog).to_contain_text(action)
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    # Typed into a field, `?` is text.
    page.get_by_test_id("chat-input").press_sequentially("why?")
    expect(page.get_by_test_id("chat-input")).to_have_value("why?")
    page.get_by_test_id("conversation-search").press("?")
    expect(dialog).to_be_hidden()

    button = page.get_by_test_id("shortcuts-button")
    button.click()
    expect(dialog).to_be_visible()
    dialog.get_by_test_id("shortcuts-close").click()
    expect(dialog).to_be_hidden()
    expect(button).to_be_focused()  # focus returns to where it was


def test_shift_escape_focuses_the_message_box_from_anywhere(app: AppHarness, page: Page) -> None:
    assert app.frontend_url
    page.goto(app.frontend_url)
    box = page.get_by_test_id("chat-input")
    expect(box).to_be_visible(timeout=FIRST_LOAD_MS)
    page.keyboard.press("Shift+Escape")
    expect(box).to_be_focused()
    page.get_by_test_id("conversation-search").focus()
    page.keyboard.press("Shift+Escape")
    expect(box).to_be_focused()


def test_ctrl_shift_o_starts_a_new_chat(app: AppHarness, page: Page, scenario: Scenario) -> None:
    scenario.first = reply("Hello!")
    send(page, app, "Say hello")
    messages = page.get_by_test_id("assistant-message")
    expect(messages.last).to_contain_text("Hello!", timeout=FIRST_LOAD_MS)
    # From inside the message box too: the shortcut types nothing.
    box = page.get_by_test_id("chat-input")
    box.focus()
    box.press("Control+Shift+O")
    expect(messages).to_have_count(0)
    expect(page.get_by_test_id("user-message")).to_have_count(0)
    expect(page.locator('[data-testid="conversation-row"][data-active="true"]')).to_have_count(0)
    expect(box).to_have_value("")
    send(page, app, "Say hello again")
    expect(messages.last).to_contain_text("Hello!")
    page.keyboard.press("Meta+Shift+O")  # Cmd on a Mac
    expect(messages).to_have_count(0)


def test_escape_stops_a_running_turn_but_not_while_another_field_has_it(
    app: AppHarness, page: Page, scenario: Scenario
) -> None:
    release = threading.Event()
    scenario.first = reply(
        "Counting slowly: one, two, three.", hold_when="Counting", release=release
    )
    try:
        send(page, app, "Count slowly")
        stop = page.get_by_test_id("stop-button")
        expect(stop).to_be_visible(timeout=FIRST_LOAD_MS)
        expect(page.get_by_test_id("assistant-message").last).to_contain_text("Counting")
        # Esc in the search box belongs to the search box.
        search = page.get_by_test_id("conversation-search")
        search.fill("x")
        search.press("Escape")
        expect(stop).to_be_visible()
        search.fill("")
        # An open dialog takes Esc for itself.
        page.get_by_test_id("shortcuts-button").click()
        page.keyboard.press("Escape")
        expect(page.get_by_test_id("shortcuts-dialog")).to_be_hidden()
        expect(stop).to_be_visible()
        page.get_by_test_id("chat-input").press("Escape")
        expect(page.get_by_test_id("send-button")).to_be_visible()
        expect(page.get_by_test_id("assistant-message").last).to_have_attribute(
            "data-status", "cancelled"
        )
    finally:
        release.set()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_everyday_actions_pass_axe_in_both_themes(
    app: AppHarness, clipboard_page: Page, scenario: Scenario, scheme: Literal["light", "dark"]
) -> None:
    page = clipboard_page
    page.emulate_media(color_scheme=scheme)  # `system`, the default theme, follows it
    text_then_a_call_then_code(scenario)
    send(page, app, "Write an add helper")
    message = page.get_by_test_id("assistant-message").last
    expect(message.get_by_test_id("copy-reply")).to_be_visible(timeout=FIRST_LOAD_MS)
    expect(message.locator(".iu-code code .token").first).to_have_text("def")
    expect(page.locator("html")).to_have_class(re.compile(rf"\b{scheme}\b"))
    page.get_by_test_id("conversation-search").fill("helper")
    expect(page.get_by_test_id("conversation-row").first).to_be_visible()
    message.get_by_test_id("copy-code").click()
    expect(message.get_by_test_id("copy-code")).to_have_attribute("data-copied", "true")
    assert_accessible(page)
    page.get_by_test_id("conversation-search").fill("")
    page.get_by_test_id("shortcuts-button").click()
    expect(page.get_by_test_id("shortcuts-dialog")).to_be_visible()
    assert_accessible(page)
