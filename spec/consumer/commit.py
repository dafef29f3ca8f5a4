"""Committing offsets with group management (ConsumerCoordinator.sendOffsetCommitRequest,
OffsetCommitResponseHandler; reference §5 "Client")."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode, InputError
from groupspec.vocabulary.requests import OffsetCommitPartition, OffsetCommitRequest, TopicPartition
from groupspec.vocabulary.responses import OffsetCommitResponse

from .context import StepContext
from .coordinator_discovery import mark_coordinator_unknown
from .membership import fail, request_rejoin, reset_state_and_rejoin
from .outcome import (
    ApplicationError,
    commit_failed,
    fatal,
    kafka_error,
    rebalance_in_progress,
    retriable_commit_failed,
)
from .rules import (
    CLIENT_COMMIT_COORDINATOR_LOST,
    CLIENT_COMMIT_COORDINATOR_UNKNOWN,
    CLIENT_COMMIT_ERROR_RAISED,
    CLIENT_COMMIT_FENCED,
    CLIENT_COMMIT_FENCED_STALE,
    CLIENT_COMMIT_INVALID_OFFSET,
    CLIENT_COMMIT_NOTHING_TO_COMMIT,
    CLIENT_COMMIT_REBALANCE_IN_PROGRESS,
    CLIENT_COMMIT_REFUSED_NOT_MEMBER,
    CLIENT_COMMIT_REFUSED_REBALANCING,
    CLIENT_COMMIT_RESET_GENERATION,
    CLIENT_COMMIT_RETRIABLE,
    CLIENT_COMMIT_SENT,
    CLIENT_COMMIT_STALE_GENERATION_REBALANCING,
    CLIENT_COMMIT_SUCCEEDED,
)
from .state import ConsumerState, InFlight, MemberState, RequestKind

_API = "OffsetCommit"
# The instance id travels in OffsetCommit from v7 on.
_INSTANCE_ID_SINCE = 7


def request_commit(
    ctx: StepContext, state: ConsumerState, offsets: tuple[tuple[TopicPartition, int], ...]
) -> ConsumerState:
    """Send an OffsetCommit for the current generation, or fail it locally.

    Only a Stable member commits: while rebalancing the commit fails with
    RebalanceInProgressException, and outside any group with CommitFailedException.
    """
    partitions = [tp for tp, _ in offsets]
    if len(set(partitions)) != len(partitions):
        raise InputError(f"commit names a partition twice: {sorted(partitions)}")
    if not offsets:
        ctx.fire(CLIENT_COMMIT_NOTHING_TO_COMMIT)
        return state
    if any(offset < 0 for _, offset in offsets):
        ctx.fire(CLIENT_COMMIT_INVALID_OFFSET)
        ctx.effects.raise_error(ApplicationError("IllegalArgumentException", _API))
        return state
    if not state.coordinator_known:
        ctx.fire(CLIENT_COMMIT_COORDINATOR_UNKNOWN)
        ctx.effects.raise_error(retriable_commit_failed(_API, ErrorCode.COORDINATOR_NOT_AVAILABLE))
        return state
    if state.member_state is not MemberState.STABLE:
        if state.member_state.rebalance_in_progress:
            ctx.fire(CLIENT_COMMIT_REFUSED_REBALANCING)
            ctx.effects.raise_error(rebalance_in_progress(_API))
        else:
            ctx.fire(CLIENT_COMMIT_REFUSED_NOT_MEMBER)
            ctx.effects.raise_error(commit_failed(_API))
        return state
    ctx.fire(CLIENT_COMMIT_SENT)
    config = ctx.config
    ordered = tuple(sorted(offsets))
    request = OffsetCommitRequest(
        group_id=config.group_id,
        partitions=tuple(
            OffsetCommitPartition(tp.topic, tp.partition, offset) for tp, offset in ordered
        ),
        generation_id=state.generation.generation_id,
        member_id=state.generation.member_id,
        group_instance_id=(
            config.group_instance_id if config.offset_commit_version >= _INSTANCE_ID_SINCE else None
        ),
        api_version=config.offset_commit_version,
    )
    return ctx.send(state, RequestKind.OFFSET_COMMIT, request, ordered)


def on_offset_commit_response(
    ctx: StepContext, state: ConsumerState, sent: InFlight, body: OffsetCommitResponse
) -> ConsumerState:
    """Handle an OffsetCommit answer; the first failed partition decides the outcome."""
    committed = {tp for tp, _ in sent.offsets}
    answered = [TopicPartition(p.topic, p.partition) for p in body.partitions]
    if not set(answered) <= committed:
        raise InputError(
            f"OffsetCommit response names partitions never committed: "
            f"{sorted(set(answered) - committed)}"
        )
    for partition in body.partitions:
        if partition.error_code is not ErrorCode.NONE:
            return _on_commit_error(ctx, state, sent, partition.error_code)
    ctx.fire(CLIENT_COMMIT_SUCCEEDED)
    ctx.effects.committed.extend(answered)
    return state


def _on_commit_error(
    ctx: StepContext, state: ConsumerState, sent: InFlight, error: ErrorCode
) -> ConsumerState:
    unchanged = state.generation == sent.sent_generation
    if error is ErrorCode.GROUP_AUTHORIZATION_FAILED:
        ctx.fire(CLIENT_COMMIT_ERROR_RAISED)
        ctx.effects.raise_error(ApplicationError("GroupAuthorizationException", _API, error))
        return state
    if error is ErrorCode.OFFSET_METADATA_TOO_LARGE:
        ctx.fire(CLIENT_COMMIT_ERROR_RAISED)
        ctx.effects.raise_error(kafka_error(_API, error))
        return state
    if error in (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):
        ctx.fire(CLIENT_COMMIT_RETRIABLE)
        ctx.effects.raise_error(retriable_commit_failed(_API, error))
        return state
    if error in (
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.REQUEST_TIMED_OUT,
    ):
        ctx.fire(CLIENT_COMMIT_COORDINATOR_LOST)
        ctx.effects.raise_error(retriable_commit_failed(_API, error))
        return mark_coordinator_unknown(ctx, state)
    if error is ErrorCode.FENCED_INSTANCE_ID:
        if unchanged:
            ctx.fire(CLIENT_COMMIT_FENCED)
            return fail(ctx, state, fatal(_API, error, "FencedInstanceIdException"))
        # An older incarnation's generation was fenced: not fatal for this one.
        ctx.fire(CLIENT_COMMIT_FENCED_STALE)
        if state.member_state is MemberState.PREPARING_REBALANCE:
            ctx.effects.raise_error(rebalance_in_progress(_API, error))
        else:
            ctx.effects.raise_error(commit_failed(_API, error))
        return state
    if error is ErrorCode.REBALANCE_IN_PROGRESS:
        # The group is rebalancing: rejoin, but keep the generation for the next JoinGroup.
        ctx.fire(CLIENT_COMMIT_REBALANCE_IN_PROGRESS)
        ctx.effects.raise_error(rebalance_in_progress(_API, error))
        return request_rejoin(state)
    if error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION):
        if not unchanged and state.member_state is MemberState.PREPARING_REBALANCE:
            ctx.fire(CLIENT_COMMIT_STALE_GENERATION_REBALANCING)
            ctx.effects.raise_error(rebalance_in_progress(_API, error))
            return state
        ctx.fire(CLIENT_COMMIT_RESET_GENERATION)
        ctx.effects.raise_error(commit_failed(_API, error))
        return reset_state_and_rejoin(state, reset_member_id=error is ErrorCode.UNKNOWN_MEMBER_ID)
    ctx.fire(CLIENT_COMMIT_ERROR_RAISED)
    ctx.effects.raise_error(kafka_error(_API, error))
    return state
