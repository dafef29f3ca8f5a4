"""JoinGroup (reference §2.2) and static member replacement (reference §9)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from groupspec.vocabulary.errors import ErrorCode, append_error_to_response
from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from groupspec.vocabulary.requests import JoinGroupRequest, RequestRef
from groupspec.vocabulary.responses import JoinGroupResponse, SyncGroupResponse

from .config import CoordinatorConfig
from .membership import validate_member
from .persistence import empty_group_record, group_metadata_record
from .rebalance import (
    current_members_for_leader,
    maybe_complete_join_phase,
    maybe_prepare_rebalance_or_complete_join,
    prepare_rebalance,
    remove_member,
    schedule_heartbeat,
    select_protocol,
)
from .rules import (
    JOIN_EXISTING_MEMBER_COMPLETING_CHANGED_PROTOCOLS,
    JOIN_EXISTING_MEMBER_COMPLETING_SAME_PROTOCOLS,
    JOIN_EXISTING_MEMBER_EMPTY_GROUP,
    JOIN_EXISTING_MEMBER_GROUP_DEAD,
    JOIN_EXISTING_MEMBER_INCONSISTENT_PROTOCOL,
    JOIN_EXISTING_MEMBER_INVALID_MEMBER,
    JOIN_EXISTING_MEMBER_PREPARING_PARKED,
    JOIN_EXISTING_MEMBER_STABLE_FOLLOWER_CHANGED_PROTOCOLS,
    JOIN_EXISTING_MEMBER_STABLE_FOLLOWER_UNCHANGED,
    JOIN_EXISTING_MEMBER_STABLE_LEADER_REBALANCES,
    JOIN_GROUP_CREATED,
    JOIN_GROUP_CREATED_KAFKA_3X,
    JOIN_GROUP_MAX_SIZE_REACHED,
    JOIN_INVALID_SESSION_TIMEOUT,
    JOIN_NEW_DYNAMIC_MEMBER_ADDED_V0_TO_V3,
    JOIN_NEW_DYNAMIC_MEMBER_MEMBER_ID_REQUIRED,
    JOIN_NEW_GROUP_WRITE_FAILED,
    JOIN_NEW_MEMBER_DOES_NOT_EXTEND_INITIAL_DELAY_KAFKA_3X,
    JOIN_NEW_MEMBER_GROUP_DEAD,
    JOIN_NEW_MEMBER_INCONSISTENT_PROTOCOL,
    JOIN_NEW_STATIC_MEMBER_ADDED,
    JOIN_PENDING_MEMBER_JOINED,
    JOIN_PENDING_MEMBER_WITH_INSTANCE_ID,
    JOIN_STATIC_MEMBER_REPLACED,
    JOIN_STATIC_REPLACEMENT_COMPLETING_REBALANCES,
    JOIN_STATIC_REPLACEMENT_PREPARING,
    JOIN_STATIC_REPLACEMENT_PROTOCOL_CHANGED_REBALANCE,
    JOIN_STATIC_REPLACEMENT_STABLE_NO_REBALANCE,
    JOIN_STATIC_REPLACEMENT_WRITE_FAILED_REVERTED,
    JOIN_UNKNOWN_GROUP_WITH_MEMBER_ID,
)
from .state import CoordinatorState, Group, Member, PendingMember
from .step import Step


def join_group(
    step: Step, state: CoordinatorState, ref: RequestRef, request: JoinGroupRequest
) -> CoordinatorState:
    """Handle a JoinGroup after the coordinator-level checks passed."""
    config = step.config
    if not (
        config.group_min_session_timeout_ms
        <= request.session_timeout_ms
        <= config.group_max_session_timeout_ms
    ):
        step.fire(JOIN_INVALID_SESSION_TIMEOUT)
        _reply_error(step, ref, request, ErrorCode.INVALID_SESSION_TIMEOUT)
        return state

    is_unknown_member = request.member_id == ""
    existing = state.group(request.group_id)
    if existing is None and not is_unknown_member:
        step.fire(JOIN_UNKNOWN_GROUP_WITH_MEMBER_ID)
        _reply_error(step, ref, request, ErrorCode.UNKNOWN_MEMBER_ID)
        return state
    # The Java coordinator persists a group it creates; the Scala one keeps it in memory only.
    persists_new_group = existing is None and not config.is_scala_coordinator
    if existing is None:
        step.fire(
            JOIN_GROUP_CREATED_KAFKA_3X if config.is_scala_coordinator else JOIN_GROUP_CREATED
        )
    group = existing if existing is not None else Group(group_id=request.group_id)
    next_seq = state.next_member_seq

    if not accept_joining_member(config, group, request.member_id):
        step.fire(JOIN_GROUP_MAX_SIZE_REACHED)
        if group.has_member(request.member_id) or group.is_pending_member(request.member_id):
            group = remove_member(step, group, request.member_id)
        step.respond(ref, JoinGroupResponse(ErrorCode.GROUP_MAX_SIZE_REACHED, member_id=""))
    elif is_unknown_member:
        new_member_id = generate_member_id(request, next_seq)
        group, used_id = join_new_member(step, group, ref, request, new_member_id)
        if used_id:
            next_seq += 1
    else:
        group = join_existing_member(step, group, ref, request)

    if persists_new_group:
        failure = step.write([empty_group_record(request.group_id)])
        if failure is not None:
            # The coordinator reverts to its snapshot: the new group never existed.
            step.fire(JOIN_NEW_GROUP_WRITE_FAILED)
            step.responses = [r for r in step.responses if r.ref != ref]
            _reply_error(step, ref, request, append_error_to_response(failure))
            return state
    return replace(state.with_group(group), next_member_seq=next_seq)


def _reply_error(step: Step, ref: RequestRef, request: JoinGroupRequest, error: ErrorCode) -> None:
    step.respond(ref, JoinGroupResponse(error, member_id=request.member_id))


def generate_member_id(request: JoinGroupRequest, sequence: int) -> str:
    """A fresh member id: `<group.instance.id or client.id>-<unique>` (Kafka uses a UUID)."""
    prefix = (
        request.group_instance_id if request.group_instance_id is not None else request.client_id
    )
    return f"{prefix}-{sequence}"


def accept_joining_member(config: CoordinatorConfig, group: Group, member_id: str) -> bool:
    """Group-size admission (reference §2.2 step 3)."""
    if group.state in (EMPTY, DEAD):
        return True
    member = group.member(member_id)
    if group.state is PREPARING_REBALANCE:
        return (member is not None and member.is_awaiting_join) or (
            group.num_awaiting_join() < config.group_max_size
        )
    return member is not None or len(group.members) < config.group_max_size


def join_new_member(
    step: Step, group: Group, ref: RequestRef, request: JoinGroupRequest, new_member_id: str
) -> tuple[Group, bool]:
    """JoinGroup with member id "": returns the group and whether `new_member_id` was handed out."""
    if group.state is DEAD:
        step.fire(JOIN_NEW_MEMBER_GROUP_DEAD)
        _reply_error(step, ref, request, ErrorCode.COORDINATOR_NOT_AVAILABLE)
        return group, False
    if not group.supports_protocols(request.protocol_type, _names(request)):
        step.fire(JOIN_NEW_MEMBER_INCONSISTENT_PROTOCOL)
        _reply_error(step, ref, request, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        return group, False
    if request.group_instance_id is not None:
        existing_member_id = group.static_member_id(request.group_instance_id)
        if existing_member_id is not None:
            step.fire(JOIN_STATIC_MEMBER_REPLACED)
            group = replace_static_member_then_rebalance_or_complete_join(
                step, group, ref, request, existing_member_id, new_member_id
            )
            return group, True
        step.fire(JOIN_NEW_STATIC_MEMBER_ADDED)
        return add_member_then_rebalance_or_complete_join(
            step, group, ref, request, new_member_id
        ), True
    if request.requires_known_member_id:
        step.fire(JOIN_NEW_DYNAMIC_MEMBER_MEMBER_ID_REQUIRED)
        deadline = step.now_ms + request.session_timeout_ms
        group = group.with_pending_member(PendingMember(new_member_id, deadline))
        step.respond(ref, JoinGroupResponse(ErrorCode.MEMBER_ID_REQUIRED, member_id=new_member_id))
        return group, True
    step.fire(JOIN_NEW_DYNAMIC_MEMBER_ADDED_V0_TO_V3)
    return add_member_then_rebalance_or_complete_join(
        step, group, ref, request, new_member_id
    ), True


def join_existing_member(
    step: Step, group: Group, ref: RequestRef, request: JoinGroupRequest
) -> Group:
    """JoinGroup with a known (or pending) member id."""
    member_id = request.member_id
    if group.state is DEAD:
        step.fire(JOIN_EXISTING_MEMBER_GROUP_DEAD)
        _reply_error(step, ref, request, ErrorCode.COORDINATOR_NOT_AVAILABLE)
        return group
    if not group.supports_protocols(request.protocol_type, _names(request)):
        step.fire(JOIN_EXISTING_MEMBER_INCONSISTENT_PROTOCOL)
        _reply_error(step, ref, request, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        return group
    if group.is_pending_member(member_id):
        if request.group_instance_id is not None:
            # Kafka throws IllegalStateException here: pending members are never static.
            step.fire(JOIN_PENDING_MEMBER_WITH_INSTANCE_ID)
            _reply_error(step, ref, request, ErrorCode.UNKNOWN_SERVER_ERROR)
            return group
        step.fire(JOIN_PENDING_MEMBER_JOINED)
        return add_member_then_rebalance_or_complete_join(step, group, ref, request, member_id)
    error = validate_member(group, member_id, request.group_instance_id)
    if error is not None:
        step.fire(JOIN_EXISTING_MEMBER_INVALID_MEMBER)
        _reply_error(step, ref, request, error)
        return group
    member = group.member(member_id)
    assert member is not None
    if group.state is PREPARING_REBALANCE:
        step.fire(JOIN_EXISTING_MEMBER_PREPARING_PARKED)
        return update_member_then_rebalance_or_complete_join(step, group, ref, request)
    if group.state is COMPLETING_REBALANCE:
        if member.matches(request.protocols):
            step.fire(JOIN_EXISTING_MEMBER_COMPLETING_SAME_PROTOCOLS)
            _reply_current_generation(
                step, group, ref, member_id, with_members=group.is_leader(member_id)
            )
            return group
        step.fire(JOIN_EXISTING_MEMBER_COMPLETING_CHANGED_PROTOCOLS)
        return update_member_then_rebalance_or_complete_join(step, group, ref, request)
    if group.state is STABLE:
        if group.is_leader(member_id):
            step.fire(JOIN_EXISTING_MEMBER_STABLE_LEADER_REBALANCES)
            return update_member_then_rebalance_or_complete_join(step, group, ref, request)
        if not member.matches(request.protocols):
            step.fire(JOIN_EXISTING_MEMBER_STABLE_FOLLOWER_CHANGED_PROTOCOLS)
            return update_member_then_rebalance_or_complete_join(step, group, ref, request)
        step.fire(JOIN_EXISTING_MEMBER_STABLE_FOLLOWER_UNCHANGED)
        _reply_current_generation(step, group, ref, member_id, with_members=False)
        return group
    # Empty has no members, so validation above already failed; Kafka's default branch.
    step.fire(JOIN_EXISTING_MEMBER_EMPTY_GROUP)
    _reply_error(step, ref, request, ErrorCode.UNKNOWN_MEMBER_ID)
    return group


def _names(request: JoinGroupRequest) -> tuple[str, ...]:
    return tuple(protocol.name for protocol in request.protocols)


def _reply_current_generation(
    step: Step, group: Group, ref: RequestRef, member_id: str, *, with_members: bool
) -> None:
    step.respond(
        ref,
        JoinGroupResponse(
            ErrorCode.NONE,
            member_id=member_id,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_id or "",
            members=current_members_for_leader(group) if with_members else (),
        ),
    )


def member_of_join(request: JoinGroupRequest, member_id: str, **state: Any) -> Member:
    """The member a JoinGroup request describes (its protocols and timeouts), with `state`
    (is_new, awaiting_join, heartbeat_deadline_ms, ...) as given."""
    return Member(
        member_id=member_id,
        group_instance_id=request.group_instance_id,
        client_id=request.client_id,
        client_host=request.client_host,
        rebalance_timeout_ms=request.effective_rebalance_timeout_ms,
        session_timeout_ms=request.session_timeout_ms,
        protocol_type=request.protocol_type,
        protocols=request.protocols,
        **state,
    )


def add_member_then_rebalance_or_complete_join(
    step: Step, group: Group, ref: RequestRef, request: JoinGroupRequest, member_id: str
) -> Group:
    """Add a new member (parked in JoinGroup), then rebalance or try to complete the join phase."""
    member = member_of_join(request, member_id, is_new=True, awaiting_join=ref)
    if group.state is PREPARING_REBALANCE and group.previous_state is EMPTY:
        # The Scala coordinator tests "generation 0" where the Java one tests "came from Empty".
        if step.config.is_scala_coordinator and group.generation_id != 0:
            step.fire(JOIN_NEW_MEMBER_DOES_NOT_EXTEND_INITIAL_DELAY_KAFKA_3X)
        else:
            group = replace(group, new_member_added=True)
    if not group.members:
        group = replace(group, protocol_type=request.protocol_type)
    group = group.without_member(member_id).with_member(member)
    if group.leader_id is None:
        group = replace(group, leader_id=member_id)
    # New members cannot heartbeat yet; the hard-coded join timeout bounds their stay.
    group = schedule_heartbeat(step, group, member_id, step.config.new_member_join_timeout_ms)
    return maybe_prepare_rebalance_or_complete_join(step, group)


def update_member_then_rebalance_or_complete_join(
    step: Step, group: Group, ref: RequestRef, request: JoinGroupRequest
) -> Group:
    """Take a rejoining member's protocols and timeouts, park it, then rebalance or complete."""
    group = group.update_member(
        request.member_id,
        protocols=request.protocols,
        rebalance_timeout_ms=request.effective_rebalance_timeout_ms,
        session_timeout_ms=request.session_timeout_ms,
        awaiting_join=ref,
    )
    return maybe_prepare_rebalance_or_complete_join(step, group)


