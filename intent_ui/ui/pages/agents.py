"""The agents page at `/agents`: list, create, edit, duplicate and delete agents, pick their
tools, switch each tool's capabilities, and import OpenAPI actions.

Register with `app.add_page(agents_page, route="/agents", title="Agents · Intent UI",
on_load=AgentsState.load_page)`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reflex as rx
from reflex.vars import ArrayVar, BooleanVar, ObjectVar, StringVar

from intent_ui.ui.builder_goals import (
    GOAL,
    SCOPE,
    DelegateVM,
    GoalVM,
    RowVM,
    ScopeGoalVM,
    ScopeVM,
)
from intent_ui.ui.builder_state import AgentsState
from intent_ui.ui.builder_view import AgentRowVM, SourceVM, ToolRowVM
from intent_ui.ui.components.buttons import text_button
from intent_ui.ui.components.capability_toggle import capability_toggle
from intent_ui.ui.pages.login import auth_note

__all__ = ["UPLOAD_ID", "agents_page"]

UPLOAD_ID = "openapi-upload"

TEXT = AgentsState.t
"""The page's strings in the reader's language (`builder.*` in the locale catalogue)."""

FORM_ID = "agent-form"
"""Opening or starting an agent is a native `type=reset` button of this form: the fields
return to their defaults synchronously on click, before anything can be typed, and the
server's new defaults then fill them (an untouched field follows its default). Remounting
the form instead would wipe whatever was typed before the round trip came back."""


# --- pieces every part of the page uses ---------------------------------------------------


def _icon_button(
    icon: str,
    on_click: object,
    label: rx.Var[str],
    testid: str,
    *,
    danger: bool = False,
    opens: bool = False,
) -> rx.Component:
    """A small button showing only `icon`, named by `label`. `opens`: it opens an agent,
    so it resets the form first (see `FORM_ID`)."""
    attrs: dict[str, object] = {"aria-label": label, "data-testid": testid}
    if opens:
        attrs["form"] = FORM_ID
    return rx.el.button(
        rx.icon(icon, size=13),
        type="reset" if opens else "button",
        class_name="iu-btn iu-btn-icon iu-btn-danger" if danger else "iu-btn iu-btn-icon",
        on_click=on_click,
        custom_attrs=attrs,
    )


def _field(label: rx.Var[str], control: rx.Component, class_name: str = "iu-field") -> rx.Component:
    return rx.el.label(
        rx.el.span(label, class_name="iu-field-label"), control, class_name=class_name
    )


def _alert(text: rx.Var[str], class_name: str, role: str, testid: str) -> rx.Component:
    """`text` in a paragraph announced as `role`, shown only when there is any."""
    return rx.cond(
        text != "",
        rx.el.p(text, class_name=class_name, custom_attrs={"role": role, "data-testid": testid}),
    )


def _heading(tag: str, title: rx.Var[str], help_text: rx.Var[str]) -> list[rx.Component]:
    """A section's title (`h2` or `h3`) and the sentence under it."""
    if tag == "h2":
        head = rx.el.h2(title, class_name="iu-builder-subtitle")
    else:
        head = rx.el.h3(title, class_name="iu-group-title")
    return [head, rx.el.p(help_text, class_name="iu-muted")]


# --- the agent list ------------------------------------------------------------------------


def _agent_row(agent: ObjectVar[AgentRowVM]) -> rx.Component:
    return rx.el.div(
        rx.el.button(
            rx.el.span(agent.name, class_name="iu-agent-name"),
            rx.el.span(agent.summary, class_name="iu-agent-summary"),
            type="reset",
            class_name="iu-agent-open",
            on_click=AgentsState.open_agent(agent.id),
            custom_attrs={"data-testid": "agent-open", "title": agent.name, "form": FORM_ID},
        ),
        _icon_button(
            "pencil", AgentsState.open_agent(agent.id), agent.edit_label, "agent-edit", opens=True
        ),
        _icon_button(
            "copy", AgentsState.duplicate(agent.id), agent.duplicate_label, "agent-duplicate"
        ),
        rx.cond(
            agent.own,
            _icon_button(
                "trash_2",
                AgentsState.delete(agent.id),
                agent.delete_label,
                "agent-delete",
                danger=True,
            ),
        ),
        class_name="iu-agent-row",
        custom_attrs={
            "data-testid": "agent-row",
            "data-agent-id": agent.id,
            "data-selected": rx.cond(agent.selected, "true", "false"),
            "data-shared": rx.cond(agent.shared, "true", "false"),
            "data-own": rx.cond(agent.own, "true", "false"),
        },
    )


