"""The chat's keyboard shortcuts, listed in a dialog.

The keys themselves are handled by the page script (`assets/intent_ui.js`), which this
list mirrors. The modifier shortcuts (new chat, focus the message box) work from
anywhere, a text field included, since they type nothing; `?` opens the list only
outside a text field, where typing it would otherwise be lost; Esc stops a running turn
unless a dialog, the menu or another text field (whose Esc means something there) has it.
The dialog is a native modal `<dialog>`: it keeps focus inside while open, Esc closes it,
and focus returns to where it was.
"""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from intent_ui.ui.components.buttons import text_button

__all__ = ["SHORTCUTS", "shortcuts_button", "shortcuts_dialog"]

SHORTCUTS: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = (
    ("ui.new_chat", (("Ctrl", "Shift", "O"), ("Cmd", "Shift", "O"))),
    ("ui.shortcut_focus_input", (("Shift", "Esc"),)),
    ("ui.shortcut_stop", (("Esc",),)),
    ("ui.shortcut_help", (("?",),)),
)
"""Each shortcut: the locale key of what it does, and its key combinations."""

_TITLE_ID = "iu-shortcuts-title"


def _keys(combos: tuple[tuple[str, ...], ...]) -> list[rx.Component | str]:
    out: list[rx.Component | str] = []
    for index, combo in enumerate(combos):
        if index:
            out.append(" / ")
        for position, key in enumerate(combo):
            if position:
                out.append(" + ")
            out.append(rx.el.kbd(key, class_name="iu-kbd"))
    return out


def shortcuts_dialog(t: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.el.dialog(
        rx.el.h2(t["ui.shortcuts"], id=_TITLE_ID),
        rx.el.dl(
            *(rx.el.div(rx.el.dt(t[key]), rx.el.dd(*_keys(combos))) for key, combos in SHORTCUTS),
            class_name="iu-shortcuts",
        ),
        rx.el.p(t["ui.shortcuts_note"], class_name="iu-shortcuts-note"),
        text_button(t["ui.close"], "shortcuts-close"),
        class_name="iu-dialog",
        custom_attrs={"data-testid": "shortcuts-dialog", "aria-labelledby": _TITLE_ID},
    )


def shortcuts_button(t: ObjectVar[dict[str, str]]) -> rx.Component:
    """Opens the dialog (as `?` does)."""
    return rx.el.button(
        rx.icon("keyboard", size=14, aria_hidden="true"),
        t["ui.shortcuts"],
        type="button",
        class_name="iu-btn iu-shortcuts-button",
        custom_attrs={"data-testid": "shortcuts-button", "aria-haspopup": "dialog"},
    )
