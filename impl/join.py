"""JoinGroup, including MEMBER_ID_REQUIRED and static member replacement (KIP-345)."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode, append_error_to_response
from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from groupspec.vocabulary.requests import JoinGroupRequest
from groupspec.vocabulary.responses import JoinGroupResponse, SyncGroupResponse

from .log import EMPTY_GROUP_RECORD, GroupMetadataWrite
from .membership import validate_member
from .persistence import group_metadata_record
from .rebalance import (
    current_members_for_leader,
    maybe_complete_join_phase,
    maybe_prepare_rebalance_or_complete_join,
    prepare_rebalance,
    remove_member,
    select_protocol,
)
from .runtime import Ref, Runtime
from .state import Group, Member
from .timer_heap import PENDING


def join_group(rt: Runtime, ref: Ref, request: JoinGroupRequest) -> None:
    """Handle a JoinGroup."""
    group_id = request.group_id
    if group_id == "":
        # rule: coordinator.invalid_group_id
        _reply_error(rt, ref, request, ErrorCode.INVALID_GROUP_ID)
        return
    if rt.blocked:
        # rule: coordinator.check_failed
        error = rt.coordinator_error(group_id)
        if error is not None:
            _reply_error(rt, ref, request, error)
            return
    config = rt.config
    if not (
        config.group_min_session_timeout_ms
        <= request.session_timeout_ms
        <= config.group_max_session_timeout_ms
    ):
        # rule: join.invalid_session_timeout
        _reply_error(rt, ref, request, ErrorCode.INVALID_SESSION_TIMEOUT)
        return
    member_id = request.member_id
    group = rt.groups.get(group_id)
    if group is None:
        if member_id != "":
            # rule: join.unknown_group_with_member_id
            _reply_error(rt, ref, request, ErrorCode.UNKNOWN_MEMBER_ID)
            return
        # rule: join.group_created
        # Kafka writes the new group's record; if that fails the group never existed. Nothing
        # else in this join writes or depends on the write, so it can go first.
        partition = rt.partition_of(group_id)
        error = rt.append(partition, group_id, [GroupMetadataWrite(group_id, EMPTY_GROUP_RECORD)])
        if error is not None:
            # rule: join.new_group_write_failed
            _reply_error(rt, ref, request, append_error_to_response(error))
            return
        group = rt.groups[group_id] = Group(group_id, partition)

    if not accept_joining_member(rt, group, member_id):
        # rule: join.group_max_size_reached
        if member_id in group.members or member_id in group.pending_members:
            remove_member(rt, group, member_id)
        rt.respond(ref, JoinGroupResponse(ErrorCode.GROUP_MAX_SIZE_REACHED, member_id=""))
    elif member_id == "":
        join_new_member(rt, group, ref, request)
    else:
        join_existing_member(rt, group, ref, request)


def _reply_error(rt: Runtime, ref: Ref, request: JoinGroupRequest, error: ErrorCode) -> None:
    rt.respond(ref, JoinGroupResponse(error, member_id=request.member_id))


def accept_joining_member(rt: Runtime, group: Group, member_id: str) -> bool:
    """Group-size admission (group.max.size)."""
    state = group.state
    if state is EMPTY:
        return True
    member = group.members.get(member_id)
    limit = rt.config.group_max_size
    if state is PREPARING_REBALANCE:
        return (member is not None and member.awaiting_join is not None) or (
            group.awaiting_join_count < limit
        )
    return member is not None or len(group.members) < limit


def join_new_member(rt: Runtime, group: Group, ref: Ref, request: JoinGroupRequest) -> None:
    """JoinGroup with member id "": replace or add a static member, or hand out an id."""
    if not group.supports_protocols(request.protocol_type, request.protocols):
        # rule: join.new_member.inconsistent_protocol
        _reply_error(rt, ref, request, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        return
    instance = request.group_instance_id
    if instance is not None:
        new_member_id = rt.new_member_id(group, instance)
        old_member_id = group.static_members.get(instance)
        if old_member_id is not None:
            # rule: join.static_member_replaced
            replace_static_member_then_rebalance_or_complete_join(
                rt, group, ref, request, old_member_id, new_member_id
            )
        else:
            # rule: join.new_static_member_added
            add_member_then_rebalance_or_complete_join(rt, group, ref, request, new_member_id)
        return
    new_member_id = rt.new_member_id(group, request.client_id)
    if request.api_version >= 4:
        # rule: join.new_dynamic_member.member_id_required
        # The client must come back with this id; until then it only holds a pending slot.
        deadline = rt.now + request.session_timeout_ms
        group.pending_members[new_member_id] = deadline
        rt.timers.push(deadline, PENDING, group, new_member_id)
        rt.respond(ref, JoinGroupResponse(ErrorCode.MEMBER_ID_REQUIRED, member_id=new_member_id))
        return
    # rule: join.new_dynamic_member_added_v0_to_v3
    add_member_then_rebalance_or_complete_join(rt, group, ref, request, new_member_id)


def join_existing_member(rt: Runtime, group: Group, ref: Ref, request: JoinGroupRequest) -> None:
    """JoinGroup with a known (or pending) member id."""
    member_id = request.member_id
    if not group.supports_protocols(request.protocol_type, request.protocols):
        # rule: join.existing_member.inconsistent_protocol
        _reply_error(rt, ref, request, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        return
    if member_id in group.pending_members:
        if request.group_instance_id is not None:
            # rule: join.pending_member_with_instance_id
            # Kafka throws IllegalStateException here: pending members are never static.
            _reply_error(rt, ref, request, ErrorCode.UNKNOWN_SERVER_ERROR)
            return
        # rule: join.pending_member_joined
        add_member_then_rebalance_or_complete_join(rt, group, ref, request, member_id)
        return
    error = validate_member(group, member_id, request.group_instance_id)
    if error is not None:
        # rule: join.existing_member.invalid_member
        _reply_error(rt, ref, request, error)
        return
    member = group.members[member_id]
    state = group.state
    if state is PREPARING_REBALANCE:
        # rule: join.existing_member.preparing_parked
        update_member_then_rebalance_or_complete_join(rt, group, member, ref, request)
    elif state is COMPLETING_REBALANCE:
        if member.protocols == request.protocols:
            # rule: join.existing_member.completing_same_protocols
            _reply_current_generation(rt, group, ref, member_id, group.leader_id == member_id)
        else:
            # rule: join.existing_member.completing_changed_protocols
            update_member_then_rebalance_or_complete_join(rt, group, member, ref, request)
    elif state is STABLE:
        if group.leader_id == member_id or member.protocols != request.protocols:
            # rule: join.existing_member.stable_leader_rebalances
            # rule: join.existing_member.stable_follower_changed_protocols
            update_member_then_rebalance_or_complete_join(rt, group, member, ref, request)
        else:
            # rule: join.existing_member.stable_follower_unchanged
            _reply_current_generation(rt, group, ref, member_id, False)
    else:
        # rule: join.existing_member.empty_group
        # Empty has no members, so validation already failed; Kafka's default branch.
        _reply_error(rt, ref, request, ErrorCode.UNKNOWN_MEMBER_ID)


def _reply_current_generation(
    rt: Runtime, group: Group, ref: Ref, member_id: str, with_members: bool
) -> None:
    rt.respond(
        ref,
        JoinGroupResponse(
            ErrorCode.NONE,
            member_id,
            group.generation_id,
            group.protocol_type,
            group.protocol_name,
            group.leader_id or "",
            False,
            current_members_for_leader(group) if with_members else (),
        ),
    )


def add_member_then_rebalance_or_complete_join(
    rt: Runtime, group: Group, ref: Ref, request: JoinGroupRequest, member_id: str
) -> None:
    """Add a new member (parked in JoinGroup), then rebalance or try to complete the join."""
    member = Member(
        member_id,
        request.group_instance_id,
        request.client_id,
        request.client_host,
        request.effective_rebalance_timeout_ms,
        request.session_timeout_ms,
        request.protocol_type,
        request.protocols,
    )
    member.is_new = True
    member.awaiting_join = ref
    if group.state is PREPARING_REBALANCE and group.previous_state is EMPTY:
        group.new_member_added = True
    if not group.members:
        group.protocol_type = request.protocol_type
    group.add_member(member)
    if group.leader_id is None:
        group.leader_id = member_id
    # New members cannot heartbeat yet; the join timeout bounds their stay.
    rt.schedule_heartbeat(group, member, rt.config.new_member_join_timeout_ms)
    maybe_prepare_rebalance_or_complete_join(rt, group)


def update_member_then_rebalance_or_complete_join(
    rt: Runtime, group: Group, member: Member, ref: Ref, request: JoinGroupRequest
) -> None:
    """Take a rejoining member's protocols and timeouts, park it, then rebalance or complete."""
    member.protocols = request.protocols
    member.rebalance_timeout_ms = request.effective_rebalance_timeout_ms
    member.session_timeout_ms = request.session_timeout_ms
    group.set_awaiting_join(member, ref)
    maybe_prepare_rebalance_or_complete_join(rt, group)


