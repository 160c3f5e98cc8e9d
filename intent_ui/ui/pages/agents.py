"""The agents page at `/agents`: list, create, edit, duplicate and delete agents, pick their
tools, switch each tool's capabilities, and import OpenAPI actions.

Register with `app.add_page(agents_page, route="/agents", title="Agents · Intent UI",
on_load=AgentsState.load_page)`.
"""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from intent_ui.ui.builder_state import (
    AgentRowVM,
    AgentsState,
    DelegateVM,
    GoalVM,
    GroupVM,
    ScopeGoalVM,
    ScopeVM,
    ToolRowVM,
)
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
        rx.el.button(
            rx.icon("pencil", size=13),
            type="reset",
            class_name="iu-btn iu-btn-icon",
            on_click=AgentsState.open_agent(agent.id),
            custom_attrs={
                "aria-label": agent.edit_label,
                "data-testid": "agent-edit",
                "form": FORM_ID,
            },
        ),
        rx.el.button(
            rx.icon("copy", size=13),
            type="button",
            class_name="iu-btn iu-btn-icon",
            on_click=AgentsState.duplicate(agent.id),
            custom_attrs={
                "aria-label": agent.duplicate_label,
                "data-testid": "agent-duplicate",
            },
        ),
        rx.cond(
            agent.own,
            rx.el.button(
                rx.icon("trash_2", size=13),
                type="button",
                class_name="iu-btn iu-btn-icon iu-btn-danger",
                on_click=AgentsState.delete(agent.id),
                custom_attrs={"aria-label": agent.delete_label, "data-testid": "agent-delete"},
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


def _select(
    options: rx.Var[list[str]],
    value: rx.Var[str],
    on_change: object,
    name: str,
    label: rx.Var[str],
) -> rx.Component:
    return rx.el.label(
        rx.el.span(label, class_name="iu-field-label"),
        rx.el.select(
            rx.foreach(options, lambda o: rx.el.option(o, value=o)),
            name=name,
            value=value,
            on_change=on_change,
            class_name="iu-select",
            custom_attrs={"data-testid": f"agent-{name}"},
        ),
        class_name="iu-field",
    )


def _form() -> rx.Component:
    return rx.el.form(
        rx.el.label(
            rx.el.span(TEXT["builder.name"], class_name="iu-field-label"),
            rx.el.input(
                name="name",
                default_value=AgentsState.name,
                placeholder=TEXT["builder.name_placeholder"],
                class_name="iu-input",
                custom_attrs={"data-testid": "agent-name", "autocomplete": "off"},
            ),
            class_name="iu-field",
        ),
        rx.el.label(
            rx.el.span(TEXT["builder.instructions"], class_name="iu-field-label"),
            rx.el.textarea(
                name="instructions",
                default_value=AgentsState.instructions,
                placeholder=TEXT["builder.instructions_placeholder"],
                rows=3,
                class_name="iu-input",
                custom_attrs={"data-testid": "agent-instructions"},
            ),
            class_name="iu-field",
        ),
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
            rx.el.button(
                TEXT["builder.save"],
                type="submit",
                class_name="iu-btn iu-btn-primary",
                custom_attrs={"data-testid": "agent-save"},
            ),
            rx.cond(
                AgentsState.agent_id == "",
                rx.el.span(TEXT["builder.unsaved"], class_name="iu-muted"),
            ),
            rx.cond(
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
            ),
            class_name="iu-field-row",
        ),
        id=FORM_ID,
        on_submit=AgentsState.save,
        class_name="iu-agent-form",
        custom_attrs={"data-testid": "agent-form"},
    )


def _messages() -> rx.Component:
    return rx.el.div(
        rx.cond(
            AgentsState.error != "",
            rx.el.p(
                AgentsState.error,
                class_name="iu-builder-error",
                custom_attrs={"role": "alert", "data-testid": "builder-error"},
            ),
        ),
        rx.cond(
            AgentsState.notice != "",
            rx.el.p(
                AgentsState.notice,
                class_name="iu-builder-notice",
                custom_attrs={"role": "status", "data-testid": "builder-notice"},
            ),
        ),
    )


def _token_totals() -> rx.Component:
    return rx.cond(
        AgentsState.show_intent,
        rx.el.p(
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
            rx.el.span(AgentsState.tokenizer, custom_attrs={"data-testid": "tokenizer-name"}),
            TEXT["builder.tokens_end"],
            class_name="iu-token-totals",
            custom_attrs={"data-testid": "token-totals"},
        ),
        rx.el.p(
            TEXT["builder.tokens_counted"],
            rx.el.span(AgentsState.tokenizer, custom_attrs={"data-testid": "tokenizer-name"}),
            TEXT["builder.tokens_per_request"],
            AgentsState.tokens_without.to_string(),
            TEXT["builder.tokens_per_request_end"],
            class_name="iu-token-totals",
            custom_attrs={"data-testid": "token-totals"},
        ),
    )


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
        rx.el.div(
            rx.cond(
                AgentsState.show_intent,
                capability_toggle(
                    "describe_intent",
                    pressed=row.intent.pressed,
                    disabled=row.intent.disabled,
                    tooltip=row.intent.tooltip,
                    label=row.intent.label,
                    text=row.intent.text,
                    cost=row.intent.cost,
                    on_click=AgentsState.toggle_option(row.tool_id, "describe_intent"),
                    attrs={"data-tool": row.tool_id},
                ),
            ),
            rx.cond(
                AgentsState.show_background,
                capability_toggle(
                    "run_in_background",
                    pressed=row.background.pressed,
                    disabled=row.background.disabled,
                    tooltip=row.background.tooltip,
                    label=row.background.label,
                    text=row.background.text,
                    on_click=AgentsState.toggle_option(row.tool_id, "run_in_background"),
                    attrs={"data-tool": row.tool_id},
                ),
            ),
            rx.cond(
                AgentsState.show_defer,
                capability_toggle(
                    "defer_loading",
                    pressed=row.defer.pressed,
                    disabled=row.defer.disabled,
                    tooltip=row.defer.tooltip,
                    label=row.defer.label,
                    text=row.defer.text,
                    on_click=AgentsState.toggle_option(row.tool_id, "defer_loading"),
                    attrs={"data-tool": row.tool_id},
                ),
            ),
            rx.cond(
                AgentsState.show_code_only,
                capability_toggle(
                    "allowed_callers",
                    pressed=row.code_only.pressed,
                    disabled=row.code_only.disabled,
                    tooltip=row.code_only.tooltip,
                    label=row.code_only.label,
                    text=row.code_only.text,
                    on_click=AgentsState.toggle_option(row.tool_id, "allowed_callers"),
                    attrs={"data-tool": row.tool_id},
                ),
            ),
            class_name="iu-tool-toggles",
        ),
        class_name="iu-tool-row",
        custom_attrs={
            "data-testid": "tool-row",
            "data-tool": row.tool_id,
            "data-kind": row.kind,
            "data-picked": rx.cond(row.picked, "true", "false"),
        },
    )


