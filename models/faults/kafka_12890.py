"""KAFKA-12890: no pending-sync timer, and a follower's SyncGroup may be lost.

Before the fix, the coordinator had no timer for members that joined but never sent SyncGroup.
A follower stuck between JoinGroup and SyncGroup (while its heartbeat thread kept it alive) was
never removed. The world drops the pending-sync timer and lets a follower's SyncGroup be lost on
its way: the leader's SyncGroup still moves the group to Stable, but the follower waits for its
assignment forever and the group never converges.
"""

from __future__ import annotations

from groupspec.spec.events import SyncTimerExpired, TimerEvent
from groupspec.vocabulary.requests import Request, SyncGroupRequest

from .switch import Bug, FaultSwitch

NAME = "KAFKA-12890"


class NoSyncTimer(FaultSwitch):
    """No pending-sync timer; a follower's SyncGroup may never be sent."""

    name = NAME
    summary = "no pending-sync timer; a follower's SyncGroup may be lost"
    extra_action_kinds = ("LoseSyncGroup",)
    bug = Bug(
        "KAFKA-12890",
        "KAFKA-12890",
        "no pending-sync timer: a follower whose SyncGroup is lost is never removed, and waits "
        "for its assignment forever",
        NAME,
        "Convergence",
        "eager-2",
        {"evictions": "0", "commits": "0", "check_convergence": "true"},
        20,
    )

    def may_lose(self, request: Request) -> bool:
        """A follower's SyncGroup (no assignments) may never reach the coordinator."""
        return isinstance(request, SyncGroupRequest) and not request.assignments

    def timer_enabled(self, timer: TimerEvent) -> bool:
        """Kafka had no pending-sync timer."""
        return not isinstance(timer, SyncTimerExpired)


SWITCH = NoSyncTimer()
