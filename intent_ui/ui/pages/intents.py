"""The intents page at `/intents`: the dashboard over the app's own turns and the captured
MCP servers, read-only (docs/dashboard.md).

Over a chosen period (whole UTC days) and source: calls, Call Coverage (calls whose tool
requires an intent and got one; optional-intent calls are a separate share), vague
intents, identical intents among the sibling calls of one turn, and failures, per tool,
per server and per agent; picking a row narrows the totals, the chart (Recharts, through
`rx.recharts`) and the intent lists to it. Below, for operators, the captured servers'
own panel (Call Coverage per tool, and each tool's latest intent). The page
says plainly what the PII stripper does not catch.

Register with `app.add_page(intents_page, route="/intents", title="Intents · Intent UI",
on_load=IntentsState.load_page)`.
"""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars import ObjectVar

from intent_ui.ui.components.buttons import text_button
from intent_ui.ui.intents_state import (
    OPERATORS_ONLY,
    PERIOD_LABELS,
    SOURCE_LABELS,
    BreakdownVM,
    CaptureRowVM,
    IntentsState,
    IntentVM,
)
from intent_ui.ui.pages.login import account, auth_note

__all__ = ["STRIPPER_NOTE", "intents_page"]

STRIPPER_NOTE = (
    "Intents are written by a model from your users' conversations: treat them as user "
    "data. The copies kept here pass through a PII stripper first, which replaces four "
    "shapes only: email addresses, card numbers that pass the Luhn check, US Social "
    "Security numbers and US-format phone numbers. Everything else is kept as written: "
    "names, employers, non-US addresses and phone numbers, incomes and balances, health "
    "or legal details, and passwords or keys a user pasted. The conversations themselves "
    "are not changed."
)
OPT_OUT_NOTE = (
    "To keep a tool's intents out of the dashboard, list it under dashboard.omit_intents "
    "in the configuration (its calls are still counted); a captured server excludes tools "
    "in its wrapper with IntentOptions(exclude=...)."
)

_NUM = "iu-cap-num"

# The chart's bars: (data key, legend, stack, colour). The two call bars stack into the
# period's calls; the failed ones stand beside them.
_BARS = (
    ("with_intent", "With an intent", "calls", "var(--iu-accent)"),
    ("without_intent", "Without one", "calls", "var(--iu-cap-gray)"),
    ("failed", "Failed", None, "var(--iu-error)"),
)


def _num(
    value: rx.Var[Any], test_id: str | None = None, title: rx.Var[str] | None = None
) -> rx.Component:
    """A right-aligned number cell; its test id and tooltip when it has them."""
    attrs: dict[str, Any] = {}
    if test_id is not None:
        attrs["data-testid"] = test_id
    if title is not None:
        attrs["title"] = title
    return rx.el.td(value, class_name=_NUM, custom_attrs=attrs)


def _share(value: rx.Var[Any], test_id: str, title: rx.Var[str]) -> rx.Component:
    """The optional share's cell, styled apart from Call Coverage."""
    return rx.el.td(
        value,
        class_name=_NUM + " iu-cap-optional",
        custom_attrs={"data-testid": test_id, "title": title},
    )


def _head(first: str, *numbers: str, last: str | None = None) -> rx.Component:
    """A table's header row: the name column, the number columns, and a text column."""
    cells = [rx.el.th(first), *(rx.el.th(n, class_name=_NUM) for n in numbers)]
    if last is not None:
        cells.append(rx.el.th(last))
    return rx.el.thead(rx.el.tr(*cells))


def _stat(label: str, value: rx.Var[str], detail: rx.Var[str] | str, test_id: str) -> rx.Component:
    return rx.el.div(
        rx.el.div(label, class_name="iu-stat-label"),
        rx.el.div(value, class_name="iu-stat-value", custom_attrs={"data-testid": test_id}),
        rx.el.div(detail, class_name="iu-stat-detail"),
        class_name="iu-stat",
    )


# --- controls ------------------------------------------------------------------------------


