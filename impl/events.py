"""Timer events the coordinator fires, named so a harness can fire one explicitly.

`Coordinator.advance` fires due timers by itself, in deadline order, and reports each as one of
these events; `Coordinator.fire` runs a named timer now, whatever its deadline, which is how a
conformance harness mirrors the specification's abstract time.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HeartbeatExpired:
    """A member's session timer (or a pending member's join deadline) fired."""

    group_id: str
    member_id: str


@dataclass(frozen=True, slots=True)
class JoinTimerExpired:
    """A group's join timer fired (initial-rebalance delay or rebalance timeout)."""

    group_id: str


@dataclass(frozen=True, slots=True)
class SyncTimerExpired:
    """A group's pending-sync timer fired."""

    group_id: str


@dataclass(frozen=True, slots=True)
class OffsetRetentionCheck:
    """The periodic offset-expiration task ran."""


TimerEvent = HeartbeatExpired | JoinTimerExpired | SyncTimerExpired | OffsetRetentionCheck
