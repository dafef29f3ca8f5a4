"""The timers of a consumer-protocol member, and the completion of a group's regular-expression
resolution, as the events their firing is."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SessionTimeoutExpired:
    """A member's session timeout fired (no heartbeat within the session timeout)."""

    group_id: str
    member_id: str


@dataclass(frozen=True, slots=True)
class RebalanceTimeoutExpired:
    """A member's rebalance timeout fired (armed while it revokes partitions)."""

    group_id: str
    member_id: str


@dataclass(frozen=True, slots=True)
class ClassicJoinTimeoutExpired:
    """A classic member told to rejoin did not rejoin within its rebalance timeout."""

    group_id: str
    member_id: str


@dataclass(frozen=True, slots=True)
class ClassicSyncTimeoutExpired:
    """A classic member did not send SyncGroup within its rebalance timeout after joining."""

    group_id: str
    member_id: str


@dataclass(frozen=True, slots=True)
class RegexResolutionCompleted:
    """The group's regular-expression resolution, started by a heartbeat, completed (Kafka runs
    it on the coordinator's executor; here it is queued on the timer heap, due at once)."""

    group_id: str


ConsumerGroupTimer = (
    SessionTimeoutExpired
    | RebalanceTimeoutExpired
    | ClassicJoinTimeoutExpired
    | ClassicSyncTimeoutExpired
    | RegexResolutionCompleted
)