def _picker(
    label: str, options: dict[str, str], value: rx.Var[str], on_change: Any, test_id: str
) -> rx.Component:
    """A labelled drop-down of `options` (value: shown text)."""
    return rx.el.label(
        label,
        rx.el.select(
            *(rx.el.option(text, value=key) for key, text in options.items()),
            value=value,
            on_change=on_change,
            custom_attrs={"data-testid": test_id},
        ),
        class_name="iu-dash-control",
    )


def _controls() -> rx.Component:
    period = _picker(
        "Period",
        PERIOD_LABELS,
        IntentsState.period,
        IntentsState.set_period,
        "dashboard-period",
    )
    source = rx.cond(
        IntentsState.restricted,
        rx.el.span(SOURCE_LABELS["app"], class_name="iu-dash-fixed"),
        _picker(
            "Source",
            SOURCE_LABELS,
            IntentsState.source,
            IntentsState.set_source,
            "dashboard-source",
        ),
    )
    scope = rx.cond(
        IntentsState.scope_label != "",
        rx.el.div(
            rx.el.span("Showing ", rx.el.strong(IntentsState.scope_label)),
            text_button("Show everything", "dashboard-scope-clear", IntentsState.clear_scope),
            class_name="iu-dash-scope",
            custom_attrs={"data-testid": "dashboard-scope"},
        ),
    )
    return rx.el.div(period, source, scope, class_name="iu-dash-controls")


# --- totals and chart ----------------------------------------------------------------------


def _totals() -> rx.Component:
    return rx.el.section(
        _stat(
            "Calls",
            IntentsState.dash_calls.to_string(),
            IntentsState.dash_with_intent.to_string() + " with an intent",
            "dashboard-calls",
        ),
        _stat(
            "Call Coverage",
            IntentsState.dash_coverage,
            IntentsState.dash_coverage_detail + " carried an intent",
            "dashboard-coverage",
        ),
        _stat(
            "Optional-intent share",
            IntentsState.dash_optional,
            IntentsState.dash_optional_detail + " carried an intent",
            "dashboard-optional-share",
        ),
        _stat(
            "Vague intents",
            IntentsState.dash_vague.to_string(),
            "very short, or only generic words",
            "dashboard-vague",
        ),
        _stat(
            "Identical sibling intents",
            IntentsState.dash_duplicates.to_string(),
            "calls whose intent a sibling call to the same tool also wrote",
            "dashboard-duplicates",
        ),
        _stat(
            "Failed calls",
            IntentsState.dash_failures.to_string(),
            "calls that ended in an error",
            "dashboard-failures",
        ),
        class_name="iu-stats",
        custom_attrs={"aria-label": "Totals"},
    )


def _chart_row(point: ObjectVar[dict[str, Any]]) -> rx.Component:
    return rx.el.tr(
        rx.el.td(point["label"].to(str)),
        *(_num(point[key].to(str)) for key in ("calls", "with_intent", "failed")),
        custom_attrs={"data-testid": "dashboard-chart-row"},
    )


def _chart() -> rx.Component:
    figure = rx.recharts.bar_chart(
        rx.recharts.cartesian_grid(stroke_dasharray="3 3", vertical=False),
        rx.recharts.x_axis(data_key="label", min_tick_gap=24),
        rx.recharts.y_axis(allow_decimals=False, width=48),
        rx.recharts.graphing_tooltip(),
        rx.recharts.legend(),
        *(
            rx.recharts.bar(
                data_key=key,
                name=name,
                fill=fill,
                is_animation_active=False,
                **({"stack_id": stack} if stack else {}),
            )
            for key, name, stack, fill in _BARS
        ),
        data=IntentsState.chart,
        height=260,
        width="100%",
    )
    return rx.el.section(
        rx.el.h2("Calls per " + IntentsState.chart_unit, class_name="iu-dash-h2"),
        rx.el.figure(
            figure,
            rx.el.figcaption(
                "Calls per " + IntentsState.chart_unit + " with and without an intent, and "
                "the failed ones; the numbers are in the table below.",
                class_name="iu-dash-explain",
            ),
            class_name="iu-dash-chart",
            custom_attrs={"data-testid": "dashboard-chart"},
        ),
        rx.el.details(
            rx.el.summary("The chart's numbers"),
            rx.el.table(
                _head("From", "Calls", "With an intent", "Failed"),
                rx.el.tbody(rx.foreach(IntentsState.chart, _chart_row)),
                class_name="iu-cap-table",
            ),
            class_name="iu-dash-details",
        ),
        class_name="iu-dash-section",
    )


