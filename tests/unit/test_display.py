"""Display densities, the running-time format and a group's wall time."""

from __future__ import annotations

import pytest

from intent_ui.core.display import (
    Span,
    format_elapsed,
    wall_time,
)


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "0.0s"),
        (99, "0.0s"),
        (3_250, "3.2s"),
        (59_999, "59.9s"),
        (60_000, "1m 00s"),
        (64_400, "1m 04s"),
        (3_599_999, "59m 59s"),
        (3_600_000, "1h 00m"),
        (3_720_000, "1h 02m"),
        (100 * 3_600_000, "100h 00m"),
    ],
)
def test_elapsed_shows_tenths_under_a_minute_then_whole_units(ms: float, text: str) -> None:
    assert format_elapsed(ms) == text


@pytest.mark.parametrize("ms", [-5, float("nan"), float("inf")])
def test_elapsed_reads_zero_for_a_skewed_clock_or_garbage(ms: float) -> None:
    assert format_elapsed(ms) == "0.0s"


def test_wall_time_runs_from_the_first_start_to_the_last_end() -> None:
    assert wall_time([Span(10.0, 12.0), Span(9.5, 11.0), Span(10.2, 14.5)]) == Span(9.5, 14.5)


def test_wall_time_is_still_running_while_any_member_runs() -> None:
    assert wall_time([Span(10.0, 12.0), Span(11.0, 0.0)]) == Span(10.0, 0.0)


def test_wall_time_leaves_out_members_without_a_start() -> None:
    assert wall_time([Span(0.0, 0.0), Span(3.0, 4.0)]) == Span(3.0, 4.0)
    assert wall_time([Span(0.0, 0.0)]) == Span(0.0, 0.0)
    assert wall_time([]) == Span(0.0, 0.0)
