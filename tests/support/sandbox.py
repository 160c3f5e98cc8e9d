"""For the sandbox tests: the skip mark naming why no sandbox runs here, and a workspace
the sandbox's user can read.

When the tests run as root the sandbox runs as `nobody`, which cannot enter pytest's own
`tmp_path` (its parent is private to root), so the workspace is a folder of its own.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from intent_ui.agent.tools.sandbox import sandbox_available

_WHY = sandbox_available()

requires_sandbox = pytest.mark.skipif(
    _WHY is not None, reason=f"no sandbox here: {_WHY} (scripts/setup.sh installs bubblewrap)"
)
"""Skips a test that runs real bubblewrap where it cannot run, saying why."""


@contextmanager
def readable_folder() -> Iterator[Path]:
    """A new folder every user may read, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="intent-ui-sandbox-"))
    folder.chmod(0o755)
    try:
        yield folder.resolve()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
