"""Classic-protocol members inside a consumer-protocol group (docs/protocol.md §12.15):
JoinGroup, SyncGroup, Heartbeat and LeaveGroup translated onto the member's epoch, and the
classic member's join and sync timeouts.

Kafka 4.3.0, `GroupMetadataManager.java`: `classicGroupJoinToConsumerGroup`,
`classicGroupSyncToConsumerGroup`, `classicGroupHeartbeatToConsumerGroup`,
`classicGroupLeaveToConsumerGroup`, `validateConsumerGroupMember`, the `throwIf*` checks they
call, and `scheduleConsumerGroupJoinTimeoutIfAbsent` / `scheduleConsumerGroupSyncTimeout`.

A classic member is a consumer-group member like any other (it counts in the target assignment
and in partition ownership) whose JoinGroup plays the part of a heartbeat with its owned
partitions: it is reconciled there, and the generation it gets is its member epoch. It learns
its partitions from SyncGroup, and a Heartbeat answers REBALANCE_IN_PROGRESS whenever it should
rejoin to move on. A static classic member (a group instance id) joins without a member id
round and takes the place of the instance's holder on a restart; a replacement of the last
member that does not speak the classic protocol downgrades the group (KAFKA-19546's fix).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    RequestRef,
    SyncGroupRequest,
)
from groupspec.vocabulary.responses import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupMemberResponse,
    LeaveGroupResponse,
    SyncGroupResponse,
)

from ..assignment import Subscription
from ..consumer_protocol import CONSUMER_PROTOCOL_TYPE, SubscriptionDecodeError, decode_subscription
from ..errors import UnknownApiError
from ..events import EventNotEnabledError
from ..join import generate_member_id
from ..rules import Rule
from .conversion import assignment_bytes, downgrade, fence_members
from .heartbeat import _maybe_reconcile, _maybe_update_target
from .mixed_rules import (
    CG_CLASSIC_FENCED_INSTANCE_ID,
    CG_CLASSIC_HEARTBEAT_OK,
    CG_CLASSIC_HEARTBEAT_REJOIN,
    CG_CLASSIC_ILLEGAL_GENERATION,
    CG_CLASSIC_JOIN_ANSWERED,
    CG_CLASSIC_JOIN_GROUP_MAX_SIZE_REACHED,
    CG_CLASSIC_JOIN_INCONSISTENT_PROTOCOL,
    CG_CLASSIC_JOIN_KNOWN_MEMBER,
    CG_CLASSIC_JOIN_MEMBER_ID_REQUIRED,
    CG_CLASSIC_JOIN_NEW_MEMBER,
    CG_CLASSIC_JOIN_TIMEOUT_ARMED,
    CG_CLASSIC_LEAVE,
    CG_CLASSIC_NOT_CLASSIC_MEMBER,
    CG_CLASSIC_STATIC_MEMBER_REPLACED,
    CG_CLASSIC_STATIC_NEW_MEMBER,
    CG_CLASSIC_SYNC_ASSIGNMENT,
    CG_CLASSIC_SYNC_INCONSISTENT_PROTOCOL,
    CG_CLASSIC_SYNC_REBALANCE_IN_PROGRESS,
    CG_CLASSIC_TIMER_JOIN_EXPIRED,
    CG_CLASSIC_TIMER_SYNC_EXPIRED,
    CG_CLASSIC_UNKNOWN_MEMBER,
    CG_CONVERT_DOWNGRADE_DISABLED,
    CG_CONVERT_DOWNGRADE_ON_REPLACEMENT,
    CG_CONVERT_DOWNGRADE_ON_REPLACEMENT_REBALANCE,
    CG_CONVERT_DOWNGRADE_TOO_LARGE,
)
from .mixed_state import MixedState, MixedStep
from .reconciliation import MemberFencedError, OwnedTopic
from .rules import CG_HEARTBEAT_FENCED_MEMBER_EPOCH, CG_HEARTBEAT_SUBSCRIPTION_CHANGED
from .state import ClassicMemberMetadata, ConsumerGroup, ConsumerGroupMember, MemberState

# JoinGroup v4 is the first whose dynamic members must first ask for a member id (KIP-394).
_MEMBER_ID_REQUIRED_VERSION = 4


@dataclass(frozen=True)
class ClassicJoinTimeoutExpired:
    """A classic member of a consumer group did not rejoin within its rebalance timeout."""

    group_id: str
    member_id: str


@dataclass(frozen=True)
class ClassicSyncTimeoutExpired:
    """A classic member of a consumer group did not sync within its rebalance timeout."""

    group_id: str
    member_id: str


class _Refused(Exception):
    def __init__(self, error: ErrorCode) -> None:
        super().__init__(error.name)
        self.error = error


def _refuse(step: MixedStep, rule: Rule, error: ErrorCode) -> _Refused:
    step.fire(rule)
    return _Refused(error)


# JoinGroup ----------------------------------------------------------------------------------


def classic_join(
    step: MixedStep,
    state: MixedState,
    ref: RequestRef,
    request: JoinGroupRequest,
    group: ConsumerGroup,
) -> MixedState:
    """classicGroupJoinToConsumerGroup: join (or rejoin) a non-empty consumer group."""
    try:
        return _join(step, state, ref, request, group)
    except _Refused as refused:
        step.respond_classic(ref, JoinGroupResponse(refused.error, member_id=request.member_id))
        return state


def _join(
    step: MixedStep,
    state: MixedState,
    ref: RequestRef,
    request: JoinGroupRequest,
    group: ConsumerGroup,
) -> MixedState:
    member_id = request.member_id
    unknown = member_id == ""
    if unknown:
        # One counter for the ids JoinGroup hands out, whichever kind of group answers it
        # (Kafka's are random UUIDs: they never collide across a conversion).
        sequence = state.classic.next_member_seq
        member_id = generate_member_id(request, sequence)
        state = replace(state, classic=replace(state.classic, next_member_seq=sequence + 1))
    consumer = state.consumer
    members = group.members
    if len(members) >= step.config.max_size and member_id not in members:
        raise _refuse(
            step, CG_CLASSIC_JOIN_GROUP_MAX_SIZE_REACHED, ErrorCode.GROUP_MAX_SIZE_REACHED
        )
    if not _supports_classic_protocols(group, request):
        raise _refuse(
            step, CG_CLASSIC_JOIN_INCONSISTENT_PROTOCOL, ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        )
    instance_id = request.group_instance_id
    if unknown and instance_id is None and request.api_version >= _MEMBER_ID_REQUIRED_VERSION:
        step.fire(CG_CLASSIC_JOIN_MEMBER_ID_REQUIRED)
        step.respond_classic(ref, JoinGroupResponse(ErrorCode.MEMBER_ID_REQUIRED, member_id))
        return state
    try:
        subscription = decode_subscription(request.protocols[0].metadata)
    except SubscriptionDecodeError as error:
        # Kafka throws IllegalStateException: an UNKNOWN_SERVER_ERROR the spec does not model.
        raise UnknownApiError(
            f"JoinGroup to a consumer group: bad subscription ({error})"
        ) from None

    # The static member this one may replace, as the group holds it before the join.
    replaced = None if instance_id is None else group.static_member(instance_id)
    if instance_id is None:
        member = group.member(member_id)
        if member is None:
            step.fire(CG_CLASSIC_JOIN_NEW_MEMBER)
            member = ConsumerGroupMember(member_id)
        else:
            step.fire(CG_CLASSIC_JOIN_KNOWN_MEMBER)
    else:
        member, group = _static_member(step, group, member_id, instance_id, unknown)
    downgrading = replaced is not None and _downgrade_allowed(step, group, replaced)
    session_timeout = request.session_timeout_ms
    rebalance_timeout = (
        request.rebalance_timeout_ms if request.rebalance_timeout_ms != -1 else session_timeout
    )
    updated = replace(
        member,
        rack_id=subscription.rack if subscription.rack is not None else member.rack_id,
        rebalance_timeout_ms=rebalance_timeout,
        subscribed_topic_names=frozenset(subscription.topics),
        classic=ClassicMemberMetadata(session_timeout, request.protocols),
    )
    subscription_changed = updated.subscribed_topic_names != member.subscribed_topic_names
    group_epoch = group.group_epoch
    if subscription_changed:
        step.fire(CG_HEARTBEAT_SUBSCRIPTION_CHANGED)
        group_epoch += 1
    owners = group
    group = group.with_member(updated).with_group_epoch(group_epoch, step.config)
    if downgrading:
        return _downgrade_on_replacement(
            step, state, ref, request, group, updated, subscription, subscription_changed, owners
        )
    group = _maybe_update_target(step, group, updated)
    owned = _owned_topics(step, subscription)
    try:
        reconciled = _maybe_reconcile(step, group, updated, subscription_changed, owned, owners)
    except MemberFencedError:
        step.fire(CG_HEARTBEAT_FENCED_MEMBER_EPOCH)
        raise _Refused(ErrorCode.FENCED_MEMBER_EPOCH) from None
    group = group.with_member(reconciled)

    step.fire(CG_CLASSIC_JOIN_ANSWERED)
    group = _without_timer(group, "classic_join_deadlines", member_id)
    group = group.with_session_deadline(member_id, step.now_ms + session_timeout)
    group = _with_timer(group, "classic_sync_deadlines", member_id, step.now_ms + rebalance_timeout)
    step.respond_classic(
        ref,
        JoinGroupResponse(
            ErrorCode.NONE,
            member_id=member_id,
            generation_id=reconciled.member_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=request.protocols[0].name,
        ),
    )
    return state.with_consumer(consumer.with_group(group))


def _static_member(
    step: MixedStep, group: ConsumerGroup, member_id: str, instance_id: str, unknown: bool
) -> tuple[ConsumerGroupMember, ConsumerGroup]:
    """getOrMaybeSubscribeStaticConsumerGroupMember for a classic join: a join without member id
    creates the static member or replaces the one holding the instance id (a classic member
    need not wait for the old one to leave); a rejoin must be the holder's."""
    holder = group.static_member(instance_id)
    if unknown:
        if holder is None:
            step.fire(CG_CLASSIC_STATIC_NEW_MEMBER)
            return ConsumerGroupMember(member_id, instance_id=instance_id), group
        step.fire(CG_CLASSIC_STATIC_MEMBER_REPLACED)
        successor = replace(holder, member_id=member_id, member_epoch=0, previous_member_epoch=0)
        # replaceMember: the new id takes the old one's target; the old id's timers stay armed
        # and find no member when they fire.
        target = group.target_of(holder.member_id)
        session = group.session_deadlines
        rebalance = group.rebalance_deadlines
        group = group.without_member(holder.member_id)
        group = replace(group, session_deadlines=session, rebalance_deadlines=rebalance)
        targets = group.target
        targets[member_id] = target
        return successor, group.with_member(successor).with_target(targets)
    if holder is None:
        raise _refuse(step, CG_CLASSIC_UNKNOWN_MEMBER, ErrorCode.UNKNOWN_MEMBER_ID)
    if holder.member_id != member_id:
        raise _refuse(step, CG_CLASSIC_FENCED_INSTANCE_ID, ErrorCode.FENCED_INSTANCE_ID)
    step.fire(CG_CLASSIC_JOIN_KNOWN_MEMBER)
    return holder, group


