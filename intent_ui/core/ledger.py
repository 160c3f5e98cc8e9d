"""The intent anchor ledger: a compact record of what a turn's calls set out to do.

An anchor is derived, never authored: one per settled, label-bearing call that carried an
intent, in the order their labels settled (`seq`). It survives compaction (feed
`render_ledger` to a summariser when tool bodies are dropped), names checkpoints, and
makes intents queryable for analytics. Deriving it is a read of `TurnView`, so it stays
consistent with what the cards showed.

The ledger is a copy that leaves the conversation (summaries, analytics), so each
anchor's intent and outcome go through `redact_intent` (PII stripped, clamped) as the
anchor is derived; the turn it was read from keeps what the model wrote.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from intent_ui.core.capabilities.intent import apply_outcome
from intent_ui.core.capture import redact_intent
from intent_ui.core.sanitize import has_label_text, sanitize_label
from intent_ui.core.states import FINAL_STATES, FinalState
from intent_ui.core.turn import CallRecord, TurnView

__all__ = ["AnchorStatus", "IntentAnchor", "call_outcome", "derive_anchors", "render_ledger"]

AnchorStatus = Literal["success", "error", "cancelled"]

_STATUS: dict[FinalState, AnchorStatus] = {
    "settled": "success",
    "error": "error",
    "cancelled": "cancelled",
}
_MARK: dict[str, str] = {"success": "✓", "error": "✗", "cancelled": "⊘"}
_LINE_LIMIT = 200


@dataclass(frozen=True, slots=True)
class IntentAnchor:
    """One settled call: what it meant to do and how it ended.

    `intent` and `outcome` are the redacted copies (`redact_intent`), never the raw text.

    `outcome` is what the label settled to: the tool's outcome, or the intent with its
    outcome patch applied; for an error, the tool's outcome or the error message; None
    when the label stayed the intent unchanged. `ts` is the caller-supplied time of the
    call (0.0 when unknown: core reads no clock).
    """

    tool_call_id: str
    tool_name: str
    intent: str
    outcome: str | None
    status: AnchorStatus
    ts: float
    agent_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool_call_id": self.tool_call_id,
            "tool_name": self.tool_name,
            "intent": self.intent,
            "outcome": self.outcome,
            "status": self.status,
            "ts": self.ts,
            "agent_id": self.agent_id,
        }


def derive_anchors(
    turn: TurnView,
    *,
    timestamps: Mapping[str, float] | None = None,
    agent_id: str | None = None,
) -> list[IntentAnchor]:
    """Anchors for the turn's settled label-bearing calls that carry an intent, by
    `label_seq`."""
    times = timestamps or {}
    calls = [
        record for record in turn.calls() if record.carries_intent and has_label_text(record.intent)
    ]
    # sorted() is stable: calls that settled under one seq keep their start order.
    calls.sort(key=lambda record: record.label_seq)
    return [
        IntentAnchor(
            tool_call_id=record.call_id,
            tool_name=record.tool,
            intent=redact_intent(record.intent or ""),
            outcome=_redacted(call_outcome(record)),
            status=_STATUS[record.state],
            ts=_timestamp(times.get(record.call_id)),
            agent_id=agent_id,
        )
        for record in calls
        if record.state in FINAL_STATES  # here, so the state is narrowed for _STATUS
    ]


def _redacted(text: str | None) -> str | None:
    return None if text is None else redact_intent(text)


def call_outcome(record: CallRecord) -> str | None:
    """What the call's label settled to, as the model's own text (not redacted): see
    `IntentAnchor.outcome`."""
    intent = record.intent or ""
    if record.state == "error":
        for text in (record.outcome, record.error):
            if has_label_text(text):
                return text
        return None
    if record.state != "settled":
        return None
    if has_label_text(record.outcome):
        return record.outcome
    if record.outcome_patch is None:
        return None
    patched = apply_outcome(intent, None, record.outcome_patch)
    return patched if isinstance(patched, str) and patched != intent else None


def _timestamp(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return 0.0


def render_ledger(anchors: Iterable[IntentAnchor]) -> str:
    """Compact lines for a summariser prompt, one per anchor.

    `✓ Searched for OAuth handling → Found 12 matches`; errors are marked `✗` and
    cancellations `⊘ … (cancelled)`. Every line is sanitised to one line of plain text.
    """
    lines: list[str] = []
    for anchor in anchors:
        mark = _MARK.get(anchor.status, "?")
        line = f"{mark} {sanitize_label(anchor.intent, _LINE_LIMIT).text}"
        if anchor.outcome:
            line += f" → {sanitize_label(anchor.outcome, _LINE_LIMIT).text}"
        if anchor.status == "cancelled":
            line += " (cancelled)"
        lines.append(line)
    return "\n".join(lines)