def _group(group: ObjectVar[GroupVM]) -> rx.Component:
    return rx.el.section(
        rx.el.div(
            rx.el.h3(group.title, class_name="iu-group-title"),
            rx.cond(
                AgentsState.show_intent,
                capability_toggle(
                    "describe_intent",
                    pressed=group.describe_all.pressed,
                    disabled=group.describe_all.disabled,
                    tooltip=group.describe_all.tooltip,
                    label=group.describe_all.label,
                    text=group.describe_all.text,
                    on_click=AgentsState.toggle_describe_all(group.key),
                    testid="describe-all-toggle",
                    attrs={"data-server": group.key},
                ),
            ),
            class_name="iu-group-bar",
        ),
        rx.cond(group.note != "", rx.el.p(group.note, class_name="iu-builder-error")),
        rx.foreach(group.tools, _tool_row),
        class_name="iu-tool-group",
        custom_attrs={
            "data-testid": "tool-group-section",
            "data-server": group.key,
            "data-kind": group.kind,
        },
    )


def _delegate(goal: ObjectVar[GoalVM], delegate: ObjectVar[DelegateVM]) -> rx.Component:
    return rx.el.label(
        rx.el.input(
            type="checkbox",
            default_checked=delegate.checked,
            key=goal.key + ":" + delegate.family + ":" + delegate.checked.to_string(),
            on_change=lambda _value: AgentsState.toggle_goal_delegate(goal.index, delegate.family),
            custom_attrs={
                "data-testid": "goal-delegate",
                "data-family": delegate.family,
                "aria-label": delegate.label,
            },
        ),
        rx.el.span(delegate.family, class_name="iu-tool-name"),
        rx.el.span(delegate.tools, class_name="iu-tool-desc", title=delegate.tools),
        class_name="iu-goal-family",
    )


