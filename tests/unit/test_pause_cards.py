"""What a waiting call shows: the reducer's pauses and the approval and question records,
as a live page and a reloaded one get them from the same events."""

from __future__ import annotations

import json

from intent_ui.core.cards import call_detail, group_entry, turn_entry
from intent_ui.core.events import ApprovalDecided, QuestionAnswered, TurnDone
from intent_ui.core.patches import TurnPatcher, apply_ops
from intent_ui.core.pause_cards import approval_entry, question_entry
from intent_ui.core.pauses import requires_approval
from intent_ui.core.turn import TurnView
from tests.support.turn_scripts import Script, approvals_and_question, intent_args

DELETE = intent_args("Deleting the staging migrations", path="migrations/staging")


def waiting_turn() -> TurnView:
    s = Script().start("d1", 0, tool="delete_file").start("r1", 0, tool="read_file")
    s.args("d1", DELETE).complete("d1", DELETE).ask_approval("d1", agent_scope=True)
    return TurnView.replay(s.events)


def approval(turn: TurnView, call_id: str = "d1", lang: str = "en") -> dict[str, object]:
    pause = turn.pause(call_id)
    assert pause is not None
    return dict(approval_entry(turn, pause, lang))


def test_an_approval_leads_with_the_intent_then_the_tool() -> None:
    turn = waiting_turn()
    entry = approval(turn)
    assert entry["state"] == "waiting"
    assert entry["prompt"] == "Approve: Deleting the staging migrations"
    assert entry["tool"] == "delete_file"
    assert entry["agent_scope"] is True and entry["decision"] == ""
    # Each scope is named in words, with the tool.
    assert entry["always_conversation"] == "Always for delete_file in this conversation"
    assert entry["always_agent"] == "Always for delete_file for this agent"


def test_an_approval_without_an_intent_names_the_tool_and_its_server() -> None:
    s = Script().start("m1", 0, tool="drop_table", server="db", label_bearing=False)
    s.args("m1", '{"table": "users"}').complete("m1", '{"table": "users"}').ask_approval("m1")
    entry = approval(TurnView.replay(s.events), "m1")
    assert entry["prompt"] == "Approve: drop_table in db"


def test_the_detail_has_the_exact_arguments_without_the_intent_and_the_text_to_edit() -> None:
    detail = call_detail(waiting_turn(), "d1", "en")
    assert json.loads(detail["tool_arguments"]) == {"path": "migrations/staging"}
    assert json.loads(detail["editable"]) == json.loads(DELETE)
    assert "tool_arguments" not in call_detail(waiting_turn(), "r1", "en")


def test_while_a_call_waits_its_group_stays_open_and_the_turn_says_so() -> None:
    turn = waiting_turn()
    assert group_entry(turn, 0, "m", "en")["waiting"] is True
    assert turn_entry(turn, "en")["waiting"] == "Approval needed"
    assert turn_entry(turn, "es")["waiting"] == "Aprobación necesaria"
    turn.apply(ApprovalDecided(99, "d1", "approved"))
    assert group_entry(turn, 0, "m", "en")["waiting"] is False
    assert turn_entry(turn, "en")["waiting"] == ""


def test_the_settled_card_says_who_decided_and_for_how_long() -> None:
    cases = [
        (ApprovalDecided(99, "d1", "approved"), "Approved by you · once"),
        (
            ApprovalDecided(99, "d1", "approved", scope="conversation"),
            "Approved by you · always for this tool in this conversation",
        ),
        (
            ApprovalDecided(99, "d1", "approved", scope="agent"),
            "Approved by you · always for this tool for this agent",
        ),
        (ApprovalDecided(99, "d1", "denied", reason="not now"), "Denied by you: not now"),
        (ApprovalDecided(99, "d1", "denied"), "Denied by you"),
        (ApprovalDecided(99, "d1", "approved", by="auto"), "Approved automatically (--yes) · once"),
    ]
    for event, said in cases:
        turn = waiting_turn()
        turn.apply(event)
        assert approval(turn)["decision"] == said


def test_the_first_decision_stands() -> None:
    turn = waiting_turn()
    assert turn.apply(ApprovalDecided(99, "d1", "denied", reason="no"))
    assert not turn.apply(ApprovalDecided(100, "d1", "approved"))
    assert approval(turn)["state"] == "denied"


