"""Streaming titles as appends: what one tab is sent for the growing full labels."""

from __future__ import annotations

import random

from intent_ui.ui.live_titles import (
    REFRESH_PER_PUSH,
    REFRESH_S,
    TitleFeed,
    TitleOp,
    card_title_key,
    group_title_key,
    utf16_len,
)
from intent_ui.ui.viewmodels import CardVM, GroupVM, PartVM


class FakeClock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def round_of(*cards: CardVM, live_header: str | None = None) -> list[PartVM]:
    group = GroupVM(
        key="m:0",
        single=len(cards) < 2,
        live=live_header is not None,
        header_title=live_header or "",
        cards=list(cards),
    )
    return [PartVM(kind="text", text="Looking."), PartVM(kind="group", group=group)]


def streaming(call_id: str, title: str) -> CardVM:
    return CardVM(call_id=call_id, state="streaming", label=title[:8] + "…", title=title)


class Page:
    """The page's rule for operations (`assets/live_titles.js`), in UTF-16 units."""

    def __init__(self) -> None:
        self.titles: dict[str, str] = {}

    def apply(self, ops: list[TitleOp]) -> None:
        for key, start, text in ops:
            current = self.titles.get(key)
            if start == 0:
                self.titles[key] = text
            elif current is not None and utf16_len(current) == start:
                self.titles[key] = current + text


def test_a_streaming_title_is_sent_whole_once_then_as_what_it_gained() -> None:
    feed = TitleFeed()
    parts, ops = feed.split(round_of(streaming("a", "Searching the")))
    card = parts[1].group.cards[0]
    assert (card.title, card.title_key) == ("", card_title_key("a"))
    assert ops == [(card_title_key("a"), 0, "Searching the")]
    _, ops = feed.split(round_of(streaming("a", "Searching the repo")))
    assert ops == [(card_title_key("a"), 13, " repo")]
    _, ops = feed.split(round_of(streaming("a", "Searching the repo")))
    assert ops == []


def test_offsets_count_what_a_browser_counts() -> None:
    """An emoji is one Python character and two JavaScript ones: the second append
    must start where the page's string ends."""
    feed = TitleFeed()
    feed.split(round_of(streaming("a", "Fix 🐛")))
    _, ops = feed.split(round_of(streaming("a", "Fix 🐛 now")))
    assert ops == [(card_title_key("a"), 6, " now")]
    _, ops = feed.split(round_of(streaming("a", "Fix 🐛 now 🚀!")))
    assert ops == [(card_title_key("a"), 10, " 🚀!")]


def test_a_title_that_changed_other_than_by_growing_is_sent_whole() -> None:
    feed = TitleFeed()
    feed.split(round_of(streaming("a", "Reading   ")))
    _, ops = feed.split(round_of(streaming("a", "Reading files")))
    assert ops == [(card_title_key("a"), 0, "Reading files")]


def test_an_unchanged_card_keeps_its_stripped_object() -> None:
    feed = TitleFeed()
    first = feed.split(round_of(streaming("a", "Searching the")))[0][1].group.cards[0]
    again = feed.split(round_of(streaming("a", "Searching the")))[0][1].group.cards[0]
    grown = feed.split(round_of(streaming("a", "Searching the repo")))[0][1].group.cards[0]
    assert again is first
    assert grown is first  # the label on screen is the same: only the title grew


def test_cards_past_streaming_and_expanded_cards_keep_their_titles() -> None:
    feed = TitleFeed()
    running = CardVM(call_id="a", state="running", label="Run…", title="Running the suite")
    expanded = CardVM(call_id="b", state="streaming", label="Rea…", title="Reading", expanded=True)
    parts, ops = feed.split(round_of(running, expanded))
    assert parts[1].group.cards == [running, expanded]
    assert ops == []


def test_a_live_group_header_streams_its_title_and_a_settled_one_keeps_it() -> None:
    feed = TitleFeed()
    parts, ops = feed.split(round_of(streaming("a", "x"), live_header="Searching the"))
    group = parts[1].group
    assert (group.header_title, group.title_key) == ("", group_title_key("m:0"))
    assert (group_title_key("m:0"), 0, "Searching the") in ops
    settled = GroupVM(key="m:0", header_title="Searched the repo", cards=[])
    parts, ops = feed.split([PartVM(kind="group", group=settled)])
    assert parts[0].group == settled
    assert ops == []


def test_a_resynced_tab_is_sent_every_title_whole() -> None:
    feed = TitleFeed()
    feed.split(round_of(streaming("a", "Searching"), streaming("b", "Reading")))
    feed.resync()
    _, ops = feed.split(round_of(streaming("a", "Searching"), streaming("b", "Reading")))
    assert sorted(ops) == [
        (card_title_key("a"), 0, "Searching"),
        (card_title_key("b"), 0, "Reading"),
    ]


def test_titles_are_refreshed_whole_a_few_per_push_stalest_first() -> None:
    """A page that missed a push keeps a gap until a full copy comes: every title gets
    one at least every REFRESH_S, spread over pushes."""
    clock = FakeClock()
    feed = TitleFeed(clock=clock)
    count = REFRESH_PER_PUSH * 2 + 1
    ids = [f"c{i}" for i in range(count)]
    feed.split(round_of(*(streaming(i, "go") for i in ids)))
    clock.now += REFRESH_S
    _, ops = feed.split(round_of(*(streaming(i, "go on") for i in ids)))
    full = [op for op in ops if op[1] == 0]
    assert len(full) == REFRESH_PER_PUSH
    assert all(text == "go on" for _, _, text in full)
    assert len(ops) == count  # a refreshed title's append is replaced, not doubled
    refreshed = {key for key, _, _ in full}
    clock.now += 0.01
    _, ops = feed.split(round_of(*(streaming(i, "go on") for i in ids)))
    again = {key for key, start, _ in ops if start == 0}
    assert len(again) == REFRESH_PER_PUSH and not again & refreshed


def test_a_page_applying_every_push_holds_every_title() -> None:
    rng = random.Random(7)
    pieces = ["ab", " ", "🐛", "é", "字", "  ", "x"]
    feed, page = TitleFeed(), Page()
    titles = {f"c{i}": "" for i in range(6)}
    for _ in range(300):
        for call_id in titles:
            if rng.random() < 0.1:
                titles[call_id] = rng.choice(pieces)  # restarted: not a prefix
            else:
                titles[call_id] += rng.choice(pieces)
        _, ops = feed.split(round_of(*(streaming(k, v) for k, v in titles.items())))
        page.apply(ops)
    assert page.titles == {card_title_key(k): v for k, v in titles.items()}


def test_a_page_that_missed_a_push_catches_up_with_the_next_full_copy() -> None:
    clock = FakeClock()
    feed, page = TitleFeed(clock=clock), Page()
    page.apply(feed.split(round_of(streaming("a", "Sea")))[1])
    feed.split(round_of(streaming("a", "Search")))  # lost on the way
    page.apply(feed.split(round_of(streaming("a", "Searching")))[1])
    assert page.titles[card_title_key("a")] == "Sea"  # a gap is not filled with junk
    clock.now += REFRESH_S
    page.apply(feed.split(round_of(streaming("a", "Searching the")))[1])
    assert page.titles[card_title_key("a")] == "Searching the"
