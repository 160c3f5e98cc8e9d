"""The rewind button of a call with a checkpoint, the preview it opens, and a rewind as
the thread shows it (`ui/rewind_state.py`; docs/rewind.md).

The button sits on the call's card and beside its timeline mark, named after the call's
label ("Rewind to before: Wrote notes.md"); it reads only `RewindState`, so a frame of a
live turn re-renders none of them. The preview is a panel above the composer listing each
file a restore would change with its diff, then the two restores.
"""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from intent_ui.ui.components.buttons import text_button
from intent_ui.ui.rewind_state import RewindState

__all__ = ["rewind_button", "rewind_note", "rewind_panel", "trace_line"]

_TITLE_ID = "iu-rewind-title"


def rewind_button(
    message_id: rx.Var[str], call_id: rx.Var[str], label: rx.Var[str]
) -> rx.Component:
    """Offered when the call has a checkpoint."""
    named = RewindState.words["ui.rewind"].to(str) + ": " + label.to(str)
    return rx.cond(
        RewindState.rewindable.contains(message_id.to(str) + "/" + call_id.to(str)),
        rx.el.button(
            rx.icon("undo-2", size=14, aria_hidden="true"),
            type="button",
            title=named,
            class_name="iu-rewind-button",
            on_click=RewindState.show(message_id, call_id),
            custom_attrs={
                "data-testid": "rewind-button",
                "data-call-id": call_id,
                "aria-label": named,
                "aria-haspopup": "dialog",
            },
        ),
    )


def trace_line(trace_id: rx.Var[str]) -> rx.Component:
    """An opened card's trace id, when traces are on."""
    return rx.cond(
        trace_id.to(bool),
        rx.el.p(
            RewindState.words["ui.trace"],
            " ",
            rx.el.code(trace_id, custom_attrs={"data-testid": "tool-call-trace"}),
            class_name="iu-trace-line",
        ),
    )


def _file(entry: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.el.li(
        rx.el.div(
            rx.el.span(entry["action"], class_name="iu-rewind-action"),
            rx.el.code(entry["path"]),
            class_name="iu-rewind-file-head",
        ),
        rx.cond(entry["reason"] != "", rx.el.p(entry["reason"], class_name="iu-rewind-reason")),
        rx.cond(
            entry["diff"] != "",
            rx.el.pre(entry["diff"], tab_index=0, class_name="iu-rewind-diff"),
        ),
        custom_attrs={"data-testid": "rewind-file", "data-path": entry["path"]},
    )


def rewind_panel() -> rx.Component:
    """The preview of the rewind the user asked for, with the two restores."""
    t = RewindState.t
    return rx.cond(
        RewindState.showing,
        rx.el.section(
            rx.el.h2(
                rx.cond(RewindState.title != "", RewindState.title, t["ui.rewind_preview"]),
                id=_TITLE_ID,
            ),
            rx.cond(
                RewindState.problem != "",
                rx.el.p(RewindState.problem, role="alert", class_name="iu-error-note"),
            ),
            rx.foreach(RewindState.notes, lambda note: rx.el.p(note, class_name="iu-rewind-note")),
            rx.cond(
                (RewindState.problem == "") & (RewindState.title != ""),
                rx.cond(
                    RewindState.files.length() > 0,
                    rx.el.ul(rx.foreach(RewindState.files, _file), class_name="iu-rewind-files"),
                    rx.el.p(t["ui.rewind_none"]),
                ),
            ),
            rx.el.div(
                text_button(
                    t["ui.rewind_files"],
                    "rewind-restore-files",
                    RewindState.restore("files"),
                    primary=True,
                    disabled=RewindState.title == "",
                ),
                text_button(
                    t["ui.rewind_all"],
                    "rewind-restore-all",
                    RewindState.restore("all"),
                    disabled=RewindState.title == "",
                ),
                text_button(t["ui.close"], "rewind-close", RewindState.close),
                class_name="iu-rewind-actions",
            ),
            role="dialog",
            class_name="iu-rewind-panel",
            custom_attrs={"data-testid": "rewind-preview", "aria-labelledby": _TITLE_ID},
        ),
    )


def rewind_note(message_id: rx.Var[str], text: rx.Var[str]) -> rx.Component:
    """A rewind in the thread: to before which call, and what was put back."""
    return rx.el.div(
        rx.icon("undo-2", size=14, aria_hidden="true"),
        rx.el.span(text),
        class_name="iu-rewind-row",
        role="note",
        custom_attrs={"data-testid": "rewind-note", "data-message-id": message_id},
    )
