"""Ctrl-C during a search: stop at the next batch boundary and keep what was explored.

A KeyboardInterrupt that lands in the middle of a merge could leave the seen set half updated,
so while a search runs in the main thread, the first Ctrl-C only asks it to stop; the search
stops where a limit would (between batches) and raises `SearchInterrupted`, which carries the
partial result. A second Ctrl-C interrupts at once, as usual. `SearchInterrupted` is a
KeyboardInterrupt, so a caller that does not look for it still stops as on any Ctrl-C.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

# `SearchResult.stopped_by` of a search stopped by Ctrl-C.
INTERRUPTED = "interrupted"
SEARCH, LIVENESS = "search", "liveness"


class SearchInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a check: `result` is the search's result so far (`stopped_by` says
    "interrupted"), or the whole search when the liveness check after it (`phase`) was cut."""

    def __init__(self, result: Any, phase: str = SEARCH) -> None:
        super().__init__(f"interrupted during the {phase}")
        self.result = result
        self.phase = phase


@contextmanager
def deferred_interrupts() -> Iterator[Callable[[], bool]]:
    """While the block runs, the first Ctrl-C is only recorded: the block polls the function it
    is given. Outside the main thread, or when someone else handles SIGINT, nothing changes."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield lambda: False
        return
    requested: list[bool] = []

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        del signum, frame
        if requested:
            raise KeyboardInterrupt
        requested.append(True)

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield lambda: bool(requested)
    finally:
        signal.signal(signal.SIGINT, previous)