# --- breakdowns ----------------------------------------------------------------------------


def _breakdown_row(row: ObjectVar[BreakdownVM], kind: str) -> rx.Component:
    picked = row.key == IntentsState.scope_key
    attrs: dict[str, object] = {"data-testid": f"dashboard-{kind}-row", "data-source": row.source}
    if kind == "tool":
        attrs |= {"data-tool": row.label, "data-server": row.server}
    elif kind == "server":
        attrs |= {"data-server": row.server}
    name = rx.el.button(
        rx.el.code(row.label) if kind == "tool" else rx.el.span(row.label),
        type="button",
        class_name="iu-dash-pick",
        on_click=IntentsState.pick(row.key),
        aria_pressed=rx.cond(picked, "true", "false"),
        title="Show only this in the totals, the chart and the intents",
        custom_attrs={"data-testid": "dashboard-pick"},
    )
    source = rx.el.span(row.source_label, class_name="iu-dash-source")
    return rx.el.tr(
        rx.el.td(name, source) if kind != "agent" else rx.el.td(name),
        _num(row.calls, "dashboard-cell-calls"),
        _num(row.coverage, "dashboard-cell-coverage", row.coverage_detail),
        _share(row.optional_share, "dashboard-cell-optional", row.optional_detail),
        _num(row.vague, "dashboard-cell-vague"),
        _num(row.duplicates, "dashboard-cell-duplicates"),
        _num(row.failures, "dashboard-cell-failures"),
        class_name=rx.cond(picked, "iu-dash-picked", ""),
        custom_attrs=attrs,
    )


def _breakdown(title: str, first: str, rows: rx.Var[list[BreakdownVM]], kind: str) -> rx.Component:
    return rx.el.section(
        rx.el.h2(title, class_name="iu-dash-h2"),
        rx.el.table(
            _head(
                first,
                "Calls",
                "Call Coverage",
                "Optional share",
                "Vague",
                "Identical siblings",
                "Failed",
            ),
            rx.el.tbody(rx.foreach(rows, lambda row: _breakdown_row(row, kind))),
            class_name="iu-cap-table",
            custom_attrs={"data-testid": f"dashboard-{kind}s"},
        ),
        class_name="iu-dash-section",
    )


# --- intent lists --------------------------------------------------------------------------


def _intent_item(item: ObjectVar[IntentVM], kind: str) -> rx.Component:
    return rx.el.li(
        rx.el.span(
            item.text,
            class_name="iu-dash-intent",
            title=item.text,
            custom_attrs={"data-testid": "dashboard-intent-text"},
        ),
        rx.el.span(
            item.count,
            class_name="iu-dash-count",
            title=item.detail,
            custom_attrs={"data-testid": "dashboard-intent-count"},
        ),
        rx.el.span(item.detail, class_name="iu-dash-detail"),
        custom_attrs={"data-testid": f"dashboard-{kind}-intent"},
    )


def _intent_list(
    title: str, explain: str, items: rx.Var[list[IntentVM]], kind: str, empty: str
) -> rx.Component:
    return rx.el.section(
        rx.el.h3(title, class_name="iu-dash-h3"),
        rx.el.p(explain, class_name="iu-dash-explain"),
        rx.cond(
            items.length() > 0,  # type: ignore[attr-defined]
            rx.el.ol(
                rx.foreach(items, lambda item: _intent_item(item, kind)), class_name="iu-dash-list"
            ),
            rx.el.p(empty, class_name="iu-dash-none"),
        ),
        class_name="iu-dash-card",
        custom_attrs={"data-testid": f"dashboard-{kind}-intents"},
    )


