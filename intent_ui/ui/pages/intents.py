"""The intents page at `/intents`: captured MCP tool calls per tool, read-only.

Call Coverage is the share of required-context calls whose `context` the model filled;
optional-context calls (widget-invoked tools, or `required=False`) are shown as a separate
share, because a widget's own calls never carry an intent and would drag the headline down.
Only a signed-in operator sees the calls; anyone else sees why not.

Register with `app.add_page(intents_page, route="/intents", title="Intents · Intent UI",
on_load=IntentsState.load_page)`.
"""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from intent_ui.ui.intents_state import OPERATORS_ONLY, CaptureRowVM, IntentsState
from intent_ui.ui.pages.login import account, auth_note

__all__ = ["intents_page"]


def _stat(label: str, value: rx.Var[str], detail: rx.Var[str] | str, test_id: str) -> rx.Component:
    return rx.el.div(
        rx.el.div(label, class_name="iu-stat-label"),
        rx.el.div(value, class_name="iu-stat-value", custom_attrs={"data-testid": test_id}),
        rx.el.div(detail, class_name="iu-stat-detail"),
        class_name="iu-stat",
    )


def _summary() -> rx.Component:
    return rx.el.section(
        _stat(
            "Call Coverage",
            IntentsState.call_coverage,
            IntentsState.required_detail + " carried an intent",
            "capture-coverage",
        ),
        _stat(
            "Optional-context share",
            IntentsState.optional_share,
            IntentsState.optional_detail + " carried an intent",
            "capture-optional-share",
        ),
        _stat(
            "Captured calls",
            IntentsState.calls.to_string(),
            "over all wrapped servers",
            "capture-calls",
        ),
        class_name="iu-stats",
    )


def _row(row: ObjectVar[CaptureRowVM]) -> rx.Component:
    return rx.el.tr(
        rx.el.td(rx.el.code(row.tool), class_name="iu-cap-tool"),
        rx.el.td(
            row.calls, class_name="iu-cap-num", custom_attrs={"data-testid": "capture-calls-cell"}
        ),
        rx.el.td(
            row.call_coverage,
            class_name="iu-cap-num",
            custom_attrs={"data-testid": "capture-row-coverage", "title": row.required_detail},
        ),
        rx.el.td(
            row.optional_share,
            class_name="iu-cap-num iu-cap-optional",
            custom_attrs={"data-testid": "capture-row-optional", "title": row.optional_detail},
        ),
        rx.el.td(
            row.latest_intent,
            class_name="iu-cap-intent",
            custom_attrs={"data-testid": "capture-row-intent", "title": row.latest_intent},
        ),
        custom_attrs={"data-testid": "capture-row", "data-tool": row.tool},
    )


def _table() -> rx.Component:
    return rx.el.table(
        rx.el.thead(
            rx.el.tr(
                rx.el.th("Tool"),
                rx.el.th("Calls", class_name="iu-cap-num"),
                rx.el.th("Call Coverage", class_name="iu-cap-num"),
                rx.el.th("Optional share", class_name="iu-cap-num"),
                rx.el.th("Latest intent"),
            )
        ),
        rx.el.tbody(rx.foreach(IntentsState.rows, _row)),
        class_name="iu-cap-table",
    )


def _empty() -> rx.Component:
    return rx.el.div(
        rx.el.p("No captured tool calls yet."),
        rx.el.p(
            "Wrap an MCP server with ",
            rx.el.code("with_intent_capture(server, intent=True, sink=StoreSink(db_url))"),
            " pointing at this app's database, and its calls appear here.",
        ),
        class_name="iu-cap-empty",
        custom_attrs={"data-testid": "capture-empty"},
    )


def _body() -> rx.Component:
    return rx.cond(
        IntentsState.error != "",
        rx.el.div(
            IntentsState.error,
            class_name="iu-cap-error",
            role="alert",
            custom_attrs={"data-testid": "capture-error"},
        ),
        rx.cond(
            IntentsState.restricted,
            rx.el.p(
                OPERATORS_ONLY,
                class_name="iu-cap-empty",
                custom_attrs={"data-testid": "capture-restricted"},
            ),
            rx.cond(
                IntentsState.calls > 0,
                rx.fragment(_summary(), _table()),
                rx.cond(IntentsState.loaded, _empty(), rx.fragment()),
            ),
        ),
    )


def intents_page() -> rx.Component:
    """The `/intents` page."""
    return rx.el.main(
        rx.el.link(rel="stylesheet", href="/intents.css"),
        rx.el.header(
            rx.el.div(
                rx.el.a("← Chat", href="/", class_name="iu-back"),
                account(),
                style={"display": "flex", "justifyContent": "space-between"},
            ),
            rx.el.h1("Intents", class_name="iu-intents-title"),
            rx.el.p(
                "Why agents call the tools of your MCP servers. Call Coverage counts "
                "required-context calls only; optional-context calls (widget-invoked "
                "tools) are a separate share, since a widget's own calls carry no intent.",
                class_name="iu-intents-lede",
            ),
            class_name="iu-intents-head",
        ),
        auth_note(),
        _body(),
        class_name="iu-intents",
        custom_attrs={"data-testid": "intents-page"},
    )