def replace_static_member_then_rebalance_or_complete_join(
    rt: Runtime,
    group: Group,
    ref: Ref,
    request: JoinGroupRequest,
    old_member_id: str,
    new_member_id: str,
) -> None:
    """A known group.instance.id joins with member id "": fence the old id, hand over to the new.

    GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin.
    """
    old = group.members[old_member_id]
    current_leader = group.leader_id
    if old.awaiting_join is not None:
        rt.respond(
            old.awaiting_join,
            JoinGroupResponse(ErrorCode.FENCED_INSTANCE_ID, member_id=old_member_id),
        )
    if old.awaiting_sync is not None:
        rt.respond(old.awaiting_sync, SyncGroupResponse(ErrorCode.FENCED_INSTANCE_ID))
    successor = swap_static_member(group, old, new_member_id)
    if current_leader == old_member_id:
        group.leader_id = new_member_id
    # Armed with the old session timeout, before the request's timeouts are taken (as Kafka).
    rt.schedule_heartbeat(group, successor)
    successor.protocols = request.protocols
    successor.rebalance_timeout_ms = request.effective_rebalance_timeout_ms
    successor.session_timeout_ms = request.session_timeout_ms
    group.set_awaiting_join(successor, ref)

    state = group.state
    if state is STABLE:
        if (group.protocol_name or "") != select_protocol(rt, group):
            # rule: join.static_replacement.protocol_changed_rebalance
            maybe_prepare_rebalance_or_complete_join(rt, group)
            return
        assignments = {m.member_id: m.assignment for m in group.members.values()}
        error = rt.append(
            group.partition, group.group_id, [group_metadata_record(group, assignments)]
        )
        if error is not None:
            # rule: join.static_replacement.write_failed_reverted
            _revert_static_replacement(rt, group, old, successor, current_leader)
            rt.respond(
                ref,
                JoinGroupResponse(
                    append_error_to_response(error),
                    "",
                    group.generation_id,
                    group.protocol_type,
                    group.protocol_name,
                    current_leader or "",
                ),
            )
            return
        # rule: join.static_replacement.stable_no_rebalance
        group.set_awaiting_join(successor, None)
        if request.api_version >= 9:
            is_leader = group.leader_id == new_member_id
            leader = group.leader_id
            members = current_members_for_leader(group) if is_leader else ()
            skip = is_leader
        else:
            # Before v9 the old leader id is returned, so a replaced leader never believes it
            # leads (it would compute an assignment nobody asked for).
            leader, members, skip = current_leader, (), False
        rt.respond(
            ref,
            JoinGroupResponse(
                ErrorCode.NONE,
                new_member_id,
                group.generation_id,
                group.protocol_type,
                group.protocol_name,
                leader or "",
                skip,
                members,
            ),
        )
    elif state is COMPLETING_REBALANCE:
        # rule: join.static_replacement.completing_rebalances
        prepare_rebalance(rt, group)
    else:
        # rule: join.static_replacement.preparing
        maybe_complete_join_phase(rt, group)


