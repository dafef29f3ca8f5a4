"""SyncGroup (reference §2.3)."""

from __future__ import annotations

from dataclasses import replace

from groupspec.vocabulary.errors import ErrorCode, append_error_to_response
from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from groupspec.vocabulary.requests import RequestRef, SyncGroupRequest
from groupspec.vocabulary.responses import SyncGroupResponse

from .membership import validate_member_and_generation
from .persistence import group_metadata_record
from .rebalance import (
    maybe_prepare_rebalance_or_complete_join,
    propagate_assignment,
    reset_and_propagate_assignment_error,
    schedule_heartbeat,
)
from .rules import (
    SYNC_COMPLETING_FOLLOWER_PARKED,
    SYNC_GROUP_DEAD,
    SYNC_INCONSISTENT_PROTOCOL,
    SYNC_INVALID_MEMBER_OR_GENERATION,
    SYNC_LEADER_ASSIGNMENT_STORED_GROUP_STABLE,
    SYNC_LEADER_ASSIGNMENT_WRITE_FAILED,
    SYNC_PREPARING_REBALANCE_IN_PROGRESS,
    SYNC_STABLE_RETURNS_ASSIGNMENT,
    SYNC_STABLE_RETURNS_ASSIGNMENT_KAFKA_3X,
    SYNC_UNKNOWN_OR_EMPTY_GROUP,
)
from .state import CoordinatorState, Group
from .step import Step


def _is_protocol_inconsistent(requested: str | None, current: str | None) -> bool:
    """A SyncGroup's protocol type/name conflicts only if both are set and differ."""
    return requested is not None and current is not None and requested != current


def remove_pending_sync_member(group: Group, member_id: str) -> Group:
    """The member has sent SyncGroup; once everyone has, the sync timer is cancelled."""
    remaining = group.pending_sync_members - {member_id}
    return replace(
        group, pending_sync_members=remaining, sync_timer=group.sync_timer if remaining else None
    )


def sync_group(
    step: Step, state: CoordinatorState, ref: RequestRef, request: SyncGroupRequest
) -> CoordinatorState:
    """Handle a SyncGroup after the coordinator-level checks passed."""
    group = state.group(request.group_id)
    if group is None or group.state is EMPTY:
        step.fire(SYNC_UNKNOWN_OR_EMPTY_GROUP)
        step.respond(ref, SyncGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID))
        return state
    if group.state is DEAD:
        step.fire(SYNC_GROUP_DEAD)
        step.respond(ref, SyncGroupResponse(ErrorCode.COORDINATOR_NOT_AVAILABLE))
        return state
    error = validate_member_and_generation(
        group, request.member_id, request.group_instance_id, request.generation_id
    )
    if error is not None:
        step.fire(SYNC_INVALID_MEMBER_OR_GENERATION)
        step.respond(ref, SyncGroupResponse(error))
        return state
    if _is_protocol_inconsistent(request.protocol_type, group.protocol_type) or (
        _is_protocol_inconsistent(request.protocol_name, group.protocol_name)
    ):
        step.fire(SYNC_INCONSISTENT_PROTOCOL)
        step.respond(ref, SyncGroupResponse(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
        return state
    if group.state is PREPARING_REBALANCE:
        step.fire(SYNC_PREPARING_REBALANCE_IN_PROGRESS)
        step.respond(ref, SyncGroupResponse(ErrorCode.REBALANCE_IN_PROGRESS))
        return state
    if group.state is COMPLETING_REBALANCE:
        return state.with_group(_sync_while_completing(step, group, ref, request))
    assert group.state is STABLE
    group = remove_pending_sync_member(group, request.member_id)
    if step.config.is_scala_coordinator:
        step.fire(SYNC_STABLE_RETURNS_ASSIGNMENT_KAFKA_3X)
        group = schedule_heartbeat(step, group, request.member_id)
    else:
        step.fire(SYNC_STABLE_RETURNS_ASSIGNMENT)
    member = group.member(request.member_id)
    assert member is not None
    step.respond(
        ref,
        SyncGroupResponse(
            ErrorCode.NONE, group.protocol_type, group.protocol_name, member.assignment
        ),
    )
    return state.with_group(group)


def _sync_while_completing(
    step: Step, group: Group, ref: RequestRef, request: SyncGroupRequest
) -> Group:
    """Park the SyncGroup; the leader's assignment is persisted and then handed to everyone."""
    group = group.update_member(request.member_id, awaiting_sync=ref)
    group = remove_pending_sync_member(group, request.member_id)
    if not group.is_leader(request.member_id):
        step.fire(SYNC_COMPLETING_FOLLOWER_PARKED)
        return group
    given = {a.member_id: a.assignment for a in request.assignments}
    # Members the leader left out get an empty assignment.
    assignments = {m.member_id: given.get(m.member_id, b"") for m in group.members}
    failure = step.write([group_metadata_record(group, assignments)])
    if failure is not None:
        step.fire(SYNC_LEADER_ASSIGNMENT_WRITE_FAILED)
        group = reset_and_propagate_assignment_error(step, group, append_error_to_response(failure))
        return maybe_prepare_rebalance_or_complete_join(step, group)
    step.fire(SYNC_LEADER_ASSIGNMENT_STORED_GROUP_STABLE)
    for member_id, assignment in assignments.items():
        group = group.update_member(member_id, assignment=assignment)
    group = propagate_assignment(step, group, ErrorCode.NONE)
    return group.transition_to(STABLE, step.now_ms)
