"""The sign-in page at `/login` (password mode), and the bits every page shows about who
is signed in: the refusal note and the sign-out buttons."""

from __future__ import annotations

import reflex as rx

from intent_ui.ui.auth import AuthState
from intent_ui.ui.components.buttons import text_button
from intent_ui.ui.components.notes import error_note


def auth_note() -> rx.Component:
    """Why this browser sees nothing (no proxy header, not signed in), if it does not."""
    return error_note(AuthState.auth_error, "auth-error", style={"padding": "8px 24px"})


def account() -> rx.Component:
    """The signed-in user's name, and in password mode Sign out (this tab) and Sign out
    everywhere (every session of the user, on every device)."""
    return rx.el.div(
        rx.el.span(AuthState.signed_in_as, custom_attrs={"data-testid": "signed-in-as"}),
        rx.cond(
            AuthState.can_sign_out,
            rx.fragment(
                text_button("Sign out", "logout", AuthState.sign_out),
                text_button(
                    "Sign out everywhere",
                    "logout-everywhere",
                    AuthState.sign_out_everywhere,
                    title="End every session of yours, on every device",
                ),
            ),
        ),
        style={"display": "flex", "gap": "8px", "alignItems": "center"},
    )


def login_page() -> rx.Component:
    return rx.el.main(
        rx.el.form(
            rx.el.h1("Sign in to Intent UI", style={"fontSize": "1.2rem"}),
            rx.el.label(
                "Name",
                rx.el.input(
                    name="name",
                    auto_focus=True,
                    custom_attrs={"data-testid": "login-name", "autocomplete": "username"},
                ),
                style={"display": "grid", "gap": "4px"},
            ),
            rx.el.label(
                "Password",
                rx.el.input(
                    name="password",
                    type="password",
                    custom_attrs={
                        "data-testid": "login-password",
                        "autocomplete": "current-password",
                    },
                ),
                style={"display": "grid", "gap": "4px"},
            ),
            text_button("Sign in", "login-submit", primary=True, submit=True),
            error_note(AuthState.auth_error, "login-error"),
            on_submit=AuthState.sign_in,
            style={"display": "grid", "gap": "12px", "maxWidth": "320px", "margin": "15vh auto"},
        ),
        custom_attrs={"data-testid": "login-page"},
    )