def _agent_list() -> rx.Component:
    return rx.el.aside(
        rx.el.div(
            rx.el.a(TEXT["builder.back_to_chat"], href="/", class_name="iu-back"),
            rx.el.h1(TEXT["ui.agents"], class_name="iu-builder-title"),
            class_name="iu-builder-head",
        ),
        rx.el.button(
            rx.icon("plus", size=14),
            TEXT["builder.new_agent"],
            type="reset",
            class_name="iu-btn iu-btn-primary iu-agent-new",
            on_click=AgentsState.new_agent,
            custom_attrs={"data-testid": "agent-new", "form": FORM_ID},
        ),
        rx.el.nav(
            rx.foreach(AgentsState.agents, _agent_row),
            class_name="iu-agent-list",
            custom_attrs={"aria-label": TEXT["builder.saved_agents"]},
        ),
        class_name="iu-builder-side",
    )


# --- the agent's form ----------------------------------------------------------------------


def _select(
    options: rx.Var[list[str]],
    value: rx.Var[str],
    on_change: object,
    name: str,
    label: rx.Var[str],
) -> rx.Component:
    return _field(
        label,
        rx.el.select(
            rx.foreach(options, lambda o: rx.el.option(o, value=o)),
            name=name,
            value=value,
            on_change=on_change,
            class_name="iu-select",
            custom_attrs={"data-testid": f"agent-{name}"},
        ),
    )


def _share() -> rx.Component:
    """Share read-only (the owner), or the note saying the open agent is read-only."""
    return rx.cond(
        AgentsState.read_only,
        rx.el.span(
            TEXT["builder.read_only_note"],
            class_name="iu-muted",
            custom_attrs={"data-testid": "agent-read-only"},
        ),
        rx.el.button(
            rx.cond(AgentsState.shared, TEXT["builder.shared"], TEXT["builder.share"]),
            type="button",
            class_name="iu-btn",
            on_click=AgentsState.toggle_shared,
            custom_attrs={
                "data-testid": "agent-share",
                "aria-pressed": rx.cond(AgentsState.shared, "true", "false"),
            },
        ),
    )


def _agent_text(
    control: Callable[..., rx.Component],
    name: str,
    value: rx.Var[str],
    attrs: dict[str, str],
    **props: object,
) -> rx.Component:
    """The agent's name or instructions: uncontrolled, sent with the form by Save."""
    return _field(
        TEXT[f"builder.{name}"],
        control(
            name=name,
            default_value=value,
            placeholder=TEXT[f"builder.{name}_placeholder"],
            class_name="iu-input",
            custom_attrs={"data-testid": f"agent-{name}", **attrs},
            **props,
        ),
    )


def _form() -> rx.Component:
    return rx.el.form(
        _agent_text(rx.el.input, "name", AgentsState.name, {"autocomplete": "off"}),
        _agent_text(rx.el.textarea, "instructions", AgentsState.instructions, {}, rows=3),
        rx.el.div(
            _select(
                AgentsState.endpoints,
                AgentsState.endpoint,
                AgentsState.set_endpoint,
                "endpoint",
                TEXT["builder.endpoint"],
            ),
            _select(
                AgentsState.models,
                AgentsState.model,
                AgentsState.set_model,
                "model",
                TEXT["builder.model"],
            ),
            class_name="iu-field-row",
        ),
        rx.el.div(
            text_button(TEXT["builder.save"], "agent-save", primary=True, submit=True),
            rx.cond(
                AgentsState.agent_id == "",
                rx.el.span(TEXT["builder.unsaved"], class_name="iu-muted"),
            ),
            _share(),
            class_name="iu-field-row",
        ),
        id=FORM_ID,
        on_submit=AgentsState.save,
        class_name="iu-agent-form",
        custom_attrs={"data-testid": "agent-form"},
    )


def _messages() -> rx.Component:
    return rx.el.div(
        _alert(AgentsState.error, "iu-builder-error", "alert", "builder-error"),
        _alert(AgentsState.notice, "iu-builder-notice", "status", "builder-notice"),
    )


# --- tools and their switches --------------------------------------------------------------


def _tokenizer_name() -> rx.Component:
    return rx.el.span(AgentsState.tokenizer, custom_attrs={"data-testid": "tokenizer-name"})