def _downgrade_allowed(
    step: MixedStep, group: ConsumerGroup, replaced: ConsumerGroupMember
) -> bool:
    """validateOnlineDowngradeWithReplacedMember: every member but the replaced one speaks the
    classic protocol, the policy allows a downgrade, and the group fits group.classic.max.size.
    `group` is the group after the replacement (the same size)."""
    others = [m for m in group.iter_members() if m.instance_id != replaced.instance_id]
    if not all(m.uses_classic_protocol for m in others):
        return False
    if not step.config.downgrade_enabled:
        step.fire(CG_CONVERT_DOWNGRADE_DISABLED)
        return False
    if len(group.members_by_id) > step.classic_config.group_max_size:
        step.fire(CG_CONVERT_DOWNGRADE_TOO_LARGE)
        return False
    return True


def _downgrade_on_replacement(
    step: MixedStep,
    state: MixedState,
    ref: RequestRef,
    request: JoinGroupRequest,
    group: ConsumerGroup,
    joining: ConsumerGroupMember,
    subscription: Subscription,
    subscription_changed: bool,
    owners: ConsumerGroup,
) -> MixedState:
    """classicGroupJoinToConsumerGroup's downgrade (Kafka 4.3.0): with the target up to date the
    newcomer is reconciled to it and the classic group is Stable with those assignments; with a
    subscription that moved the group epoch the classic group prepares a rebalance instead, the
    newcomer left at epoch 0 (KAFKA-19546)."""
    rebalance = group.assignment_epoch < group.group_epoch
    if rebalance:
        step.fire(CG_CONVERT_DOWNGRADE_ON_REPLACEMENT_REBALANCE)
    else:
        step.fire(CG_CONVERT_DOWNGRADE_ON_REPLACEMENT)
        owned = _owned_topics(step, subscription)
        try:
            joining = _maybe_reconcile(step, group, joining, subscription_changed, owned, owners)
        except MemberFencedError:
            step.fire(CG_HEARTBEAT_FENCED_MEMBER_EPOCH)
            raise _Refused(ErrorCode.FENCED_MEMBER_EPOCH) from None
        group = group.with_member(joining)
    step.fire(CG_CLASSIC_JOIN_ANSWERED)
    step.respond_classic(
        ref,
        JoinGroupResponse(
            ErrorCode.NONE,
            member_id=joining.member_id,
            generation_id=joining.member_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=request.protocols[0].name,
        ),
    )
    # Kafka converts the group as memory holds it before the step (a downgrading join's records
    # are not replayed): the classic generation is the group epoch before any bump.
    converted = replace(group, group_epoch=owners.group_epoch)
    classic = downgrade(step, converted, list(converted.iter_members()), rebalance=rebalance)
    return state.with_classic_group(classic)


