"""`run_in_worker`: a blocked worker is abandoned, so it cannot keep the process alive."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from intent_ui.agent.tools.worker import run_in_worker

# A tool stuck in a blocking read (here: waiting on an event nobody sets) is given up on;
# the program must still be able to end, as the CLI must after Ctrl-C.
_ABANDON = textwrap.dedent(
    """
    import asyncio, threading
    from intent_ui.agent.tools.worker import run_in_worker

    async def main() -> None:
        never = threading.Event()
        task = asyncio.ensure_future(run_in_worker(never.wait))
        await asyncio.sleep(0)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            print("abandoned")

    asyncio.run(main())
    """
)


def test_a_cancelled_call_abandons_its_blocked_worker_and_the_process_ends() -> None:
    # The timeout only guards the suite: before the fix, asyncio.run joined the executor
    # thread at shutdown and the process never ended.
    done = subprocess.run(
        [sys.executable, "-c", _ABANDON], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "abandoned"


async def test_results_and_exceptions_come_back_from_the_worker() -> None:
    assert await run_in_worker(sum, [1, 2, 3]) == 6
    with pytest.raises(ValueError, match="not a number"):
        await run_in_worker(int, "not a number")
