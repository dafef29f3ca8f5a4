"""Joining: the JoinGroup the consumer sends and what it does with the answer
(AbstractCoordinator.initiateJoinGroup, sendJoinGroupRequest, JoinGroupResponseHandler;
ConsumerCoordinator.metadata; reference §2.2, §7)."""

from __future__ import annotations

from dataclasses import replace

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import JoinGroupProtocol, JoinGroupRequest
from groupspec.vocabulary.responses import JoinGroupResponse

from ..assignment import Subscription
from ..consumer_protocol import CONSUMER_PROTOCOL_TYPE, encode_subscription
from .context import StepContext
from .coordinator_discovery import mark_coordinator_unknown
from .leader import on_leader_elected
from .membership import fail, request_rejoin, reset_state_and_rejoin
from .outcome import fatal
from .rules import (
    CLIENT_JOIN_COORDINATOR_LOST,
    CLIENT_JOIN_FATAL_ERROR,
    CLIENT_JOIN_INCONSISTENT_PROTOCOL_TYPE,
    CLIENT_JOIN_JOINED_AS_FOLLOWER,
    CLIENT_JOIN_JOINED_AS_LEADER,
    CLIENT_JOIN_MEMBER_ID_REQUIRED,
    CLIENT_JOIN_RESPONSE_AFTER_RESET,
    CLIENT_JOIN_RETRY,
    CLIENT_JOIN_SENT_WITH_MEMBER_ID,
    CLIENT_JOIN_SENT_WITHOUT_MEMBER_ID,
    CLIENT_JOIN_UNEXPECTED_ERROR,
    CLIENT_JOIN_UNKNOWN_MEMBER_ID_RESET,
    CLIENT_JOIN_UNKNOWN_MEMBER_ID_STALE,
)
from .state import ConsumerState, Generation, InFlight, MemberState, RequestKind
from .sync import send_sync_group

# JoinGroup errors Kafka rethrows to the application, with the exception it raises.
_FATAL_JOIN_ERRORS: dict[ErrorCode, str] = {
    ErrorCode.FENCED_INSTANCE_ID: "FencedInstanceIdException",
    ErrorCode.INCONSISTENT_GROUP_PROTOCOL: "InconsistentGroupProtocolException",
    ErrorCode.INVALID_SESSION_TIMEOUT: "InvalidSessionTimeoutException",
    ErrorCode.INVALID_GROUP_ID: "InvalidGroupIdException",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "GroupAuthorizationException",
    ErrorCode.GROUP_MAX_SIZE_REACHED: "GroupMaxSizeReachedException",
    ErrorCode.UNSUPPORTED_VERSION: "UnsupportedVersionException",
}


def join_protocols(ctx: StepContext, state: ConsumerState) -> tuple[JoinGroupProtocol, ...]:
    """One protocol per configured assignor, in preference order, each with the subscription.

    Every subscription carries the topics, the owned partitions and the current generation
    (kept only as far as `subscription_version` allows) and the assignor's user data.
    """
    protocols = []
    for assignor in ctx.setup.assignors:
        user_data = assignor.subscription_user_data(state.owned, state.generation.generation_id)
        subscription = Subscription.of(
            state.subscription, state.owned, state.generation.generation_id, None, user_data
        )
        metadata = encode_subscription(subscription, ctx.config.subscription_version)
        protocols.append(JoinGroupProtocol(assignor.name, metadata))
    return tuple(protocols)


