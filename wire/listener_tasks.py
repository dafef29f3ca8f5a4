"""The background tasks of a listener (the server's, the proxy's), and shutting it down."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

CLOSE_WAIT_S = 2.0


class TaskSet:
    """Tasks started in the background and kept until they finish (or `shut_down`)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coroutine: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run `coroutine` as a task held here until it is done."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def shut_down(
        self, server: asyncio.Server | None, before_cancelling: Callable[[], None] | None = None
    ) -> None:
        """Stop `server` listening, call `before_cancelling`, cancel every task and wait for
        each, then wait (briefly) for the server to close."""
        if server is not None:
            server.close()
        if before_cancelling is not None:
            before_cancelling()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), CLOSE_WAIT_S)
