"""SyncGroup: the leader's assignment is stored and handed to every member."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode, append_error_to_response
from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from groupspec.vocabulary.requests import SyncGroupRequest
from groupspec.vocabulary.responses import SyncGroupResponse

from .membership import validate_member_and_generation
from .persistence import group_metadata_record
from .rebalance import (
    maybe_prepare_rebalance_or_complete_join,
    propagate_assignment,
    reset_and_propagate_assignment_error,
)
from .runtime import Ref, Runtime
from .state import Group

_RESPONSES = {error: SyncGroupResponse(error) for error in ErrorCode}


def sync_group(rt: Runtime, ref: Ref, request: SyncGroupRequest) -> None:
    """Handle a SyncGroup."""
    group_id = request.group_id
    if group_id == "":
        # rule: coordinator.invalid_group_id
        rt.respond(ref, _RESPONSES[ErrorCode.INVALID_GROUP_ID])
        return
    if rt.blocked:
        # rule: coordinator.check_failed
        error = rt.coordinator_error(group_id)
        if error is not None:
            if error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
                error = ErrorCode.REBALANCE_IN_PROGRESS  # Kafka's remap while loading
            rt.respond(ref, _RESPONSES[error])
            return
    group = rt.groups.get(group_id)
    if group is None or group.state is EMPTY:
        # rule: sync.unknown_or_empty_group
        rt.respond(ref, _RESPONSES[ErrorCode.UNKNOWN_MEMBER_ID])
        return
    member_id = request.member_id
    error = validate_member_and_generation(
        group, member_id, request.group_instance_id, request.generation_id
    )
    if error is not None:
        # rule: sync.invalid_member_or_generation
        rt.respond(ref, _RESPONSES[error])
        return
    if _is_protocol_inconsistent(
        request.protocol_type, group.protocol_type
    ) or _is_protocol_inconsistent(request.protocol_name, group.protocol_name):
        # rule: sync.inconsistent_protocol
        rt.respond(ref, _RESPONSES[ErrorCode.INCONSISTENT_GROUP_PROTOCOL])
        return
    state = group.state
    if state is PREPARING_REBALANCE:
        # rule: sync.preparing_rebalance_in_progress
        rt.respond(ref, _RESPONSES[ErrorCode.REBALANCE_IN_PROGRESS])
    elif state is COMPLETING_REBALANCE:
        _sync_while_completing(rt, group, ref, request)
    else:
        assert state is STABLE
        # rule: sync.stable_returns_assignment
        remove_pending_sync_member(group, member_id)
        rt.respond(
            ref,
            SyncGroupResponse(
                ErrorCode.NONE,
                group.protocol_type,
                group.protocol_name,
                group.members[member_id].assignment,
            ),
        )


def _is_protocol_inconsistent(requested: str | None, current: str | None) -> bool:
    """A SyncGroup's protocol type/name conflicts only if both are set and differ."""
    return requested is not None and current is not None and requested != current


def remove_pending_sync_member(group: Group, member_id: str) -> None:
    """The member has sent SyncGroup; once everyone has, the sync timer is cancelled."""
    pending = group.pending_sync_members
    pending.discard(member_id)
    if not pending:
        group.sync_timer = None


def _sync_while_completing(rt: Runtime, group: Group, ref: Ref, request: SyncGroupRequest) -> None:
    """Park the SyncGroup; the leader's assignment is persisted, then handed to everyone."""
    member_id = request.member_id
    group.members[member_id].awaiting_sync = ref
    remove_pending_sync_member(group, member_id)
    if group.leader_id != member_id:
        # rule: sync.completing_follower_parked
        return
    given = {a.member_id: a.assignment for a in request.assignments}
    # Members the leader left out get an empty assignment.
    assignments = {mid: given.get(mid, b"") for mid in group.members}
    error = rt.append(group.partition, group.group_id, [group_metadata_record(group, assignments)])
    if error is not None:
        # rule: sync.leader_assignment_write_failed
        reset_and_propagate_assignment_error(rt, group, append_error_to_response(error))
        maybe_prepare_rebalance_or_complete_join(rt, group)
        return
    # rule: sync.leader_assignment_stored_group_stable
    for mid, member in group.members.items():
        member.assignment = assignments[mid]
    propagate_assignment(rt, group, ErrorCode.NONE)
    group.transition_to(STABLE, rt.now)
