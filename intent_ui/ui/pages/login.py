"""The sign-in page at `/login` (password mode), and the bits every page shows about who
is signed in: the refusal note and the sign-out buttons."""

from __future__ import annotations

import reflex as rx

from intent_ui.ui.auth import AuthState


def auth_note() -> rx.Component:
    """Why this browser sees nothing (no proxy header, not signed in), if it does not."""
    return rx.cond(
        AuthState.auth_error != "",
        rx.el.div(
            AuthState.auth_error,
            class_name="iu-error-note",
            role="alert",
            style={"padding": "8px 24px"},
            custom_attrs={"data-testid": "auth-error"},
        ),
    )


def account() -> rx.Component:
    """The signed-in user's name, and in password mode Sign out (this tab) and Sign out
    everywhere (every session of the user, on every device)."""
    return rx.el.div(
        rx.el.span(AuthState.signed_in_as, custom_attrs={"data-testid": "signed-in-as"}),
        rx.cond(
            AuthState.can_sign_out,
            rx.fragment(
                rx.el.button(
                    "Sign out",
                    type="button",
                    class_name="iu-btn",
                    on_click=AuthState.sign_out,
                    custom_attrs={"data-testid": "logout"},
                ),
                rx.el.button(
                    "Sign out everywhere",
                    type="button",
                    class_name="iu-btn",
                    title="End every session of yours, on every device",
                    on_click=AuthState.sign_out_everywhere,
                    custom_attrs={"data-testid": "logout-everywhere"},
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
            rx.el.button(
                "Sign in",
                type="submit",
                class_name="iu-btn iu-btn-primary",
                custom_attrs={"data-testid": "login-submit"},
            ),
            rx.cond(
                AuthState.auth_error != "",
                rx.el.div(
                    AuthState.auth_error,
                    class_name="iu-error-note",
                    role="alert",
                    custom_attrs={"data-testid": "login-error"},
                ),
            ),
            on_submit=AuthState.sign_in,
            style={"display": "grid", "gap": "12px", "maxWidth": "320px", "margin": "15vh auto"},
        ),
        custom_attrs={"data-testid": "login-page"},
    )
