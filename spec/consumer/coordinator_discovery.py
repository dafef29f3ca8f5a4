"""Finding the group coordinator and losing it (AbstractCoordinator.lookupCoordinator,
FindCoordinatorResponseHandler, markCoordinatorUnknown; reference §6)."""

from __future__ import annotations

from dataclasses import replace

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import FindCoordinatorRequest
from groupspec.vocabulary.responses import FindCoordinatorResponse

from .context import StepContext
from .errors import is_retriable
from .membership import fail, request_rejoin
from .outcome import fatal, retriable_commit_failed
from .rules import (
    CLIENT_COORDINATOR_COMMIT_FAILED,
    CLIENT_COORDINATOR_JOIN_FUTURE_FAILED,
    CLIENT_COORDINATOR_MARKED_UNKNOWN,
    CLIENT_DISCOVERY_FATAL,
    CLIENT_DISCOVERY_FIND_COORDINATOR_SENT,
    CLIENT_DISCOVERY_FOUND,
    CLIENT_DISCOVERY_LOOKUP_PENDING,
    CLIENT_DISCOVERY_RETRIABLE_ERROR,
)
from .state import ConsumerState, InFlight, RequestKind


def lookup_coordinator(ctx: StepContext, state: ConsumerState) -> ConsumerState:
    """Send FindCoordinator unless one is already in flight."""
    if state.in_flight_of(RequestKind.FIND_COORDINATOR):
        ctx.fire(CLIENT_DISCOVERY_LOOKUP_PENDING)
        return state
    ctx.fire(CLIENT_DISCOVERY_FIND_COORDINATOR_SENT)
    request = FindCoordinatorRequest(
        ctx.config.group_id, api_version=ctx.config.find_coordinator_version
    )
    return ctx.send(state, RequestKind.FIND_COORDINATOR, request)


def on_find_coordinator_response(
    ctx: StepContext, state: ConsumerState, sent: InFlight, body: FindCoordinatorResponse
) -> ConsumerState:
    """Learn the coordinator, or retry later, or fail on an authorization error."""
    del sent  # FindCoordinator answers do not depend on the generation
    error = body.error_code
    if error is ErrorCode.NONE:
        # Discovery also restarts the session timer (Heartbeat.resetSessionTimeout).
        ctx.fire(CLIENT_DISCOVERY_FOUND)
        return replace(state, coordinator=body.node_id)
    if error is ErrorCode.GROUP_AUTHORIZATION_FAILED:
        ctx.fire(CLIENT_DISCOVERY_FATAL)
        return fail(ctx, state, fatal("FindCoordinator", error, "GroupAuthorizationException"))
    if is_retriable(error):
        ctx.fire(CLIENT_DISCOVERY_RETRIABLE_ERROR)
        return state
    # Kafka keeps a non-retriable lookup failure and throws it from the next poll.
    ctx.fire(CLIENT_DISCOVERY_FATAL)
    return fail(ctx, state, fatal("FindCoordinator", error))


def mark_coordinator_unknown(ctx: StepContext, state: ConsumerState) -> ConsumerState:
    """Forget the coordinator and fail every request in flight to it, as a disconnect does.

    Each pending handler then sees a DisconnectException: the join future fails (the member
    will rejoin with its current generation), a commit fails retriably, and heartbeats, leaves
    and lookups are simply dropped.
    """
    ctx.fire(CLIENT_COORDINATOR_MARKED_UNKNOWN)
    for entry in state.in_flight:
        if entry.kind in (RequestKind.JOIN_GROUP, RequestKind.SYNC_GROUP):
            ctx.fire(CLIENT_COORDINATOR_JOIN_FUTURE_FAILED)
            state = request_rejoin(state)
        elif entry.kind is RequestKind.OFFSET_COMMIT:
            ctx.fire(CLIENT_COORDINATOR_COMMIT_FAILED)
            ctx.effects.raise_error(retriable_commit_failed("OffsetCommit"))
    return replace(state, coordinator=None, in_flight=())
