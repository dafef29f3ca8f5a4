"""LeaveGroup, batched, including administrative removal by instance id (reference §2.5)."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import COMPLETING_REBALANCE, DEAD, PREPARING_REBALANCE, STABLE
from groupspec.vocabulary.requests import LeaveGroupRequest, MemberIdentity, RequestRef
from groupspec.vocabulary.responses import LeaveGroupMemberResponse, LeaveGroupResponse

from .membership import validate_member
from .rebalance import fail_parked_join_and_remove, maybe_complete_join_phase, prepare_rebalance
from .rules import (
    LEAVE_GROUP_DEAD,
    LEAVE_INVALID_MEMBER,
    LEAVE_MEMBER_REMOVED,
    LEAVE_NO_MEMBER_ID_UNKNOWN_INSTANCE,
    LEAVE_PENDING_MEMBER_REMOVED,
    LEAVE_REMOVED_BY_INSTANCE_ID,
    LEAVE_UNKNOWN_GROUP,
)
from .state import CoordinatorState, Group
from .step import Step


def leave_group(
    step: Step, state: CoordinatorState, ref: RequestRef, request: LeaveGroupRequest
) -> CoordinatorState:
    """Handle a LeaveGroup after the coordinator-level checks passed."""
    group = state.group(request.group_id)
    if group is None:
        step.fire(LEAVE_UNKNOWN_GROUP)
        unknown = tuple(_result(m, ErrorCode.UNKNOWN_MEMBER_ID) for m in request.members)
        step.respond(ref, LeaveGroupResponse(ErrorCode.NONE, unknown))
        return state
    if group.state is DEAD:
        step.fire(LEAVE_GROUP_DEAD)
        step.respond(ref, LeaveGroupResponse(ErrorCode.COORDINATOR_NOT_AVAILABLE))
        return state
    results: list[LeaveGroupMemberResponse] = []
    removed_any = False
    for identity in request.members:
        group, error = _leave_one(step, group, identity)
        results.append(_result(identity, error))
        removed_any = removed_any or error is ErrorCode.NONE
    if removed_any:
        if group.state in (STABLE, COMPLETING_REBALANCE):
            group = prepare_rebalance(step, group)
        elif group.state is PREPARING_REBALANCE:
            group = maybe_complete_join_phase(step, group)
    step.respond(ref, LeaveGroupResponse(ErrorCode.NONE, tuple(results)))
    return state.with_group(group)


def _result(identity: MemberIdentity, error: ErrorCode) -> LeaveGroupMemberResponse:
    return LeaveGroupMemberResponse(identity.member_id, identity.group_instance_id, error)


def _leave_one(step: Step, group: Group, identity: MemberIdentity) -> tuple[Group, ErrorCode]:
    """Remove one member; returns the group and that member's error code."""
    if identity.member_id == "":
        instance = identity.group_instance_id
        current = group.static_member_id(instance) if instance is not None else None
        if current is None:
            step.fire(LEAVE_NO_MEMBER_ID_UNKNOWN_INSTANCE)
            return group, ErrorCode.UNKNOWN_MEMBER_ID
        step.fire(LEAVE_REMOVED_BY_INSTANCE_ID)
        return fail_parked_join_and_remove(step, group, current), ErrorCode.NONE
    if group.is_pending_member(identity.member_id):
        step.fire(LEAVE_PENDING_MEMBER_REMOVED)
        return group.without_member(identity.member_id), ErrorCode.NONE
    error = validate_member(group, identity.member_id, identity.group_instance_id)
    if error is not None:
        step.fire(LEAVE_INVALID_MEMBER)
        return group, error
    step.fire(LEAVE_MEMBER_REMOVED)
    return fail_parked_join_and_remove(step, group, identity.member_id), ErrorCode.NONE
