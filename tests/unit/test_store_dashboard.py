"""The intents dashboard's store (`store/dashboard.py`), on SQLite and PostgreSQL: a turn's
calls are copied when it ends, and every number the page shows is a sum or grouping of
what was written, per user, source, period and scope."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import Engine, func, select
from sqlmodel import col

from intent_ui.core.dashboard import intent_key
from intent_ui.store import agents as agent_store
from intent_ui.store import conversations as conv_store
from intent_ui.store import turns as turns_module
from intent_ui.store.capture_events import capture_summary
from intent_ui.store.dashboard import (
    APP,
    CAPTURED,
    Dashboard,
    DashboardCall,
    DashboardQuery,
    Scope,
    Source,
    dashboard,
    parse_scope,
)
from intent_ui.store.models import Message
from tests.support.dashboard_seed import (
    DAY,
    NOON,
    TODAY,
    Call,
    capture,
    captured,
    record_turn_with_calls,
)

ROUTER = "reading the oauth callback router"
ALICE = "alice-id"
BOB = "bob-id"
BOTH: frozenset[Source] = frozenset({APP, CAPTURED})


def read(
    engine: Engine,
    owner: str = ALICE,
    sources: frozenset[Source] = BOTH,
    *,
    since: int | None = None,
    scope: Scope | None = None,
) -> Dashboard:
    return dashboard(engine, DashboardQuery(owner, sources, TODAY, since, scope))


def seed_alice(engine: Engine) -> str:
    """Two turns of Alice's: five calls, then three."""
    first = record_turn_with_calls(
        engine,
        ALICE,
        [
            Call("read_file", "Reading the OAuth callback router"),
            Call("read_file", "reading the OAuth callback router."),  # identical sibling
            Call("search_code", "Searching", state="error"),  # vague, failed
            Call("list_files", None),  # required, no intent
            Call("search_issues", "Looking for OAuth bugs", server="github"),  # optional
        ],
    )
    record_turn_with_calls(
        engine,
        ALICE,
        [
            Call("read_file", "Reading the OAuth callback router", state="error"),
            Call("search_issues", None, server="github"),
            Call("legacy_tool", None, label=False),  # carries no label at all
        ],
        agent_id="spec:Reviewer",
    )
    return first


def test_a_turns_calls_are_copied_when_it_ends(engine: Engine) -> None:
    message_id = seed_alice(engine)
    with engine.connect() as connection:
        stored = connection.execute(
            select(func.count()).where(col(DashboardCall.message_id) == message_id)
        ).scalar()
    assert stored == 5
    totals = read(engine).totals
    assert (totals.calls, totals.with_intent, totals.failures) == (8, 5, 2)
    # Required: read_file x3, search_code, list_files; optional: search_issues x2.
    assert (totals.required_calls, totals.required_with_intent) == (5, 4)
    assert (totals.optional_calls, totals.optional_with_intent) == (2, 1)
    assert totals.coverage.call_coverage == 0.8
    assert totals.coverage.optional_share == 0.5
    assert (totals.vague, totals.duplicates) == (1, 2)


def test_per_tool_server_and_agent(engine: Engine) -> None:
    seed_alice(engine)
    found = read(engine)
    tools = {(row.scope.name, row.scope.server): row.counts for row in found.tools}
    assert tools["read_file", ""].calls == 3
    assert (tools["read_file", ""].duplicates, tools["read_file", ""].failures) == (2, 1)
    assert tools["search_issues", "github"].coverage.optional_share == 0.5
    assert tools["legacy_tool", ""].required_calls == 0
    assert found.tools[0].scope.name == "read_file"  # the busiest first
    servers = {row.scope.server: row.counts.calls for row in found.servers}
    assert servers == {"": 6, "github": 2}
    agents = {row.scope.name: row.counts.calls for row in found.agents}
    assert agents == {"default": 5, "spec:Reviewer": 3}


def test_a_saved_agents_rows_carry_its_name(engine: Engine) -> None:
    agent = agent_store.create_agent(engine, owner=ALICE, name="Reviewer bot")
    record_turn_with_calls(engine, ALICE, [Call("read_file", "Reading it")], agent_id=agent.id)
    (row,) = read(engine).agents
    assert (row.scope.name, row.agent_name) == (agent.id, "Reviewer bot")


def test_each_user_sees_only_their_own_calls(engine: Engine) -> None:
    seed_alice(engine)
    record_turn_with_calls(engine, BOB, [Call("read_file", "Reading Bob's private notes")])
    bob = read(engine, BOB)
    assert bob.totals.calls == 1
    assert [i.text for i in bob.top_intents] == ["Reading Bob's private notes"]
    alice = read(engine)
    assert "Reading Bob's private notes" not in [i.text for i in alice.top_intents]
    assert read(engine, "nobody").totals.calls == 0


