from __future__ import annotations

from intent_ui.core.minimum_display import MinimumDisplay


def test_first_label_shows_immediately() -> None:
    display = MinimumDisplay(min_ms=200)
    assert display.offer("A", 0) == "A"
    assert display.due_ms(0) is None


def test_a_label_arriving_too_soon_is_held() -> None:
    display = MinimumDisplay(min_ms=200)
    display.offer("A", 0)
    assert display.offer("B", 50) == "A"
    assert display.held == "B"
    assert display.due_ms(50) == 150


def test_only_the_newest_held_label_survives_a_burst() -> None:
    display = MinimumDisplay(min_ms=200)
    display.offer("A", 0)
    display.offer("B", 50)
    display.offer("C", 120)
    assert display.tick(199) == "A"
    assert display.tick(200) == "C"
    assert display.due_ms(200) is None


def test_held_label_shows_when_offered_again_after_the_minimum() -> None:
    display = MinimumDisplay(min_ms=200)
    display.offer("A", 0)
    display.offer("B", 10)
    assert display.offer("B", 260) == "B"
    # The new label now has its own minimum.
    assert display.offer("C", 300) == "B"
    assert display.due_ms(300) == 160


def test_returning_to_the_shown_label_cancels_the_held_one() -> None:
    display = MinimumDisplay(min_ms=200)
    display.offer("A", 0)
    display.offer("B", 10)
    assert display.offer("A", 20) == "A"
    assert display.held is None
    assert display.tick(500) == "A"


def test_labels_after_a_quiet_period_show_at_once() -> None:
    display = MinimumDisplay(min_ms=150)
    display.offer("A", 0)
    assert display.offer("B", 1000) == "B"


def test_a_clock_going_backwards_does_not_release_early() -> None:
    display = MinimumDisplay(min_ms=200)
    display.offer("A", 1000)
    assert display.offer("B", 900) == "A"
    assert display.due_ms(900) == 200


def test_a_growing_label_is_never_held() -> None:
    display = MinimumDisplay(min_ms=200)
    assert display.offer("Searching", 0) == "Searching"
    assert display.offer("Searching for OAuth", 10) == "Searching for OAuth"
    # A different label still waits out the minimum time after the last growth.
    assert display.offer("Reading the router", 20) == "Searching for OAuth"
    assert display.due_ms(20) == 190
