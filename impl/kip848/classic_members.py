"""Classic-protocol members inside a consumer-protocol group: JoinGroup, SyncGroup, Heartbeat
and LeaveGroup translated onto the member's epoch (Kafka 4.3.0's GroupMetadataManager
`classicGroupJoinToConsumerGroup`, `classicGroupSyncToConsumerGroup`,
`classicGroupHeartbeatToConsumerGroup`, `classicGroupLeaveToConsumerGroup`; the twin of
spec/kip848/classic_members.py).

A classic member counts in the target assignment and in partition ownership like any other;
its JoinGroup plays the part of a heartbeat reporting its owned partitions (from its
subscription): it is reconciled there and the generation it gets is its member epoch. SyncGroup
hands it its assigned partitions, and Heartbeat answers REBALANCE_IN_PROGRESS whenever it must
rejoin to move on. A member that does not sync after joining, or does not rejoin when told to,
is fenced after its rebalance timeout.

Only non-empty consumer groups come here (an Empty one becomes a classic group on a JoinGroup:
the server's router decides). A static classic member (a JoinGroup with a group instance id)
gets no MEMBER_ID_REQUIRED round: its join without member id creates the static member, or
replaces the member holding the instance id (consumer-protocol or classic, left or not: the new
id takes its place and target at epoch 0), and its rejoin with a member id must be the
holder's (UNKNOWN_MEMBER_ID when nobody holds the instance id, FENCED_INSTANCE_ID when another
id does). Not served: the downgrade of a group left with classic members only back to a
classic group (Kafka's migration policy "disabled", which serve follows: no online
conversion), a replacement of the last consumer-protocol member included.
"""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    SyncGroupRequest,
)
from groupspec.vocabulary.responses import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupMemberResponse,
    LeaveGroupResponse,
    SyncGroupResponse,
)

from ..consumer_protocol import CONSUMER_PROTOCOL_TYPE, encode_assignment, subscription_fields
from ..errors import UnknownRequestError
from ..state import Ref
from .fencing import fence_member
from .heartbeat import Refused, _maybe_update_target
from .reconcile import MemberFenced, reconcile
from .runtime import CLASSIC_JOIN, CLASSIC_SYNC, Runtime
from .state import NO_PARTITIONS, ClassicMetadata, Group, Member, MemberState

# JoinGroup v4 is the first whose new dynamic members must first ask for a member id (KIP-394).
MEMBER_ID_REQUIRED_VERSION = 4


def _group(rt: Runtime, group_id: str) -> Group:
    group = rt.groups.get(group_id)
    if group is None or not group.members:
        raise UnknownRequestError(
            f"a classic request for {group_id!r}, which is not a non-empty consumer group"
        )
    return group


def classic_join(rt: Runtime, ref: Ref, request: JoinGroupRequest) -> None:
    """JoinGroup to a non-empty consumer group: join or rejoin as a classic member (static
    when it names a group instance id)."""
    group = _group(rt, request.group_id)
    try:
        _join(rt, ref, request, group)
    except Refused as refused:
        rt.respond(ref, JoinGroupResponse(refused.error, member_id=request.member_id))


def _supports_classic_protocols(group: Group, request: JoinGroupRequest) -> bool:
    """The "consumer" type, and a protocol name every classic member offers."""
    if request.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return False
    offered = [
        {p.name for p in m.classic.protocols}
        for m in group.members.values()
        if m.classic is not None
    ]
    return any(all(p.name in names for names in offered) for p in request.protocols)


