"""The app starts and renders in a real browser."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect
from reflex.testing import AppHarness

from tests.e2e.conftest import ROOT
from tests.e2e.harness import own_host

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def app() -> Iterator[AppHarness]:
    with own_host(), AppHarness.create(root=ROOT, app_name="intent_ui") as harness:
        yield harness


def test_home_page_renders(app: AppHarness, page: Page) -> None:
    assert app.frontend_url is not None
    page.goto(app.frontend_url)
    expect(page.get_by_test_id("chat-page")).to_be_visible()
