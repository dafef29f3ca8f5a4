"""Owned partitions and the rebalance callbacks (ConsumerCoordinator.onJoinPrepare,
onJoinComplete, onLeavePrepare; reference §7 "Client algorithm")."""

from __future__ import annotations

from dataclasses import replace

from groupspec.vocabulary.requests import TopicPartition

from ..assignment import RebalanceProtocol, sorted_partitions
from ..consumer_protocol import SubscriptionDecodeError, decode_assignment
from .context import StepContext
from .membership import fail, request_rejoin
from .outcome import fatal
from .rules import (
    CLIENT_CLOSE_PARTITIONS_LOST,
    CLIENT_CLOSE_PARTITIONS_REVOKED,
    CLIENT_PREPARE_COOPERATIVE_KEEP_OWNED,
    CLIENT_PREPARE_COOPERATIVE_REVOKE_UNSUBSCRIBED,
    CLIENT_PREPARE_EAGER_REVOKE_ALL,
    CLIENT_PREPARE_PARTITIONS_LOST,
    CLIENT_PREPARE_RESET_NOTHING_OWNED,
    CLIENT_SYNC_ASSIGNMENT_ADOPTED,
    CLIENT_SYNC_ASSIGNMENT_MISMATCH,
    CLIENT_SYNC_ASSIGNMENT_TOO_SHORT,
    CLIENT_SYNC_ASSIGNMENT_UNDECODABLE,
    CLIENT_SYNC_COOPERATIVE_REVOKE_AND_REJOIN,
    CLIENT_SYNC_UNKNOWN_ASSIGNOR,
)
from .state import ConsumerState


def on_join_prepare(ctx: StepContext, state: ConsumerState) -> ConsumerState:
    """Give up partitions before (re)joining, the way the rebalance protocol requires.

    With a reset generation or member id every owned partition is lost. Otherwise EAGER revokes
    everything, and COOPERATIVE revokes only partitions of topics no longer subscribed.
    """
    owned = state.owned
    state = replace(state, needs_join_prepare=False, is_leader=False)
    if state.generation.lacks_generation_or_member_id:
        if owned:
            ctx.fire(CLIENT_PREPARE_PARTITIONS_LOST)
            ctx.effects.lost(owned)
            return replace(state, owned=())
        ctx.fire(CLIENT_PREPARE_RESET_NOTHING_OWNED)
        return state
    if ctx.setup.protocol is RebalanceProtocol.EAGER:
        # Kafka calls onPartitionsRevoked here even when nothing is owned.
        ctx.fire(CLIENT_PREPARE_EAGER_REVOKE_ALL)
        ctx.effects.revoked(owned)
        return replace(state, owned=())
    unsubscribed = tuple(tp for tp in owned if tp.topic not in state.subscription)
    if unsubscribed:
        ctx.fire(CLIENT_PREPARE_COOPERATIVE_REVOKE_UNSUBSCRIBED)
        ctx.effects.revoked(unsubscribed)
        kept = tuple(tp for tp in owned if tp not in unsubscribed)
        return replace(state, owned=kept)
    ctx.fire(CLIENT_PREPARE_COOPERATIVE_KEEP_OWNED)
    return state


def on_join_complete(ctx: StepContext, state: ConsumerState, assignment: bytes) -> ConsumerState:
    """Take the SyncGroup assignment: check it, revoke (COOPERATIVE), adopt, call assigned."""
    if not state.is_leader:
        # Only the leader watches metadata for changes that need a new assignment.
        state = replace(state, assignment_snapshot=None)
    if ctx.setup.assignor(state.generation.protocol_name) is None:
        ctx.fire(CLIENT_SYNC_UNKNOWN_ASSIGNOR)
        return fail(ctx, state, fatal("SyncGroup", None, "IllegalStateException"))
    if len(assignment) < 2:
        # Kafka cannot read even the version: the leader gave this member no assignment.
        ctx.fire(CLIENT_SYNC_ASSIGNMENT_TOO_SHORT)
        return fail(ctx, state, fatal("SyncGroup", None, "IllegalStateException"))
    try:
        assigned, _user_data = decode_assignment(assignment)
    except SubscriptionDecodeError:
        ctx.fire(CLIENT_SYNC_ASSIGNMENT_UNDECODABLE)
        return fail(ctx, state, fatal("SyncGroup", None, "SchemaException"))
    assigned = sorted_partitions(assigned)
    if any(tp.topic not in state.subscription for tp in assigned):
        # The subscription changed since the JoinGroup: rejoin with the current one instead.
        ctx.fire(CLIENT_SYNC_ASSIGNMENT_MISMATCH)
        return request_rejoin(state)
    owned = state.owned
    if ctx.setup.protocol is RebalanceProtocol.COOPERATIVE:
        revoked = _minus(owned, assigned)
        if revoked:
            ctx.fire(CLIENT_SYNC_COOPERATIVE_REVOKE_AND_REJOIN)
            ctx.effects.revoked(revoked)
            state = request_rejoin(state)
    ctx.fire(CLIENT_SYNC_ASSIGNMENT_ADOPTED)
    ctx.effects.assigned(_minus(assigned, owned))
    return replace(state, owned=assigned)


def on_leave_prepare(ctx: StepContext, state: ConsumerState) -> ConsumerState:
    """Drop every owned partition before leaving: lost if no longer a member, else revoked."""
    owned = state.owned
    if not owned:
        return state
    if state.generation.lacks_generation_or_member_id or state.member_state.rebalance_in_progress:
        ctx.fire(CLIENT_CLOSE_PARTITIONS_LOST)
        ctx.effects.lost(owned)
    else:
        ctx.fire(CLIENT_CLOSE_PARTITIONS_REVOKED)
        ctx.effects.revoked(owned)
    return replace(state, owned=())


def _minus(
    partitions: tuple[TopicPartition, ...], removed: tuple[TopicPartition, ...]
) -> tuple[TopicPartition, ...]:
    gone = set(removed)
    return tuple(tp for tp in partitions if tp not in gone)
