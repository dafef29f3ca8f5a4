"""Fencing a member out of a consumer-protocol group: a leave with epoch -1, an expired session
and an expired rebalance timeout all end here (consumerGroupFenceMembers), which also deletes the
resolutions of the regular expressions no member uses any more."""

from __future__ import annotations

from .regex import drop_unused_resolutions
from .runtime import CLASSIC_JOIN, CLASSIC_SYNC, Runtime
from .state import NO_ASSIGNMENT_TIMESTAMP, Group


def fence_member(rt: Runtime, group: Group, member_id: str) -> None:
    """Remove the member (its target and timers too, and the resolutions no member uses any
    more) and bump the group epoch; fencing the last member also moves the assignment epoch to
    the group epoch (KAFKA-20442's fix)."""
    group.remove(member_id)
    drop_unused_resolutions(group)
    group.session_deadlines.pop(member_id, None)
    group.rebalance_deadlines.pop(member_id, None)
    group.classic_deadlines.pop((CLASSIC_JOIN, member_id), None)
    group.classic_deadlines.pop((CLASSIC_SYNC, member_id), None)
    group.bump_group_epoch(rt.config)
    if not group.members:
        group.assignment_timestamp_ms = NO_ASSIGNMENT_TIMESTAMP
        group.set_assignment_epoch(group.group_epoch)
