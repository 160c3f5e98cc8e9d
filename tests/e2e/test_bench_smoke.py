"""The capacity benchmark's smoke run (`tests/bench/bench_capacity.py --smoke`): one
conversation of each row for 2 s, one app process and then two workers on Redis and
PostgreSQL. It checks that every part works (labels seen, chunks streamed, pushes
received), never a number: the numbers are the benchmark's own run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "tests" / "bench" / "bench_capacity.py"
TIMEOUT_S = 900


def test_the_capacity_benchmark_runs_every_row(tmp_path: Path) -> None:
    results = tmp_path / "capacity.json"
    command = [sys.executable, str(BENCH), "--smoke", "--json-out", str(results)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S)
    said = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, said
    assert "smoke run: every part worked" in done.stdout, said
    rows = json.loads(results.read_text())
    # One process's two rows and the workers' row, each at one conversation.
    assert [row["k"] for row in rows] == [1, 1, 1], said
    assert any("workers" in row["load"] for row in rows), said
