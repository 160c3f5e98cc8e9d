"""core/origins.py: origins as a browser sends them, and the app's own page."""

from __future__ import annotations

import pytest

from intent_ui.core.origins import allowed_origins, frontend_origins, is_allowed, normalize_origin


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://chat.example.com", "https://chat.example.com"),
        ("HTTPS://Chat.Example.COM/", "https://chat.example.com"),
        ("https://chat.example.com:443", "https://chat.example.com"),
        ("http://localhost:80", "http://localhost"),
        ("http://localhost:3000", "http://localhost:3000"),
        ("http://[::1]:3000", "http://[::1]:3000"),
    ],
)
def test_origins_are_written_as_a_browser_sends_them(text: str, expected: str) -> None:
    assert normalize_origin(text) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("*", "'*' would let every web page drive the app"),
        ("chat.example.com", "is not an http:// or https:// origin"),
        ("ws://chat.example.com", "is not an http:// or https:// origin"),
        ("https://chat.example.com/app", "is more than an origin"),
        ("https://user@chat.example.com", "is more than an origin"),
        ("https://chat.example.com:99999", "is not an origin"),
    ],
)
def test_what_is_not_an_origin_says_so(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=r"e\.g\. https://chat\.example\.com") as caught:
        normalize_origin(text)
    assert problem in str(caught.value)


def test_the_frontend_port_counts_under_every_loopback_spelling() -> None:
    assert frontend_origins(None, 3000) == {
        "http://localhost:3000",
        "http://127.0.0.1:3000",
        "http://[::1]:3000",
    }


def test_a_loopback_deploy_url_counts_under_every_spelling() -> None:
    # AppHarness and `reflex run` name the page http://localhost:<port>/ (with a path).
    assert frontend_origins("http://localhost:41234/", None) == {
        "http://localhost:41234",
        "http://127.0.0.1:41234",
        "http://[::1]:41234",
    }


def test_a_public_deploy_url_counts_only_as_written() -> None:
    origins = frontend_origins("https://chat.example.com/app", 3000)
    assert "https://chat.example.com" in origins
    assert "http://chat.example.com" not in origins


def test_a_deploy_url_that_is_no_url_adds_nothing() -> None:
    assert frontend_origins("not a url", None) == frozenset()


def test_only_listed_origins_are_allowed() -> None:
    allowed = allowed_origins(["https://chat.example.com"], "http://localhost:3000", 3000)
    assert is_allowed("https://chat.example.com", allowed)
    assert is_allowed("http://127.0.0.1:3000", allowed)
    assert not is_allowed("https://evil.example", allowed)
    assert not is_allowed("http://localhost:3001", allowed)
    assert not is_allowed("null", allowed)  # sandboxed frames and local files
    # A page on a name that resolves to 127.0.0.1 (DNS rebinding) is another origin.
    assert not is_allowed("http://rebind.example:3000", allowed)