def _token_totals() -> rx.Component:
    def totals(*children: rx.Component | rx.Var[str]) -> rx.Component:
        return rx.el.p(
            *children, class_name="iu-token-totals", custom_attrs={"data-testid": "token-totals"}
        )

    return rx.cond(
        AgentsState.show_intent,
        totals(
            TEXT["builder.tokens_lead"],
            rx.el.strong(
                AgentsState.tokens_with.to_string(),
                custom_attrs={"data-testid": "tokens-with-intents"},
            ),
            TEXT["builder.tokens_with"],
            rx.el.strong(
                AgentsState.tokens_without.to_string(),
                custom_attrs={"data-testid": "tokens-without-intents"},
            ),
            TEXT["builder.tokens_without"],
            _tokenizer_name(),
            TEXT["builder.tokens_end"],
        ),
        totals(
            TEXT["builder.tokens_counted"],
            _tokenizer_name(),
            TEXT["builder.tokens_per_request"],
            AgentsState.tokens_without.to_string(),
            TEXT["builder.tokens_per_request_end"],
        ),
    )


def _tool_switches(row: ObjectVar[ToolRowVM]) -> list[rx.Component]:
    """The row's four capability switches, each shown when the admin enables its
    capability, then "Ask first", which every agent has."""
    switches = (
        (AgentsState.show_intent, "describe_intent", row.intent),
        (AgentsState.show_background, "run_in_background", row.background),
        (AgentsState.show_defer, "defer_loading", row.defer),
        (AgentsState.show_code_only, "allowed_callers", row.code_only),
    )
    return [
        rx.cond(
            shown,
            capability_toggle(
                option,
                toggle,
                on_click=AgentsState.toggle_option(row.tool_id, option),
                attrs={"data-tool": row.tool_id},
            ),
        )
        for shown, option, toggle in switches
    ] + [
        capability_toggle(
            "require_approval",
            row.approval,
            on_click=AgentsState.toggle_option(row.tool_id, "require_approval"),
            attrs={"data-tool": row.tool_id},
        )
    ]


def _tool_row(row: ObjectVar[ToolRowVM]) -> rx.Component:
    return rx.el.div(
        rx.el.label(
            # Uncontrolled, so a click flips it at once (as a user and Playwright's `check`
            # expect); the key remounts it with the server's value once that arrives.
            rx.el.input(
                type="checkbox",
                default_checked=row.picked,
                key=AgentsState.form_key + ":" + row.tool_id + ":" + row.picked.to_string(),
                on_change=lambda _value: AgentsState.toggle_pick(row.tool_id),
                custom_attrs={"data-testid": "tool-pick", "data-tool": row.tool_id},
            ),
            rx.el.span(
                rx.el.span(row.name, class_name="iu-tool-name"),
                rx.el.span(row.description, class_name="iu-tool-desc", title=row.description),
                class_name="iu-tool-text",
            ),
            class_name="iu-tool-pick",
        ),
        rx.el.div(*_tool_switches(row), class_name="iu-tool-toggles"),
        class_name="iu-tool-row",
        custom_attrs={
            "data-testid": "tool-row",
            "data-tool": row.tool_id,
            "data-kind": row.kind,
            "data-picked": rx.cond(row.picked, "true", "false"),
        },
    )


def _source(source: ObjectVar[SourceVM]) -> rx.Component:
    return rx.el.section(
        rx.el.div(
            rx.el.h3(source.title, class_name="iu-group-title"),
            rx.cond(
                AgentsState.show_intent,
                capability_toggle(
                    "describe_intent",
                    source.describe_all,
                    on_click=AgentsState.toggle_describe_all(source.key),
                    testid="describe-all-toggle",
                    attrs={"data-server": source.key},
                ),
            ),
            class_name="iu-group-bar",
        ),
        rx.cond(source.note != "", rx.el.p(source.note, class_name="iu-builder-error")),
        rx.foreach(source.tools, _tool_row),
        class_name="iu-tool-group",
        custom_attrs={
            "data-testid": "tool-group-section",
            "data-server": source.key,
            "data-kind": source.kind,
        },
    )


# --- goals and scopes ----------------------------------------------------------------------
# Both are lists of rows edited alike (`kind`: GOAL or SCOPE): typed fields, a remove
# button, and checkboxes (a goal's families, a scope's goals).


