"""Failed attempts per key in a sliding window (the sign-in form's guard)."""

from __future__ import annotations

import pytest

from intent_ui.core.throttle import FailureThrottle


def test_a_key_is_refused_after_the_limit_until_its_oldest_failure_leaves_the_window() -> None:
    throttle = FailureThrottle(limit=3, window_s=60)
    for at in (0, 10, 20):
        assert throttle.retry_after("ann", at) == 0
        throttle.failed("ann", at)
    assert throttle.retry_after("ann", 30) == pytest.approx(30)  # the first leaves at 60
    assert throttle.retry_after("bob", 30) == 0  # other keys are not affected
    assert throttle.retry_after("ann", 60) == 0
    throttle.failed("ann", 60)
    assert throttle.retry_after("ann", 61) == pytest.approx(9)  # 10, 20, 60: 10 leaves at 70


def test_a_success_clears_the_key() -> None:
    throttle = FailureThrottle(limit=2, window_s=60)
    throttle.failed("ann", 0)
    throttle.succeeded("ann")
    throttle.failed("ann", 1)
    assert throttle.retry_after("ann", 2) == 0


def test_failures_older_than_the_window_do_not_count() -> None:
    throttle = FailureThrottle(limit=2, window_s=60)
    throttle.failed("ann", 0)
    throttle.failed("ann", 100)
    assert throttle.retry_after("ann", 101) == 0


def test_keys_are_bounded_and_the_stalest_is_forgotten_first() -> None:
    throttle = FailureThrottle(limit=1, window_s=1_000, max_keys=2)
    throttle.failed("ann", 0)
    throttle.failed("bob", 1)
    throttle.failed("ann", 2)  # ann is now the most recent
    throttle.failed("cid", 3)  # forgets bob
    assert throttle.retry_after("bob", 4) == 0
    assert throttle.retry_after("ann", 4) > 0
    assert throttle.retry_after("cid", 4) > 0
