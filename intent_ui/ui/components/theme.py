"""Applies a theme held in a state var to the page, through Reflex's colour mode.

Reflex keeps the browser's colour mode (`light`, `dark` or `system`) in the page and in
the browser's storage, and puts `light` or `dark` on <html> before the first paint, so a
reload shows the last theme at once. The user's stored theme arrives later, with the page
state: `ThemeFollower` hands it to the colour mode when it arrives and whenever it
changes, so the user's choice also reaches a browser that never saw it (a new device,
another user of the same browser). Reflex's `set_color_mode` is a browser action and
cannot be sent from the server, hence a React effect on the var.
"""

from __future__ import annotations

import reflex as rx
from reflex.components.component import field
from reflex.constants import ColorMode
from reflex.style import color_mode_imports
from reflex.utils.imports import ImportVar
from reflex.vars import Var, VarData

__all__ = ["ThemeFollower"]

_COLOR_MODE = "iuColorMode"


class ThemeFollower(rx.Fragment):
    """Renders nothing; sets the colour mode to `theme` while it is not empty ("" means
    not known yet: the browser keeps its own)."""

    theme: Var[str] = field(is_javascript_property=False)

    def add_hooks(self) -> list[str | Var]:
        theme = self.theme
        return [
            Var(
                f"useEffect(() => {{ if ({theme}) {_COLOR_MODE}.{ColorMode.SET}({theme}); }}"
                f", [{theme}]);",
                _var_data=VarData.merge(
                    theme._get_all_var_data(),
                    VarData(
                        imports={
                            **color_mode_imports,
                            "react": [ImportVar(tag="useContext"), ImportVar(tag="useEffect")],
                        },
                        hooks={f"const {_COLOR_MODE} = useContext(ColorModeContext);": None},
                    ),
                ),
            )
        ]
