"""FindCoordinator (reference §6), DescribeGroups, ListGroups and DeleteGroups (§2.8)."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode, append_error_to_response
from groupspec.vocabulary.group_state import DEAD, EMPTY, STABLE
from groupspec.vocabulary.requests import FindCoordinatorRequest, ListGroupsRequest
from groupspec.vocabulary.responses import (
    DeleteGroupsResult,
    DescribedGroup,
    DescribedMember,
    FindCoordinatorResponse,
    ListedGroup,
)

from .persistence import group_tombstone, offset_tombstone
from .rules import (
    DELETE_EMPTY_GROUP_DELETED,
    DELETE_NON_EMPTY_GROUP,
    DELETE_UNKNOWN_GROUP,
    DELETE_WRITE_FAILED,
    DESCRIBE_STABLE_GROUP,
    DESCRIBE_UNKNOWN_GROUP,
    DESCRIBE_UNSTABLE_GROUP,
    FIND_COORDINATOR_FOUND,
    FIND_COORDINATOR_NOT_AVAILABLE,
    LIST_GROUPS,
)
from .state import CoordinatorState, Group
from .step import Step

CLASSIC_GROUP_TYPE = "classic"


def find_coordinator(
    step: Step, request: FindCoordinatorRequest, leads_partition: bool, broker_id: int
) -> FindCoordinatorResponse:
    """This broker, if it leads the key's offsets partition (loading or not)."""
    if not leads_partition:
        step.fire(FIND_COORDINATOR_NOT_AVAILABLE)
        return FindCoordinatorResponse(ErrorCode.COORDINATOR_NOT_AVAILABLE, request.key)
    step.fire(FIND_COORDINATOR_FOUND)
    return FindCoordinatorResponse(ErrorCode.NONE, request.key, broker_id)


# From this DescribeGroups version on, a group the coordinator does not hold is an error.
DESCRIBE_NOT_FOUND_SINCE = 6


def describe_group(
    step: Step, state: CoordinatorState, group_id: str, api_version: int = 5
) -> DescribedGroup:
    """One group as DescribeGroups (at `api_version`) reports it; the coordinator checks were
    done by the caller."""
    group = state.group(group_id)
    if group is None or group.state is DEAD:
        step.fire(DESCRIBE_UNKNOWN_GROUP)
        # Kafka 4.x, GroupMetadataManager.describeGroups: GROUP_ID_NOT_FOUND from v6 (which
        # added the group's error message), a Dead group without error before.
        error = (
            ErrorCode.GROUP_ID_NOT_FOUND
            if api_version >= DESCRIBE_NOT_FOUND_SINCE
            else ErrorCode.NONE
        )
        return DescribedGroup(error, group_id, DEAD.value, "", "")
    if group.state is STABLE:
        step.fire(DESCRIBE_STABLE_GROUP)
        protocol = group.protocol_name or ""
        members = tuple(
            DescribedMember(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.metadata_for(protocol),
                m.assignment,
            )
            for m in group.members
        )
        return DescribedGroup(
            ErrorCode.NONE,
            group_id,
            group.state.value,
            group.protocol_type or "",
            protocol,
            members,
        )
    step.fire(DESCRIBE_UNSTABLE_GROUP)
    members = tuple(
        DescribedMember(m.member_id, m.group_instance_id, m.client_id, m.client_host, b"", b"")
        for m in group.members
    )
    return DescribedGroup(
        ErrorCode.NONE, group_id, group.state.value, group.protocol_type or "", "", members
    )


def list_groups(
    step: Step, request: ListGroupsRequest, visible: tuple[Group, ...]
) -> tuple[ListedGroup, ...]:
    """The groups ListGroups reports, filtered case-insensitively by state and type."""
    step.fire(LIST_GROUPS)
    states = {s.lower() for s in request.states_filter}
    types = {t.lower() for t in request.types_filter}
    listed = []
    for group in visible:
        if states and group.state.value.lower() not in states:
            continue
        if types and CLASSIC_GROUP_TYPE not in types:
            continue
        listed.append(ListedGroup(group.group_id, group.protocol_type or "", group.state.value))
    return tuple(listed)


def delete_group(
    step: Step, state: CoordinatorState, group_id: str
) -> tuple[CoordinatorState, DeleteGroupsResult]:
    """Delete one group if it is Empty: tombstone its offsets and metadata."""
    group = state.group(group_id)
    if group is None or group.state is DEAD:
        step.fire(DELETE_UNKNOWN_GROUP)
        return state, DeleteGroupsResult(group_id, ErrorCode.GROUP_ID_NOT_FOUND)
    if group.state is not EMPTY:
        step.fire(DELETE_NON_EMPTY_GROUP)
        return state, DeleteGroupsResult(group_id, ErrorCode.NON_EMPTY_GROUP)
    records = [offset_tombstone(group_id, tp) for tp, _ in group.offsets]
    records.append(group_tombstone(group_id))
    failure = step.write(records)
    if failure is not None:
        step.fire(DELETE_WRITE_FAILED)
        return state, DeleteGroupsResult(group_id, append_error_to_response(failure))
    step.fire(DELETE_EMPTY_GROUP_DELETED)
    # Kafka moves the group to Dead and then drops it; the call enforces that the move is legal.
    group.transition_to(DEAD, step.now_ms)
    return state.without_group(group_id), DeleteGroupsResult(group_id, ErrorCode.NONE)
