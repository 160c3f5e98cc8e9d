"""Rewind in a real browser, on the demo model over a workspace the sandbox may write: a
file changed by `write_file` and one changed by a shell command come back, the thread
shows the rewind (after a reload too), a call made before a server restart can still be
rewound after it, and a rewind of the conversation goes on from before the call."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from reflex.testing import AppHarness

from tests.e2e.axe import assert_accessible
from tests.e2e.harness import running_app
from tests.e2e.tabs import ask
from tests.support.sandbox import readable_folder, requires_sandbox

pytestmark = pytest.mark.e2e

FIRST_LOAD_MS = 60_000
"""The first visit compiles the page."""
ORIGINAL = "first line\nsecond line\n"
WROTE = re.compile(r"Rewind to before: Wrote \d+ bytes to notes\.md")
"""The call's settled label names the rewind."""


@pytest.fixture(scope="module")
def workspace() -> Iterator[Path]:
    # Outside pytest's private temporary folders: the sandbox runs as `nobody` when the
    # app runs as root, and must reach the workspace and write it.
    with readable_folder() as folder:
        folder.chmod(0o777)
        yield folder


def demo_config(workspace: Path) -> str:
    return (
        "endpoints:\n  - kind: demo\n    pacing_ms: 0\n"
        f"workspace: {workspace}\n"
        "sandbox:\n  write_workspace: true\n"
    )


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, workspace: Path) -> Iterator[AppHarness]:
    with running_app(tmp_path_factory.mktemp("rewind"), demo_config(workspace)) as harness:
        yield harness


@pytest.fixture
def notes(workspace: Path) -> Iterator[Path]:
    """notes.md as each test starts, in a workspace holding nothing else."""
    for entry in workspace.iterdir():
        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    path = workspace / "notes.md"
    path.write_text(ORIGINAL)
    path.chmod(0o666)
    yield path


def finished_turn(page: Page, app: AppHarness, text: str) -> str:
    """Ask `text` in a new chat; the id of the call its turn made."""
    assert app.frontend_url
    page.goto(app.frontend_url)
    page.get_by_test_id("new-chat").click()
    ask(page, text)
    turn = page.get_by_test_id("assistant-message").last
    expect(turn).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
    card = turn.get_by_test_id("tool-call")
    expect(card).to_have_count(1)
    expect(card).to_have_attribute("data-state", "settled")
    call_id = card.get_attribute("data-call-id")
    assert call_id
    return call_id


def open_preview(page: Page, call_id: str) -> None:
    page.locator(f"[data-testid=tool-call][data-call-id='{call_id}']").get_by_test_id(
        "rewind-button"
    ).click()
    expect(page.get_by_test_id("rewind-preview")).to_be_visible()


def test_a_file_written_by_write_file_comes_back_and_the_thread_says_so(
    app: AppHarness, page: Page, notes: Path
) -> None:
    call_id = finished_turn(page, app, "write rewritten to notes.md")
    assert notes.read_text() == "rewritten\n"
    button = page.locator(f"[data-testid=tool-call][data-call-id='{call_id}']").get_by_test_id(
        "rewind-button"
    )
    expect(button).to_have_attribute("aria-label", WROTE)

    open_preview(page, call_id)
    preview = page.get_by_test_id("rewind-preview")
    expect(preview).to_contain_text(WROTE)
    entry = preview.get_by_test_id("rewind-file")
    expect(entry).to_have_attribute("data-path", "notes.md")
    expect(entry).to_contain_text("-rewritten")
    expect(entry).to_contain_text("+first line")
    assert_accessible(page)
    # Nothing changes before the confirmation.
    assert notes.read_text() == "rewritten\n"

    page.get_by_test_id("rewind-restore-files").click()
    note = page.get_by_test_id("rewind-note")
    expect(note).to_contain_text(WROTE)
    expect(note).to_contain_text("(files restored: notes.md)")
    expect(preview).to_have_count(0)
    assert notes.read_text() == ORIGINAL

    page.reload()
    expect(page.get_by_test_id("rewind-note")).to_have_count(1, timeout=FIRST_LOAD_MS)
    expect(page.get_by_test_id("tool-call")).to_have_count(1)


@requires_sandbox
def test_a_file_changed_by_a_shell_command_comes_back(
    app: AppHarness, page: Page, notes: Path
) -> None:
    call_id = finished_turn(page, app, "run `echo shell > notes.md && echo x > made.txt` in bash")
    assert notes.read_text() == "shell\n"
    assert (notes.parent / "made.txt").exists()

    open_preview(page, call_id)
    paths = page.get_by_test_id("rewind-file")
    expect(paths).to_have_count(2)
    assert {paths.nth(i).get_attribute("data-path") for i in range(2)} == {
        "made.txt",
        "notes.md",
    }
    page.get_by_test_id("rewind-restore-files").click()
    expect(page.get_by_test_id("rewind-note")).to_contain_text("files restored: made.txt, notes.md")
    assert notes.read_text() == ORIGINAL
    assert not (notes.parent / "made.txt").exists()