def _owned_topics(step: MixedStep, subscription: Subscription) -> tuple[OwnedTopic, ...]:
    """The subscription's owned partitions by topic, for the topics the coordinator knows."""
    return tuple(
        OwnedTopic(
            topic, frozenset(p.partition for p in subscription.owned_partitions if p.topic == topic)
        )
        for topic in sorted({p.topic for p in subscription.owned_partitions})
        if step.config.topic_named(topic) is not None
    )


def _supports_classic_protocols(group: ConsumerGroup, request: JoinGroupRequest) -> bool:
    """ConsumerGroup.supportsClassicProtocols: the "consumer" type, and a protocol name every
    classic member offers (any name when the group has none)."""
    if request.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return False
    names = {protocol.name for protocol in request.protocols}
    classic = [m.classic for m in group.iter_members() if m.classic is not None]
    return any(all(name in {p.name for p in c.protocols} for c in classic) for name in names)


# SyncGroup and Heartbeat ---------------------------------------------------------------------


def _validated_member(
    step: MixedStep, group: ConsumerGroup, member_id: str, instance_id: str | None
) -> ConsumerGroupMember:
    """validateConsumerGroupMember: the member by instance id (when given) or by member id."""
    if instance_id is None:
        member = group.member(member_id)
        if member is None:
            raise _refuse(step, CG_CLASSIC_UNKNOWN_MEMBER, ErrorCode.UNKNOWN_MEMBER_ID)
        return member
    member = group.static_member(instance_id)
    if member is None:
        raise _refuse(step, CG_CLASSIC_UNKNOWN_MEMBER, ErrorCode.UNKNOWN_MEMBER_ID)
    if member.member_id != member_id:
        raise _refuse(step, CG_CLASSIC_FENCED_INSTANCE_ID, ErrorCode.FENCED_INSTANCE_ID)
    return member


