"""The KIP-848 world's clock, for group.consumer.assignment.interval.ms (KIP-1263,
`Kip848Parameters.assignment_interval`).

The world has no clock otherwise: its coordinator timers fire when the world allows them, not at
deadlines. The assignment interval is the one setting whose effect depends on how much time has
passed between two heartbeats: a target the group epoch asks for within the interval of the last
computation waits (4.3+) or is computed anyway (before 4.3, where the setting does not exist).
So the world keeps the time at which the coordinator steps, starting at `CLOCK_START_MS`, and
one step moves it: the interval since the last computation elapses (`interval_end`). Without
that step every heartbeat lands within the interval; with it, after. Each such step needs a
computation since the previous one, and computations are bounded by the epoch bumps a world's
budgets allow, so the clock stays finite.
"""

from __future__ import annotations

from groupspec.spec.kip848 import ConsumerGroupsState
from groupspec.spec.kip848.state import NO_ASSIGNMENT_TIMESTAMP

# group.consumer.assignment.interval.ms with `assignment_interval` (Kafka 4.3's default, 1 s).
ASSIGNMENT_INTERVAL_MS = 1_000
# The first instant of a clocked world: not NO_ASSIGNMENT_TIMESTAMP, which marks a group whose
# target was never computed (the coordinator never defers its first computation).
CLOCK_START_MS = 1


def interval_end(coordinator: ConsumerGroupsState, now_ms: int, interval_ms: int) -> int | None:
    """The instant the assignment interval since the last computation ends, while that is still
    ahead of `now_ms` (the earliest over the groups); None when no interval is running."""
    if interval_ms == 0:
        return None
    ends = [
        group.assignment_timestamp_ms + interval_ms
        for group in coordinator.iter_groups()
        if group.assignment_timestamp_ms != NO_ASSIGNMENT_TIMESTAMP
        and now_ms < group.assignment_timestamp_ms + interval_ms
    ]
    return min(ends) if ends else None
