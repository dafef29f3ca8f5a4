"""ListGroups and DeleteGroups on consumer-protocol groups (docs/protocol.md §12.17).

Kafka 4.3.0: `G/GroupMetadataManager.java` (`listGroups` filters by state and type, case
insensitively), `G/modern/consumer/ConsumerGroup.java` (`validateDeleteGroup`: NON_EMPTY_GROUP
unless the group is Empty) and `G/GroupCoordinatorService.java` (`deleteGroups`; the group's
offsets go with it, `OffsetMetadataManager.deleteAllOffsets`).
"""

from __future__ import annotations

from groupspec.vocabulary.consumer_groups import ConsumerGroupState
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import DeleteGroupsRequest, ListGroupsRequest, RequestRef
from groupspec.vocabulary.responses import (
    DeleteGroupsResponse,
    DeleteGroupsResult,
    ListedGroup,
    ListGroupsResponse,
)

from .rules import (
    CG_DELETE_GROUPS_DELETED,
    CG_DELETE_GROUPS_NON_EMPTY,
    CG_DELETE_GROUPS_UNKNOWN_GROUP,
    CG_LIST_GROUPS_FILTERED_OUT,
    CG_LIST_GROUPS_LISTED,
)
from .state import ConsumerGroupsState
from .step import Step

# A consumer-protocol group's type and protocol type as ListGroups reports them.
CONSUMER_GROUP_TYPE = "consumer"


def list_groups(
    step: Step, state: ConsumerGroupsState, ref: RequestRef, request: ListGroupsRequest
) -> ConsumerGroupsState:
    """Every consumer group that passes the request's filters; the state does not change."""
    states = {name.lower() for name in request.states_filter}
    types = {name.lower() for name in request.types_filter}
    listed = []
    for group in state.iter_groups():
        name = group.state.value
        if (states and name.lower() not in states) or (types and CONSUMER_GROUP_TYPE not in types):
            step.fire(CG_LIST_GROUPS_FILTERED_OUT)
            continue
        step.fire(CG_LIST_GROUPS_LISTED)
        listed.append(ListedGroup(group.group_id, CONSUMER_GROUP_TYPE, name, CONSUMER_GROUP_TYPE))
    step.respond(ref, ListGroupsResponse(ErrorCode.NONE, tuple(listed)))
    return state


def delete_groups(
    step: Step, state: ConsumerGroupsState, ref: RequestRef, request: DeleteGroupsRequest
) -> ConsumerGroupsState:
    """Delete each named Empty group with its offsets; answer one result per group."""
    results = []
    for group_id in request.group_ids:
        group = state.group(group_id)
        if group is None:
            step.fire(CG_DELETE_GROUPS_UNKNOWN_GROUP)
            results.append(DeleteGroupsResult(group_id, ErrorCode.GROUP_ID_NOT_FOUND))
        elif group.state is not ConsumerGroupState.EMPTY:
            step.fire(CG_DELETE_GROUPS_NON_EMPTY)
            results.append(DeleteGroupsResult(group_id, ErrorCode.NON_EMPTY_GROUP))
        else:
            step.fire(CG_DELETE_GROUPS_DELETED)
            state = state.deleted(group_id)
            results.append(DeleteGroupsResult(group_id, ErrorCode.NONE))
    step.respond(ref, DeleteGroupsResponse(tuple(results)))
    return state
