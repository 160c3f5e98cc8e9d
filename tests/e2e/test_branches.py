"""A conversation's versions in a real browser, on the offline demo model: regenerating a
reply makes a second version and the previous one is a flip away; editing a sent message
forks the conversation, and both branches render after a reload; a turn stopped
mid-way continues with a reply of its own. The controls work from the keyboard, speak the
user's language and pass axe-core in both themes.

Two demo endpoints: `demo` answers at once; `slow` types slowly enough to be stopped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

import pytest
from playwright.sync_api import Locator, Page, expect
from reflex.testing import AppHarness

from tests.e2e.axe import assert_accessible
from tests.e2e.harness import running_app

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
"""The first visit compiles the page."""

LONG_PROMPT = "find where OAuth and MCP are handled, then read the session module and summarize"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppHarness]:
    workdir = tmp_path_factory.mktemp("branches")
    workspace = workdir / "workspace"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "auth.py").write_text("def oauth_callback():\n    # OAuth handling\n")
    (workspace / "src" / "server.py").write_text("MCP = 'mcp wiring'\n")
    (workspace / "src" / "session.py").write_text(
        '"""The session module keeps the running turn."""\nclass TurnSession:\n    pass\n'
    )
    (workspace / "README.md").write_text("# Demo project\n\nA small project.\n")
    config = (
        "endpoints:\n"
        "  - kind: demo\n    pacing_ms: 5\n"
        "  - kind: demo\n    name: slow\n    pacing_ms: 60\n"
        f"workspace: {workspace}\n"
    )
    with running_app(workdir, config) as harness:
        yield harness


def open_chat(page: Page, app: AppHarness) -> None:
    assert app.frontend_url
    page.goto(app.frontend_url)
    expect(page.get_by_test_id("chat-input")).to_be_visible(timeout=FIRST_LOAD_MS)


def ask(page: Page, text: str) -> Locator:
    """Send `text` and wait for its turn to end; the turn."""
    page.get_by_test_id("chat-input").fill(text)
    page.get_by_test_id("chat-input").press("Enter")
    turn = page.get_by_test_id("assistant-message").last
    expect(page.get_by_test_id("user-message").last).to_have_text(text)
    expect(turn).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
    return turn


def turn_id(turn: Locator) -> str:
    found = turn.get_attribute("data-message-id")
    assert found
    return found


def test_regenerate_makes_a_second_version_and_branch_prev_shows_the_first(
    app: AppHarness, page: Page
) -> None:
    open_chat(page, app)
    first = ask(page, "list the files")
    first_id = turn_id(first)
    expect(first).to_contain_text("README.md")
    regenerate = first.get_by_test_id("regenerate")
    expect(regenerate).to_have_accessible_name("Regenerate reply")
    expect(first.get_by_test_id("branch-prev")).to_have_count(0)  # one version only
    regenerate.click()

    turns = page.get_by_test_id("assistant-message")
    expect(turns).to_have_count(1)  # in place of the first, not after it
    second = turns.first
    expect(second).not_to_have_attribute("data-message-id", first_id)
    expect(second).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
    second_id = turn_id(second)
    expect(page.get_by_test_id("user-message")).to_have_count(1)
    expect(second.get_by_test_id("branch-position")).to_have_text("2 / 2")
    expect(second.get_by_test_id("branch-next")).to_be_disabled()
    expect(second.get_by_role("group", name="Versions")).to_be_visible()

    # From the keyboard: the previous version, then back to the new one.
    prev = second.get_by_test_id("branch-prev")
    expect(prev).to_have_accessible_name("Previous version")
    prev.focus()
    page.keyboard.press("Enter")
    expect(turns.first).to_have_attribute("data-message-id", first_id)
    expect(turns.first).to_contain_text("README.md")
    expect(turns.first.get_by_test_id("branch-position")).to_have_text("1 / 2")
    expect(turns.first.get_by_test_id("branch-prev")).to_be_disabled()

    # The version shown is remembered: a reload shows the first one still.
    page.reload()
    expect(turns.first).to_have_attribute("data-message-id", first_id, timeout=FIRST_LOAD_MS)
    expect(turns.first.get_by_test_id("branch-position")).to_have_text("1 / 2")
    turns.first.get_by_test_id("branch-next").click()
    expect(turns.first).to_have_attribute("data-message-id", second_id)
    expect(turns.first).to_contain_text("README.md")


def test_edit_and_resend_forks_and_both_branches_render_after_a_reload(
    app: AppHarness, page: Page
) -> None:
    open_chat(page, app)
    ask(page, "list the files")
    ask(page, "read README.md")
    users = page.get_by_test_id("user-message")
    turns = page.get_by_test_id("assistant-message")
    expect(turns.last).to_contain_text("Demo project")

    # Escape leaves the message as it was.
    edits = page.get_by_test_id("edit-message")
    expect(edits.last).to_have_accessible_name("Edit message")
    edits.last.click()
    box = page.get_by_test_id("edit-message-input")
    expect(box).to_be_focused()
    expect(box).to_have_value("read README.md")
    expect(box).to_have_accessible_name("Edited message")
    box.press("Escape")
    expect(box).to_have_count(0)
    expect(users.last).to_have_text("read README.md")
    expect(edits.last).to_be_focused()  # back where the reader was

    edits.last.click()
    box.fill("search for TODO")
    expect(page.get_by_test_id("edit-save")).to_have_accessible_name("Save and send")
    box.press("Enter")  # as in the message box
    expect(users).to_have_text(["list the files", "search for TODO"])
    expect(turns).to_have_count(2)
    expect(turns.last).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
    expect(turns.last).to_contain_text("no matches for TODO")

    def edited_versions() -> Locator:
        return page.locator(".iu-user-turn").last

    expect(edited_versions().get_by_test_id("branch-position")).to_have_text("2 / 2")
    # The first message has one version: no flips there.
    expect(page.locator(".iu-user-turn").first.get_by_test_id("branch-position")).to_have_count(0)

    page.reload()
    expect(users).to_have_text(["list the files", "search for TODO"], timeout=FIRST_LOAD_MS)
    expect(turns.last).to_contain_text("no matches for TODO")
    # The old branch, with its own reply, rendered from the store.
    edited_versions().get_by_test_id("branch-prev").click()
    expect(users).to_have_text(["list the files", "read README.md"])
    expect(turns.last).to_contain_text("Demo project")
    expect(turns.last.get_by_test_id("tool-call")).to_have_attribute("data-state", "settled")
    page.reload()
    expect(users).to_have_text(["list the files", "read README.md"], timeout=FIRST_LOAD_MS)
    expect(turns.last).to_contain_text("Demo project")
    expect(edited_versions().get_by_test_id("branch-position")).to_have_text("1 / 2")
    edited_versions().get_by_test_id("branch-next").click()
    expect(users).to_have_text(["list the files", "search for TODO"])
    expect(turns.last).to_contain_text("no matches for TODO")


def test_continue_after_stop_produces_a_continued_reply(app: AppHarness, page: Page) -> None:
    open_chat(page, app)
    page.get_by_test_id("endpoint-select").select_option("slow")
    page.get_by_test_id("chat-input").fill(LONG_PROMPT)
    page.get_by_test_id("chat-input").press("Enter")
    turns = page.get_by_test_id("assistant-message")
    expect(page.get_by_test_id("tool-call").first).to_be_visible(timeout=FIRST_LOAD_MS)
    expect(page.get_by_test_id("continue-button")).to_have_count(0)  # not while it runs
    page.get_by_test_id("stop-button").click()
    expect(turns.first).to_have_attribute("data-status", "cancelled")

    resume = page.get_by_test_id("continue-button")
    expect(resume).to_have_accessible_name("Continue")
    resume.focus()
    page.keyboard.press("Enter")
    expect(turns).to_have_count(2)
    expect(resume).to_have_count(0)
    # The continuation follows the stopped turn directly: the user said nothing new.
    expect(page.get_by_test_id("user-message")).to_have_count(1)
    expect(turns.last).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
    expect(turns.first).to_have_attribute("data-status", "cancelled")
    # The work the stop cut short is done, and the reply cites what it found.
    expect(turns.last.get_by_test_id("tool-call").last).to_contain_text("session")
    replies = " ".join(turns.all_inner_texts())
    assert "src/session.py" in replies
    assert turns.last.inner_text().strip()
    page.reload()
    expect(turns).to_have_count(2, timeout=FIRST_LOAD_MS)
    expect(turns.last).to_have_attribute("data-status", "complete")
    expect(page.get_by_test_id("continue-button")).to_have_count(0)


def test_the_version_controls_speak_the_users_language(app: AppHarness, page: Page) -> None:
    open_chat(page, app)
    turn = ask(page, "list the files")
    page.get_by_test_id("language-select").select_option("ja")
    expect(turn.get_by_test_id("regenerate")).to_have_accessible_name("返信を再生成")
    expect(page.get_by_test_id("edit-message")).to_have_accessible_name("メッセージを編集")
    page.get_by_test_id("language-select").select_option("es")
    expect(turn.get_by_test_id("regenerate")).to_have_accessible_name("Regenerar respuesta")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_versions_and_the_edit_box_pass_axe_in_both_themes(
    app: AppHarness, page: Page, scheme: Literal["light", "dark"]
) -> None:
    page.emulate_media(color_scheme=scheme)  # `system`, the default theme, follows it
    open_chat(page, app)
    expect(page.locator("html")).to_have_class(re.compile(rf"\b{scheme}\b"))
    first = ask(page, "list the files")
    first.get_by_test_id("regenerate").click()
    turn = page.get_by_test_id("assistant-message").first
    expect(turn.get_by_test_id("branch-position")).to_have_text("2 / 2", timeout=FIRST_LOAD_MS)
    expect(turn).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
    assert_accessible(page)
    page.get_by_test_id("edit-message").click()
    expect(page.get_by_test_id("edit-message-input")).to_be_focused()
    assert_accessible(page)