def test_captured_calls_are_read_only_with_their_source(engine: Engine) -> None:
    seed_alice(engine)
    capture(
        engine,
        [
            captured("book_car", "Ski trip to Munich for the weekend"),
            captured("book_car", "Reading the OAuth callback router"),
            captured("refresh_map", None, mode="optional"),
        ],
    )
    own = read(engine, sources=frozenset({APP}))
    assert own.totals.calls == 8
    assert {row.scope.source for row in own.tools} == {APP}
    both = read(engine)
    assert both.totals.calls == 11
    book = next(row for row in both.tools if row.scope.name == "book_car")
    assert (book.scope.source, book.scope.server, book.counts.calls) == (CAPTURED, "bookings", 2)
    # An intent written in both sources is one intent, counted across them.
    top = both.top_intents[0]
    assert (intent_key(top.text), top.calls) == (ROUTER, 4)
    only = read(engine, sources=frozenset({CAPTURED}))
    assert (only.totals.calls, only.agents) == (3, [])
    # Another user who may see captured calls sees them, and none of Alice's.
    other = read(engine, BOB)
    assert other.totals.calls == 3


def test_the_intent_lists(engine: Engine) -> None:
    seed_alice(engine)
    found = read(engine)
    # Either spelling of the router intent may stand for it: they are one intent.
    top = found.top_intents[0]
    assert (intent_key(top.text), top.calls) == (ROUTER, 3)
    assert [i.text for i in found.vague_intents] == ["Searching"]
    (twin,) = found.duplicate_intents
    assert (intent_key(twin.text), twin.calls, twin.tool) == (ROUTER, 2, "read_file")
    failed = {intent_key(i.text): (i.failures, i.calls) for i in found.failure_intents}
    # Of the three calls that wrote the router intent, one failed.
    assert failed == {ROUTER: (1, 3), "searching": (1, 1)}


def test_a_period_keeps_only_its_days(engine: Engine) -> None:
    seed_alice(engine)
    record_turn_with_calls(
        engine, ALICE, [Call("read_file", "Reading last month's report")], at=NOON - 40 * DAY
    )
    assert read(engine).totals.calls == 9
    recent = read(engine, since=TODAY - 29)
    assert recent.totals.calls == 8
    assert "Reading last month's report" not in [i.text for i in recent.top_intents]
    assert sum(row.counts.calls for row in recent.tools) == 8


def test_the_chart_has_one_bar_per_day_empty_days_included(engine: Engine) -> None:
    record_turn_with_calls(engine, ALICE, [Call("read_file", "Reading a")], at=NOON - 2 * DAY)
    record_turn_with_calls(
        engine, ALICE, [Call("read_file", "Reading b", state="error"), Call("grep", None)]
    )
    found = read(engine, since=TODAY - 6)
    assert found.bucket_days == 1
    assert [(p.day, p.calls, p.with_intent, p.failures) for p in found.chart] == [
        (TODAY - 6, 0, 0, 0),
        (TODAY - 5, 0, 0, 0),
        (TODAY - 4, 0, 0, 0),
        (TODAY - 3, 0, 0, 0),
        (TODAY - 2, 1, 1, 0),
        (TODAY - 1, 0, 0, 0),
        (TODAY, 2, 1, 1),
    ]
    # All time starts at the first day with a call.
    assert [p.day for p in read(engine).chart] == [TODAY - 2, TODAY - 1, TODAY]


def test_the_chart_of_a_long_period_groups_days_into_weeks(engine: Engine) -> None:
    record_turn_with_calls(engine, ALICE, [Call("read_file", "Reading a")], at=NOON - 89 * DAY)
    record_turn_with_calls(engine, ALICE, [Call("read_file", "Reading b")])
    found = read(engine, since=TODAY - 179)
    assert found.bucket_days == 7
    assert sum(p.calls for p in found.chart) == 2
    assert found.chart[0].day == TODAY - 179


def test_a_scope_narrows_the_totals_the_chart_and_the_lists(engine: Engine) -> None:
    seed_alice(engine)
    capture(engine, [captured("book_car", "Ski trip to Munich for the weekend")])
    tool = read(engine, scope=Scope("tool", APP, "read_file"))
    assert (tool.totals.calls, tool.totals.duplicates) == (3, 2)
    assert [intent_key(i.text) for i in tool.top_intents] == [ROUTER]
    assert sum(p.calls for p in tool.chart) == 3
    assert len(tool.tools) > 1  # the tables stay whole: they are how a scope is picked
    github = read(engine, scope=Scope("server", APP, "", "github"))
    assert (github.totals.calls, [i.text for i in github.top_intents]) == (
        2,
        ["Looking for OAuth bugs"],
    )
    builtin = read(engine, scope=Scope("server", APP, "", ""))
    assert builtin.totals.calls == 6
    agent = read(engine, scope=Scope("agent", APP, "spec:Reviewer"))
    assert (agent.totals.calls, agent.totals.failures) == (3, 1)
    assert [intent_key(i.text) for i in agent.failure_intents] == [ROUTER]
    booking = read(engine, scope=Scope("tool", CAPTURED, "book_car", "bookings"))
    assert [i.text for i in booking.top_intents] == ["Ski trip to Munich for the weekend"]
    assert booking.duplicate_intents == []


