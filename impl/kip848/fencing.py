"""Fencing a member out of a consumer-protocol group: a leave with epoch -1, an expired session
and an expired rebalance timeout all end here (consumerGroupFenceMembers)."""

from __future__ import annotations

from .runtime import CLASSIC_JOIN, CLASSIC_SYNC, Runtime
from .state import NO_ASSIGNMENT_TIMESTAMP, Group


def fence_member(rt: Runtime, group: Group, member_id: str) -> None:
    """Remove the member (its target and timers too) and bump the group epoch; fencing the
    last member also moves the assignment epoch to the group epoch (KAFKA-20442's fix)."""
    group.remove(member_id)
    group.session_deadlines.pop(member_id, None)
    group.rebalance_deadlines.pop(member_id, None)
    group.classic_deadlines.pop((CLASSIC_JOIN, member_id), None)
    group.classic_deadlines.pop((CLASSIC_SYNC, member_id), None)
    group.group_epoch += 1
    if not group.members:
        group.assignment_timestamp_ms = NO_ASSIGNMENT_TIMESTAMP
        group.set_assignment_epoch(group.group_epoch)
