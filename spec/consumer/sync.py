"""Syncing: the SyncGroup the consumer sends after joining and what it does with the answer
(AbstractCoordinator.onJoinFollower, onLeaderElected, SyncGroupResponseHandler,
joinGroupIfNeeded's success path; reference §2.3, §7)."""

from __future__ import annotations

from dataclasses import replace

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import SyncGroupAssignment, SyncGroupRequest
from groupspec.vocabulary.responses import SyncGroupResponse

from ..consumer_protocol import CONSUMER_PROTOCOL_TYPE
from .context import StepContext
from .coordinator_discovery import mark_coordinator_unknown
from .membership import fail, request_rejoin, reset_state_and_rejoin
from .outcome import fatal
from .ownership import on_join_complete
from .rules import (
    CLIENT_SYNC_COORDINATOR_LOST,
    CLIENT_SYNC_FATAL_ERROR,
    CLIENT_SYNC_INCONSISTENT_PROTOCOL,
    CLIENT_SYNC_REBALANCE_IN_PROGRESS,
    CLIENT_SYNC_RESET_GENERATION,
    CLIENT_SYNC_RESPONSE_AFTER_RESET,
    CLIENT_SYNC_STABLE,
    CLIENT_SYNC_STALE_ERROR,
    CLIENT_SYNC_UNEXPECTED_ERROR,
)
from .state import ConsumerState, InFlight, MemberState, RequestKind

# SyncGroup v5 added the protocol type and name fields.
_PROTOCOL_FIELDS_SINCE = 5


def send_sync_group(
    ctx: StepContext, state: ConsumerState, assignments: tuple[SyncGroupAssignment, ...]
) -> ConsumerState:
    """Send SyncGroup for the joined generation (the leader's carries the assignments)."""
    config = ctx.config
    with_protocol = config.sync_group_version >= _PROTOCOL_FIELDS_SINCE
    request = SyncGroupRequest(
        group_id=config.group_id,
        generation_id=state.generation.generation_id,
        member_id=state.generation.member_id,
        group_instance_id=config.group_instance_id,
        protocol_type=CONSUMER_PROTOCOL_TYPE if with_protocol else None,
        protocol_name=state.generation.protocol_name if with_protocol else None,
        assignments=tuple(sorted(assignments, key=lambda a: a.member_id)),
        api_version=config.sync_group_version,
    )
    return ctx.send(state, RequestKind.SYNC_GROUP, request)


def on_sync_group_response(
    ctx: StepContext, state: ConsumerState, sent: InFlight, body: SyncGroupResponse
) -> ConsumerState:
    """Handle a SyncGroup answer: become Stable and adopt the assignment, or retry/reset/fail."""
    error = body.error_code
    if error is ErrorCode.NONE:
        return _on_synced(ctx, state, body)
    if error is ErrorCode.GROUP_AUTHORIZATION_FAILED:
        ctx.fire(CLIENT_SYNC_FATAL_ERROR)
        return fail(ctx, state, fatal("SyncGroup", error, "GroupAuthorizationException"))
    if error is ErrorCode.FENCED_INSTANCE_ID:
        ctx.fire(CLIENT_SYNC_FATAL_ERROR)
        return fail(ctx, state, fatal("SyncGroup", error, "FencedInstanceIdException"))
    if error is ErrorCode.REBALANCE_IN_PROGRESS:
        ctx.fire(CLIENT_SYNC_REBALANCE_IN_PROGRESS)
        return request_rejoin(state)
    if error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION):
        if state.generation == sent.sent_generation:
            # ILLEGAL_GENERATION keeps the member id: it may still be valid.
            ctx.fire(CLIENT_SYNC_RESET_GENERATION)
            return reset_state_and_rejoin(
                state, reset_member_id=error is ErrorCode.UNKNOWN_MEMBER_ID
            )
        ctx.fire(CLIENT_SYNC_STALE_ERROR)
        return request_rejoin(state)
    if error in (ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR):
        ctx.fire(CLIENT_SYNC_COORDINATOR_LOST)
        return request_rejoin(mark_coordinator_unknown(ctx, state))
    ctx.fire(CLIENT_SYNC_UNEXPECTED_ERROR)
    return fail(ctx, state, fatal("SyncGroup", error, "KafkaException"))


def _on_synced(ctx: StepContext, state: ConsumerState, body: SyncGroupResponse) -> ConsumerState:
    inconsistent = fatal(
        "SyncGroup", ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "InconsistentGroupProtocolException"
    )
    if body.protocol_type is not None and body.protocol_type != CONSUMER_PROTOCOL_TYPE:
        ctx.fire(CLIENT_SYNC_INCONSISTENT_PROTOCOL)
        return fail(ctx, state, inconsistent)
    if state.generation.is_reset or state.member_state is not MemberState.COMPLETING_REBALANCE:
        # The generation was cleared while the SyncGroup was in flight (poll timeout, a failed
        # heartbeat or commit): Kafka fails this round as ILLEGAL_GENERATION and rejoins.
        ctx.fire(CLIENT_SYNC_RESPONSE_AFTER_RESET)
        return request_rejoin(state)
    if body.protocol_name is not None and body.protocol_name != state.generation.protocol_name:
        ctx.fire(CLIENT_SYNC_INCONSISTENT_PROTOCOL)
        return fail(ctx, state, inconsistent)
    ctx.fire(CLIENT_SYNC_STABLE)
    state = replace(state, member_state=MemberState.STABLE, rejoin_needed=False)
    state = on_join_complete(ctx, state, body.assignment)
    if state.failure is not None:
        return state
    return replace(state, needs_join_prepare=True)
