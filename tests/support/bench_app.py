"""The app's production build, served by a checkout's own test harness in a process of
its own, for the benchmarks; and a checkout of another revision to measure beside it.

`AppProcess(root, workdir, config_yaml)` runs this file as a script with `root` first on
the import path, so `intent_ui` and `tests.e2e.harness.running_app` are that checkout's:
the checkout being worked on, or `worktree(rev)`, a `git worktree` of an earlier revision
that shares this checkout's `.venv` and `tools/`. The benchmark itself (provider, browser,
clients, timing) stays in the parent and is the same code for both. In its own process
the app's CPU and memory are its own (`pid`), not the browser driver's or the clients'.

The script writes the app's addresses to a file once it serves, and stops when its
standard input closes.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
SHARED = (".venv", "tools")
"""What a worktree of another revision borrows from this checkout (both are gitignored)."""

START_TIMEOUT_S = 900.0
"""A first production build of a fresh checkout installs the frontend's packages."""


@dataclass(frozen=True)
class Addresses:
    frontend_url: str
    api_url: str
    pid: int


class AppProcess:
    """The app of checkout `root`, serving `config_yaml` with its database in `workdir`."""

    def __init__(self, root: Path, workdir: Path, config_yaml: str) -> None:
        self.root = root
        workdir.mkdir(parents=True, exist_ok=True)
        self._ready = workdir / "addresses.json"
        self._ready.unlink(missing_ok=True)
        (workdir / "bench-config.yaml").write_text(config_yaml)
        self.log_path = workdir / "app.log"
        self._log = self.log_path.open("w")
        self._process = subprocess.Popen(
            [sys.executable, str(HERE), str(root), str(workdir)],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.addresses = self._wait_ready()

    def _wait_ready(self) -> Addresses:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._ready.exists():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(
                    f"the app of {self.root} did not start (log {self.log_path}):\n"
                    f"{self.log_tail()}"
                )
            time.sleep(0.2)
        return Addresses(**json.loads(self._ready.read_text()))

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the app's log, without the page's asset requests."""
        lines = self.log_path.read_text(errors="replace").splitlines(keepends=True)
        return "".join(line for line in lines if '"GET /' not in line)[-chars:]

    def check(self) -> None:
        """Raise, with the end of its log, if the app has stopped."""
        code = self._process.poll()
        if code is not None:
            raise RuntimeError(
                f"the app of {self.root} stopped (exit code {code}; log {self.log_path}):\n"
                f"{self.log_tail()}"
            )

    def close(self) -> None:
        if self._process.stdin is not None and not self._process.stdin.closed:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.terminate()
            self._process.wait(timeout=30)
        self._log.close()

    def __enter__(self) -> AppProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def resolve(rev: str) -> str:
    """`rev` as a full commit id, or a clear error."""
    found = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        raise SystemExit(f"--before {rev!r}: not a commit of {ROOT} (git rev-parse found none)")
    return found.stdout.strip()


@contextlib.contextmanager
def worktree(rev: str) -> Iterator[Path]:
    """A checkout of `rev` in a temporary folder (`git worktree add --detach`), with this
    checkout's `.venv` and `tools/` linked in; removed again afterwards."""
    commit = resolve(rev)
    folder = Path(tempfile.mkdtemp(prefix="intent-ui-before-"))
    tree = folder / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), commit],
        check=True,
    )
    try:
        for name in SHARED:
            if (ROOT / name).exists() and not (tree / name).exists():
                (tree / name).symlink_to(ROOT / name)
        yield tree
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
        )
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def _serve(root: Path, workdir: Path) -> None:
    """In the child: serve checkout `root`'s app until standard input closes."""
    faulthandler.enable()  # a crash of the interpreter leaves its traceback in the log
    sys.path[:] = [str(root), *(p for p in sys.path if Path(p or ".").resolve() != HERE.parent)]
    import intent_ui

    package = Path(intent_ui.__file__).resolve()
    if root.resolve() not in package.parents:
        raise SystemExit(f"imported intent_ui from {package}, not from the checkout {root}")
    from reflex.config import get_config

    from tests.e2e.harness import running_app

    config = (workdir / "bench-config.yaml").read_text()
    with running_app(workdir, config, prod=True) as app:
        addresses = {
            "frontend_url": app.frontend_url,
            "api_url": get_config().api_url,
            "pid": os.getpid(),
        }
        ready = workdir / "addresses.json"
        ready.with_suffix(".tmp").write_text(json.dumps(addresses))
        ready.with_suffix(".tmp").rename(ready)
        sys.stdin.read()


if __name__ == "__main__":
    _serve(Path(sys.argv[1]), Path(sys.argv[2]))