def _goal_row(goal: ObjectVar[GoalVM]) -> rx.Component:
    # Uncontrolled fields keyed by the goal: what is typed stays while the server answers,
    # and a blur sends it.
    return rx.el.div(
        rx.el.div(
            rx.el.label(
                rx.el.span(TEXT["builder.goal_id"], class_name="iu-field-label"),
                rx.el.input(
                    default_value=goal.id,
                    key=goal.key + ":id",
                    on_blur=lambda value: AgentsState.set_goal_id(goal.index, value),
                    class_name="iu-input",
                    custom_attrs={"data-testid": "goal-id", "autocomplete": "off"},
                ),
                class_name="iu-field iu-goal-id",
            ),
            rx.el.label(
                rx.el.span(TEXT["builder.goal_description"], class_name="iu-field-label"),
                rx.el.input(
                    default_value=goal.description,
                    key=goal.key + ":description",
                    placeholder=TEXT["builder.goal_description_placeholder"],
                    on_blur=lambda value: AgentsState.set_goal_description(goal.index, value),
                    class_name="iu-input",
                    custom_attrs={"data-testid": "goal-description", "autocomplete": "off"},
                ),
                class_name="iu-field iu-goal-description",
            ),
            rx.el.button(
                rx.icon("trash_2", size=13),
                type="button",
                class_name="iu-btn iu-btn-icon iu-btn-danger",
                on_click=AgentsState.remove_goal(goal.index),
                custom_attrs={"aria-label": goal.remove_label, "data-testid": "goal-remove"},
            ),
            class_name="iu-field-row iu-goal-fields",
        ),
        rx.el.fieldset(
            rx.el.legend(TEXT["builder.goal_delegates"], class_name="iu-field-label"),
            rx.cond(
                goal.delegates.length() > 0,
                rx.foreach(goal.delegates, lambda delegate: _delegate(goal, delegate)),
                rx.el.span(TEXT["builder.goal_no_families"], class_name="iu-muted"),
            ),
            class_name="iu-goal-families",
            custom_attrs={"data-testid": "goal-delegates"},
        ),
        key=goal.key,
        class_name="iu-goal-row",
        custom_attrs={"data-testid": "goal-row", "data-goal-id": goal.id},
    )


def _goals() -> rx.Component:
    return rx.el.section(
        rx.el.h2(TEXT["builder.goals"], class_name="iu-builder-subtitle"),
        rx.el.p(TEXT["builder.goals_help"], class_name="iu-muted"),
        rx.cond(
            AgentsState.goal_error != "",
            rx.el.p(
                AgentsState.goal_error,
                class_name="iu-builder-error",
                custom_attrs={"role": "alert", "data-testid": "goal-error"},
            ),
        ),
        rx.foreach(AgentsState.goals, _goal_row),
        rx.el.button(
            rx.icon("plus", size=14),
            TEXT["builder.goal_add"],
            type="button",
            class_name="iu-btn",
            on_click=AgentsState.add_goal,
            custom_attrs={"data-testid": "goal-add"},
        ),
        _scopes(),
        class_name="iu-goals",
        custom_attrs={"data-testid": "goals-section"},
    )


def _text_field(
    label: rx.Var[str],
    value: rx.Var[str],
    key: rx.Var[str],
    on_blur: object,
    testid: str,
    **props: object,
) -> rx.Component:
    return rx.el.label(
        rx.el.span(label, class_name="iu-field-label"),
        rx.el.input(
            default_value=value,
            key=key,
            on_blur=on_blur,
            class_name="iu-input",
            custom_attrs={"data-testid": testid, "autocomplete": "off"},
            **props,
        ),
        class_name=f"iu-field iu-{testid}",
    )


