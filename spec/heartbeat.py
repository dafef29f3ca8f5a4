"""Heartbeat (reference §2.4)."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import DEAD, EMPTY, PREPARING_REBALANCE
from groupspec.vocabulary.requests import HeartbeatRequest, RequestRef
from groupspec.vocabulary.responses import HeartbeatResponse

from .membership import validate_member_and_generation
from .rebalance import schedule_heartbeat
from .rules import (
    HEARTBEAT_ACCEPTED,
    HEARTBEAT_EMPTY_GROUP,
    HEARTBEAT_GROUP_DEAD,
    HEARTBEAT_INVALID_MEMBER_OR_GENERATION,
    HEARTBEAT_PREPARING_REBALANCE_IN_PROGRESS,
    HEARTBEAT_UNKNOWN_GROUP,
)
from .state import CoordinatorState
from .step import Step


def heartbeat(
    step: Step, state: CoordinatorState, ref: RequestRef, request: HeartbeatRequest
) -> CoordinatorState:
    """Handle a Heartbeat after the coordinator-level checks passed."""
    group = state.group(request.group_id)
    if group is None:
        step.fire(HEARTBEAT_UNKNOWN_GROUP)
        step.respond(ref, HeartbeatResponse(ErrorCode.UNKNOWN_MEMBER_ID))
        return state
    if group.state is DEAD:
        step.fire(HEARTBEAT_GROUP_DEAD)
        step.respond(ref, HeartbeatResponse(ErrorCode.COORDINATOR_NOT_AVAILABLE))
        return state
    error = validate_member_and_generation(
        group, request.member_id, request.group_instance_id, request.generation_id
    )
    if error is not None:
        step.fire(HEARTBEAT_INVALID_MEMBER_OR_GENERATION)
        step.respond(ref, HeartbeatResponse(error))
        return state
    if group.state is EMPTY:
        step.fire(HEARTBEAT_EMPTY_GROUP)
        step.respond(ref, HeartbeatResponse(ErrorCode.UNKNOWN_MEMBER_ID))
        return state
    group = schedule_heartbeat(step, group, request.member_id)
    if group.state is PREPARING_REBALANCE:
        step.fire(HEARTBEAT_PREPARING_REBALANCE_IN_PROGRESS)
        step.respond(ref, HeartbeatResponse(ErrorCode.REBALANCE_IN_PROGRESS))
    else:
        step.fire(HEARTBEAT_ACCEPTED)
        step.respond(ref, HeartbeatResponse(ErrorCode.NONE))
    return state.with_group(group)
