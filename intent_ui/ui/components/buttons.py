"""The app's text button (`iu-btn`; `iu-btn-primary` the main choice, `iu-btn-danger`
one that stops or takes something away), named for the browser tests by its
`data-testid`: one definition for the pages, dialogs and pause cards that offer one."""

from __future__ import annotations

from typing import Any

import reflex as rx


def text_button(
    text: rx.Var[str] | rx.Component | str,
    testid: str,
    on_click: Any = None,
    *,
    primary: bool = False,
    danger: bool = False,
    submit: bool = False,
    **props: Any,
) -> rx.Component:
    """A button that says what it does; `submit` sends its form instead of acting on
    a click; `props` are further attributes (`disabled`, `title`)."""
    if on_click is not None:
        props["on_click"] = on_click
    return rx.el.button(
        text,
        type="submit" if submit else "button",
        class_name=(
            "iu-btn iu-btn-primary" if primary else "iu-btn iu-btn-danger" if danger else "iu-btn"
        ),
        custom_attrs={"data-testid": testid},
        **props,
    )