def _row_text(
    kind: str, row: ObjectVar[RowVM], field: str, *, placeholder: bool = False
) -> rx.Component:
    """One typed field of a row, uncontrolled and keyed by the row: what is typed stays
    while the server answers, and a blur sends it."""
    testid = f"{kind}-{field}"
    props = {"placeholder": TEXT[f"builder.{kind}_{field}_placeholder"]} if placeholder else {}
    return _field(
        TEXT[f"builder.{kind}_{field}"],
        rx.el.input(
            default_value=getattr(row, field),
            key=row.key + ":" + field,
            on_blur=lambda value: AgentsState.set_row_text(kind, row.index, field, value),
            class_name="iu-input",
            custom_attrs={"data-testid": testid, "autocomplete": "off"},
            **props,
        ),
        f"iu-field iu-{testid}",
    )


def _choice(
    checked: BooleanVar,
    key: StringVar,
    on_change: object,
    attrs: dict[str, object],
    *texts: rx.Component,
) -> rx.Component:
    """One checkbox of a row. Uncontrolled, like a tool's pick: the key remounts it with
    the server's value."""
    return rx.el.label(
        rx.el.input(
            type="checkbox",
            default_checked=checked,
            key=key + ":" + checked.to_string(),
            on_change=on_change,
            custom_attrs=attrs,
        ),
        *texts,
        class_name="iu-goal-family",
    )


def _choices(
    kind: str,
    name: str,
    items: ArrayVar[Any],
    render: Callable[[Any], rx.Component],
    empty: rx.Var[str],
) -> rx.Component:
    """A row's checkboxes (`name`: `delegates` of a goal, `goals` of a scope)."""
    return rx.el.fieldset(
        rx.el.legend(TEXT[f"builder.{kind}_{name}"], class_name="iu-field-label"),
        rx.cond(
            items.length() > 0,
            rx.foreach(items, render),
            rx.el.span(empty, class_name="iu-muted"),
        ),
        class_name="iu-goal-families",
        custom_attrs={"data-testid": f"{kind}-{name}"},
    )


def _edited_row(
    kind: str, row: ObjectVar[RowVM], fields: list[rx.Component], choices: rx.Component
) -> rx.Component:
    """A goal's or a scope's row: its typed fields and remove button, then its choices."""
    return rx.el.div(
        rx.el.div(
            *fields,
            _icon_button(
                "trash_2",
                AgentsState.remove_row(kind, row.index),
                row.remove_label,
                f"{kind}-remove",
                danger=True,
            ),
            class_name="iu-field-row iu-goal-fields",
        ),
        choices,
        key=row.key,
        class_name="iu-goal-row",
        custom_attrs={"data-testid": f"{kind}-row", f"data-{kind}-id": row.id},
    )


def _delegate(goal: ObjectVar[GoalVM], delegate: ObjectVar[DelegateVM]) -> rx.Component:
    return _choice(
        delegate.checked,
        goal.key + ":" + delegate.family,
        lambda _value: AgentsState.toggle_row_choice(GOAL, goal.index, delegate.family),
        {
            "data-testid": "goal-delegate",
            "data-family": delegate.family,
            "aria-label": delegate.label,
        },
        rx.el.span(delegate.family, class_name="iu-tool-name"),
        rx.el.span(delegate.tools, class_name="iu-tool-desc", title=delegate.tools),
    )


def _goal_row(goal: ObjectVar[GoalVM]) -> rx.Component:
    return _edited_row(
        GOAL,
        goal,
        [_row_text(GOAL, goal, "id"), _row_text(GOAL, goal, "description", placeholder=True)],
        _choices(
            GOAL,
            "delegates",
            goal.delegates,
            lambda delegate: _delegate(goal, delegate),
            TEXT["builder.goal_no_families"],
        ),
    )


def _scope_goal(scope: ObjectVar[ScopeVM], goal: ObjectVar[ScopeGoalVM]) -> rx.Component:
    return _choice(
        goal.checked,
        scope.key + ":" + goal.goal_id,
        lambda _value: AgentsState.toggle_row_choice(SCOPE, scope.index, goal.goal_id),
        {"data-testid": "scope-goal", "data-goal": goal.goal_id, "aria-label": goal.label},
        rx.el.span(goal.goal_id, class_name="iu-tool-name"),
    )


def _scope_row(scope: ObjectVar[ScopeVM]) -> rx.Component:
    return _edited_row(
        SCOPE,
        scope,
        [
            _row_text(SCOPE, scope, "id"),
            _row_text(SCOPE, scope, "description"),
            _row_text(SCOPE, scope, "category", placeholder=True),
        ],
        _choices(
            SCOPE,
            "goals",
            scope.goals,
            lambda goal: _scope_goal(scope, goal),
            TEXT["builder.scope_no_goals"],
        ),
    )