def _join(rt: Runtime, ref: Ref, request: JoinGroupRequest, group: Group) -> None:
    config = rt.config
    member_id = request.member_id
    unknown = member_id == ""
    if len(group.members) >= config.max_size and (unknown or member_id not in group.members):
        raise Refused(ErrorCode.GROUP_MAX_SIZE_REACHED)
    if not _supports_classic_protocols(group, request):
        raise Refused(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    instance_id = request.group_instance_id
    if unknown:
        # Spelled as the specification spells classic ids (spec/join.py): the instance id of
        # a static member, else the client id, a dash and a unique part.
        member_id = rt.new_classic_member_id(
            request.client_id if instance_id is None else instance_id
        )
    if unknown and instance_id is None and request.api_version >= MEMBER_ID_REQUIRED_VERSION:
        # A static member gets no MEMBER_ID_REQUIRED round.
        rt.respond(ref, JoinGroupResponse(ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id))
        return
    fields = subscription_fields(request.protocols[0].metadata)
    if fields is None:
        raise Refused(ErrorCode.UNKNOWN_SERVER_ERROR)
    topics, owned_partitions, rack = fields
    owned_topics = sorted({topic for topic, _ in owned_partitions})
    owned = tuple(
        (topic, frozenset(p for t, p in owned_partitions if t == topic))
        for topic in owned_topics
        if config.topic_named(topic) is not None
    )
    # The member joining, or (a static join without member id) the one it replaces.
    member = (
        group.members.get(member_id)
        if instance_id is None
        else _static_holder(group, member_id, instance_id, unknown)
    )
    if member is not None and member.state is MemberState.UNKNOWN and owned:
        raise Refused(ErrorCode.FENCED_MEMBER_EPOCH)

    # Nothing refuses from here on.
    if member is None:
        member = Member(member_id)
        if instance_id is not None:
            member.instance_id = instance_id
        group.add(member)
    elif member.member_id != member_id:
        _replace_static_member(group, member, member_id)
    session_timeout = request.session_timeout_ms
    member.client_id, member.client_host = request.client_id, request.client_host
    if rack is not None:
        member.rack_id = rack
    member.rebalance_timeout_ms = (
        request.rebalance_timeout_ms if request.rebalance_timeout_ms != -1 else session_timeout
    )
    member.classic = ClassicMetadata(session_timeout, request.protocols)
    subscribed = frozenset(topics)
    subscription_changed = subscribed != member.subscribed_topic_names
    if subscription_changed:
        group.set_subscription(member, subscribed, member.subscribed_topic_regex)
        group.bump_group_epoch(rt.config)
    if group.assignment_epoch < group.group_epoch:
        _maybe_update_target(rt, group)
    if subscription_changed or not member.is_reconciled_to(group.assignment_epoch):
        known = frozenset(t for t in member.subscribed_topic_names if config.topic_named(t))
        try:
            reconciled = reconcile(
                member,
                group.assignment_epoch,
                group.target.get(member_id, NO_PARTITIONS),
                known,
                subscription_changed,
                owned,
                group.owners,
            )
        except MemberFenced:  # decided above: a member in the Unknown state owning something
            raise AssertionError("unreachable: checked before any change") from None
        if reconciled is not None:
            # The specification records no KIP-1251 assignment epochs on a classic member's
            # join (spec/kip848/classic_members.py), and neither does this twin.
            group.move(member, *reconciled)

    group.classic_deadlines.pop((CLASSIC_JOIN, member_id), None)
    rt.arm_session(group, member_id, rt.now + session_timeout)
    rt.arm_classic(group, CLASSIC_SYNC, member_id, rt.now + member.rebalance_timeout_ms)
    rt.respond(
        ref,
        JoinGroupResponse(
            ErrorCode.NONE,
            member_id=member_id,
            generation_id=member.member_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=request.protocols[0].name,
        ),
    )


def _static_holder(group: Group, member_id: str, instance_id: str, unknown: bool) -> Member | None:
    """getOrMaybeSubscribeStaticConsumerGroupMember's checks: a join without member id takes
    the instance id whoever holds it (None: nobody, a new static member), whatever protocol the
    holder speaks and whether it left or not; a rejoin must be the holder's."""
    holder = group.static_member(instance_id)
    if unknown:
        return holder
    if holder is None:
        raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
    if holder.member_id != member_id:
        raise Refused(ErrorCode.FENCED_INSTANCE_ID)
    return holder


def _replace_static_member(group: Group, holder: Member, member_id: str) -> None:
    """The new id takes the holder's place and target at epoch 0. The old id's session and
    rebalance timeouts stay armed (they find no member when they fire); its classic join and
    sync timeouts go, as the specification's replacement drops them. A group left with
    classic members only stays a consumer group: serve does not downgrade (migration policy
    disabled)."""
    group.replace_member(holder, member_id)


def _validated_member(group: Group, member_id: str, instance_id: str | None) -> Member:
    """The member by instance id (when given) or by member id."""
    if instance_id is None:
        member = group.members.get(member_id)
        if member is None:
            raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
        return member
    member = group.static_member(instance_id)
    if member is None:
        raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
    if member.member_id != member_id:
        raise Refused(ErrorCode.FENCED_INSTANCE_ID)
    return member


def _classic_member_at(
    group: Group, member_id: str, instance_id: str | None, generation_id: int
) -> Member:
    member = _validated_member(group, member_id, instance_id)
    if member.classic is None:
        raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
    if member.member_epoch != generation_id:
        raise Refused(ErrorCode.ILLEGAL_GENERATION)
    return member


def _arm_join_timeout(rt: Runtime, group: Group, member: Member) -> None:
    """scheduleConsumerGroupJoinTimeoutIfAbsent: the member must rejoin in time."""
    if (CLASSIC_JOIN, member.member_id) not in group.classic_deadlines:
        rt.arm_classic(group, CLASSIC_JOIN, member.member_id, rt.now + member.rebalance_timeout_ms)


def classic_sync(rt: Runtime, ref: Ref, request: SyncGroupRequest) -> None:
    """SyncGroup: the member's assigned partitions, if it is up to date."""
    group = _group(rt, request.group_id)
    try:
        member = _classic_member_at(
            group, request.member_id, request.group_instance_id, request.generation_id
        )
        assert member.classic is not None
        first = member.classic.protocols[0]
        if (
            request.protocol_type is not None and request.protocol_type != CONSUMER_PROTOCOL_TYPE
        ) or (request.protocol_name is not None and request.protocol_name != first.name):
            raise Refused(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    except Refused as refused:
        rt.respond(ref, SyncGroupResponse(refused.error))
        return
    if (
        group.assignment_epoch > member.member_epoch
        and member.state is not MemberState.UNREVOKED_PARTITIONS
    ):
        _arm_join_timeout(rt, group, member)
        rt.respond(ref, SyncGroupResponse(ErrorCode.REBALANCE_IN_PROGRESS))
        return
    group.classic_deadlines.pop((CLASSIC_SYNC, member.member_id), None)
    rt.arm_session(group, member.member_id, rt.now + member.classic.session_timeout_ms)
    assignment = encode_assignment(
        [(p.topic, p.partition) for p in member.assigned], first.metadata
    )
    rt.respond(
        ref,
        SyncGroupResponse(ErrorCode.NONE, request.protocol_type, request.protocol_name, assignment),
    )


def classic_heartbeat(rt: Runtime, ref: Ref, request: HeartbeatRequest) -> None:
    """Heartbeat: NONE, or REBALANCE_IN_PROGRESS to make the member rejoin."""
    group = _group(rt, request.group_id)
    try:
        member = _classic_member_at(
            group, request.member_id, request.group_instance_id, request.generation_id
        )
    except Refused as refused:
        rt.respond(ref, HeartbeatResponse(refused.error))
        return
    assert member.classic is not None
    rt.arm_session(group, member.member_id, rt.now + member.classic.session_timeout_ms)
    if (
        member.member_epoch < group.assignment_epoch
        or member.state is MemberState.UNREVOKED_PARTITIONS
        or (
            member.state is MemberState.UNRELEASED_PARTITIONS
            and not _waiting_on_unreleased(group, member)
        )
    ):
        _arm_join_timeout(rt, group, member)
        rt.respond(ref, HeartbeatResponse(ErrorCode.REBALANCE_IN_PROGRESS))
    else:
        rt.respond(ref, HeartbeatResponse(ErrorCode.NONE))


def _waiting_on_unreleased(group: Group, member: Member) -> bool:
    """Whether a target partition the member lacks is still owned by someone."""
    owners = group.owners
    return any(
        partition not in member.assigned and owners.get(partition) is not None
        for partition in group.target.get(member.member_id, NO_PARTITIONS)
    )


def classic_leave(rt: Runtime, ref: Ref, request: LeaveGroupRequest) -> None:
    """LeaveGroup: fence every valid entry's member at once (one group-epoch bump)."""
    group = _group(rt, request.group_id)
    results: list[LeaveGroupMemberResponse] = []
    leaving: list[str] = []
    for identity in request.members:
        member_id = identity.member_id
        if identity.group_instance_id is not None and not member_id:
            holder = group.static_member(identity.group_instance_id)
            member_id = holder.member_id if holder is not None else ""
        try:
            member = _validated_member(group, member_id, identity.group_instance_id)
        except Refused as refused:
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
    rt.respond(ref, LeaveGroupResponse(ErrorCode.NONE, tuple(results)))
    fenced = sorted(set(leaving))
    for member_id in fenced[:-1]:
        _drop(group, member_id)
    if fenced:
        fence_member(rt, group, fenced[-1])


def _drop(group: Group, member_id: str) -> None:
    """Remove a member and its timers without an epoch bump (the last one fenced bumps it)."""
    group.remove(member_id)
    group.session_deadlines.pop(member_id, None)
    group.rebalance_deadlines.pop(member_id, None)
    group.classic_deadlines.pop((CLASSIC_JOIN, member_id), None)
    group.classic_deadlines.pop((CLASSIC_SYNC, member_id), None)
