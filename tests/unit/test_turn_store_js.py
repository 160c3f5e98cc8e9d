"""The page's turn store (`assets/turn_patches.js`, `turn_feed.js`, `turn_store.js`) is
tested by Node's own test runner (`tests/js`); this runs it with the Python suite so a
broken page store fails the same command. Node is required, not optional: without it
the page's half of the turn protocol would go untested."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MINIMUM_NODE = (20, 6)
"""`module.register`, which loads the store under stand-ins for React and Reflex."""


def _node() -> str:
    node = shutil.which("node")
    assert node is not None, (
        "node is not on PATH: the tests in tests/js need Node.js 20.6 or newer."
    )
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    found = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    assert found >= MINIMUM_NODE, f"tests/js need Node.js 20.6 or newer, found {version}."
    return node


def test_the_page_turn_store_passes_its_node_tests() -> None:
    result = subprocess.run(
        [_node(), "--test", "tests/js"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
