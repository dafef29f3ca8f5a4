"""Leaving the group: poll timeout and close (AbstractCoordinator.maybeLeaveGroup,
handlePollTimeoutExpiry, close, LeaveGroupResponseHandler; reference §2.5, §3, §9)."""

from __future__ import annotations

from dataclasses import replace

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import LeaveGroupRequest, MemberIdentity
from groupspec.vocabulary.responses import LeaveGroupResponse

from .context import StepContext
from .membership import reset_state_and_rejoin
from .ownership import on_leave_prepare
from .rules import (
    CLIENT_CLOSE_CLOSED,
    CLIENT_LEAVE_ACKNOWLEDGED,
    CLIENT_LEAVE_ERROR_IGNORED,
    CLIENT_LEAVE_SENT,
    CLIENT_LEAVE_SKIPPED_NOT_MEMBER,
    CLIENT_LEAVE_SKIPPED_STATIC,
    CLIENT_POLL_TIMEOUT_EXPIRED,
)
from .state import ConsumerState, InFlight, MemberState, RequestKind

# LeaveGroup v5 added a reason per member.
_REASON_SINCE = 5


def maybe_leave_group(ctx: StepContext, state: ConsumerState, reason: str) -> ConsumerState:
    """Send LeaveGroup if a dynamic member of a group; then forget generation and member id.

    Static members never send LeaveGroup (their membership ends with the session timeout),
    and a member without an id, unjoined, or without a coordinator has nothing to leave.
    """
    if ctx.config.is_static:
        ctx.fire(CLIENT_LEAVE_SKIPPED_STATIC)
    elif (
        state.coordinator_known
        and state.member_state is not MemberState.UNJOINED
        and state.generation.has_member_id
    ):
        ctx.fire(CLIENT_LEAVE_SENT)
        identity = MemberIdentity(
            state.generation.member_id,
            reason=reason if ctx.config.leave_group_version >= _REASON_SINCE else None,
        )
        request = LeaveGroupRequest(
            ctx.config.group_id, (identity,), api_version=ctx.config.leave_group_version
        )
        state = ctx.send(state, RequestKind.LEAVE_GROUP, request)
    else:
        ctx.fire(CLIENT_LEAVE_SKIPPED_NOT_MEMBER)
    return reset_state_and_rejoin(state, reset_member_id=True)


def on_poll_timeout(ctx: StepContext, state: ConsumerState) -> ConsumerState:
    """max.poll.interval.ms expired: leave proactively; the next poll rejoins from scratch."""
    ctx.fire(CLIENT_POLL_TIMEOUT_EXPIRED)
    return maybe_leave_group(ctx, state, "consumer poll timeout has expired.")


def on_close(ctx: StepContext, state: ConsumerState) -> ConsumerState:
    """close(): drop owned partitions (revoked, or lost if no longer a member), then leave."""
    ctx.fire(CLIENT_CLOSE_CLOSED)
    state = on_leave_prepare(ctx, state)
    state = maybe_leave_group(ctx, state, "the consumer is being closed")
    return replace(state, closed=True)


def on_leave_group_response(
    ctx: StepContext, state: ConsumerState, sent: InFlight, body: LeaveGroupResponse
) -> ConsumerState:
    """A LeaveGroup answer changes nothing: leaving is a best-effort, one-shot attempt."""
    del sent
    if body.error_code is ErrorCode.NONE:
        ctx.fire(CLIENT_LEAVE_ACKNOWLEDGED)
    else:
        ctx.fire(CLIENT_LEAVE_ERROR_IGNORED)
    return state
