"""ListGroups and DeleteGroups on consumer-protocol groups (Kafka 4.3.0's
`GroupMetadataManager.listGroups`, `ConsumerGroup.validateDeleteGroup` and
`GroupCoordinatorService.deleteGroups`): a consumer group is listed with type "consumer" and
its state, and only an Empty one may be deleted, its offsets with it."""

from __future__ import annotations

from groupspec.vocabulary.consumer_groups import ConsumerGroupState
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import DeleteGroupsRequest, ListGroupsRequest
from groupspec.vocabulary.responses import (
    DeleteGroupsResponse,
    DeleteGroupsResult,
    ListedGroup,
    ListGroupsResponse,
)

from ..state import Ref
from .runtime import Runtime

# A consumer-protocol group's type and protocol type as ListGroups reports them.
CONSUMER_GROUP_TYPE = "consumer"


def list_groups(rt: Runtime, ref: Ref, request: ListGroupsRequest) -> None:
    """Every consumer group that passes the request's (case-insensitive) filters."""
    states = {name.lower() for name in request.states_filter}
    types = {name.lower() for name in request.types_filter}
    listed = []
    if not types or CONSUMER_GROUP_TYPE in types:
        for group_id, group in sorted(rt.groups.items()):
            name = group.state.value
            if states and name.lower() not in states:
                continue
            listed.append(ListedGroup(group_id, CONSUMER_GROUP_TYPE, name, CONSUMER_GROUP_TYPE))
    rt.respond(ref, ListGroupsResponse(ErrorCode.NONE, tuple(listed)))


def delete_groups(rt: Runtime, ref: Ref, request: DeleteGroupsRequest) -> None:
    """Delete each named Empty group with its offsets; one result per group."""
    results = []
    for group_id in request.group_ids:
        group = rt.groups.get(group_id)
        if group is None:
            results.append(DeleteGroupsResult(group_id, ErrorCode.GROUP_ID_NOT_FOUND))
        elif group.state is not ConsumerGroupState.EMPTY:
            results.append(DeleteGroupsResult(group_id, ErrorCode.NON_EMPTY_GROUP))
        else:
            del rt.groups[group_id]
            rt.offsets.pop(group_id, None)
            results.append(DeleteGroupsResult(group_id, ErrorCode.NONE))
    rt.respond(ref, DeleteGroupsResponse(tuple(results)))
