"""Rejoin requests and generation resets (AbstractCoordinator.requestRejoin, resetStateAndRejoin)."""

from __future__ import annotations

from dataclasses import replace

from .context import StepContext
from .outcome import ApplicationError
from .state import NO_GENERATION, ConsumerState, Generation, MemberState


def request_rejoin(state: ConsumerState) -> ConsumerState:
    """Ask for a rejoin on the next poll; the generation is kept."""
    return replace(state, rejoin_needed=True)


def reset_state_and_rejoin(state: ConsumerState, *, reset_member_id: bool) -> ConsumerState:
    """Forget the generation (and the member id if asked), go Unjoined, and rejoin.

    Kafka keeps the member id after ILLEGAL_GENERATION because it may still be valid, which
    spares the coordinator waiting for the old id to time out. The next onJoinPrepare sees the
    reset generation and calls the owned partitions lost.
    """
    generation = (
        NO_GENERATION
        if reset_member_id
        else Generation(NO_GENERATION.generation_id, state.generation.member_id, None)
    )
    return replace(
        state,
        member_state=MemberState.UNJOINED,
        generation=generation,
        rejoin_needed=True,
        needs_join_prepare=True,
    )


def fail(ctx: StepContext, state: ConsumerState, error: ApplicationError) -> ConsumerState:
    """Raise a fatal error to the application; the consumer can only be closed afterwards."""
    ctx.effects.raise_error(error)
    return replace(state, failure=error, rejoin_needed=True)