def initiate_join_group(ctx: StepContext, state: ConsumerState) -> ConsumerState:
    """Send a JoinGroup with the current member id and subscription; go PreparingRebalance."""
    config = ctx.config
    ctx.fire(
        CLIENT_JOIN_SENT_WITH_MEMBER_ID
        if state.generation.has_member_id
        else CLIENT_JOIN_SENT_WITHOUT_MEMBER_ID
    )
    request = JoinGroupRequest(
        group_id=config.group_id,
        member_id=state.generation.member_id,
        protocol_type=CONSUMER_PROTOCOL_TYPE,
        protocols=join_protocols(ctx, state),
        session_timeout_ms=config.session_timeout_ms,
        rebalance_timeout_ms=-1 if config.join_group_version == 0 else config.rebalance_timeout_ms,
        group_instance_id=config.group_instance_id,
        client_id=config.client_id,
        api_version=config.join_group_version,
    )
    state = replace(
        state,
        member_state=MemberState.PREPARING_REBALANCE,
        joined_subscription=state.subscription,
    )
    return ctx.send(state, RequestKind.JOIN_GROUP, request)


def on_join_group_response(
    ctx: StepContext, state: ConsumerState, sent: InFlight, body: JoinGroupResponse
) -> ConsumerState:
    """Handle a JoinGroup answer: sync on success; otherwise retry, rediscover, reset or fail.

    Every failure also requests a rejoin; the retry goes out on the next poll.
    """
    error = body.error_code
    if error is ErrorCode.NONE:
        return _on_joined(ctx, state, body)
    if error is ErrorCode.MEMBER_ID_REQUIRED:
        # The broker handed out a member id; join again with it.
        ctx.fire(CLIENT_JOIN_MEMBER_ID_REQUIRED)
        generation = Generation(Generation().generation_id, body.member_id, None)
        return request_rejoin(replace(state, generation=generation))
    if error is ErrorCode.UNKNOWN_MEMBER_ID:
        if state.generation == sent.sent_generation:
            ctx.fire(CLIENT_JOIN_UNKNOWN_MEMBER_ID_RESET)
            return reset_state_and_rejoin(state, reset_member_id=True)
        ctx.fire(CLIENT_JOIN_UNKNOWN_MEMBER_ID_STALE)
        return request_rejoin(state)
    if error in (ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR):
        ctx.fire(CLIENT_JOIN_COORDINATOR_LOST)
        return request_rejoin(mark_coordinator_unknown(ctx, state))
    if error in (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.REBALANCE_IN_PROGRESS):
        ctx.fire(CLIENT_JOIN_RETRY)
        return request_rejoin(state)
    if error in _FATAL_JOIN_ERRORS:
        ctx.fire(CLIENT_JOIN_FATAL_ERROR)
        return fail(ctx, state, fatal("JoinGroup", error, _FATAL_JOIN_ERRORS[error]))
    ctx.fire(CLIENT_JOIN_UNEXPECTED_ERROR)
    return fail(ctx, state, fatal("JoinGroup", error, "KafkaException"))


def _on_joined(ctx: StepContext, state: ConsumerState, body: JoinGroupResponse) -> ConsumerState:
    if body.protocol_type is not None and body.protocol_type != CONSUMER_PROTOCOL_TYPE:
        ctx.fire(CLIENT_JOIN_INCONSISTENT_PROTOCOL_TYPE)
        return fail(
            ctx,
            state,
            fatal(
                "JoinGroup",
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                "InconsistentGroupProtocolException",
            ),
        )
    if state.member_state is not MemberState.PREPARING_REBALANCE:
        # The member left or was reset while the JoinGroup was in flight (UnjoinedGroupException):
        # the join fails and is retried; the new member id is not adopted.
        ctx.fire(CLIENT_JOIN_RESPONSE_AFTER_RESET)
        return request_rejoin(state)
    generation = Generation(body.generation_id, body.member_id, body.protocol_name)
    state = replace(state, member_state=MemberState.COMPLETING_REBALANCE, generation=generation)
    if body.leader == body.member_id:
        ctx.fire(CLIENT_JOIN_JOINED_AS_LEADER)
        state, assignments = on_leader_elected(ctx, state, body)
        if state.failure is not None:
            return state
        return send_sync_group(ctx, state, assignments)
    ctx.fire(CLIENT_JOIN_JOINED_AS_FOLLOWER)
    return send_sync_group(ctx, state, ())
