"""Heartbeat: the hot path. A dict lookup, a generation compare, a deadline write."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import EMPTY, PREPARING_REBALANCE
from groupspec.vocabulary.requests import HeartbeatRequest
from groupspec.vocabulary.responses import HeartbeatResponse

from .runtime import Ref, Runtime
from .timer_heap import HEARTBEAT

# Heartbeat responses carry only an error code: one shared immutable object per code.
_RESPONSES = {error: HeartbeatResponse(error) for error in ErrorCode}
_NONE = _RESPONSES[ErrorCode.NONE]
_REBALANCING = _RESPONSES[ErrorCode.REBALANCE_IN_PROGRESS]
_UNKNOWN = _RESPONSES[ErrorCode.UNKNOWN_MEMBER_ID]
_FENCED = _RESPONSES[ErrorCode.FENCED_INSTANCE_ID]
_ILLEGAL_GENERATION = _RESPONSES[ErrorCode.ILLEGAL_GENERATION]


def heartbeat(rt: Runtime, ref: Ref, request: HeartbeatRequest) -> None:
    """Handle a Heartbeat: validate, reset the member's session deadline, answer."""
    group_id = request.group_id
    if (rt.blocked or not group_id) and _refused_before_group_logic(rt, ref, group_id):
        return
    group = rt.groups.get(group_id)
    if group is None:
        # rule: heartbeat.unknown_group
        rt.respond(ref, _UNKNOWN)
        return
    member_id = request.member_id
    instance = request.group_instance_id
    if instance is not None:
        # rule: heartbeat.invalid_member_or_generation
        current = group.static_members.get(instance)
        if current != member_id:
            rt.respond(ref, _UNKNOWN if current is None else _FENCED)
            return
    member = group.members.get(member_id)
    if member is None:
        # rule: heartbeat.invalid_member_or_generation
        rt.respond(ref, _UNKNOWN)  # also a pending member: it has no session yet
        return
    if request.generation_id != group.generation_id:
        # rule: heartbeat.invalid_member_or_generation
        rt.respond(ref, _ILLEGAL_GENERATION)
        return
    state = group.state
    if state is EMPTY:
        # rule: heartbeat.empty_group
        rt.respond(ref, _UNKNOWN)
        return
    # Only the deadline moves; the heap entry already queued surfaces no later than it and is
    # re-pushed then (lazy deletion, timer_heap.py).
    deadline = rt.now + member.session_timeout_ms
    member.heartbeat_deadline_ms = deadline
    entry = member.heartbeat_entry
    if entry is None or deadline < entry[0]:
        member.heartbeat_entry = rt.timers.push(deadline, HEARTBEAT, group, member)
    # rule: heartbeat.preparing_rebalance_in_progress
    # rule: heartbeat.accepted
    rt.respond(ref, _REBALANCING if state is PREPARING_REBALANCE else _NONE)


def _refused_before_group_logic(rt: Runtime, ref: Ref, group_id: str) -> bool:
    """Coordinator-level checks: empty group id, partition elsewhere or loading."""
    if group_id == "":
        # rule: coordinator.invalid_group_id
        rt.respond(ref, _RESPONSES[ErrorCode.INVALID_GROUP_ID])
        return True
    error = rt.coordinator_error(group_id)
    if error is None:
        return False
    # rule: coordinator.check_failed
    # Kafka answers a heartbeat NONE while the partition loads: the client keeps its session.
    rt.respond(ref, _NONE if error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS else _RESPONSES[error])
    return True
