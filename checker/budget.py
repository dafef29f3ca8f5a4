"""What stops a check before it ends, asked inside long operations: a time limit and Ctrl-C.

A state of a big model can take seconds to expand (two-phase commit with 1,000 resource
managers has 2,000 successors a state, each judged on 1,000 components), so a search that
looked at its clock only between batches of states could run for minutes past `--max-seconds`.
The expander, the merge's waits, the liveness analysis and Spark's tasks all poll a `Halt`
instead, every few steps: reading the clock costs less than a step, and a stop is then seen
within a fraction of a second. A state budget (`--max-states`) is judged where states are
counted, in the merge (see `bfs.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .interrupt import INTERRUPTED

# `SearchResult.stopped_by` of a search its time limit stopped (and `--max-seconds`' name).
TIME_LIMIT = "max_seconds"
# ... of a search its state budget stopped (`--max-states`).
STATE_LIMIT = "max_states"
# Polls between two readings of the clock: a poll that does not read it is one subtraction.
POLLS_PER_READING = 32


class Halt:
    """Says why work must stop now ("max_seconds", "interrupted") or None, when polled.

    `deadline` is a value of `clock` (the machine's monotonic clock by default; Spark's executors
    may run on other machines, so theirs is the wall clock); `interrupted` says whether Ctrl-C
    asked the search to stop. `poll` reads the clock only every POLLS_PER_READING calls, so the
    hottest loops may call it for every step; `check` reads it at once.
    """

    def __init__(
        self,
        deadline: float | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        interrupted: Callable[[], bool] | None = None,
    ) -> None:
        self.deadline = deadline
        self.clock = clock
        self.interrupted = interrupted
        # The first poll reads the clock: work that starts after the deadline does nothing.
        self._countdown = 1

    def poll(self) -> str | None:
        """Why to stop, reading the clock only every POLLS_PER_READING calls."""
        self._countdown -= 1
        if self._countdown:
            return None
        self._countdown = POLLS_PER_READING
        return self.check()

    def check(self) -> str | None:
        """Why to stop, now: the deadline has passed, or Ctrl-C was pressed."""
        if self.interrupted is not None and self.interrupted():
            return INTERRUPTED
        if self.deadline is not None and self.clock() >= self.deadline:
            return TIME_LIMIT
        return None

    def seconds_left(self) -> float | None:
        """Seconds until the deadline (negative once past), or None without one."""
        return None if self.deadline is None else self.deadline - self.clock()


def deadline_after(seconds: float | None, started: float | None = None) -> float | None:
    """The monotonic deadline `seconds` after `started` (now by default), or None."""
    if seconds is None:
        return None
    return (time.monotonic() if started is None else started) + seconds
