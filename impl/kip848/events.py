"""The two timers of a consumer-protocol member, as the events their firing is."""

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


ConsumerGroupTimer = SessionTimeoutExpired | RebalanceTimeoutExpired
