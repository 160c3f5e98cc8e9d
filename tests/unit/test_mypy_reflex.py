"""`scripts/mypy_reflex.py`: mypy reads a Reflex page the way Reflex builds it.

One mypy run (the project's configuration, so the plugin) over a small page: a state var
read on its class is a Var, read on an instance its value; a dataclass field read through
an `ObjectVar` is a Var and a misspelt one an error; an `@rx.event` handler called in a
page has its argument checked.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PAGE = """\
import dataclasses

import reflex as rx
from reflex.vars import ObjectVar


@dataclasses.dataclass
class Row:
    name: str = ""
    done: bool = False


class Page(rx.State):
    title: str = ""
    rows: list[Row] = []
    count: int = 0

    @rx.event
    def rename(self, name: str) -> None:
        self.title = name


def row(item: ObjectVar[Row]) -> rx.Component:
    reveal_type(item.done)
    return rx.el.span(item.nmae)


def page() -> rx.Component:
    reveal_type(Page.title)
    reveal_type(Page.rows)
    reveal_type(Page.count)
    return rx.el.button(Page.title, on_click=Page.rename(1))


def handler(state: Page) -> None:
    reveal_type(state.title)
"""


def _mypy(tmp_path: Path) -> list[str]:
    source = tmp_path / "page.py"
    source.write_text(PAGE)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".cache" / "mypy"),
            "--no-error-summary",
            "--no-warn-unused-configs",  # the project's sections name modules not read here
            str(source),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert not done.stderr, done.stderr
    said = [line.split(": ", 1)[1] for line in done.stdout.splitlines()]
    return [line for line in said if line.startswith(("error:", "note: Revealed type"))]


def test_pages_are_typed_as_reflex_builds_them(tmp_path: Path) -> None:
    lines = _mypy(tmp_path)
    assert lines == [
        'note: Revealed type is "reflex_base.vars.number.BooleanVar"',
        'error: "Row" has no field "nmae"  [attr-defined]',
        'note: Revealed type is "reflex_base.vars.sequence.StringVar[str]"',
        'note: Revealed type is "reflex_base.vars.sequence.ArrayVar[list[page.Row]]"',
        'note: Revealed type is "reflex_base.vars.number.NumberVar[int]"',
        'error: No overload variant of "__call__" of "EventCallback" matches argument type '
        '"int"  [call-overload]',
        'note: Revealed type is "str"',
    ], "\n".join(lines)
