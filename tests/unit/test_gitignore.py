"""A fresh clone stays clean when the app starts: Reflex rewrites `.gitignore` whenever it
(re)initialises the app (no `.web` yet, or a new Reflex version) unless the file already
holds every entry it wants, spelt as it spells them."""

from __future__ import annotations

import shutil
from pathlib import Path

from reflex.utils.frontend_skeleton import initialize_gitignore

ROOT = Path(__file__).resolve().parents[2]


def test_reflex_leaves_the_committed_gitignore_as_it_is(tmp_path: Path) -> None:
    copy = tmp_path / ".gitignore"
    shutil.copyfile(ROOT / ".gitignore", copy)
    initialize_gitignore(copy)
    assert copy.read_text() == (ROOT / ".gitignore").read_text()
