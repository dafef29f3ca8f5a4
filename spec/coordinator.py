"""The group coordinator specification: the public entry point (`GroupCoordinatorSpec.step`).

`step(state, input, now_ms)` returns every outcome Kafka allows: exactly one where Kafka is
deterministic, several where it leaves a choice to the implementation (leader choice,
protocol-vote ties, append failures when configured). Before any group logic, each request
passes the coordinator-level checks of reference §2.0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from groupspec.vocabulary.errors import ErrorCode, InputError
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    Received,
    Request,
    RequestRef,
    SyncGroupRequest,
)
from groupspec.vocabulary.responses import (
    DeleteGroupsResponse,
    DeleteGroupsResult,
    DescribedGroup,
    DescribeGroupsResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    ListGroupsResponse,
    OffsetFetchResponse,
    ResponseBody,
    SyncGroupResponse,
)

from .admin import delete_group, describe_group, find_coordinator, list_groups
from .config import CoordinatorConfig
from .errors import UnknownApiError
from .events import (
    FinishLoading,
    HeartbeatExpired,
    JoinTimerExpired,
    OffsetRetentionCheck,
    StartLoading,
    SyncTimerExpired,
    TimerEvent,
    Unload,
)
from .hashing import partition_for
from .heartbeat import heartbeat
from .join import join_group
from .leave import leave_group
from .loading import on_finish_loading, on_start_loading, on_unload
from .offsets import commit_error_response, offset_commit, offset_fetch
from .rules import COORDINATOR_CHECK_FAILED, COORDINATOR_INVALID_GROUP_ID
from .state import CoordinatorState
from .step import Outcome, Step, all_outcomes
from .sync import sync_group
from .timers import (
    armed_timers,
    on_heartbeat_expired,
    on_join_timer_expired,
    on_offset_retention_check,
    on_sync_timer_expired,
)

Input = Received | TimerEvent | StartLoading | FinishLoading | Unload

# Handlers dispatched on the input's or request's type: each takes the one type it is filed under.
_EventHandler = Callable[[Step, CoordinatorState, Any], CoordinatorState]
_RequestHandler = Callable[[Step, CoordinatorState, RequestRef, Any], CoordinatorState]

# Requests whose group id must be non-empty (INVALID_GROUP_ID otherwise).
_NEEDS_NON_EMPTY_GROUP_ID = (
    JoinGroupRequest,
    SyncGroupRequest,
    HeartbeatRequest,
    LeaveGroupRequest,
)


class GroupCoordinatorSpec:
    """The classic group coordinator as a relation over (state, input) -> outcomes."""

    def __init__(self, config: CoordinatorConfig | None = None) -> None:
        self.config = config if config is not None else CoordinatorConfig()

    def initial_state(self, unowned_partitions: frozenset[int] = frozenset()) -> CoordinatorState:
        """A coordinator that leads every offsets partition except `unowned_partitions`."""
        num = self.config.offsets_topic_num_partitions
        for partition in unowned_partitions:
            if not 0 <= partition < num:
                raise InputError(f"partition {partition} is outside [0, {num})")
        return CoordinatorState(
            unowned_partitions=frozenset(unowned_partitions),
            retention_check_deadline_ms=self.config.offsets_retention_check_interval_ms,
        )

    def partition_for(self, group_id: str) -> int:
        """The offsets partition that owns `group_id`."""
        return partition_for(group_id, self.config.offsets_topic_num_partitions)

    def armed_timers(self, state: CoordinatorState) -> tuple[tuple[int, TimerEvent], ...]:
        """Every armed timer as (deadline_ms, event)."""
        return armed_timers(state)

    def due_timers(self, state: CoordinatorState, now_ms: int) -> tuple[TimerEvent, ...]:
        """The timers whose deadline has passed at `now_ms`."""
        return tuple(event for deadline, event in armed_timers(state) if deadline <= now_ms)

    def step(self, state: CoordinatorState, event: Input, now_ms: int = 0) -> tuple[Outcome, ...]:
        """Every outcome Kafka allows when `event` happens in `state` at time `now_ms`."""
        if not isinstance(now_ms, int) or isinstance(now_ms, bool) or now_ms < 0:
            raise InputError(f"now_ms must be a non-negative integer, got {now_ms!r}")
        handler = self._handler_for(event)
        return all_outcomes(self.config, now_ms, lambda step: handler(step, state, event))

    def _handler_for(self, event: object) -> _EventHandler:
        if isinstance(event, Received):
            return self._on_request
        handlers: dict[type, _EventHandler] = {
            HeartbeatExpired: on_heartbeat_expired,
            JoinTimerExpired: on_join_timer_expired,
            SyncTimerExpired: on_sync_timer_expired,
            OffsetRetentionCheck: on_offset_retention_check,
            StartLoading: on_start_loading,
            FinishLoading: on_finish_loading,
            Unload: on_unload,
        }
        handler = handlers.get(type(event))
        if handler is None:
            raise UnknownApiError(f"not a request or event the spec models: {event!r}")
        return handler

    def _on_request(
        self, step: Step, state: CoordinatorState, received: Received
    ) -> CoordinatorState:
        request = received.request
        ref = received.ref
        serve = COORDINATOR_LEVEL_HANDLERS.get(type(request))
        if serve is not None:
            return serve(self, step, state, ref, request)
        handler = GROUP_HANDLERS.get(type(request))
        if handler is None:
            raise UnknownApiError(f"not a request the spec models: {request!r}")
        return self._on_group_request(step, state, ref, request, handler)

    def _on_group_request(
        self,
        step: Step,
        state: CoordinatorState,
        ref: RequestRef,
        request: Any,
        handler: _RequestHandler,
    ) -> CoordinatorState:
        """A request for one group (`request.group_id`): the coordinator checks, then `handler`."""
        if isinstance(request, _NEEDS_NON_EMPTY_GROUP_ID) and request.group_id == "":
            step.fire(COORDINATOR_INVALID_GROUP_ID)
            step.respond(ref, _error_response(request, ErrorCode.INVALID_GROUP_ID))
            return state
        error = self._coordinator_error(state, request.group_id)
        if error is not None:
            step.fire(COORDINATOR_CHECK_FAILED)
            step.respond(ref, _error_response(request, remap_coordinator_error(request, error)))
            return state
        return handler(step, state, ref, request)

    def _coordinator_error(self, state: CoordinatorState, group_id: str) -> ErrorCode | None:
        """NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS for the group's partition, if any."""
        partition = self.partition_for(group_id)
        if partition in state.unowned_partitions:
            return ErrorCode.NOT_COORDINATOR
        if partition in state.loading_partitions:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return None

    def _find_coordinator(
        self, step: Step, state: CoordinatorState, ref: RequestRef, request: FindCoordinatorRequest
    ) -> CoordinatorState:
        leads = self.partition_for(request.key) not in state.unowned_partitions
        step.respond(ref, find_coordinator(step, request, leads, self.config.broker_id))
        return state

    def _describe_groups(
        self, step: Step, state: CoordinatorState, ref: RequestRef, request: DescribeGroupsRequest
    ) -> CoordinatorState:
        described = tuple(
            self._describe_one(step, state, gid, request.api_version) for gid in request.group_ids
        )
        step.respond(ref, DescribeGroupsResponse(described))
        return state

    def _describe_one(
        self, step: Step, state: CoordinatorState, group_id: str, api_version: int
    ) -> DescribedGroup:
        error = self._coordinator_error(state, group_id)
        if error is not None:
            step.fire(COORDINATOR_CHECK_FAILED)
            return DescribedGroup(error, group_id, "", "", "")
        return describe_group(step, state, group_id, api_version)

    def _delete_groups(
        self, step: Step, state: CoordinatorState, ref: RequestRef, request: DeleteGroupsRequest
    ) -> CoordinatorState:
        results = []
        for group_id in request.group_ids:
            error = self._coordinator_error(state, group_id)
            if error is not None:
                step.fire(COORDINATOR_CHECK_FAILED)
                results.append(DeleteGroupsResult(group_id, error))
                continue
            state, result = delete_group(step, state, group_id)
            results.append(result)
        step.respond(ref, DeleteGroupsResponse(tuple(results)))
        return state

    def _list_groups(
        self, step: Step, state: CoordinatorState, ref: RequestRef, request: ListGroupsRequest
    ) -> CoordinatorState:
        visible = tuple(
            g for g in state.groups if self._coordinator_error(state, g.group_id) is None
        )
        error = (
            ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if state.loading_partitions else ErrorCode.NONE
        )
        step.respond(ref, ListGroupsResponse(error, list_groups(step, request, visible)))
        return state


