"""Fencing a member out of a consumer-protocol group (docs/protocol.md §12.6): a leave with epoch
-1, an expired session and an expired rebalance timeout all end here, as all three end in
Kafka's `GroupMetadataManager.consumerGroupFenceMembers`."""

from __future__ import annotations

from dataclasses import replace

from .regex import without_unsubscribed_regexes
from .rules import CG_HEARTBEAT_LAST_MEMBER_FENCED, CG_HEARTBEAT_MEMBER_FENCED
from .state import NO_ASSIGNMENT_TIMESTAMP, ConsumerGroup
from .step import Step


def fence_member(step: Step, group: ConsumerGroup, member_id: str) -> ConsumerGroup:
    """The group without the member (its target and timers too), one group epoch later.

    Fencing the last member also moves the assignment epoch to the new group epoch (with no
    assignment time), so that an Empty group's two epochs agree: KAFKA-20442, which Kafka 4.4.0
    has (its `consumerGroupFenceMembers` writes the target-assignment metadata record when every
    member is fenced) and 4.3.0 has not.
    """
    step.fire(CG_HEARTBEAT_MEMBER_FENCED)
    fenced = without_unsubscribed_regexes(step, group.without_member(member_id))
    fenced = fenced.with_group_epoch(group.group_epoch + 1, step.config)
    if not fenced.members_by_id:
        step.fire(CG_HEARTBEAT_LAST_MEMBER_FENCED)
        fenced = replace(
            fenced,
            assignment_epoch=fenced.group_epoch,
            assignment_timestamp_ms=NO_ASSIGNMENT_TIMESTAMP,
        )
    return fenced
