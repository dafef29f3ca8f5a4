"""Clocks in milliseconds: a real monotonic one for production, a manual one for tests."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """Anything that tells the time in milliseconds and never goes backwards."""

    def now_ms(self) -> int:
        """The current time in milliseconds."""
        ...


class MonotonicClock:
    """The process's monotonic clock, in whole milliseconds since an arbitrary origin."""

    __slots__ = ()

    def now_ms(self) -> int:
        """The current monotonic time in milliseconds."""
        return time.monotonic_ns() // 1_000_000


class ManualClock:
    """A clock that moves only when told to: deterministic tests and simulations."""

    __slots__ = ("_now",)

    def __init__(self, start_ms: int = 0) -> None:
        if not isinstance(start_ms, int) or isinstance(start_ms, bool) or start_ms < 0:
            raise ValueError(f"start_ms must be a non-negative integer, got {start_ms!r}")
        self._now = start_ms

    def now_ms(self) -> int:
        """The time the clock was last set to."""
        return self._now

    def set(self, now_ms: int) -> None:
        """Move the clock to `now_ms`; it never goes backwards."""
        if not isinstance(now_ms, int) or isinstance(now_ms, bool):
            raise ValueError(f"now_ms must be an integer, got {now_ms!r}")
        if now_ms < self._now:
            raise ValueError(f"a clock never goes backwards: {now_ms} < {self._now}")
        self._now = now_ms

    def advance(self, delta_ms: int) -> int:
        """Move the clock forward by `delta_ms`; returns the new time."""
        self.set(self._now + delta_ms)
        return self._now
