"""Blocking tool work on a thread of its own, which a cancelled call abandons.

`asyncio.to_thread` runs work in the loop's default executor, and `asyncio.run` joins that
executor when it shuts down: one read stuck on a pipe would keep the CLI alive after
Ctrl-C, for ever. Python cannot kill a thread, so a call that times out or is stopped can
only walk away from its worker. `run_in_worker` makes that safe: each call gets a daemon
thread that nothing waits for, and a late result is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["run_in_worker"]

T = TypeVar("T")


async def run_in_worker(func: Callable[..., T], /, *args: Any) -> T:
    """`func(*args)` on a new daemon thread; cancelling the await abandons the thread."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():  # the call was cancelled or timed out: the result is dropped
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = context.run(func, *args)
        except BaseException as exc:
            error = exc
        # The loop may have closed while the worker ran: then nobody is waiting.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=work, name=f"tool-worker:{func.__name__}", daemon=True).start()
    return await future
