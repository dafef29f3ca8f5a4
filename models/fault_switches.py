"""How a group world applies a fault switch (the names are in `faults.py`, the catalog in
`bugs.py`): pure rewrites of what the specification receives or produces.

Each function takes what the correct specification saw or did and returns what the buggy Kafka
would have seen or done. The specification itself is never changed.
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec.assignment import Cluster, Subscription, TopicPartition
from groupspec.spec.consumer import ConsumerOutcome
from groupspec.spec.consumer.outcome import Send
from groupspec.spec.consumer_protocol import (
    SubscriptionDecodeError,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from groupspec.spec.group_state import PREPARING_REBALANCE
from groupspec.spec.requests import (
    JoinGroupRequest,
    OffsetCommitRequest,
    Request,
    SyncGroupAssignment,
    SyncGroupRequest,
)
from groupspec.spec.responses import JoinGroupResponse
from groupspec.spec.state import CoordinatorState, Group

from .world_state import GROUP_ID


def unfenced_commit(coordinator: CoordinatorState, request: Request) -> Request:
    """KAFKA-2555, KAFKA-9823: the coordinator does not fence an OffsetCommit by generation: it
    reads a commit carrying a generation as if it came from a current member at the current
    generation (a fenced member's commit goes through)."""
    group = coordinator.group(GROUP_ID)
    if (
        not isinstance(request, OffsetCommitRequest)
        or request.generation_id < 0
        or group is None
        or not group.members
    ):
        return request
    member_id = request.member_id
    if not group.has_member(member_id):
        member_id = group.members[0].member_id
    member = group.member(member_id)
    assert member is not None
    return replace(
        request,
        generation_id=group.generation_id,
        member_id=member_id,
        group_instance_id=member.group_instance_id,
    )


def keep_replaced_static_member(
    before: CoordinatorState, request: Request, after: CoordinatorState
) -> CoordinatorState:
    """KAFKA-8500: a static rejoin with an unknown member id in PreparingRebalance leaves the
    old member id in the group (the coordinator added a member instead of replacing one)."""
    old_group = before.group(GROUP_ID)
    new_group = after.group(GROUP_ID)
    if (
        not isinstance(request, JoinGroupRequest)
        or request.member_id
        or request.group_instance_id is None
        or old_group is None
        or new_group is None
        or old_group.state is not PREPARING_REBALANCE
    ):
        return after
    old_id = old_group.static_member_id(request.group_instance_id)
    if old_id is None or new_group.has_member(old_id):
        return after
    old_member = old_group.member(old_id)
    assert old_member is not None
    members = tuple(sorted((*new_group.members, old_member), key=lambda m: m.member_id))
    group: Group = replace(new_group, members=members)
    groups = tuple(group if g.group_id == GROUP_ID else g for g in after.groups)
    return replace(after, groups=groups)


def corrupt_owned_partitions(outcome: ConsumerOutcome, cluster: Cluster) -> ConsumerOutcome:
    """KAFKA-12984: a consumer that owns anything claims every partition of its subscription
    in its JoinGroup metadata, at its current generation (corrupt ownedPartitions)."""
    sends = []
    changed = False
    for send in outcome.sends:
        request = send.request
        if isinstance(request, JoinGroupRequest):
            protocols = []
            for protocol in request.protocols:
                try:
                    subscription = decode_subscription(protocol.metadata)
                except SubscriptionDecodeError:
                    protocols.append(protocol)
                    continue
                if subscription.owned_partitions:
                    claimed = tuple(cluster.partitions(subscription.topics))
                    if claimed != subscription.owned_partitions:
                        corrupt = Subscription.of(
                            subscription.topics,
                            claimed,
                            subscription.generation,
                            subscription.rack,
                            subscription.user_data,
                        )
                        protocol = replace(protocol, metadata=encode_subscription(corrupt))
                        changed = True
                protocols.append(protocol)
            request = replace(request, protocols=tuple(protocols))
        sends.append(Send(send.correlation_id, request))
    return replace(outcome, sends=tuple(sends)) if changed else outcome


def no_withholding(
    outcome: ConsumerOutcome, body: JoinGroupResponse, cluster: Cluster
) -> ConsumerOutcome:
    """KIP-429 hazard: the cooperative leader gives every partition its assignor withheld (a
    partition moving to another member) straight to the least-loaded member not claiming it,
    in the same rebalance that revokes it from its current owner."""
    subscriptions: dict[str, Subscription] = {}
    for member in body.members:
        try:
            subscriptions[member.member_id] = decode_subscription(member.metadata)
        except SubscriptionDecodeError:
            return outcome
    sends = []
    changed = False
    for send in outcome.sends:
        request = send.request
        if isinstance(request, SyncGroupRequest) and request.assignments:
            assigned: dict[str, list[TopicPartition]] = {}
            user_data: dict[str, bytes | None] = {}
            for entry in request.assignments:
                partitions, data = decode_assignment(entry.assignment)
                assigned[entry.member_id] = list(partitions)
                user_data[entry.member_id] = data
            topics = {topic for s in subscriptions.values() for topic in s.topics}
            given = {p for partitions in assigned.values() for p in partitions}
            for partition in cluster.partitions(topics):
                if partition in given:
                    continue
                takers = [
                    member_id
                    for member_id in sorted(assigned)
                    if member_id in subscriptions
                    and partition.topic in subscriptions[member_id].topics
                    and partition not in subscriptions[member_id].owned_partitions
                ]
                if not takers:
                    continue
                taker = min(takers, key=lambda member_id: len(assigned[member_id]))
                assigned[taker].append(partition)
                changed = True
            entries = tuple(
                SyncGroupAssignment(
                    entry.member_id,
                    encode_assignment(
                        sorted(assigned[entry.member_id]), user_data[entry.member_id]
                    ),
                )
                for entry in request.assignments
            )
            request = replace(request, assignments=entries)
        sends.append(Send(send.correlation_id, request))
    return replace(outcome, sends=tuple(sends)) if changed else outcome
