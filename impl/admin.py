"""FindCoordinator, DescribeGroups, ListGroups and DeleteGroups."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode, append_error_to_response
from groupspec.vocabulary.group_state import DEAD, EMPTY, STABLE
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    ListGroupsRequest,
)
from groupspec.vocabulary.responses import (
    DeleteGroupsResponse,
    DeleteGroupsResult,
    DescribedGroup,
    DescribedMember,
    DescribeGroupsResponse,
    FindCoordinatorResponse,
    ListedGroup,
    ListGroupsResponse,
)

from .log import GroupMetadataWrite, LogRecord, OffsetWrite
from .runtime import Ref, Runtime
from .state import Group

CLASSIC_GROUP_TYPE = "classic"


def find_coordinator(rt: Runtime, ref: Ref, request: FindCoordinatorRequest) -> None:
    """This broker coordinates the group unless another broker leads its partition."""
    if rt.unowned and rt.partition_of(request.key) in rt.unowned:
        # rule: find_coordinator.not_available
        rt.respond(ref, FindCoordinatorResponse(ErrorCode.COORDINATOR_NOT_AVAILABLE, request.key))
        return
    # rule: find_coordinator.found
    rt.respond(ref, FindCoordinatorResponse(ErrorCode.NONE, request.key, rt.config.broker_id))


def describe_groups(rt: Runtime, ref: Ref, request: DescribeGroupsRequest) -> None:
    """Describe each group: Stable shows metadata and assignments, other states do not."""
    rt.respond(
        ref,
        DescribeGroupsResponse(
            tuple(describe_group(rt, gid, request.api_version) for gid in request.group_ids)
        ),
    )


# From this DescribeGroups version on, a group the coordinator does not hold is an error.
DESCRIBE_NOT_FOUND_SINCE = 6


def describe_group(rt: Runtime, group_id: str, api_version: int = 5) -> DescribedGroup:
    """One group as DescribeGroups (at `api_version`) reports it, after the coordinator
    check."""
    error = rt.coordinator_error(group_id)
    if error is not None:
        # rule: coordinator.check_failed
        return DescribedGroup(error, group_id, "", "", "")
    group = rt.groups.get(group_id)
    if group is None:
        # rule: describe.unknown_group
        error = (
            ErrorCode.GROUP_ID_NOT_FOUND
            if api_version >= DESCRIBE_NOT_FOUND_SINCE
            else ErrorCode.NONE
        )
        return DescribedGroup(error, group_id, DEAD.value, "", "")
    if group.state is STABLE:
        # rule: describe.stable_group
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
            for m in group.members.values()
        )
        return DescribedGroup(
            ErrorCode.NONE,
            group_id,
            group.state.value,
            group.protocol_type or "",
            protocol,
            members,
        )
    # rule: describe.unstable_group
    members = tuple(
        DescribedMember(m.member_id, m.group_instance_id, m.client_id, m.client_host, b"", b"")
        for m in group.members.values()
    )
    return DescribedGroup(
        ErrorCode.NONE, group_id, group.state.value, group.protocol_type or "", "", members
    )


def list_groups(rt: Runtime, ref: Ref, request: ListGroupsRequest) -> None:
    """Every group this broker serves now, filtered case-insensitively by state and type."""
    # rule: list.groups
    states = {s.lower() for s in request.states_filter}
    types = {t.lower() for t in request.types_filter}
    listed: list[ListedGroup] = []
    if not types or CLASSIC_GROUP_TYPE in types:
        for group in rt.groups.values():
            if states and group.state.value.lower() not in states:
                continue
            if rt.blocked and rt.coordinator_error(group.group_id) is not None:
                continue
            listed.append(ListedGroup(group.group_id, group.protocol_type or "", group.state.value))
    error = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if rt.loading else ErrorCode.NONE
    rt.respond(ref, ListGroupsResponse(error, tuple(listed)))


def delete_groups(rt: Runtime, ref: Ref, request: DeleteGroupsRequest) -> None:
    """Delete each group that is Empty: tombstone its offsets and its metadata."""
    results = []
    for group_id in request.group_ids:
        # rule: coordinator.check_failed
        error = rt.coordinator_error(group_id)
        if error is None:
            error = delete_group(rt, rt.groups.get(group_id))
        results.append(DeleteGroupsResult(group_id, error))
    rt.respond(ref, DeleteGroupsResponse(tuple(results)))


def delete_group(rt: Runtime, group: Group | None) -> ErrorCode:
    """Delete one group if it is Empty: tombstone its offsets and metadata; its error code."""
    if group is None:
        # rule: delete.unknown_group
        return ErrorCode.GROUP_ID_NOT_FOUND
    if group.state is not EMPTY:
        # rule: delete.non_empty_group
        return ErrorCode.NON_EMPTY_GROUP
    group_id = group.group_id
    records: list[LogRecord] = [OffsetWrite(group_id, t, p, None) for t, p in group.offsets]
    records.append(GroupMetadataWrite(group_id, None))
    error = rt.append(group.partition, group_id, records)
    if error is not None:
        # rule: delete.write_failed
        return append_error_to_response(error)
    # rule: delete.empty_group_deleted
    group.transition_to(DEAD, rt.now)
    del rt.groups[group_id]
    return ErrorCode.NONE
