"""Patch feeds: a running turn as frames a page applies to its store, one per loop tick,
resumable from any frame it got, ending with `end`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable, Sequence

import pytest
from sqlalchemy import Engine

from intent_ui.agent import feeds
from intent_ui.agent.feeds import PatchFeed
from intent_ui.agent.session import TurnSession
from intent_ui.core.events import ArgsDelta, CallStarted, TextDelta, TurnDone
from intent_ui.core.patches import TurnPatcher, apply_ops
from intent_ui.core.turn import TurnView
from intent_ui.store import conversations as conv
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.store.turns import EventLog, load_events
from tests.support.scripted_runtime import ScriptedRun, recorded_turn, settle
from tests.support.wire import decode_sse


@pytest.fixture
def message_id(engine: Engine) -> str:
    chat = conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo")
    return conv.start_assistant_message(engine, chat.id)


def _session(engine: Engine, message_id: str) -> TurnSession:
    # No minimum display time for headers: the frames then add up to the true view.
    return TurnSession(
        message_id=message_id,
        conversation_id="",
        log=EventLog(engine, message_id, now=lambda: 1000.0),
        clock=lambda: 1000.0,
        flush_interval=0.01,
        hold_ms=0,
    )


def _run(session: TurnSession) -> ScriptedRun:
    run = ScriptedRun(session.seq, session.stop_requested)
    session.start(run.events())
    return run


def _store(ops_lists: Iterable[Sequence[Sequence[object]]]) -> dict[str, object]:
    """What a page's store holds after applying `ops_lists` in order (an `add` that does
    not continue what it holds raises: a gap or a repeat)."""
    store: dict[str, object] = {}
    lengths: dict[str, int] = {}
    for ops in ops_lists:
        apply_ops(store, ops, lengths)
    store.pop("announce", None)  # news of the moment, not state
    return store


def _expected(view: TurnView, message_id: str, lang: str = "en") -> dict[str, object]:
    return _store([TurnPatcher(message_id, lang, hold_ms=0).snapshot(view)])


async def _read(stream: AsyncIterator[bytes]) -> bytes:
    return b"".join([chunk async for chunk in stream])


async def _events(body: bytes) -> list[tuple[str, str, list[list[object]]]]:
    """`(event, id, ops)` of each event in an SSE body."""
    out = []
    for event in await decode_sse([body]):
        ops = json.loads(event.data).get("ops", []) if event.event == "message" else []
        out.append((event.event, event.id, ops))
    return out


async def _play(session: TurnSession, run: ScriptedRun) -> list[int]:
    """Send the recorded turn burst by burst, one loop tick each; the last seq of each."""
    last_seqs = []
    for burst in recorded_turn():
        last_seqs.append(run.send(burst)[-1].seq)
        await settle()
    await session.wait()
    return last_seqs


async def test_each_burst_is_one_frame_and_the_frames_add_up_to_the_turn(
    engine: Engine, message_id: str
) -> None:
    session = _session(engine, message_id)
    feed = session.feed("en")
    assert feed.last_id == "0" and not feed.done
    last_seqs = await _play(session, _run(session))

    frames = feed.frames_after("0")
    assert frames is not None
    # The events read together (one network chunk) became one frame, under their last seq.
    assert [frame.id for frame in frames] == [str(seq) for seq in last_seqs]
    assert feed.done and feed.last_id == str(last_seqs[-1])
    from_frames = _store(frame.ops for frame in frames)
    stored = TurnView.replay(load_events(engine, message_id))
    assert from_frames == _expected(stored, message_id) == _expected(session.view, message_id)
    assert from_frames["turn"]["status"] == "complete"
    assert from_frames["text:1"] == "The OAuth handling lives in auth.py 😀 and callback.py."


async def test_resuming_from_any_frame_misses_and_repeats_nothing(
    engine: Engine, message_id: str
) -> None:
    session = _session(engine, message_id)
    feed = session.feed("en")
    run = _run(session)
    snapshots = [feed.snapshot()]
    for burst in recorded_turn():
        run.send(burst)
        await settle()
        snapshots.append(feed.snapshot())
    await session.wait()
    final = _expected(session.view, message_id)
    frames = feed.frames_after("0")
    assert frames is not None
    ids = ["0", *(frame.id for frame in frames)]

    # A page that took a snapshot at any moment, then the frames after its id.
    for snapshot in snapshots:
        after = feed.frames_after(snapshot.id)
        assert after is not None
        assert _store([snapshot.ops, *(frame.ops for frame in after)]) == final

    # A page that got the frames up to any id and reconnected from it.
    for index, last_id in enumerate(ids):
        events = await _events(await _read(session.subscribe("en", last_id)))
        assert [event_id for kind, event_id, _ in events if kind == "message"] == ids[index + 1 :]
        assert events[-1][0] == "end"
        held = [frame.ops for frame in frames[:index]]
        assert _store([*held, *(ops for _, _, ops in events)]) == final


@pytest.mark.parametrize("last_id", [None, "", "999", "3.7", "abc", "-1", "1e3"])
async def test_an_id_the_feed_never_made_gets_a_snapshot(
    engine: Engine, message_id: str, last_id: str | None
) -> None:
    session = _session(engine, message_id)
    feed = session.feed("en")
    await _play(session, _run(session))
    assert feed.frames_after(last_id) is None
    events = await _events(await _read(session.subscribe("en", last_id)))
    assert [kind for kind, _, _ in events] == ["message", "end"]
    _, event_id, ops = events[0]
    assert event_id == feed.last_id and ops[0] == ["reset"]
    assert _store([ops]) == _expected(session.view, message_id)


async def test_a_slow_reader_catches_up_in_one_chunk_or_from_a_snapshot(
    engine: Engine, message_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feeds, "FRAME_BUFFER", 4)
    session = _session(engine, message_id)
    run = _run(session)
    stream = session.subscribe("en", None)
    received = [await anext(stream)]  # a snapshot of the turn before it began
    bursts = recorded_turn()

    for burst in bursts[:3]:  # within the buffer: the frames it missed, all at once
        run.send(burst)
        await settle()
    received.append(await anext(stream))
    assert [event_id for _, event_id, _ in await _events(received[-1])] == ["1", "3", "5"]

    for burst in bursts[3:12]:  # more than the buffer holds: a snapshot instead
        run.send(burst)
        await settle()
    received.append(await anext(stream))
    [(_, event_id, ops)] = await _events(received[-1])
    assert ops[0] == ["reset"] and event_id == session.feed("en").last_id

    for burst in bursts[12:]:
        run.send(burst)
        await settle()
    received.append(await _read(stream))
    events = await _events(b"".join(received))
    assert events[-1][0] == "end"
    assert _store(ops for _, _, ops in events) == _expected(session.view, message_id)


async def test_the_end_follows_the_frame_of_the_turns_end_whatever_ended_it(
    engine: Engine, message_id: str
) -> None:
    session = _session(engine, message_id)
    run = _run(session)
    following = asyncio.create_task(_read(session.subscribe("en", None)))
    run.send(recorded_turn()[1])
    await settle()
    run.close()  # the run stops without saying how: the session ends the turn itself
    events = await _events(await following)
    assert [kind for kind, _, _ in events][-2:] == ["message", "end"]
    ending = _store(ops for _, _, ops in events)
    assert ending["turn"]["status"] == "error"  # type: ignore[index]
    assert ending == _expected(session.view, message_id)
    assert session.feed("en").done

    # A page that comes after the end, in another language: the turn as it ended, then end.
    await session.wait()
    late = await _events(await _read(session.subscribe("es", None)))
    assert [kind for kind, _, _ in late] == ["message", "end"]
    assert _store([late[0][2]]) == _expected(session.view, message_id, "es")


async def test_a_held_header_comes_due_in_a_frame_of_its_own() -> None:
    now = [1000.0]
    view = TurnView()
    feed = PatchFeed("m1", view, "en", hold_ms=20, clock=lambda: now[0])

    def publish(*events: object) -> None:
        for event in events:
            feed.mark(event, view.apply(event))  # type: ignore[arg-type]

    publish(
        CallStarted(1, "c1", "search_code", 0, label_bearing=True),
        CallStarted(2, "c2", "read_file", 0, label_bearing=True),
        ArgsDelta(3, "c1", '{"intent": "Searching for OAuth", "q": 1}'),
    )
    await settle()
    publish(ArgsDelta(4, "c2", '{"intent": "Reading the router", "p": 1}'))
    await settle()
    assert feed.last_id == "4"
    held = _store(frame.ops for frame in feed.frames_after("0") or [])
    assert held != _expected(view, "m1")  # the header still shows the first intent

    now[0] += 1.0  # a second later by the feed's clock: the held header is due
    while feed.last_id == "4":
        await feed.wait("4")
    assert feed.last_id == "4.1"
    assert _store(frame.ops for frame in feed.frames_after("0") or []) == _expected(view, "m1")
    publish(TextDelta(5, "Found it."))
    await settle()
    assert feed.last_id == "5"
    publish(TurnDone(6, "end_turn"))
    await settle()
    assert feed.done and feed.last_id == "6"


def test_a_session_driven_without_a_loop_makes_a_frame_per_event(
    engine: Engine, message_id: str
) -> None:
    session = _session(engine, message_id)
    feed = session.feed("en")
    assert session.feed("en") is feed
    session.publish(CallStarted(1, "c1", "search_code", 0, label_bearing=True))
    session.publish(ArgsDelta(2, "c1", '{"intent": "Searching'))
    session.publish(TurnDone(3, "end_turn"))
    frames = feed.frames_after("0")
    assert [frame.id for frame in frames or []] == ["1", "2", "3"]
    assert feed.done
