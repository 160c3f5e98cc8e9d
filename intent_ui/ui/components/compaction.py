"""The compaction divider: where a conversation's older tool calls gave way to their
ledger (`intent_ui.core.compaction`).

It sits in the message list where the compaction happened, closed; opening it (a native
disclosure, so mouse, keyboard and screen readers need nothing of ours) lists what the
model reads instead of the calls above it: the ledger lines, one per call.
"""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

__all__ = ["compaction_divider"]


def compaction_divider(
    *, message_id: rx.Var[str], lines: rx.Var[str], labels: ObjectVar[dict[str, str]]
) -> rx.Component:
    """The divider of a `compaction` message row; `lines` is its text, one line per
    call."""
    return rx.el.details(
        rx.el.summary(labels["ui.compacted"], class_name="iu-compaction-summary"),
        rx.el.p(labels["ui.compacted_note"], class_name="iu-compaction-note"),
        rx.el.ul(
            rx.foreach(
                lines.to(str).split("\n"),
                lambda line: rx.el.li(line, class_name="iu-compaction-line"),
            ),
            class_name="iu-compaction-lines",
            custom_attrs={"data-testid": "compaction-lines"},
        ),
        class_name="iu-compaction",
        custom_attrs={"data-testid": "compaction-divider", "data-message-id": message_id},
    )