def replace_static_member_then_rebalance_or_complete_join(
    step: Step,
    group: Group,
    ref: RequestRef,
    request: JoinGroupRequest,
    old_member_id: str,
    new_member_id: str,
) -> Group:
    """A known group.instance.id joins with member id "": fence the old id, hand over to the new.

    GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin (reference §9).
    """
    original = group
    current_leader = group.leader_id
    old = group.member(old_member_id)
    assert old is not None
    if old.awaiting_join is not None:
        step.respond(
            old.awaiting_join,
            JoinGroupResponse(ErrorCode.FENCED_INSTANCE_ID, member_id=old_member_id),
        )
    if old.awaiting_sync is not None:
        step.respond(old.awaiting_sync, SyncGroupResponse(ErrorCode.FENCED_INSTANCE_ID))
    # Kafka drops the old id from `members` only: it stays in the pending-sync set if it was there.
    successor = replace(
        old, member_id=new_member_id, awaiting_join=None, awaiting_sync=None, is_new=False
    )
    group = replace(group, members=tuple(m for m in group.members if m.member_id != old_member_id))
    group = group.with_member(successor)
    if current_leader == old_member_id:
        group = replace(group, leader_id=new_member_id)
    group = schedule_heartbeat(step, group, new_member_id)
    group = group.update_member(
        new_member_id,
        protocols=request.protocols,
        rebalance_timeout_ms=request.effective_rebalance_timeout_ms,
        session_timeout_ms=request.session_timeout_ms,
        awaiting_join=ref,
    )

    if group.state is STABLE:
        if (group.protocol_name or "") != select_protocol(step, group):
            step.fire(JOIN_STATIC_REPLACEMENT_PROTOCOL_CHANGED_REBALANCE)
            return maybe_prepare_rebalance_or_complete_join(step, group)
        assignments = {m.member_id: m.assignment for m in group.members}
        failure = step.write([group_metadata_record(group, assignments)])
        if failure is not None:
            step.fire(JOIN_STATIC_REPLACEMENT_WRITE_FAILED_REVERTED)
            reverted = original.update_member(old_member_id, awaiting_join=None, awaiting_sync=None)
            reverted = schedule_heartbeat(step, reverted, old_member_id)
            step.respond(
                ref,
                JoinGroupResponse(
                    append_error_to_response(failure),
                    member_id="",
                    generation_id=group.generation_id,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    leader=current_leader or "",
                ),
            )
            return reverted
        step.fire(JOIN_STATIC_REPLACEMENT_STABLE_NO_REBALANCE)
        group = group.update_member(new_member_id, awaiting_join=None)
        if request.supports_skip_assignment:
            is_leader = group.is_leader(new_member_id)
            leader, members, skip = group.leader_id, current_members_for_leader(group), is_leader
            if not is_leader:
                members = ()
        else:
            # Before v9 the old leader id is returned, so a replaced leader never believes it leads.
            leader, members, skip = current_leader, (), False
        step.respond(
            ref,
            JoinGroupResponse(
                ErrorCode.NONE,
                member_id=new_member_id,
                generation_id=group.generation_id,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                leader=leader or "",
                skip_assignment=skip,
                members=members,
            ),
        )
        return group
    if group.state is COMPLETING_REBALANCE:
        step.fire(JOIN_STATIC_REPLACEMENT_COMPLETING_REBALANCES)
        return prepare_rebalance(step, group)
    step.fire(JOIN_STATIC_REPLACEMENT_PREPARING)
    return maybe_complete_join_phase(step, group)
