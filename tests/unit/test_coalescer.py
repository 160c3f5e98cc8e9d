"""The leading-edge coalescer: once changes pause when idle, then at most one push per
frame."""

from __future__ import annotations

import asyncio

import pytest

from intent_ui.ui.coalescer import LeadingEdgeCoalescer


class Pushes(list[int]):
    """A push that records itself: its number, in order."""

    async def __call__(self) -> None:
        self.append(len(self))


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_first_change_is_pushed_at_once_without_a_quiet_wait() -> None:
    pushed = Pushes()
    coalescer = LeadingEdgeCoalescer(pushed, frame_s=10.0, quiet_s=0.0).start()
    coalescer.mark()
    for _ in range(5):
        await asyncio.sleep(0)
    assert pushed == [0]
    await coalescer.close()


async def test_from_idle_a_burst_of_changes_lands_in_one_push() -> None:
    """Once pushes carry several changes (parallel calls), a burst read in pieces waits
    for the pause after it, instead of the first piece leaving the rest a frame behind."""
    pushed = Pushes()
    coalescer = LeadingEdgeCoalescer(pushed, frame_s=0.2, quiet_s=0.02).start()
    coalescer.mark()
    coalescer.mark()
    await asyncio.sleep(0.25)  # pushed at once (nothing to go by yet), then idle again
    assert pushed == [0]
    for _ in range(4):  # pieces 10 ms apart: each within the quiet time of the last
        coalescer.mark()
        await asyncio.sleep(0.01)
    assert pushed == [0]
    await asyncio.sleep(0.05)
    assert pushed == [0, 1]
    await coalescer.close()


async def test_one_change_at_a_time_is_pushed_at_once() -> None:
    """A single stream (a reply, one call) gains nothing from waiting for a pause."""
    pushed = Pushes()
    coalescer = LeadingEdgeCoalescer(pushed, frame_s=0.0, quiet_s=10.0).start()
    for count in range(1, 4):
        coalescer.mark()
        for _ in range(5):
            await asyncio.sleep(0)
        assert len(pushed) == count
    await coalescer.close()


async def test_changes_that_never_pause_are_pushed_within_a_frame() -> None:
    pushed = Pushes()
    coalescer = LeadingEdgeCoalescer(pushed, frame_s=0.05, quiet_s=0.01).start()
    for _ in range(15):  # a change every 5 ms for 75 ms: never quiet for 10 ms
        coalescer.mark()
        await asyncio.sleep(0.005)
    assert len(pushed) >= 1
    await coalescer.close()


async def test_a_burst_within_one_frame_becomes_one_more_push() -> None:
    clock = FakeClock()
    pushed: list[float] = []

    async def push() -> None:
        pushed.append(clock.now)

    coalescer = LeadingEdgeCoalescer(push, frame_s=0.01, quiet_s=0.0, clock=clock).start()
    coalescer.mark()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    for _ in range(50):
        coalescer.mark()
    await asyncio.sleep(0.05)
    assert len(pushed) == 2
    await coalescer.close()
    assert len(pushed) == 3  # close pushes whatever is pending, once


async def test_close_without_changes_pushes_the_final_state_once() -> None:
    pushed = Pushes()
    coalescer = LeadingEdgeCoalescer(pushed).start()
    await coalescer.close()
    assert pushed == [0]


async def test_mark_later_wakes_the_flusher() -> None:
    pushed = Pushes()
    coalescer = LeadingEdgeCoalescer(pushed, frame_s=0.0, quiet_s=0.0).start()
    coalescer.mark_later(0.01)
    await asyncio.sleep(0.05)
    assert pushed == [0]
    await coalescer.close()


async def test_an_expensive_push_stretches_the_next_frame() -> None:
    clock = FakeClock()
    pushed: list[float] = []

    async def push() -> None:
        pushed.append(clock.now)
        clock.now += 0.015  # each push takes 15 ms

    coalescer = LeadingEdgeCoalescer(push, frame_s=0.012, quiet_s=0.0, clock=clock).start()
    coalescer.mark()
    for _ in range(3):
        await asyncio.sleep(0)
    assert coalescer.frame_s == pytest.approx(0.03)  # twice what the last push took
    coalescer.mark()
    await asyncio.sleep(0.008)
    assert len(pushed) == 1  # an unstretched frame would have pushed 2 ms ago
    await asyncio.sleep(0.04)
    assert len(pushed) == 2
    await coalescer.close()
