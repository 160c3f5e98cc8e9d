from __future__ import annotations

import json

from intent_ui.core.capture import INTENT_CAPTURE_LIMIT
from intent_ui.core.events import (
    ArgsComplete,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    TurnDone,
)
from intent_ui.core.ledger import IntentAnchor, derive_anchors, render_ledger
from intent_ui.core.turn import TurnView

SEARCHED = {"from": "Searching", "to": "Searched"}


def args(intent: str) -> str:
    return json.dumps({"intent": intent, "query": "q"})


def settled_turn() -> TurnView:
    turn = TurnView()
    turn.apply(CallStarted(1, "a", "search_code", 0, server="github", label_bearing=True))
    turn.apply(CallStarted(2, "b", "search_code", 0, server="github", label_bearing=True))
    turn.apply(CallStarted(3, "c", "create_ticket", 0, server="crm", label_bearing=False))
    turn.apply(CallStarted(4, "d", "read_file", 0, label_bearing=True))
    turn.apply(ArgsComplete(5, "a", args("Searching for MCP wiring")))
    turn.apply(ArgsComplete(6, "b", args("Searching for OAuth handling")))
    turn.apply(ArgsComplete(7, "c", args("billing_inquiry")))
    turn.apply(ArgsComplete(8, "d", args("Reading the router")))
    # b settles before a: the ledger follows settle order.
    turn.apply(CallSettled(9, "b", "settled", output="12", outcome="Found 12 matches"))
    turn.apply(CallSettled(10, "a", "settled", output="3", outcome_patch=SEARCHED))
    turn.apply(CallSettled(11, "c", "settled", output="ok"))
    turn.apply(CallSettled(12, "d", "error", error="No such file: router.py"))
    return turn


def test_anchors_follow_settle_order_and_skip_unlabelled_calls() -> None:
    anchors = derive_anchors(settled_turn(), timestamps={"a": 1700.5}, agent_id="agent-1")
    assert [a.tool_call_id for a in anchors] == ["b", "a", "d"]
    assert anchors[0] == IntentAnchor(
        tool_call_id="b",
        tool_name="search_code",
        intent="Searching for OAuth handling",
        outcome="Found 12 matches",
        status="success",
        ts=0.0,
        agent_id="agent-1",
    )
    assert anchors[1].outcome == "Searched for MCP wiring"
    assert anchors[1].ts == 1700.5


def test_error_anchor_keeps_the_error_message() -> None:
    anchor = derive_anchors(settled_turn())[-1]
    assert (anchor.status, anchor.outcome) == ("error", "No such file: router.py")


def test_unchanged_intent_has_no_outcome() -> None:
    turn = TurnView()
    turn.apply(CallStarted(1, "a", "read_file", 0, label_bearing=True))
    turn.apply(ArgsComplete(2, "a", args("Reading the router")))
    turn.apply(CallSettled(3, "a", "settled", outcome_patch={"from": "nope", "to": "x"}))
    assert derive_anchors(turn)[0].outcome is None


def test_unsettled_and_backgrounded_calls_are_not_anchors_until_they_settle() -> None:
    turn = TurnView()
    turn.apply(CallStarted(1, "a", "read_file", 0, label_bearing=True))
    turn.apply(CallStarted(2, "b", "web_search", 0, label_bearing=True))
    turn.apply(ArgsComplete(3, "a", args("Reading the router")))
    turn.apply(ArgsComplete(4, "b", args("Searching the web")))
    turn.apply(CallBackgrounded(5, "b"))
    assert derive_anchors(turn) == []
    turn.apply(TurnDone(6, "cancelled"))
    anchors = derive_anchors(turn)
    assert [(a.tool_call_id, a.status, a.outcome) for a in anchors] == [("a", "cancelled", None)]


def test_to_dict_is_json_ready() -> None:
    anchor = derive_anchors(settled_turn())[0]
    data = json.loads(json.dumps(anchor.to_dict()))
    assert data == {
        "tool_call_id": "b",
        "tool_name": "search_code",
        "intent": "Searching for OAuth handling",
        "outcome": "Found 12 matches",
        "status": "success",
        "ts": 0.0,
        "agent_id": None,
    }


def test_bad_timestamps_fall_back_to_zero() -> None:
    anchors = derive_anchors(settled_turn(), timestamps={"b": "soon", "a": True})  # type: ignore[dict-item]
    assert [a.ts for a in anchors] == [0.0, 0.0, 0.0]


def test_render_ledger_lines() -> None:
    text = render_ledger(derive_anchors(settled_turn()))
    assert text.splitlines() == [
        "✓ Searching for OAuth handling → Found 12 matches",
        "✓ Searching for MCP wiring → Searched for MCP wiring",
        "✗ Reading the router → No such file: router.py",
    ]


def test_render_ledger_marks_cancellations_and_keeps_one_line_each() -> None:
    anchors = [
        IntentAnchor("x", "t", "Reading\nthe <b>router</b>", None, "cancelled", 0.0),
        IntentAnchor("y", "t", "Searched for OAuth handling", "Found 12\nmatches", "success", 1.0),
    ]
    assert render_ledger(anchors) == (
        "⊘ Reading the <b>router</b> (cancelled)\n✓ Searched for OAuth handling → Found 12 matches"
    )


def test_render_empty_ledger() -> None:
    assert render_ledger([]) == ""


PII_INTENT = "Emailing alice@example.com the receipt for card 4111 1111 1111 1111"


def pii_turn(intent: str = PII_INTENT, outcome: str = "Sent to alice@example.com") -> TurnView:
    turn = TurnView()
    turn.apply(CallStarted(1, "a", "send_mail", 0, label_bearing=True))
    turn.apply(ArgsComplete(2, "a", args(intent)))
    turn.apply(CallSettled(3, "a", "settled", output="ok", outcome=outcome))
    return turn


def test_anchors_leave_the_conversation_pii_stripped_while_the_turn_stays_faithful() -> None:
    turn = pii_turn()
    (anchor,) = derive_anchors(turn)
    assert anchor.intent == "Emailing [email] the receipt for card [card]"
    assert anchor.outcome == "Sent to [email]"
    assert "alice@example.com" not in render_ledger([anchor])
    assert "alice@example.com" not in json.dumps(anchor.to_dict())
    # The conversation is its owner's own record: the turn itself keeps what was written.
    call = turn.call("a")
    assert call is not None and call.intent == PII_INTENT


def test_a_long_intent_is_clamped_in_the_anchor() -> None:
    (anchor,) = derive_anchors(pii_turn("Searching " + "x" * 2000, outcome="Found it"))
    assert anchor.intent == ("Searching " + "x" * 2000)[:INTENT_CAPTURE_LIMIT]
