"""The heartbeat thread (AbstractCoordinator.HeartbeatThread, sendHeartbeatRequest,
HeartbeatResponseHandler; reference §2.4, §3 "Client side")."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import HeartbeatRequest
from groupspec.vocabulary.responses import HeartbeatResponse

from .context import StepContext
from .coordinator_discovery import mark_coordinator_unknown
from .membership import fail, request_rejoin, reset_state_and_rejoin
from .outcome import fatal
from .rules import (
    CLIENT_HEARTBEAT_COORDINATOR_LOST,
    CLIENT_HEARTBEAT_FAILED_RETRY,
    CLIENT_HEARTBEAT_FENCED,
    CLIENT_HEARTBEAT_OK,
    CLIENT_HEARTBEAT_REBALANCE_IN_PROGRESS_IGNORED,
    CLIENT_HEARTBEAT_REBALANCE_IN_PROGRESS_REJOIN,
    CLIENT_HEARTBEAT_RESET_GENERATION,
    CLIENT_HEARTBEAT_SENT,
    CLIENT_HEARTBEAT_SESSION_TIMEOUT,
    CLIENT_HEARTBEAT_STALE_ERROR_IGNORED,
)
from .state import ConsumerState, InFlight, MemberState, RequestKind


def send_heartbeat(ctx: StepContext, state: ConsumerState) -> ConsumerState:
    """Send a Heartbeat with the current generation and member id."""
    ctx.fire(CLIENT_HEARTBEAT_SENT)
    request = HeartbeatRequest(
        group_id=ctx.config.group_id,
        generation_id=state.generation.generation_id,
        member_id=state.generation.member_id,
        group_instance_id=ctx.config.group_instance_id,
        api_version=ctx.config.heartbeat_version,
    )
    return ctx.send(state, RequestKind.HEARTBEAT, request)


def on_session_timeout(ctx: StepContext, state: ConsumerState) -> ConsumerState:
    """No heartbeat succeeded within the session timeout: check the coordinator again."""
    ctx.fire(CLIENT_HEARTBEAT_SESSION_TIMEOUT)
    return mark_coordinator_unknown(ctx, state)


def on_heartbeat_response(
    ctx: StepContext, state: ConsumerState, sent: InFlight, body: HeartbeatResponse
) -> ConsumerState:
    """Handle a Heartbeat answer.

    REBALANCE_IN_PROGRESS makes a Stable member rejoin and is ignored while already
    rebalancing; generation errors reset the member only if its generation is unchanged since
    the heartbeat went out (stale answers are ignored). FENCED_INSTANCE_ID for the current
    generation is fatal. Other errors only make the thread retry after a backoff.
    """
    error = body.error_code
    if error is ErrorCode.NONE:
        ctx.fire(CLIENT_HEARTBEAT_OK)
        return state
    if error in (ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR):
        ctx.fire(CLIENT_HEARTBEAT_COORDINATOR_LOST)
        return mark_coordinator_unknown(ctx, state)
    if error is ErrorCode.REBALANCE_IN_PROGRESS:
        if state.member_state is MemberState.STABLE:
            ctx.fire(CLIENT_HEARTBEAT_REBALANCE_IN_PROGRESS_REJOIN)
            return request_rejoin(state)
        ctx.fire(CLIENT_HEARTBEAT_REBALANCE_IN_PROGRESS_IGNORED)
        return state
    if error in (
        ErrorCode.ILLEGAL_GENERATION,
        ErrorCode.UNKNOWN_MEMBER_ID,
        ErrorCode.FENCED_INSTANCE_ID,
    ):
        if state.generation != sent.sent_generation:
            ctx.fire(CLIENT_HEARTBEAT_STALE_ERROR_IGNORED)
            return state
        # ILLEGAL_GENERATION keeps the member id: it is still valid.
        state = reset_state_and_rejoin(
            state, reset_member_id=error is not ErrorCode.ILLEGAL_GENERATION
        )
        if error is ErrorCode.FENCED_INSTANCE_ID:
            ctx.fire(CLIENT_HEARTBEAT_FENCED)
            return fail(ctx, state, fatal("Heartbeat", error, "FencedInstanceIdException"))
        ctx.fire(CLIENT_HEARTBEAT_RESET_GENERATION)
        return state
    # Anything else (authorization included) only fails this heartbeat; the thread retries.
    ctx.fire(CLIENT_HEARTBEAT_FAILED_RETRY)
    return state
