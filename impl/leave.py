"""LeaveGroup, batched, including administrative removal by instance id."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import COMPLETING_REBALANCE, PREPARING_REBALANCE, STABLE
from groupspec.vocabulary.requests import LeaveGroupRequest, MemberIdentity
from groupspec.vocabulary.responses import LeaveGroupMemberResponse, LeaveGroupResponse

from .membership import validate_member
from .rebalance import fail_parked_join_and_remove, maybe_complete_join_phase, prepare_rebalance
from .runtime import Ref, Runtime
from .state import Group


def leave_group(rt: Runtime, ref: Ref, request: LeaveGroupRequest) -> None:
    """Handle a LeaveGroup."""
    group_id = request.group_id
    if group_id == "":
        # rule: coordinator.invalid_group_id
        rt.respond(ref, LeaveGroupResponse(ErrorCode.INVALID_GROUP_ID))
        return
    error = rt.coordinator_error(group_id)
    if error is not None:
        # rule: coordinator.check_failed
        rt.respond(ref, LeaveGroupResponse(error))
        return
    group = rt.groups.get(group_id)
    if group is None:
        # rule: leave.unknown_group
        results = tuple(_result(m, ErrorCode.UNKNOWN_MEMBER_ID) for m in request.members)
        rt.respond(ref, LeaveGroupResponse(ErrorCode.NONE, results))
        return
    answers: list[LeaveGroupMemberResponse] = []
    removed_any = False
    for identity in request.members:
        error = _leave_one(rt, group, identity)
        answers.append(_result(identity, error))
        removed_any = removed_any or error is ErrorCode.NONE
    if removed_any:
        state = group.state
        if state is STABLE or state is COMPLETING_REBALANCE:
            prepare_rebalance(rt, group)
        elif state is PREPARING_REBALANCE:
            maybe_complete_join_phase(rt, group)
    rt.respond(ref, LeaveGroupResponse(ErrorCode.NONE, tuple(answers)))


def _result(identity: MemberIdentity, error: ErrorCode) -> LeaveGroupMemberResponse:
    return LeaveGroupMemberResponse(identity.member_id, identity.group_instance_id, error)


def _leave_one(rt: Runtime, group: Group, identity: MemberIdentity) -> ErrorCode:
    """Remove one member; returns that member's error code."""
    member_id = identity.member_id
    if member_id == "":
        instance = identity.group_instance_id
        current = group.static_members.get(instance) if instance is not None else None
        if current is None:
            # rule: leave.no_member_id_unknown_instance
            return ErrorCode.UNKNOWN_MEMBER_ID
        # rule: leave.removed_by_instance_id
        fail_parked_join_and_remove(rt, group, current)  # administrative removal
        return ErrorCode.NONE
    if member_id in group.pending_members:
        # rule: leave.pending_member_removed
        del group.pending_members[member_id]
        return ErrorCode.NONE
    error = validate_member(group, member_id, identity.group_instance_id)
    if error is not None:
        # rule: leave.invalid_member
        return error
    # rule: leave.member_removed
    fail_parked_join_and_remove(rt, group, member_id)
    return ErrorCode.NONE