# The requests dispatched on their type. Coordinator-level ones are served by the spec itself
# (they look at several groups, or none, and check each group's partition where they need to);
# a group request first passes the coordinator checks of reference §2.0 (a non-empty group id
# where `_NEEDS_NON_EMPTY_GROUP_ID` asks for one, this broker leading the group's partition and
# not loading it), failing with its `ERROR_RESPONSES` shape, and then goes to its handler.
_CoordinatorLevelHandler = Callable[
    [GroupCoordinatorSpec, Step, CoordinatorState, RequestRef, Any], CoordinatorState
]
COORDINATOR_LEVEL_HANDLERS: dict[type, _CoordinatorLevelHandler] = {
    FindCoordinatorRequest: GroupCoordinatorSpec._find_coordinator,
    ListGroupsRequest: GroupCoordinatorSpec._list_groups,
    DescribeGroupsRequest: GroupCoordinatorSpec._describe_groups,
    DeleteGroupsRequest: GroupCoordinatorSpec._delete_groups,
}
GROUP_HANDLERS: dict[type, _RequestHandler] = {
    JoinGroupRequest: join_group,
    SyncGroupRequest: sync_group,
    HeartbeatRequest: heartbeat,
    LeaveGroupRequest: leave_group,
    OffsetCommitRequest: offset_commit,
    OffsetFetchRequest: offset_fetch,
}
ERROR_RESPONSES: dict[type, Callable[[Any, ErrorCode], ResponseBody]] = {
    JoinGroupRequest: lambda request, error: JoinGroupResponse(error, member_id=request.member_id),
    SyncGroupRequest: lambda request, error: SyncGroupResponse(error),
    HeartbeatRequest: lambda request, error: HeartbeatResponse(error),
    LeaveGroupRequest: lambda request, error: LeaveGroupResponse(error),
    OffsetCommitRequest: commit_error_response,
    OffsetFetchRequest: lambda request, error: OffsetFetchResponse(error),
}


def remap_coordinator_error(request: Request, error: ErrorCode) -> ErrorCode:
    """Kafka's remaps while a partition loads: Heartbeat answers NONE, SyncGroup REBALANCE_IN_PROGRESS."""
    if error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
        if isinstance(request, HeartbeatRequest):
            return ErrorCode.NONE
        if isinstance(request, SyncGroupRequest):
            return ErrorCode.REBALANCE_IN_PROGRESS
    return error


def _error_response(request: Request, error: ErrorCode) -> ResponseBody:
    """The response a group request gets when it fails before reaching group logic."""
    shape = ERROR_RESPONSES.get(type(request))
    if shape is None:
        raise UnknownApiError(f"no error response shape for {type(request).__name__}")
    return shape(request, error)
