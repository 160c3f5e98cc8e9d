"""Copy buttons: a reply's markdown, or one code block's code, onto the clipboard.

A button carries no words of its own: it is named by one of the page's copy labels
(`copy_labels`, rendered once in the reader's language) through `aria-labelledby`, so a
code block inside memoized reply markdown reads in that language without subscribing the
memo to the page state. The page script handles the click (`assets/intent_ui.js`): it
writes the clipboard, then for two seconds the button shows a check mark and "Copied", is
named "Copied", and a polite status region says it; where the browser refuses the
clipboard the region says so instead.
"""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar, Var
from reflex.vars.function import FunctionStringVar

__all__ = [
    "COPY_CODE_LABEL",
    "COPY_REPLY_LABEL",
    "copy_button",
    "copy_labels",
    "copy_reply_button",
]

COPY_REPLY_LABEL = "iu-label-copy-reply"
COPY_CODE_LABEL = "iu-label-copy-code"
# The page script reads these two by id (assets/intent_ui.js).
_COPIED_LABEL = "iu-label-copied"
_COPY_FAILED_LABEL = "iu-label-copy-failed"
_COPY_STATUS = "iu-copy-status"

# Called during React's click handler, so the clipboard write keeps the click's user
# activation; the page script knows which button was clicked.
_COPY_REPLY: FunctionStringVar = FunctionStringVar.create("((text) => window.iuCopyReply?.(text))")


def copy_labels(t: ObjectVar[dict[str, str]]) -> rx.Component:
    """The copy buttons' names and the status region they report in; once per page that
    shows replies."""
    return rx.fragment(
        rx.el.div(
            rx.el.span(t["ui.copy_reply"], id=COPY_REPLY_LABEL),
            rx.el.span(t["ui.copy_code"], id=COPY_CODE_LABEL),
            rx.el.span(t["ui.copied"], id=_COPIED_LABEL),
            rx.el.span(t["ui.copy_failed"], id=_COPY_FAILED_LABEL),
            hidden=True,
        ),
        rx.el.div(id=_COPY_STATUS, role="status", class_name="iu-sr-only"),
    )


def copy_button(testid: str, label_id: str, **props: object) -> rx.Component:
    """An icon button named by the copy label `label_id`."""
    return rx.el.button(
        rx.icon("copy", size=14, class_name="iu-copy-icon", aria_hidden="true"),
        rx.icon("check", size=14, class_name="iu-copied-icon", aria_hidden="true"),
        # Filled with "Copied" by the page script while the copy is fresh.
        rx.el.span(class_name="iu-copy-note"),
        type="button",
        class_name="iu-copy",
        custom_attrs={"data-testid": testid, "aria-labelledby": label_id},
        **props,
    )


def copy_reply_button(source: Var[str]) -> rx.Component:
    """Copies a turn's reply, `source` (its text parts as the model wrote them, one
    paragraph apart: `assets/turn_views.js`); absent when it has no text."""
    return rx.cond(
        source != "",
        copy_button("copy-reply", COPY_REPLY_LABEL, on_click=_COPY_REPLY.partial(source)),
    )
