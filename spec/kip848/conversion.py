"""Online conversion between a classic group and a consumer group (docs/protocol.md §12.15),
under group.consumer.migration.policy.

Kafka 4.3.0, `GroupMetadataManager.java`: `getOrMaybeCreateConsumerGroup` (an Empty classic group
is replaced, a non-empty one upgraded after `validateOnlineUpgrade`), `convertToConsumerGroup`
with `ConsumerGroup.fromClassicGroup` (`modern/consumer/ConsumerGroup.java`), and
`consumerGroupFenceMembers` with `validateOnlineDowngradeWithFencedMembers`,
`convertToClassicGroup` and `ClassicGroup.fromConsumerGroup` (`classic/ClassicGroup.java`).

What a conversion keeps: member ids, instance ids, rebalance and session timeouts, the classic
members' protocols, the generation as the epoch (and back), and each member's partitions: an
upgrade takes each classic member's last assignment as both its assignment and its target; a
downgrade gives each classic member its target and starts a rebalance.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import replace

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import PREPARING_REBALANCE, STABLE
from groupspec.vocabulary.requests import TopicPartition
from groupspec.vocabulary.responses import JoinGroupResponse, SyncGroupResponse

from ..consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    HIGHEST_ASSIGNMENT_VERSION,
    SubscriptionDecodeError,
    decode_assignment,
    decode_subscription,
    encode_assignment,
)
from ..rebalance import compute_subscribed_topics
from ..state import Group, JoinTimer, Member
from .fencing import fence_member
from .mixed_rules import (
    CG_CONVERT_DOWNGRADE,
    CG_CONVERT_DOWNGRADE_DISABLED,
    CG_CONVERT_DOWNGRADE_TOO_LARGE,
    CG_CONVERT_UPGRADE,
    CG_CONVERT_UPGRADE_DISABLED,
    CG_CONVERT_UPGRADE_NOT_CONSUMER_PROTOCOL,
    CG_CONVERT_UPGRADE_PARKED_ANSWERED,
    CG_CONVERT_UPGRADE_TOO_LARGE,
    CG_CONVERT_UPGRADE_UNREADABLE,
)
from .mixed_state import MixedState, MixedStep
from .state import (
    NO_ASSIGNMENT_TIMESTAMP,
    NO_PARTITIONS,
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    Partitions,
)

# What the client and the spec's classic side call the member that speaks for a client.
_CLIENT_ID = "consumer"
_CLIENT_HOST = "/127.0.0.1"


class UpgradeRefused(Exception):
    """validateOnlineUpgrade or fromClassicGroup refused: GROUP_ID_NOT_FOUND, nothing changes."""


def upgrade(step: MixedStep, classic: Group) -> ConsumerGroup:
    """The consumer group a non-empty classic group becomes (convertToConsumerGroup), or
    UpgradeRefused. The caller answers the parked requests (`answer_parked`)."""
    config = step.config
    if not config.upgrade_enabled:
        step.fire(CG_CONVERT_UPGRADE_DISABLED)
        raise UpgradeRefused(classic.group_id)
    if classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
        step.fire(CG_CONVERT_UPGRADE_NOT_CONSUMER_PROTOCOL)
        raise UpgradeRefused(classic.group_id)
    if len(classic.members) > config.max_size:
        step.fire(CG_CONVERT_UPGRADE_TOO_LARGE)
        raise UpgradeRefused(classic.group_id)
    try:
        members = tuple(_from_classic_member(step, classic, m) for m in classic.members)
    except (SubscriptionDecodeError, _CustomAssignorError):
        step.fire(CG_CONVERT_UPGRADE_UNREADABLE)
        raise UpgradeRefused(classic.group_id) from None
    step.fire(CG_CONVERT_UPGRADE)
    epoch = classic.generation_id
    group = ConsumerGroup(
        classic.group_id,
        group_epoch=epoch,
        assignment_epoch=epoch,
        assignment_timestamp_ms=NO_ASSIGNMENT_TIMESTAMP,
    )
    for member in members:
        assert member.classic is not None
        group = group.with_member(member)
        group = group.with_session_deadline(
            member.member_id, step.now_ms + member.classic.session_timeout_ms
        )
    group = group.with_target({m.member_id: m.assigned for m in members})
    # ConsumerGroup.fromClassicGroup sets the metadata hash of what the converted members
    # subscribe to (Kafka 4.3.0); the group epoch record carries it.
    return replace(group, metadata_hash=group.computed_metadata_hash(step.config))


def answer_parked(step: MixedStep, classic: Group) -> Group:
    """completeAllJoinFutures / completeAllSyncFutures with REBALANCE_IN_PROGRESS: the classic
    group with no request parked (Kafka clears the futures in memory, converted or not)."""
    parked = [m for m in classic.members if m.is_awaiting_join or m.is_awaiting_sync]
    if parked:
        step.fire(CG_CONVERT_UPGRADE_PARKED_ANSWERED)
    for member in parked:
        if member.awaiting_join is not None:
            step.respond_classic(
                member.awaiting_join,
                JoinGroupResponse(ErrorCode.REBALANCE_IN_PROGRESS, member_id=member.member_id),
            )
        if member.awaiting_sync is not None:
            step.respond_classic(
                member.awaiting_sync, SyncGroupResponse(ErrorCode.REBALANCE_IN_PROGRESS)
            )
        classic = classic.update_member(member.member_id, awaiting_join=None, awaiting_sync=None)
    return classic


class _CustomAssignorError(Exception):
    """A classic assignment carries assignor user data, which a consumer group would lose."""


def _from_classic_member(step: MixedStep, classic: Group, member: Member) -> ConsumerGroupMember:
    """fromClassicGroup for one member: Stable at the generation, its last assignment kept."""
    if classic.protocol_name is None:
        # Kafka reads protocolName().get(): a group in its first rebalance has none.
        raise SubscriptionDecodeError(f"group {classic.group_id} has no protocol yet")
    subscription = decode_subscription(member.metadata_for(classic.protocol_name))
    assigned: Partitions = NO_PARTITIONS
    if member.assignment != b"":
        partitions, user_data = decode_assignment(member.assignment)
        if user_data:
            raise _CustomAssignorError(member.member_id)
        assigned = frozenset(p for p in partitions if step.config.topic_named(p.topic) is not None)
    epoch = classic.generation_id
    return ConsumerGroupMember(
        member.member_id,
        instance_id=member.group_instance_id,
        rack_id=subscription.rack,
        rebalance_timeout_ms=member.rebalance_timeout_ms,
        subscribed_topic_names=frozenset(subscription.topics),
        member_epoch=epoch,
        previous_member_epoch=epoch,
        state=MemberState.STABLE,
        assigned=assigned,
        classic=ClassicMemberMetadata(member.session_timeout_ms, member.protocols),
    )


def fence_members(
    step: MixedStep, state: MixedState, group: ConsumerGroup, member_ids: tuple[str, ...]
) -> MixedState:
    """consumerGroupFenceMembers: downgrade when only classic members would remain and the
    policy and group.classic.max.size allow it; else remove the members, one epoch bump."""
    fenced = sorted(set(member_ids))
    if not fenced:
        return state
    remaining = [m for m in group.iter_members() if m.member_id not in fenced]
    if remaining and all(m.uses_classic_protocol for m in remaining):
        if not step.config.downgrade_enabled:
            step.fire(CG_CONVERT_DOWNGRADE_DISABLED)
        elif len(remaining) > step.classic_config.group_max_size:
            step.fire(CG_CONVERT_DOWNGRADE_TOO_LARGE)
        else:
            step.fire(CG_CONVERT_DOWNGRADE)
            return state.with_classic_group(downgrade(step, group, remaining))
    removed = group
    for member_id in fenced[:-1]:
        removed = removed.without_member(member_id)
    return state.with_consumer_group(fence_member(step, removed, fenced[-1]))


def downgrade(
    step: MixedStep,
    group: ConsumerGroup,
    remaining: list[ConsumerGroupMember],
    rebalance: bool = True,
) -> Group:
    """ClassicGroup.fromConsumerGroup, then prepareRebalance unless `rebalance` is False: a
    classic group at generation = the group epoch, each member's target as its assignment,
    every member to rejoin (or, without a rebalance, Stable with those assignments: a static
    replacement whose target is up to date, convertToClassicGroup)."""
    members = []
    for member in remaining:
        assert member.classic is not None
        members.append(
            Member(
                member.member_id,
                member.instance_id,
                _CLIENT_ID,
                _CLIENT_HOST,
                member.rebalance_timeout_ms,
                member.classic.session_timeout_ms,
                CONSUMER_PROTOCOL_TYPE,
                member.classic.protocols,
                heartbeat_deadline_ms=step.now_ms + member.classic.session_timeout_ms,
            )
        )
    classic = Group(
        group.group_id,
        state=STABLE,
        generation_id=group.group_epoch,
        protocol_type=CONSUMER_PROTOCOL_TYPE,
        members=tuple(sorted(members, key=lambda m: m.member_id)),
        current_state_timestamp_ms=step.now_ms,
    )
    # Kafka's first member added leads; members are added in hash-map order: any may lead.
    leader = step.choose("leader after downgrade", [m.member_id for m in classic.members])
    protocol = _vote(step, classic)
    classic = replace(classic, leader_id=leader, protocol_name=protocol)
    classic = replace(classic, subscribed_topics=compute_subscribed_topics(classic))
    for classic_member in classic.members:
        metadata = classic_member.metadata_for(protocol)
        encoded = encode_assignment(
            sorted(group.target_of(classic_member.member_id)), version=_assignment_version(metadata)
        )
        classic = classic.update_member(classic_member.member_id, assignment=encoded)
    if not rebalance:
        return classic
    classic = classic.transition_to(PREPARING_REBALANCE, step.now_ms)
    return replace(classic, join_timer=JoinTimer(step.now_ms + classic.rebalance_timeout_ms()))


def _vote(step: MixedStep, group: Group) -> str:
    """ClassicGroup.selectProtocol: each member's first candidate; the most votes win, ties open."""
    candidates = group.candidate_protocols()
    votes = Counter(member.vote(candidates) for member in group.members)
    most = max(votes.values())
    return step.choose("protocol vote", sorted(n for n, c in votes.items() if c == most))


def _assignment_version(metadata: bytes) -> int:
    """The assignment version matching the member's subscription version (prepareAssignment)."""
    if len(metadata) < 2:
        return HIGHEST_ASSIGNMENT_VERSION
    (version,) = struct.unpack_from(">h", metadata)
    return max(0, min(int(version), HIGHEST_ASSIGNMENT_VERSION))


def assignment_bytes(member: ConsumerGroupMember, partitions: Partitions) -> bytes:
    """`partitions` as a SyncGroup assignment in the version of the member's first protocol."""
    assert member.classic is not None
    metadata = member.classic.protocols[0].metadata if member.classic.protocols else b""
    ordered: list[TopicPartition] = sorted(partitions)
    return encode_assignment(ordered, version=_assignment_version(metadata))