def test_a_rewritten_intent_is_the_label_and_the_arguments_change_with_it() -> None:
    turn = waiting_turn()
    edited = intent_args("Deleting only the old migrations", path="migrations/staging/old")
    turn.apply(ApprovalDecided(99, "d1", "approved", arguments=edited))
    assert turn.card_label("d1") == "Deleting only the old migrations"
    assert json.loads(turn.arguments("d1")) == json.loads(edited)
    assert approval(turn)["decision"] == "Approved by you · once · with your edits"


def test_a_call_that_ends_before_a_decision_no_longer_waits() -> None:
    turn = waiting_turn()
    turn.apply(TurnDone(99, "cancelled"))
    assert turn.waiting() == ()
    entry = approval(turn)
    assert (entry["state"], entry["decision"]) == ("expired", "Not decided: the turn ended first")


def test_a_question_shows_its_choices_then_the_answer() -> None:
    q = intent_args("Asking which database to use", question="Which database?")
    s = Script().start("q1", 0, tool="ask_user_question").args("q1", q).complete("q1", q)
    turn = TurnView.replay(s.ask("q1", "Which database?", ["Postgres", "SQLite"]).events)
    pause = turn.pause("q1")
    assert pause is not None
    entry = question_entry(turn, pause, "en")
    assert (entry["state"], entry["question"], entry["choices"]) == (
        "waiting",
        "Which database?",
        ["Postgres", "SQLite"],
    )
    assert turn_entry(turn, "en")["waiting"] == "Question for you"
    turn.apply(QuestionAnswered(99, "q1", "Postgres"))
    pause = turn.pause("q1")
    assert pause is not None
    assert question_entry(turn, pause, "en")["answered"] == "You answered: Postgres"


def test_a_reload_shows_what_the_live_page_showed() -> None:
    events = approvals_and_question()
    live, patcher = TurnView(), TurnPatcher("m", "en", hold_ms=0)
    store: dict[str, object] = {}
    apply_ops(store, patcher.snapshot(live, now_ms=0))
    for event in events:
        patcher.mark(event, live.apply(event))
        apply_ops(store, patcher.flush(live, now_ms=0))
    stored: dict[str, object] = {}
    apply_ops(stored, TurnPatcher("m", "en").snapshot(TurnView.replay(events)))
    store.pop("announce", None)
    assert store == stored
    assert stored["approval:d1"]["decision"] == "Approved by you · once · with your edits"  # type: ignore[index]
    assert stored["approval:d2"]["decision"] == "Denied by you: not the prod ones"  # type: ignore[index]
    assert stored["question:q1"]["answered"] == "You answered: Postgres"  # type: ignore[index]


def test_which_tools_ask_first() -> None:
    writes = {"name": "write_file", "changes_workspace": True}
    reads = {"name": "read_file"}
    default = {"*": {"require_approval": True}}
    # The agent's default speaks for the tools that change the workspace only.
    assert requires_approval(default, "write_file", writes)
    assert not requires_approval(default, "read_file", reads)
    # A tool's own entry outranks it, either way.
    assert not requires_approval(
        {**default, "write_file": {"require_approval": False}}, "write_file", writes
    )
    assert requires_approval({"read_file": {"require_approval": True}}, "read_file", reads)
    assert not requires_approval({}, "write_file", writes)


def test_the_live_region_says_what_waits_for_the_reader() -> None:
    s = Script().start("d1", 0, tool="delete_file").args("d1", DELETE).complete("d1", DELETE)
    view, patcher = TurnView(), TurnPatcher("m", "en", hold_ms=0)
    patcher.snapshot(view, now_ms=0)
    for event in s.events:
        patcher.mark(event, view.apply(event))
    patcher.flush(view, now_ms=0)
    request = Script()
    request.events = list(s.events)
    (asked,) = request.ask_approval("d1").events[len(s.events) :]
    patcher.mark(asked, view.apply(asked))
    ops = patcher.flush(view, now_ms=0)
    assert ["set", "announce", "Approve: Deleting the staging migrations"] in ops
