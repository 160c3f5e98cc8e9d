"""Failed sign-ins per name and per client address, counted in this process or in Redis
(each test runs on both; the window's arithmetic itself is test_throttle.py's)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from intent_ui.ui import sign_in_throttle as throttle_module
from intent_ui.ui.sign_in_throttle import (
    WINDOW_S,
    ProcessFailures,
    RedisFailures,
    SignInThrottle,
    sign_in_throttle,
)

MakeThrottle = Callable[..., SignInThrottle]
ADDRESS = "192.0.2.10"
OTHER_ADDRESS = "192.0.2.11"


def waits_about_the_window(wait: float) -> bool:
    """The whole window, less what the test itself took (never anything like a minute)."""
    return WINDOW_S - 60 < wait <= WINDOW_S


async def test_a_name_at_its_limit_waits_for_the_window(
    make_sign_in_throttle: MakeThrottle,
) -> None:
    throttle = make_sign_in_throttle(name_limit=3, client_limit=100)
    for _ in range(2):
        await throttle.failed("ann", ADDRESS)
    assert await throttle.retry_after("ann", ADDRESS) == 0
    await throttle.failed("ann", ADDRESS)
    assert waits_about_the_window(await throttle.retry_after("ann", ADDRESS))
    # The same name from anywhere else waits too: the name is what is being guessed.
    assert waits_about_the_window(await throttle.retry_after("ann", OTHER_ADDRESS))


async def test_an_address_at_its_limit_waits_whatever_name_it_tries(
    make_sign_in_throttle: MakeThrottle,
) -> None:
    throttle = make_sign_in_throttle(name_limit=100, client_limit=3)
    for attempt in range(3):
        await throttle.failed(f"guess-{attempt}", ADDRESS)
    assert waits_about_the_window(await throttle.retry_after("someone-new", ADDRESS))
    assert await throttle.retry_after("someone-new", OTHER_ADDRESS) == 0


async def test_other_names_are_not_affected_and_names_are_not_addresses(
    make_sign_in_throttle: MakeThrottle,
) -> None:
    throttle = make_sign_in_throttle(name_limit=2, client_limit=100)
    for _ in range(2):
        await throttle.failed(ADDRESS, OTHER_ADDRESS)  # a "name" that looks like an address
    assert await throttle.retry_after("bob", OTHER_ADDRESS) == 0
    assert await throttle.retry_after("bob", ADDRESS) == 0
    assert await throttle.retry_after(ADDRESS, "203.0.113.1") > 0


async def test_a_success_clears_the_name_but_not_the_address(
    make_sign_in_throttle: MakeThrottle,
) -> None:
    throttle = make_sign_in_throttle(name_limit=2, client_limit=3)
    for _ in range(2):
        await throttle.failed("ann", ADDRESS)
    await throttle.succeeded("ann")
    await throttle.failed("ann", ADDRESS)
    assert await throttle.retry_after("ann", OTHER_ADDRESS) == 0  # one failure since
    assert await throttle.retry_after("bob", ADDRESS) > 0  # the address has its three


@pytest.mark.parametrize(
    "name",
    ["a/b/5/300/second", "x" * 20_000, "lone \ud800 surrogate", "", "名前"],
    ids=["slashes", "long", "surrogate", "empty", "cjk"],
)
async def test_any_name_the_form_sends_is_counted_as_itself(
    make_sign_in_throttle: MakeThrottle, name: str
) -> None:
    throttle = make_sign_in_throttle(name_limit=1, client_limit=100)
    await throttle.failed(name, ADDRESS)
    assert await throttle.retry_after(name, ADDRESS) > 0
    assert await throttle.retry_after(name + "!", ADDRESS) == 0


@pytest.mark.parametrize("make_sign_in_throttle", ["redis"], indirect=True)
async def test_failures_seen_by_one_worker_make_every_worker_wait(
    make_sign_in_throttle: MakeThrottle,
) -> None:
    first, second = (make_sign_in_throttle(name_limit=2) for _ in range(2))  # two workers
    await first.failed("ann", ADDRESS)
    await second.failed("ann", OTHER_ADDRESS)
    assert waits_about_the_window(await first.retry_after("ann", ADDRESS))
    assert waits_about_the_window(await second.retry_after("ann", ADDRESS))
    await second.succeeded("ann")
    assert await first.retry_after("ann", ADDRESS) == 0


async def test_without_reflex_redis_url_the_app_counts_in_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(throttle_module.prerequisites, "parse_redis_url", lambda: None)
    assert isinstance(sign_in_throttle().by_name, ProcessFailures)
    assert sign_in_throttle() is sign_in_throttle()  # one per app, not per sign-in


async def test_with_reflex_redis_url_the_app_counts_in_redis(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(throttle_module.prerequisites, "parse_redis_url", lambda: redis_url)
    throttle = sign_in_throttle()
    try:
        assert isinstance(throttle.by_name, RedisFailures)
        assert isinstance(throttle.by_client, RedisFailures)
    finally:
        await throttle.aclose()
