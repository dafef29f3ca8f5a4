"""ConsumerGroupDescribe: both epochs, the state, and each member's current and target
assignment, for every group asked about."""

from __future__ import annotations

from groupspec.vocabulary.consumer_groups import (
    MEMBER_TYPE_CLASSIC,
    MEMBER_TYPE_CONSUMER,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    DescribedConsumerGroup,
    DescribedConsumerGroupMember,
)
from groupspec.vocabulary.errors import ErrorCode

from ..state import Ref
from .heartbeat import preferred_assignor, topic_partitions
from .runtime import Runtime
from .state import NO_PARTITIONS, Group


def consumer_group_describe(rt: Runtime, ref: Ref, request: ConsumerGroupDescribeRequest) -> None:
    """Answer with one entry per requested group; nothing changes."""
    entries = []
    for group_id in request.group_ids:
        group = rt.groups.get(group_id)
        if group_id == "":
            entries.append(DescribedConsumerGroup(ErrorCode.INVALID_GROUP_ID, group_id))
        elif group is None:
            entries.append(DescribedConsumerGroup(ErrorCode.GROUP_ID_NOT_FOUND, group_id))
        else:
            entries.append(_described(rt, group))
    rt.respond(ref, ConsumerGroupDescribeResponse(tuple(entries)))


def _described(rt: Runtime, group: Group) -> DescribedConsumerGroup:
    config = rt.config
    members = tuple(
        DescribedConsumerGroupMember(
            member_id=member.member_id,
            instance_id=member.instance_id,
            rack_id=member.rack_id,
            member_epoch=member.member_epoch,
            client_id=member.client_id,
            client_host=member.client_host,
            subscribed_topic_names=tuple(sorted(member.subscribed_topic_names)),
            # "" for a member without one (Kafka 4.4.0's member builder's default).
            subscribed_topic_regex=member.subscribed_topic_regex,
            assignment=topic_partitions(config, member.assigned),
            target_assignment=topic_partitions(
                config, group.target.get(member.member_id, NO_PARTITIONS)
            ),
            member_type=MEMBER_TYPE_CONSUMER if member.classic is None else MEMBER_TYPE_CLASSIC,
        )
        for _, member in sorted(group.members.items())
    )
    return DescribedConsumerGroup(
        ErrorCode.NONE,
        group.group_id,
        group_state=group.state.value,
        group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        assignor_name=preferred_assignor(config, group),
        members=members,
    )