def _classic_member_at(
    step: MixedStep,
    group: ConsumerGroup,
    member_id: str,
    instance_id: str | None,
    generation_id: int,
) -> ConsumerGroupMember:
    member = _validated_member(step, group, member_id, instance_id)
    if not member.uses_classic_protocol:
        raise _refuse(step, CG_CLASSIC_NOT_CLASSIC_MEMBER, ErrorCode.UNKNOWN_MEMBER_ID)
    if member.member_epoch != generation_id:
        raise _refuse(step, CG_CLASSIC_ILLEGAL_GENERATION, ErrorCode.ILLEGAL_GENERATION)
    return member


def classic_sync(
    step: MixedStep,
    state: MixedState,
    ref: RequestRef,
    request: SyncGroupRequest,
    group: ConsumerGroup,
) -> MixedState:
    """classicGroupSyncToConsumerGroup: the member's assigned partitions, if it is up to date."""
    try:
        member = _classic_member_at(
            step, group, request.member_id, request.group_instance_id, request.generation_id
        )
        assert member.classic is not None
        protocol_name = member.classic.protocols[0].name
        if (
            request.protocol_type is not None and request.protocol_type != CONSUMER_PROTOCOL_TYPE
        ) or (request.protocol_name is not None and request.protocol_name != protocol_name):
            raise _refuse(
                step, CG_CLASSIC_SYNC_INCONSISTENT_PROTOCOL, ErrorCode.INCONSISTENT_GROUP_PROTOCOL
            )
        if (
            group.assignment_epoch > member.member_epoch
            and member.state is not MemberState.UNREVOKED_PARTITIONS
        ):
            step.fire(CG_CLASSIC_SYNC_REBALANCE_IN_PROGRESS)
            group = _arm_join_timeout(step, group, member)
            step.respond_classic(ref, SyncGroupResponse(ErrorCode.REBALANCE_IN_PROGRESS))
            return state.with_consumer_group(group)
    except _Refused as refused:
        step.respond_classic(ref, SyncGroupResponse(refused.error))
        return state
    step.fire(CG_CLASSIC_SYNC_ASSIGNMENT)
    group = _without_timer(group, "classic_sync_deadlines", member.member_id)
    group = group.with_session_deadline(
        member.member_id, step.now_ms + member.classic.session_timeout_ms
    )
    step.respond_classic(
        ref,
        SyncGroupResponse(
            ErrorCode.NONE,
            request.protocol_type,
            request.protocol_name,
            assignment_bytes(member, member.assigned),
        ),
    )
    return state.with_consumer_group(group)


