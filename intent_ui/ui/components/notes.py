"""The app's error note (`iu-error-note`, announced as an alert): shown while its text is
not empty, for the pages that say what went wrong in a line of their own."""

from __future__ import annotations

from typing import Any

import reflex as rx


def error_note(text: rx.Var[str], testid: str | None = None, **props: Any) -> rx.Component:
    """`text` as an alert while it is not empty; `props` are further attributes (`style`)."""
    if testid is not None:
        props["custom_attrs"] = {"data-testid": testid}
    return rx.cond(
        text != "",
        rx.el.div(text, class_name="iu-error-note", role="alert", **props),
    )