def _rows_section(
    kind: str,
    tag: str,
    rows: ArrayVar[Any],
    render: Callable[[Any], rx.Component],
    *,
    before: tuple[rx.Component, ...] = (),
    after: tuple[rx.Component, ...] = (),
) -> rx.Component:
    """The goals or the scopes: a heading, the rows, and a button adding one."""
    return rx.el.section(
        *_heading(tag, TEXT[f"builder.{kind}s"], TEXT[f"builder.{kind}s_help"]),
        *before,
        rx.foreach(rows, render),
        rx.el.button(
            rx.icon("plus", size=14),
            TEXT[f"builder.{kind}_add"],
            type="button",
            class_name="iu-btn",
            on_click=AgentsState.add_row(kind),
            custom_attrs={"data-testid": f"{kind}-add"},
        ),
        *after,
        class_name="iu-goals",
        custom_attrs={"data-testid": f"{kind}s-section"},
    )


def _goals() -> rx.Component:
    return _rows_section(
        GOAL,
        "h2",
        AgentsState.goals,
        _goal_row,
        before=(_alert(AgentsState.goal_error, "iu-builder-error", "alert", "goal-error"),),
        after=(_rows_section(SCOPE, "h3", AgentsState.scopes, _scope_row),),
    )


# --- importing OpenAPI actions -------------------------------------------------------------


def _named_file_input(upload: rx.Component, name: rx.Var[str]) -> rx.Component:
    """Give `rx.upload`'s own `<input type=file>` an accessible name.

    The component builds that input itself and takes no attributes for it, so a screen
    reader would announce a nameless file field; the name goes on the input directly.
    """
    (zone,) = upload.children
    file_input = zone.children[0]
    assert isinstance(file_input, rx.Component) and file_input.tag == "input", (
        "rx.upload's file input moved"
    )
    file_input.custom_attrs["aria-label"] = name
    return upload


def _actions_import() -> rx.Component:
    return rx.el.section(
        *_heading("h3", TEXT["builder.import_title"], TEXT["builder.import_help"]),
        _named_file_input(
            rx.upload(
                rx.el.div(
                    rx.icon("upload", size=14),
                    rx.el.span(TEXT["builder.import_drop"]),
                    class_name="iu-upload-inner",
                ),
                id=UPLOAD_ID,
                multiple=False,
                accept={
                    "application/json": [".json"],
                    "application/yaml": [".yaml", ".yml"],
                    "text/yaml": [".yaml", ".yml"],
                },
                on_drop=AgentsState.handle_upload(rx.upload_files(upload_id=UPLOAD_ID)),
                class_name="iu-upload",
                custom_attrs={"data-testid": "action-upload"},
            ),
            TEXT["builder.import_file_label"],
        ),
        rx.el.div(
            rx.el.input(
                value=AgentsState.import_url,
                on_change=AgentsState.set_import_url,
                placeholder="https://example.com/openapi.json",
                class_name="iu-input",
                custom_attrs={
                    "data-testid": "action-url",
                    "aria-label": TEXT["builder.import_url_label"],
                },
            ),
            text_button(
                rx.cond(AgentsState.importing, TEXT["builder.importing"], TEXT["builder.import"]),
                "action-import-url",
                AgentsState.import_from_url,
                disabled=AgentsState.importing,
            ),
            class_name="iu-field-row",
        ),
        class_name="iu-tool-group iu-import",
    )


def _editor() -> rx.Component:
    return rx.el.main(
        _messages(),
        _form(),
        *_heading("h2", TEXT["builder.tools"], TEXT["builder.tools_help"]),
        _token_totals(),
        rx.el.div(
            capability_toggle(
                "require_approval",
                AgentsState.approval_default,
                on_click=AgentsState.toggle_workspace_approval,
                testid="approval-default-toggle",
            ),
            class_name="iu-group-bar",
        ),
        rx.foreach(AgentsState.sources, _source),
        _actions_import(),
        _goals(),
        class_name="iu-builder-main",
    )


def agents_page() -> rx.Component:
    """The `/agents` page."""
    return rx.el.div(
        rx.el.link(rel="stylesheet", href="/builder.css"),
        auth_note(),
        _agent_list(),
        _editor(),
        class_name="iu-builder",
        custom_attrs={"data-testid": "agents-page"},
    )