def test_restoring_the_conversation_goes_on_from_before_the_call(
    app: AppHarness, page: Page, notes: Path
) -> None:
    call_id = finished_turn(page, app, "write rewritten to notes.md")
    open_preview(page, call_id)
    page.get_by_test_id("rewind-restore-all").click()

    note = page.get_by_test_id("rewind-note")
    expect(note).to_contain_text("files and conversation restored: notes.md")
    assert notes.read_text() == ORIGINAL
    # The turn shown now is a new version of it without the call; the old one is a flip
    # away, and the timeline of the new one has no mark of it.
    turn = page.get_by_test_id("assistant-message").last
    expect(turn.get_by_test_id("tool-call")).to_have_count(0)
    expect(page.get_by_test_id("branch-prev")).to_have_count(1)

    # The conversation goes on after the rewind.
    ask(page, "list the files")
    turns = page.get_by_test_id("assistant-message")
    expect(turns).to_have_count(2)
    expect(turns.last).to_have_attribute("data-status", "complete")
    expect(turns.last.get_by_test_id("tool-call")).to_have_count(1)
    assert [
        str(t)
        for t in page.locator(
            "[data-testid=user-message], [data-testid=assistant-message], [data-testid=rewind-note]"
        ).evaluate_all("(els) => els.map((e) => e.dataset.testid)")
    ] == ["user-message", "assistant-message", "rewind-note", "user-message", "assistant-message"]


def test_the_timeline_offers_the_rewind_of_the_call_that_wrote(
    app: AppHarness, page: Page, notes: Path
) -> None:
    assert app.frontend_url
    page.goto(app.frontend_url)
    page.get_by_test_id("new-chat").click()
    ask(page, "find where OAuth and MCP are handled, read notes.md and write hi to other.md")
    turn = page.get_by_test_id("assistant-message").last
    expect(turn).to_have_attribute("data-status", "complete", timeout=FIRST_LOAD_MS)
    expect(turn.get_by_test_id("tool-call")).to_have_count(4)
    # Only the write changed the workspace: its mark, and its card, offer the rewind.
    marks = turn.get_by_test_id("timeline").get_by_test_id("rewind-button")
    expect(marks).to_have_count(1)
    writer = turn.locator("[data-testid=tool-call]").filter(has_text="other.md")
    expect(marks).to_have_attribute("data-call-id", str(writer.get_attribute("data-call-id")))
    marks.click()
    expect(page.get_by_test_id("rewind-file")).to_have_attribute("data-path", "other.md")
    page.get_by_test_id("rewind-restore-files").click()
    expect(page.get_by_test_id("rewind-note")).to_contain_text("files restored: other.md")
    assert not (notes.parent / "other.md").exists()


# Last in the module (as in test_approvals): the apps it starts and stops serve the same
# page build as the module's app, whose page is gone once they stop.
def test_a_call_made_before_a_restart_is_still_rewound_after_it(
    page: Page, notes: Path, tmp_path: Path
) -> None:
    config = demo_config(notes.parent)
    with running_app(tmp_path, config) as first:
        call_id = finished_turn(page, first, "write rewritten to notes.md")
        assert notes.read_text() == "rewritten\n"
        # The tab goes first: the server waits for its open streams to close before it stops.
        page.goto("about:blank")
    with running_app(tmp_path, config) as second:
        assert second.frontend_url
        page.goto(second.frontend_url)
        # Another port is another origin: the page does not remember the chat.
        page.get_by_test_id("conversation-title").first.click(timeout=FIRST_LOAD_MS)
        page.reload()
        card = page.locator(f"[data-testid=tool-call][data-call-id='{call_id}']")
        expect(card.get_by_test_id("rewind-button")).to_have_attribute(
            "aria-label", WROTE, timeout=FIRST_LOAD_MS
        )

        open_preview(page, call_id)
        entry = page.get_by_test_id("rewind-preview").get_by_test_id("rewind-file")
        expect(entry).to_have_attribute("data-path", "notes.md")
        expect(entry).to_contain_text("+first line")
        page.get_by_test_id("rewind-restore-files").click()
        note = page.get_by_test_id("rewind-note")
        expect(note).to_contain_text(WROTE)
        expect(note).to_contain_text("(files restored: notes.md)")
        assert notes.read_text() == ORIGINAL
