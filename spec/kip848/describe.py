"""ConsumerGroupDescribe (docs/protocol.md §12.11): the observation RPC of a consumer-protocol
group, showing both epochs and each member's current and target assignment.

Kafka 4.3.0: `GroupCoordinatorService.consumerGroupDescribe` (an empty group id gets
INVALID_GROUP_ID), `GroupMetadataManager.consumerGroupDescribe` (an unknown group gets
GROUP_ID_NOT_FOUND) and `ConsumerGroup.asDescribedGroup` (the assignor is the preferred one, or
the broker's default).
"""

from __future__ import annotations

from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    DescribedConsumerGroup,
    DescribedConsumerGroupMember,
)
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import RequestRef

from .heartbeat import preferred_assignors, topic_partitions
from .rules import (
    CG_DESCRIBE_GROUP,
    CG_DESCRIBE_INVALID_GROUP_ID,
    CG_DESCRIBE_UNKNOWN_GROUP,
    CG_PROTOCOL_DISABLED_DESCRIBE,
    CG_PROTOCOL_DISABLED_HEARTBEAT,
)
from .state import ConsumerGroup, ConsumerGroupsState
from .step import Step


def consumer_group_describe(
    step: Step, state: ConsumerGroupsState, ref: RequestRef, request: ConsumerGroupDescribeRequest
) -> ConsumerGroupsState:
    """Answer with one entry per requested group; the state does not change."""
    entries = []
    for group_id in request.group_ids:
        group = state.group(group_id)
        if group_id == "":
            step.fire(CG_DESCRIBE_INVALID_GROUP_ID)
            entries.append(DescribedConsumerGroup(ErrorCode.INVALID_GROUP_ID, group_id))
        elif group is None:
            step.fire(CG_DESCRIBE_UNKNOWN_GROUP)
            entries.append(DescribedConsumerGroup(ErrorCode.GROUP_ID_NOT_FOUND, group_id))
        else:
            step.fire(CG_DESCRIBE_GROUP)
            entries.append(_described(step, group))
    step.respond(ref, ConsumerGroupDescribeResponse(tuple(entries)))
    return state


def _described(step: Step, group: ConsumerGroup) -> DescribedConsumerGroup:
    config = step.config
    members = tuple(
        DescribedConsumerGroupMember(
            member_id=member.member_id,
            instance_id=member.instance_id,
            rack_id=member.rack_id,
            member_epoch=member.member_epoch,
            client_id="",
            client_host="",
            subscribed_topic_names=tuple(sorted(member.subscribed_topic_names)),
            # A member without a regular expression has "" (ConsumerGroupMember.Builder's
            # default, copied by asConsumerGroupDescribeMember, Kafka 4.4.0).
            subscribed_topic_regex=member.subscribed_topic_regex,
            assignment=topic_partitions(config, member.assigned),
            target_assignment=topic_partitions(config, group.target_of(member.member_id)),
        )
        for member in group.iter_members()
    )
    return DescribedConsumerGroup(
        ErrorCode.NONE,
        group.group_id,
        group_state=group.state.value,
        group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        assignor_name=step.choose("preferred assignor", preferred_assignors(config, group)),
        members=members,
    )


def protocol_disabled(
    step: Step, state: ConsumerGroupsState, ref: RequestRef, request: object
) -> ConsumerGroupsState | None:
    """A broker without the consumer protocol (Kafka 3.9.0's KafkaApis, before any coordinator
    is asked): UNSUPPORTED_VERSION for a ConsumerGroupHeartbeat, and for every group of a
    ConsumerGroupDescribe; None for another request, which is served as usual."""
    if isinstance(request, ConsumerGroupHeartbeatRequest):
        step.fire(CG_PROTOCOL_DISABLED_HEARTBEAT)
        step.respond(ref, ConsumerGroupHeartbeatResponse(ErrorCode.UNSUPPORTED_VERSION))
        return state
    if isinstance(request, ConsumerGroupDescribeRequest):
        step.fire(CG_PROTOCOL_DISABLED_DESCRIBE)
        groups = tuple(
            DescribedConsumerGroup(ErrorCode.UNSUPPORTED_VERSION, group_id)
            for group_id in request.group_ids
        )
        step.respond(ref, ConsumerGroupDescribeResponse(groups))
        return state
    return None