def classic_heartbeat(
    step: MixedStep,
    state: MixedState,
    ref: RequestRef,
    request: HeartbeatRequest,
    group: ConsumerGroup,
) -> MixedState:
    """classicGroupHeartbeatToConsumerGroup: NONE, or REBALANCE_IN_PROGRESS to make it rejoin."""
    try:
        member = _classic_member_at(
            step, group, request.member_id, request.group_instance_id, request.generation_id
        )
    except _Refused as refused:
        step.respond_classic(ref, HeartbeatResponse(refused.error))
        return state
    assert member.classic is not None
    group = group.with_session_deadline(
        member.member_id, step.now_ms + member.classic.session_timeout_ms
    )
    if (
        member.member_epoch < group.assignment_epoch
        or member.state is MemberState.UNREVOKED_PARTITIONS
        or (
            member.state is MemberState.UNRELEASED_PARTITIONS
            and not _waiting_on_unreleased(group, member)
        )
    ):
        step.fire(CG_CLASSIC_HEARTBEAT_REJOIN)
        group = _arm_join_timeout(step, group, member)
        step.respond_classic(ref, HeartbeatResponse(ErrorCode.REBALANCE_IN_PROGRESS))
    else:
        step.fire(CG_CLASSIC_HEARTBEAT_OK)
        step.respond_classic(ref, HeartbeatResponse(ErrorCode.NONE))
    return state.with_consumer_group(group)


def _waiting_on_unreleased(group: ConsumerGroup, member: ConsumerGroupMember) -> bool:
    """ConsumerGroup.waitingOnUnreleasedPartition: a target partition it lacks is still owned."""
    return any(
        partition not in member.assigned and group.owner_of(partition) is not None
        for partition in group.target_of(member.member_id)
    )


# LeaveGroup ----------------------------------------------------------------------------------