def swap_static_member(group: Group, old: Member, new_member_id: str) -> Member:
    """Put a successor with `new_member_id` in place of `old`, inheriting all but the id.

    Kafka drops the old id from the members only: it stays in the pending-sync set if it was
    there (a later sync expiry then rebalances).
    """
    successor = Member(
        new_member_id,
        old.group_instance_id,
        old.client_id,
        old.client_host,
        old.rebalance_timeout_ms,
        old.session_timeout_ms,
        old.protocol_type,
        old.protocols,
        old.assignment,
    )
    if old.awaiting_join is not None:
        group.awaiting_join_count -= 1
    del group.members[old.member_id]
    group.members[new_member_id] = successor
    if old.group_instance_id is not None:
        group.static_members[old.group_instance_id] = new_member_id
    return successor


def _revert_static_replacement(
    rt: Runtime, group: Group, old: Member, successor: Member, leader: str | None
) -> None:
    """Undo a replacement whose record could not be written: the old member is back, re-armed."""
    group.set_awaiting_join(successor, None)
    del group.members[successor.member_id]
    old.awaiting_join = None
    old.awaiting_sync = None
    group.members[old.member_id] = old
    if old.group_instance_id is not None:
        group.static_members[old.group_instance_id] = old.member_id
    group.leader_id = leader
    rt.schedule_heartbeat(group, old)