def _scope_goal(scope: ObjectVar[ScopeVM], goal: ObjectVar[ScopeGoalVM]) -> rx.Component:
    return rx.el.label(
        rx.el.input(
            type="checkbox",
            default_checked=goal.checked,
            key=scope.key + ":" + goal.goal_id + ":" + goal.checked.to_string(),
            on_change=lambda _value: AgentsState.toggle_scope_goal(scope.index, goal.goal_id),
            custom_attrs={
                "data-testid": "scope-goal",
                "data-goal": goal.goal_id,
                "aria-label": goal.label,
            },
        ),
        rx.el.span(goal.goal_id, class_name="iu-tool-name"),
        class_name="iu-goal-family",
    )


def _scope_row(scope: ObjectVar[ScopeVM]) -> rx.Component:
    return rx.el.div(
        rx.el.div(
            _text_field(
                TEXT["builder.scope_id"],
                scope.id,
                scope.key + ":id",
                lambda value: AgentsState.set_scope_id(scope.index, value),
                "scope-id",
            ),
            _text_field(
                TEXT["builder.scope_description"],
                scope.description,
                scope.key + ":description",
                lambda value: AgentsState.set_scope_description(scope.index, value),
                "scope-description",
            ),
            _text_field(
                TEXT["builder.scope_category"],
                scope.category,
                scope.key + ":category",
                lambda value: AgentsState.set_scope_category(scope.index, value),
                "scope-category",
                placeholder=TEXT["builder.scope_category_placeholder"],
            ),
            rx.el.button(
                rx.icon("trash_2", size=13),
                type="button",
                class_name="iu-btn iu-btn-icon iu-btn-danger",
                on_click=AgentsState.remove_scope(scope.index),
                custom_attrs={"aria-label": scope.remove_label, "data-testid": "scope-remove"},
            ),
            class_name="iu-field-row iu-goal-fields",
        ),
        rx.el.fieldset(
            rx.el.legend(TEXT["builder.scope_goals"], class_name="iu-field-label"),
            rx.cond(
                scope.goals.length() > 0,
                rx.foreach(scope.goals, lambda goal: _scope_goal(scope, goal)),
                rx.el.span(TEXT["builder.scope_no_goals"], class_name="iu-muted"),
            ),
            class_name="iu-goal-families",
            custom_attrs={"data-testid": "scope-goals"},
        ),
        key=scope.key,
        class_name="iu-goal-row",
        custom_attrs={"data-testid": "scope-row", "data-scope-id": scope.id},
    )


def _scopes() -> rx.Component:
    return rx.el.section(
        rx.el.h3(TEXT["builder.scopes"], class_name="iu-group-title"),
        rx.el.p(TEXT["builder.scopes_help"], class_name="iu-muted"),
        rx.foreach(AgentsState.scopes, _scope_row),
        rx.el.button(
            rx.icon("plus", size=14),
            TEXT["builder.scope_add"],
            type="button",
            class_name="iu-btn",
            on_click=AgentsState.add_scope,
            custom_attrs={"data-testid": "scope-add"},
        ),
        class_name="iu-goals",
        custom_attrs={"data-testid": "scopes-section"},
    )


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
        rx.el.h3(TEXT["builder.import_title"], class_name="iu-group-title"),
        rx.el.p(TEXT["builder.import_help"], class_name="iu-muted"),
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
            rx.el.button(
                rx.cond(AgentsState.importing, TEXT["builder.importing"], TEXT["builder.import"]),
                type="button",
                class_name="iu-btn",
                disabled=AgentsState.importing,
                on_click=AgentsState.import_from_url,
                custom_attrs={"data-testid": "action-import-url"},
            ),
            class_name="iu-field-row",
        ),
        class_name="iu-tool-group iu-import",
    )


def _editor() -> rx.Component:
    return rx.el.main(
        _messages(),
        _form(),
        rx.el.h2(TEXT["builder.tools"], class_name="iu-builder-subtitle"),
        rx.el.p(TEXT["builder.tools_help"], class_name="iu-muted"),
        _token_totals(),
        rx.foreach(AgentsState.groups, _group),
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