def classic_leave(
    step: MixedStep,
    state: MixedState,
    ref: RequestRef,
    request: LeaveGroupRequest,
    group: ConsumerGroup,
) -> MixedState:
    """classicGroupLeaveToConsumerGroup: fence every valid entry's member at once."""
    results: list[LeaveGroupMemberResponse] = []
    leaving: list[str] = []
    for identity in request.members:
        try:
            if identity.group_instance_id is None:
                member = _validated_member(step, group, identity.member_id, None)
            else:
                member = _validated_member(
                    step,
                    group,
                    identity.member_id or _holder(group, identity.group_instance_id),
                    identity.group_instance_id,
                )
        except _Refused as refused:
            results.append(
                LeaveGroupMemberResponse(
                    identity.member_id, identity.group_instance_id, refused.error
                )
            )
            continue
        results.append(
            LeaveGroupMemberResponse(identity.member_id, identity.group_instance_id, ErrorCode.NONE)
        )
        leaving.append(member.member_id)
    if leaving:
        step.fire(CG_CLASSIC_LEAVE)
    step.respond_classic(ref, LeaveGroupResponse(ErrorCode.NONE, tuple(results)))
    return fence_members(step, state, group, tuple(leaving))


def _holder(group: ConsumerGroup, instance_id: str) -> str:
    """The member id holding `instance_id` (an administrative leave names no member id)."""
    member = group.static_member(instance_id)
    return member.member_id if member is not None else ""


# Timers --------------------------------------------------------------------------------------


def classic_member_timers(
    state: MixedState,
) -> tuple[tuple[ClassicJoinTimeoutExpired | ClassicSyncTimeoutExpired, int], ...]:
    """Every armed join and sync timeout of a classic member, with its deadline."""
    timers: list[tuple[ClassicJoinTimeoutExpired | ClassicSyncTimeoutExpired, int]] = []
    for group in state.consumer.iter_groups():
        for member_id, deadline in group.classic_join_deadlines:
            timers.append((ClassicJoinTimeoutExpired(group.group_id, member_id), deadline))
        for member_id, deadline in group.classic_sync_deadlines:
            timers.append((ClassicSyncTimeoutExpired(group.group_id, member_id), deadline))
    return tuple(timers)


def on_classic_timeout(
    step: MixedStep, state: MixedState, event: ClassicJoinTimeoutExpired | ClassicSyncTimeoutExpired
) -> MixedState:
    """consumerGroupFenceMemberOperation: the member failed to rejoin or sync in time."""
    group = state.consumer.group(event.group_id)
    join = isinstance(event, ClassicJoinTimeoutExpired)
    field_name = "classic_join_deadlines" if join else "classic_sync_deadlines"
    if group is None or event.member_id not in dict(getattr(group, field_name)):
        raise EventNotEnabledError(f"{event}: not armed")
    # fencing cancels every timer of the member; the member is present while one is armed.
    step.fire(CG_CLASSIC_TIMER_JOIN_EXPIRED if join else CG_CLASSIC_TIMER_SYNC_EXPIRED)
    return fence_members(step, state, group, (event.member_id,))


# Timer bookkeeping ---------------------------------------------------------------------------


def _arm_join_timeout(
    step: MixedStep, group: ConsumerGroup, member: ConsumerGroupMember
) -> ConsumerGroup:
    """scheduleConsumerGroupJoinTimeoutIfAbsent."""
    if member.member_id in dict(group.classic_join_deadlines):
        return group
    step.fire(CG_CLASSIC_JOIN_TIMEOUT_ARMED)
    deadline = step.now_ms + member.rebalance_timeout_ms
    return _with_timer(group, "classic_join_deadlines", member.member_id, deadline)


def _with_timer(
    group: ConsumerGroup, field_name: str, member_id: str, deadline: int
) -> ConsumerGroup:
    deadlines = dict(getattr(group, field_name))
    deadlines[member_id] = deadline
    return _set_timers(group, field_name, tuple(sorted(deadlines.items())))


def _without_timer(group: ConsumerGroup, field_name: str, member_id: str) -> ConsumerGroup:
    kept = tuple(e for e in getattr(group, field_name) if e[0] != member_id)
    return _set_timers(group, field_name, kept)


def _set_timers(
    group: ConsumerGroup, field_name: str, deadlines: tuple[tuple[str, int], ...]
) -> ConsumerGroup:
    if field_name == "classic_join_deadlines":
        return replace(group, classic_join_deadlines=deadlines)
    return replace(group, classic_sync_deadlines=deadlines)