def _intent_lists() -> rx.Component:
    return rx.el.section(
        _intent_list(
            "Most common intents",
            "The same words, whatever their case or punctuation.",
            IntentsState.top_intents,
            "top",
            "No intents in this period.",
        ),
        _intent_list(
            "Vague intents",
            "Fewer than three short words, or nothing but generic words and the tool's name.",
            IntentsState.vague_intents,
            "vague",
            "No vague intents.",
        ),
        _intent_list(
            "Identical sibling intents",
            "Two or more calls of one turn to one tool that said the same thing.",
            IntentsState.duplicate_intents,
            "duplicate",
            "No turn repeated an intent.",
        ),
        _intent_list(
            "Intents before a failure",
            "What calls that then failed set out to do.",
            IntentsState.failure_intents,
            "failure",
            "No call with an intent failed.",
        ),
        class_name="iu-dash-lists",
    )


def _dashboard() -> rx.Component:
    return rx.cond(
        IntentsState.any_calls,
        rx.fragment(
            _totals(),
            _chart(),
            _intent_lists(),
            _breakdown("Per tool", "Tool", IntentsState.tool_rows, "tool"),
            _breakdown("Per server", "Server", IntentsState.server_rows, "server"),
            _breakdown("Per agent", "Agent", IntentsState.agent_rows, "agent"),
        ),
        rx.cond(
            IntentsState.loaded,
            rx.el.div(
                rx.el.p("No tool calls in this period."),
                rx.el.p(
                    "Each turn's calls are added here when the turn ends; choose a longer "
                    "period to see older ones."
                ),
                class_name="iu-cap-empty",
                custom_attrs={"data-testid": "dashboard-empty"},
            ),
        ),
    )


# --- the captured servers' panel -------------------------------------------------------------


def _capture_summary() -> rx.Component:
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


def _capture_row(row: ObjectVar[CaptureRowVM]) -> rx.Component:
    return rx.el.tr(
        rx.el.td(rx.el.code(row.tool), class_name="iu-cap-tool"),
        _num(row.calls, "capture-calls-cell"),
        _num(row.call_coverage, "capture-row-coverage", row.required_detail),
        _share(row.optional_share, "capture-row-optional", row.optional_detail),
        rx.el.td(
            row.latest_intent,
            class_name="iu-cap-intent",
            custom_attrs={"data-testid": "capture-row-intent", "title": row.latest_intent},
        ),
        custom_attrs={"data-testid": "capture-row", "data-tool": row.tool},
    )


def _capture_table() -> rx.Component:
    return rx.el.table(
        _head("Tool", "Calls", "Call Coverage", "Optional share", last="Latest intent"),
        rx.el.tbody(rx.foreach(IntentsState.rows, _capture_row)),
        class_name="iu-cap-table",
    )


def _capture_empty() -> rx.Component:
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


def _captured() -> rx.Component:
    return rx.el.section(
        rx.el.h2("Captured servers", class_name="iu-dash-h2"),
        rx.el.p(
            "Calls of MCP servers wrapped with intent capture. Call Coverage counts "
            "required-context calls only; optional-context calls (widget-invoked tools) are "
            "a separate share, since a widget's own calls carry no intent.",
            class_name="iu-dash-explain",
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
                rx.fragment(_capture_summary(), _capture_table()),
                rx.cond(IntentsState.loaded, _capture_empty(), rx.fragment()),
            ),
        ),
        class_name="iu-dash-section",
    )


def _privacy() -> rx.Component:
    return rx.el.aside(
        rx.el.p(rx.el.strong("What is kept, and what is not caught. "), STRIPPER_NOTE),
        rx.el.p(OPT_OUT_NOTE),
        class_name="iu-dash-privacy",
        custom_attrs={"data-testid": "dashboard-stripper-note"},
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
            IntentsState.loaded,
            rx.fragment(_controls(), _dashboard(), _captured(), _privacy()),
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
                "Why agents call tools: the intents of your own turns' calls and, for "
                "operators, of captured MCP servers. Call Coverage counts calls whose tool "
                "requires an intent; calls where it is optional (MCP and imported tools, "
                "widget-invoked tools) are a separate share.",
                class_name="iu-intents-lede",
            ),
            class_name="iu-intents-head",
        ),
        auth_note(),
        _body(),
        class_name="iu-intents",
        custom_attrs={"data-testid": "intents-page"},
    )