def test_an_opted_out_tool_is_counted_without_its_intents(engine: Engine) -> None:
    record_turn_with_calls(
        engine,
        ALICE,
        [Call("send_message", "Telling Jane Doe her refund is late")] * 2,
        omit=["send_message"],
    )
    found = read(engine)
    assert (found.totals.calls, found.totals.required_with_intent) == (2, 2)
    assert (found.totals.duplicates, found.top_intents) == (0, [])
    with engine.connect() as connection:
        texts = connection.execute(select(col(DashboardCall.intent))).scalars().all()
    assert texts == [None, None]


def test_deleting_a_conversation_takes_its_calls_off_the_dashboard(engine: Engine) -> None:
    message_id = seed_alice(engine)
    with engine.connect() as connection:
        chat = connection.execute(
            select(col(Message.conversation_id)).where(col(Message.id) == message_id)
        ).scalar_one()
    assert conv_store.delete_conversation(engine, chat, owner=ALICE)
    found = read(engine)
    # The second turn's three calls are left, counted as they were before.
    assert (found.totals.calls, found.totals.failures, found.totals.duplicates) == (3, 1, 0)
    assert {row.scope.name: row.counts.calls for row in found.agents} == {"spec:Reviewer": 3}
    for period in (None, TODAY - 6):  # the intent counts of all time, and the rows
        top = read(engine, since=period).top_intents
        assert [(intent_key(i.text), i.calls) for i in top] == [(ROUTER, 1)]
        (failed,) = read(engine, since=period).failure_intents
        assert (failed.failures, failed.calls) == (1, 1)
    assert read(engine).vague_intents == []


def test_a_copy_the_database_refuses_leaves_the_turn_recorded(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(*args: object) -> int:
        raise ValueError("refused")

    monkeypatch.setattr(turns_module, "record_turn_calls", refuse)
    with caplog.at_level(logging.ERROR, logger=turns_module.__name__):
        message_id = record_turn_with_calls(engine, ALICE, [Call("read_file", "Reading it")])
    with engine.connect() as connection:
        status = connection.execute(
            select(col(Message.status)).where(col(Message.id) == message_id)
        ).scalar_one()
    assert status == "complete"
    assert "could not be copied" in caplog.text
    assert read(engine).totals.calls == 0


def test_control_characters_a_model_wrote_do_not_stop_the_copy(engine: Engine) -> None:
    # PostgreSQL refuses a NUL in text; the copy is one clean line of each name and intent.
    record_turn_with_calls(engine, ALICE, [Call("made\x00up", "Reading\x00 the\nlog files")])
    found = read(engine)
    assert [row.scope.name for row in found.tools] == ["made up"]
    assert [i.text for i in found.top_intents] == ["Reading the log files"]


def test_a_large_batch_of_captured_calls_is_counted_whole(engine: Engine) -> None:
    # More keys than one upsert statement takes (a day each).
    records = [captured("book_car", f"Trip number {i}", at=NOON - i * DAY) for i in range(300)]
    capture(engine, records)
    found = read(engine)
    assert (found.totals.calls, found.totals.with_intent) == (300, 300)
    assert len(found.top_intents) == 10


def test_the_captured_panel_follows_the_period(engine: Engine) -> None:
    capture(
        engine,
        [
            captured("book_car", "A trip long ago", at=NOON - 60 * DAY),
            captured("book_car", "A trip this week"),
            captured("book_car", None),
            captured("refresh_map", None, mode="optional"),
        ],
    )
    everything = capture_summary(engine)
    assert everything.calls == 4
    book = everything.tools[0]
    assert (book.tool, book.calls, book.latest_intent) == ("book_car", 3, "A trip this week")
    recent = capture_summary(engine, TODAY - 29)
    assert recent.calls == 3
    assert recent.tools[0].coverage.call_coverage == 0.5


@pytest.mark.parametrize(
    "key",
    [
        Scope("tool", APP, "read_file", "").key(),
        Scope("server", CAPTURED, "", "bookings").key(),
        Scope("agent", APP, "default").key(),
    ],
)
def test_a_scope_survives_the_page(key: str) -> None:
    scope = parse_scope(key)
    assert scope is not None and scope.key() == key


@pytest.mark.parametrize(
    "key",
    ["", "null", "[1, 2]", '["table", "app", "x", ""]', '["agent", "captured", "x", ""]', "{"],
)
def test_a_scope_the_page_did_not_write_is_refused(key: str) -> None:
    assert parse_scope(key) is None
