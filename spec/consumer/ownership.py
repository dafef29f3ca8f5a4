"""Owned partitions and the rebalance callbacks (ConsumerCoordinator.onJoinPrepare,
onJoinComplete, onLeavePrepare; reference §7 "Client algorithm")."""

from __future__ import annotations

from dataclasses import replace

from ..assignment import RebalanceProtocol, TopicPartition, sorted_partitions
from ..consumer_protocol import SubscriptionDecodeError, decode_assignment
from .context import StepContext
from .membership import fail, request_rejoin
from .outcome import fatal
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
            ctx.fire("client.prepare.partitions_lost")
            ctx.effects.lost(owned)
            return replace(state, owned=())
        ctx.fire("client.prepare.reset_nothing_owned")
        return state
    if ctx.setup.protocol is RebalanceProtocol.EAGER:
        # Kafka calls onPartitionsRevoked here even when nothing is owned.
        ctx.fire("client.prepare.eager_revoke_all")
        ctx.effects.revoked(owned)
        return replace(state, owned=())
    unsubscribed = tuple(tp for tp in owned if tp.topic not in state.subscription)
    if unsubscribed:
        ctx.fire("client.prepare.cooperative_revoke_unsubscribed")
        ctx.effects.revoked(unsubscribed)
        kept = tuple(tp for tp in owned if tp not in unsubscribed)
        return replace(state, owned=kept)
    ctx.fire("client.prepare.cooperative_keep_owned")
    return state


def on_join_complete(ctx: StepContext, state: ConsumerState, assignment: bytes) -> ConsumerState:
    """Take the SyncGroup assignment: check it, revoke (COOPERATIVE), adopt, call assigned."""
    if not state.is_leader:
        # Only the leader watches metadata for changes that need a new assignment.
        state = replace(state, assignment_snapshot=None)
    if ctx.setup.assignor(state.generation.protocol_name) is None:
        ctx.fire("client.sync.unknown_assignor")
        return fail(ctx, state, fatal("SyncGroup", None, "IllegalStateException"))
    if len(assignment) < 2:
        # Kafka cannot read even the version: the leader gave this member no assignment.
        ctx.fire("client.sync.assignment_too_short")
        return fail(ctx, state, fatal("SyncGroup", None, "IllegalStateException"))
    try:
        assigned, _user_data = decode_assignment(assignment)
    except SubscriptionDecodeError:
        ctx.fire("client.sync.assignment_undecodable")
        return fail(ctx, state, fatal("SyncGroup", None, "SchemaException"))
    assigned = sorted_partitions(assigned)
    if any(tp.topic not in state.subscription for tp in assigned):
        # The subscription changed since the JoinGroup: rejoin with the current one instead.
        ctx.fire("client.sync.assignment_mismatch")
        return request_rejoin(state)
    owned = state.owned
    if ctx.setup.protocol is RebalanceProtocol.COOPERATIVE:
        revoked = _minus(owned, assigned)
        if revoked:
            ctx.fire("client.sync.cooperative_revoke_and_rejoin")
            ctx.effects.revoked(revoked)
            state = request_rejoin(state)
    ctx.fire("client.sync.assignment_adopted")
    ctx.effects.assigned(_minus(assigned, owned))
    return replace(state, owned=assigned)


def on_leave_prepare(ctx: StepContext, state: ConsumerState) -> ConsumerState:
    """Drop every owned partition before leaving: lost if no longer a member, else revoked."""
    owned = state.owned
    if not owned:
        return state
    if state.generation.lacks_generation_or_member_id or state.member_state.rebalance_in_progress:
        ctx.fire("client.close.partitions_lost")
        ctx.effects.lost(owned)
    else:
        ctx.fire("client.close.partitions_revoked")
        ctx.effects.revoked(owned)
    return replace(state, owned=())


def _minus(
    partitions: tuple[TopicPartition, ...], removed: tuple[TopicPartition, ...]
) -> tuple[TopicPartition, ...]:
    gone = set(removed)
    return tuple(tp for tp in partitions if tp not in gone)
