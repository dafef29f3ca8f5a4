"""One call of poll() with group management (ConsumerCoordinator.poll, ensureActiveGroup,
joinGroupIfNeeded; reference §3 "Client side", §7)."""

from __future__ import annotations

from dataclasses import replace

from .context import StepContext
from .coordinator_discovery import lookup_coordinator
from .join import initiate_join_group
from .ownership import on_join_prepare
from .rules import (
    CLIENT_POLL_JOIN_IN_FLIGHT,
    CLIENT_POLL_NOTHING_TO_DO,
    CLIENT_POLL_REJOIN_METADATA_CHANGED,
    CLIENT_POLL_REJOIN_SUBSCRIPTION_CHANGED,
)
from .state import ConsumerState, metadata_snapshot, needs_rejoin


def on_poll(ctx: StepContext, state: ConsumerState) -> ConsumerState:
    """Find the coordinator if unknown; otherwise, if a rejoin is needed, prepare and join.

    The consumer does not wait inside poll (Kafka's poll with waitForJoinGroup false): the
    JoinGroup goes out and its answer arrives as a later event. A failed join is retried by the
    next poll. onJoinPrepare runs once per rebalance, even while an older join is in flight.
    """
    if not state.coordinator_known:
        return lookup_coordinator(ctx, state)
    if not needs_rejoin(state):
        ctx.fire(CLIENT_POLL_NOTHING_TO_DO)
        return state
    state = _note_rejoin_reason(ctx, state)
    if state.needs_join_prepare:
        state = on_join_prepare(ctx, state)
    if state.join_future_pending:
        ctx.fire(CLIENT_POLL_JOIN_IN_FLIGHT)
        return state
    return initiate_join_group(ctx, state)


def _note_rejoin_reason(ctx: StepContext, state: ConsumerState) -> ConsumerState:
    """ConsumerCoordinator's own rejoin reasons become a rejoin request (requestRejoinIfNecessary)."""
    snapshot = state.assignment_snapshot
    if (
        snapshot is not None
        and metadata_snapshot(state.cluster, tuple(t for t, _ in snapshot)) != snapshot
    ):
        ctx.fire(CLIENT_POLL_REJOIN_METADATA_CHANGED)
        return replace(state, rejoin_needed=True)
    if state.joined_subscription is not None and state.joined_subscription != state.subscription:
        ctx.fire(CLIENT_POLL_REJOIN_SUBSCRIPTION_CHANGED)
        return replace(state, rejoin_needed=True)
    return state
