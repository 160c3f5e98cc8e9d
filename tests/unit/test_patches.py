"""A turn as keyed patches: every change reaches the page's store, and only the change."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from intent_ui.core.events import (
    ActivityLabel,
    ArgsComplete,
    ArgsDelta,
    CallSettled,
    CallStarted,
    GoalSelected,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.locale import SUPPORTED_LANGUAGES
from intent_ui.core.patches import (
    END_EVENT,
    Frame,
    Op,
    PatchGap,
    TurnPatcher,
    apply_ops,
    frame_id,
    frame_order,
    utf16_len,
)
from intent_ui.core.turn import TurnView
from tests.support.turn_scripts import SCRIPTS, Script, intent_args

Store = dict[str, object]


def snapshot_store(events: Sequence[TurnEvent], lang: str = "en") -> Store:
    store: Store = {}
    apply_ops(store, TurnPatcher("m", lang, hold_ms=0).snapshot(TurnView.replay(events)))
    return store


def stream(
    events: Sequence[TurnEvent],
    *,
    every: int = 1,
    view: TurnView | None = None,
    patcher: TurnPatcher | None = None,
) -> list[list[Op]]:
    """Fold `events` into `view` the way a feed does: mark each, flush every `every`."""
    view = view if view is not None else TurnView()
    patcher = patcher if patcher is not None else TurnPatcher("m", "en", hold_ms=0)
    frames = []
    for i, event in enumerate(events, 1):
        patcher.mark(event, view.apply(event))
        if i % every == 0 or i == len(events):
            frames.append(patcher.flush(view, now_ms=float(i)))
    return frames


def applied(frames: Sequence[Sequence[Op]], store: Store | None = None) -> Store:
    store = {} if store is None else store
    lengths: dict[str, int] = {}
    for ops in frames:
        apply_ops(store, ops, lengths)
    return store


def state(store: Store) -> Store:
    """The store without the announcement, which is news rather than state."""
    return {key: value for key, value in store.items() if key != "announce"}


def keys_of(ops: Sequence[Op]) -> set[object]:
    return {op[1] for op in ops if op[0] != "reset"}


@pytest.mark.parametrize("every", [1, 2, 5, 1000])
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_every_frame_from_the_first_event_builds_the_stored_turn(script: str, every: int) -> None:
    events = SCRIPTS[script]()
    assert state(applied(stream(events, every=every))) == snapshot_store(events)


@pytest.mark.parametrize("lang", SUPPORTED_LANGUAGES)
def test_frames_build_the_stored_turn_in_every_language(lang: str) -> None:
    events = SCRIPTS["parallel_out_of_order"]()
    patcher = TurnPatcher("m", lang, hold_ms=0)
    assert state(applied(stream(events, patcher=patcher))) == snapshot_store(events, lang)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_held_headers_never_outlive_the_turn(script: str) -> None:
    # Events 1 ms apart: nearly every header switch is held back, and the turn's end
    # must still leave the page with the stored turn.
    events = SCRIPTS[script]()
    patcher = TurnPatcher("m", "en", hold_ms=200)
    assert state(applied(stream(events, patcher=patcher))) == snapshot_store(events)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_a_snapshot_at_any_seq_and_the_frames_after_it_build_the_stored_turn(script: str) -> None:
    events = SCRIPTS[script]()
    final = snapshot_store(events)
    for cut in range(0, len(events) + 1, max(1, len(events) // 25)):
        view = TurnView.replay(events[:cut])
        patcher = TurnPatcher("m", "en", hold_ms=0)
        store: Store = {}
        apply_ops(store, patcher.snapshot(view, now_ms=0.0))
        rest = stream(events[cut:], view=view, patcher=patcher) if cut < len(events) else []
        assert state(applied(rest, store)) == final, cut


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_a_late_joiner_gets_what_was_sent_and_then_the_frames(script: str) -> None:
    # A feed answers a client it cannot resume with what it holds, not a new snapshot of
    # the view: that would lose changes marked but not yet flushed for everyone else.
    events = SCRIPTS[script]()
    view, patcher = TurnView(), TurnPatcher("m", "en", hold_ms=0)
    cut = len(events) // 2
    stream(events[:cut], view=view, patcher=patcher)
    store: Store = {}
    apply_ops(store, patcher.table_ops())
    assert state(applied(stream(events[cut:], view=view, patcher=patcher), store)) == (
        snapshot_store(events)
    )


def test_a_snapshot_holds_every_key_of_the_turn() -> None:
    store = snapshot_store(SCRIPTS["rounds_with_text_between"]())
    assert store["turn"] == {
        "status": "complete",
        "goal": "Find why the login fails",
        "timeline": False,
        "failure": "",
        "failure_hint": "",
        "error": "",
        "waiting": "",
        "parts": [
            {"kind": "text", "key": "text:0"},
            {"kind": "group", "key": "group:0"},
            {"kind": "text", "key": "text:2"},
            {"kind": "group", "key": "group:1"},
            {"kind": "text", "key": "text:4"},
        ],
    }
    assert store["text:0"] == "Starting."
    assert store["cards:1"] == ["r2", "r3"]
    assert set(store) == {
        "turn",
        *(f"text:{i}" for i in (0, 2, 4)),
        *(f"{kind}:{g}" for kind in ("group", "cards", "title:group") for g in (0, 1)),
        *(f"{kind}:{c}" for kind in ("card", "title") for c in ("r1", "r2", "r3")),
    }
    assert "announce" not in store


def test_the_turn_carries_its_failure_and_status() -> None:
    turn = snapshot_store(SCRIPTS["errors_and_cancel"]())["turn"]
    assert isinstance(turn, dict)
    assert turn["status"] == "error"
    assert turn["failure"] and turn["failure_hint"]
    assert turn["error"] == "upstream reset"  # the detail never carries the traceback
    cancelled = snapshot_store(SCRIPTS["cancelled_turn"]())
    assert cancelled["turn"]["status"] == "cancelled"  # type: ignore[index]
    assert cancelled["card:k1"]["state"] == "cancelled"  # type: ignore[index]


# --- every marker yields its patch -------------------------------------------------------


def flushed(events: Sequence[TurnEvent], last: TurnEvent) -> tuple[list[Op], set[str]]:
    """The ops of the flush after `last`, with everything before it flushed, and the
    markers `last` gave."""
    view, patcher = TurnView(), TurnPatcher("m", "en", hold_ms=0)
    stream(events, view=view, patcher=patcher)
    changes = view.apply(last)
    patcher.mark(last, changes)
    return patcher.flush(view, now_ms=1e6), changes


def test_a_new_call_sends_its_card_its_title_its_group_and_the_turn() -> None:
    ops, changes = flushed([TextDelta(1, "Hi")], CallStarted(2, "a", "search_code", 0, None, True))
    assert changes == {"a", "header:0", "parts"}
    assert keys_of(ops) == {
        *("card:a", "title:a", "cards:0", "group:0", "title:group:0", "turn", "announce")
    }


def test_a_call_joining_its_group_sends_the_group_list() -> None:
    first = [CallStarted(1, "a", "search_code", 0, None, True)]
    ops, _ = flushed(first, CallStarted(2, "b", "search_code", 0, None, True))
    assert ["set", "cards:0", ["a", "b"]] in ops
    assert {"card:b", "group:0"} <= keys_of(ops)  # the group has a header from two calls


def test_a_growing_intent_sends_its_card_and_title_growth_and_the_header() -> None:
    first: list[TurnEvent] = [
        CallStarted(1, "a", "search_code", 0, None, True),
        CallStarted(2, "b", "search_code", 0, None, True),
        ArgsDelta(3, "a", '{"intent": "Sear'),
    ]
    ops, changes = flushed(first, ArgsDelta(4, "a", "ching"))
    assert changes == {"a", "header:0"}
    card = next(op for op in ops if op[1] == "card:a")
    assert card[2]["label"] == "Searching"  # type: ignore[index]
    assert keys_of(ops) == {"card:a", "group:0"}  # short titles stay ""


def test_a_fragment_of_a_call_the_header_does_not_show_sends_that_card_alone() -> None:
    first: list[TurnEvent] = [
        CallStarted(1, "a", "search_code", 0, None, True),
        CallStarted(2, "b", "search_code", 0, None, True),
        ArgsDelta(3, "a", '{"intent": "Sear'),
        ArgsDelta(4, "b", '{"intent": "Read'),  # the header follows b, the latest to show
    ]
    ops, changes = flushed(first, ArgsDelta(5, "a", "ching"))
    assert changes == {"a"}
    assert keys_of(ops) == {"card:a"}
    ops, changes = flushed(first, ArgsDelta(5, "b", "ing"))
    assert changes == {"b", "header:0"}
    assert header_of(ops) == "Reading"


def test_an_intent_past_the_title_window_marks_no_header() -> None:
    intent = "Reading every module of the package, one by one, " * 60  # 3 KB
    first: list[TurnEvent] = [
        CallStarted(1, "l", "read_file", 0, None, True),
        CallStarted(2, "k", "read_file", 0, None, True),
        ArgsDelta(3, "l", intent_args(intent)[: -len('"}')]),
    ]
    ops, changes = flushed(first, ArgsDelta(4, "l", " and more"))
    assert changes == {"l"}  # the header shows l, but reads its first 2 KB only
    assert ops == []


def test_a_fragment_that_changes_no_label_sends_nothing() -> None:
    first: list[TurnEvent] = [
        CallStarted(1, "a", "write_file", 0, None, True),
        ArgsDelta(2, "a", '{"intent": "Writing the file", "content": "'),
    ]
    ops, changes = flushed(first, ArgsDelta(3, "a", "x" * 100))
    assert changes == {"a"}
    assert ops == []


def test_a_summary_sends_the_group_header() -> None:
    s = Script().start("a", 0).start("b", 0).settle("a").settle("b")
    ops, changes = flushed(s.events, ActivityLabel(9, 0, "Looked at two things"))
    assert changes == {"header:0"}
    assert keys_of(ops) == {"group:0"}
    group = next(op[2] for op in ops if op[1] == "group:0")
    assert group["header"] == "Looked at two things"  # type: ignore[index]
    assert group["open"] is False and group["phase"] == "summarized"  # type: ignore[index]


def test_a_summary_before_its_groups_first_call_waits_for_the_group() -> None:
    ops, changes = flushed([TextDelta(1, "Hi")], ActivityLabel(2, 3, "Early"))
    assert changes == {"header:3"} and ops == []
    events: list[TurnEvent] = [
        TextDelta(1, "Hi"),
        ActivityLabel(2, 3, "Early"),
        CallStarted(3, "a", "x", 3),
    ]
    frames = stream(events)
    assert state(applied(frames)) == snapshot_store(events)


def test_reply_text_grows_by_appends_counted_in_utf16() -> None:
    ops, changes = flushed([TextDelta(1, "Hi 🙂")], TextDelta(2, " there"))
    assert changes == {"text"}
    assert ops == [["add", "text:0", 5, " there"]]  # the emoji is two UTF-16 units


def test_text_after_a_group_is_a_new_part_and_the_turn_lists_it() -> None:
    first: list[TurnEvent] = [TextDelta(1, "Hi"), CallStarted(2, "a", "read_file", 0)]
    ops, changes = flushed(first, TextDelta(3, "Done"))
    assert changes == {"text", "parts"}
    assert ["set", "text:2", "Done"] in ops
    turn = next(op[2] for op in ops if op[1] == "turn")
    assert [p["key"] for p in turn["parts"]] == ["text:0", "group:0", "text:2"]  # type: ignore[index]


def test_text_that_grew_before_a_new_group_in_one_flush_is_not_lost() -> None:
    events: list[TurnEvent] = [
        TextDelta(1, "Hi"),
        TextDelta(2, " you"),
        CallStarted(3, "a", "x", 0),
        TextDelta(4, "!"),
    ]
    view, patcher = TurnView(), TurnPatcher("m", "en", hold_ms=0)
    stream(events[:1], view=view, patcher=patcher)
    ops = stream(events[1:], view=view, patcher=patcher, every=10)[0]
    assert ["add", "text:0", 2, " you"] in ops and ["set", "text:2", "!"] in ops


def test_the_goal_sends_the_turn() -> None:
    ops, changes = flushed([TextDelta(1, "Hi")], GoalSelected(2, "research", "Find the bug"))
    assert changes == {"goal"}
    assert [op[1] for op in ops] == ["turn"]
    assert ops[0][2]["goal"] == "Find the bug"  # type: ignore[index]


def test_the_end_sends_the_turn_and_every_card_it_cancelled() -> None:
    first: list[TurnEvent] = [
        CallStarted(1, "a", "read_file", 0),
        CallStarted(2, "b", "read_file", 0),
        CallSettled(3, "b", "settled"),
    ]
    ops, changes = flushed(first, TurnDone(4, "cancelled"))
    assert changes == {"done", "a", "header:0"}
    assert {"turn", "card:a", "group:0"} <= keys_of(ops) and "card:b" not in keys_of(ops)
    turn = next(op[2] for op in ops if op[1] == "turn")
    assert turn["status"] == "cancelled"  # type: ignore[index]


def test_the_timeline_appears_with_the_fourth_call() -> None:
    events = [CallStarted(i, f"c{i}", "read_file", 0) for i in range(1, 4)]
    ops, _ = flushed(events, CallStarted(4, "c4", "read_file", 0))
    turn = next(op[2] for op in ops if op[1] == "turn")
    assert turn["timeline"] is True  # type: ignore[index]


def test_a_settled_time_reaches_the_card_and_its_group() -> None:
    events: list[TurnEvent] = [
        CallStarted(1, "a", "read_file", 0, at=100.0),
        CallStarted(2, "b", "read_file", 0, at=100.5),
        CallSettled(3, "a", "settled", at=101.0),
    ]
    ops, _ = flushed(events, CallSettled(4, "b", "settled", at=102.0))
    values = {op[1]: op[2] for op in ops if op[0] == "set"}
    assert (values["card:b"]["elapsed"], values["card:b"]["ticking"]) == ("1.5s", False)  # type: ignore[index]
    assert values["group:0"]["elapsed"] == "2.0s"  # type: ignore[index]


def test_a_later_harvest_of_a_background_call_updates_its_card() -> None:
    store = applied(stream(SCRIPTS["background_harvest"]()))
    assert store["card:bg"]["state"] == "settled"  # type: ignore[index]
    assert store["card:bg"]["label"] == "Ran the test suite"  # type: ignore[index]


def test_sibling_suffixes_arrive_once_both_arguments_are_final() -> None:
    a = intent_args("Searching the codebase", query="oauth")
    b = intent_args("Searching the codebase", query="mcp")
    s = Script().start("a", 0).start("b", 0).args("a", a).args("b", b).complete("a", a)
    ops, _ = flushed(s.events, ArgsComplete(99, "b", b))
    labels = {op[1]: op[2]["label"] for op in ops if str(op[1]).startswith("card:")}  # type: ignore[index]
    assert labels == {
        "card:a": 'Searching the codebase · "oauth"',
        "card:b": 'Searching the codebase · "mcp"',
    }


# --- announcements ------------------------------------------------------------------------


def test_a_start_and_a_settle_are_announced_once() -> None:
    view, patcher = TurnView(), TurnPatcher("m", "en", hold_ms=0)
    (ops,) = stream([CallStarted(1, "a", "read_file", 0)], view=view, patcher=patcher)
    assert ["set", "announce", "Running read_file"] in ops
    (ops,) = stream([CallSettled(2, "a", "settled")], view=view, patcher=patcher)
    assert ["set", "announce", "Ran read_file"] in ops
    (ops,) = stream([CallSettled(3, "a", "settled")], view=view, patcher=patcher)
    assert ops == []  # an idempotent re-emission changes nothing and says nothing


# --- cost --------------------------------------------------------------------------------


def wire_sizes(events: Sequence[TurnEvent], start: int) -> list[int]:
    view, patcher = TurnView(), TurnPatcher("m", "en", hold_ms=0)
    sizes = []
    for i, event in enumerate(events, 1):
        patcher.mark(event, view.apply(event))
        ops = patcher.flush(view, now_ms=float(i))
        if i > start:
            sizes.append(len(Frame(str(i), ops).wire("m")))
    return sizes


def test_a_long_argument_stream_costs_nothing_once_its_label_stops_changing() -> None:
    content = "y" * 65_536
    arguments = json.dumps({"intent": "Writing the report", "content": content})
    s = Script().start("w", 0, tool="write_file").start("v", 0).args("w", arguments, size=64)
    intent_done = next(
        i for i, e in enumerate(s.events, 1) if isinstance(e, ArgsDelta) and "content" in e.chunk
    )
    sizes = wire_sizes(s.events, start=intent_done)
    assert len(sizes) > 1000
    assert max(sizes) < 200  # an empty frame: nothing the page shows changed


def test_a_long_intent_streams_in_frames_of_bounded_size() -> None:
    intent = "Reading 🙂 every module of the package, one by one, " * 200  # ~10 KB
    streaming = intent_args(intent)[: -len('"}')]  # the intent never completes here
    s = Script().start("l", 0).start("k", 0).args("l", streaming, size=16)
    sizes = wire_sizes(s.events, start=2)
    # Each frame carries a capped card label, a title append of what came (until the
    # title window is full) and the header: never the intent so far.
    assert max(sizes) < 1500
    # Past the title window, with the label and the header at their caps, nothing the
    # page shows changes: the frames are empty.
    assert max(sizes[-50:]) < 100


def test_titles_grow_by_appends_up_to_the_window() -> None:
    long = "Reading 🙂 every module of the package, one by one, " * 60
    events = SCRIPTS["long_intents"]()
    view, patcher = TurnView(), TurnPatcher("m", "en", hold_ms=0)
    frames = stream(events, view=view, patcher=patcher)
    adds = [op for ops in frames for op in ops if op[0] == "add" and op[1] == "title:l1"]
    assert len(adds) > 20
    store = applied(frames)
    assert store["title:l1"] == long.strip()  # the whole label once the intent is complete


# --- the minimum display time of headers -------------------------------------------------


def header_of(ops: Sequence[Op]) -> object:
    return next((op[2]["header"] for op in ops if op[1] == "group:0"), None)  # type: ignore[index]


def test_a_header_is_held_for_its_minimum_time_then_sent_when_due() -> None:
    view, patcher = TurnView(), TurnPatcher("m", "en", hold_ms=200)
    apply: list[TurnEvent] = [
        CallStarted(1, "a", "search_code", 0, None, True),
        CallStarted(2, "b", "search_code", 0, None, True),
        ArgsDelta(3, "a", '{"intent": "Reading'),
    ]
    for event in apply:
        patcher.mark(event, view.apply(event))
    assert header_of(patcher.flush(view, now_ms=0)) == "Reading"
    event = ArgsDelta(4, "b", '{"intent": "Writing')
    patcher.mark(event, view.apply(event))
    # Held: the header still reads the first label (its accessible name follows the
    # state, as the header's other fields do).
    assert header_of(patcher.flush(view, now_ms=50)) in (None, "Reading")
    assert patcher.due_ms(50) == 150
    assert patcher.flush(view, now_ms=120) == []
    assert header_of(patcher.flush(view, now_ms=200)) == "Writing"
    assert patcher.due_ms(200) is None


def test_the_end_of_the_turn_releases_a_held_header() -> None:
    view, patcher = TurnView(), TurnPatcher("m", "en", hold_ms=200)
    events: list[TurnEvent] = [
        CallStarted(1, "a", "search_code", 0, None, True),
        CallStarted(2, "b", "search_code", 0, None, True),
        ArgsDelta(3, "a", '{"intent": "Reading'),
        ArgsDelta(4, "b", '{"intent": "Writing'),
    ]
    for i, event in enumerate(events):
        patcher.mark(event, view.apply(event))
        patcher.flush(view, now_ms=i)
    assert patcher.due_ms(4) is not None
    event = TurnDone(5, "end_turn")
    patcher.mark(event, view.apply(event))
    store = applied([patcher.table_ops(), patcher.flush(view, now_ms=5)])
    assert state(store) == snapshot_store([*events, event])
    assert patcher.due_ms(5) is None


# --- frames, the wire and the reference store --------------------------------------------


def test_a_frame_on_the_wire_is_one_server_sent_event() -> None:
    frame = Frame("12", [["set", "text:0", "Grüße 🙂\nline"], ["add", "title:a", 3, "x"]])
    wire = frame.wire("msg-1")
    assert wire.startswith(b"id: 12\ndata: ") and wire.endswith(b"\n\n")
    assert wire.count(b"\n") == 3  # the text's newline is escaped in the JSON
    data = json.loads(wire.decode("utf-8").split("data: ", 1)[1])
    assert data == {
        "m": "msg-1",
        "ops": [["set", "text:0", "Grüße 🙂\nline"], ["add", "title:a", 3, "x"]],
    }
    assert "Grüße 🙂".encode() in wire  # not escaped to ASCII
    assert END_EVENT == b"event: end\ndata: {}\n\n"


def test_a_lone_surrogate_reaches_the_wire_as_a_replacement_of_the_same_length() -> None:
    wire = Frame("1", [["add", "text:0", 0, "a\ud800b"]]).wire("m")
    text = json.loads(wire.decode("utf-8").split("data: ", 1)[1])["ops"][0][3]
    assert text == "a\ufffdb" and utf16_len(text) == utf16_len("a\ud800b") == 3


def test_frame_ids_order_by_seq_then_by_the_frames_made_since() -> None:
    assert frame_id(7) == "7" and frame_id(7, 2) == "7.2"
    assert frame_order("7") == (7, 0) and frame_order("7.2") == (7, 2)
    ids = ["10", "9.1", "9", "10.1", "9.12"]
    assert sorted(ids, key=frame_order) == ["9", "9.1", "9.12", "10", "10.1"]
    for bad in ["", "x", "7.", "7.x", "-1", "٣", "7.2.1"]:
        with pytest.raises(ValueError):
            frame_order(bad)


def test_apply_ops_resets_sets_and_adds_in_utf16_units() -> None:
    store: Store = {"old": 1}
    apply_ops(store, [["reset"], ["set", "t", "🙂"], ["add", "t", 2, "a"], ["add", "t", 3, "b"]])
    assert store == {"t": "🙂ab"}


@pytest.mark.parametrize("lengths", [None, {}])
def test_an_add_that_does_not_continue_the_value_is_a_gap(lengths: dict[str, int] | None) -> None:
    store: Store = {"t": "🙂"}
    with pytest.raises(PatchGap):
        apply_ops(store, [["add", "t", 1, "a"]], lengths)  # a Python length, not UTF-16
    with pytest.raises(PatchGap):
        apply_ops(store, [["add", "missing", 0, "a"]], lengths)
    with pytest.raises(ValueError):
        apply_ops(store, [["drop", "t"]], lengths)


def test_nothing_marked_flushes_nothing() -> None:
    view, patcher = TurnView(), TurnPatcher("m", "en")
    assert patcher.flush(view, now_ms=0) == [] and patcher.due_ms(0) is None
    assert patcher.snapshot(view) == [["reset"], ["set", "turn", patcher.table_ops()[1][2]]]
