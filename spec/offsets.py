"""OffsetCommit with zombie fencing (reference §5), OffsetFetch (§2.7) and retention (§6)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from groupspec.vocabulary.errors import ErrorCode, append_error_to_response
from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from groupspec.vocabulary.requests import (
    OffsetCommitRequest,
    OffsetFetchRequest,
    RequestRef,
    TopicPartition,
)
from groupspec.vocabulary.responses import (
    OffsetCommitPartitionResponse,
    OffsetCommitResponse,
    OffsetFetchPartitionResponse,
    OffsetFetchResponse,
)

from .consumer_protocol import CONSUMER_PROTOCOL_TYPE
from .log import OffsetCommitValue
from .membership import validate_member_and_generation
from .persistence import group_tombstone, offset_record, offset_tombstone
from .rebalance import schedule_heartbeat
from .rules import (
    COMMIT_ACCEPTED,
    COMMIT_METADATA_TOO_LARGE,
    COMMIT_REJECTED_BY_FENCING,
    COMMIT_SIMPLE_GROUP_CREATED,
    COMMIT_UNKNOWN_GROUP_WITH_GENERATION,
    COMMIT_UNKNOWN_GROUP_WITH_GENERATION_KAFKA_3X,
    COMMIT_WRITE_FAILED,
    FETCH_ALL_OFFSETS,
    FETCH_OFFSETS,
    FETCH_UNKNOWN_GROUP,
    RETENTION_CHECK,
    RETENTION_EMPTY_GROUP_DELETED,
    RETENTION_OFFSETS_EXPIRED,
    RETENTION_WRITE_FAILED,
)
from .state import CoordinatorState, Group
from .step import Step


def commit_error_response(request: OffsetCommitRequest, error: ErrorCode) -> OffsetCommitResponse:
    """Every partition of the commit answered with `error`."""
    return OffsetCommitResponse(
        tuple(
            OffsetCommitPartitionResponse(p.topic, p.partition, error) for p in request.partitions
        )
    )


def validate_offset_commit(group: Group, request: OffsetCommitRequest) -> ErrorCode | None:
    """ClassicGroup.validateOffsetCommit: the fencing order of reference §5, steps 2–6."""
    if group.state is DEAD:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if request.generation_id < 0 and group.state is EMPTY:
        return None
    if (
        request.generation_id >= 0
        or request.member_id != ""
        or request.group_instance_id is not None
    ):
        error = validate_member_and_generation(
            group, request.member_id, request.group_instance_id, request.generation_id
        )
        if error is not None:
            return error
    elif group.state is not EMPTY:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if group.state is COMPLETING_REBALANCE:
        return ErrorCode.REBALANCE_IN_PROGRESS
    return None


def offset_commit(
    step: Step, state: CoordinatorState, ref: RequestRef, request: OffsetCommitRequest
) -> CoordinatorState:
    """Handle an OffsetCommit after the coordinator-level checks passed."""
    group = state.group(request.group_id)
    if group is None:
        if request.generation_id >= 0 and step.config.is_scala_coordinator:
            step.fire(COMMIT_UNKNOWN_GROUP_WITH_GENERATION_KAFKA_3X)
            step.respond(ref, commit_error_response(request, ErrorCode.ILLEGAL_GENERATION))
            return state
        if request.generation_id >= 0:
            step.fire(COMMIT_UNKNOWN_GROUP_WITH_GENERATION)
            unknown_group_error = (
                ErrorCode.GROUP_ID_NOT_FOUND
                if request.api_version >= 9
                else ErrorCode.ILLEGAL_GENERATION
            )
            step.respond(ref, commit_error_response(request, unknown_group_error))
            return state
        step.fire(COMMIT_SIMPLE_GROUP_CREATED)
        group = Group(group_id=request.group_id)
    error = validate_offset_commit(group, request)
    if error is not None:
        step.fire(COMMIT_REJECTED_BY_FENCING)
        step.respond(ref, commit_error_response(request, error))
        return state
    step.fire(COMMIT_ACCEPTED)
    if group.has_member(request.member_id) and group.state in (STABLE, PREPARING_REBALANCE):
        group = schedule_heartbeat(step, group, request.member_id)
    max_bytes = step.config.offset_metadata_max_bytes
    expire = step.now_ms + request.retention_time_ms if request.retention_time_ms != -1 else None
    results: list[OffsetCommitPartitionResponse] = []
    records = []
    for p in request.partitions:
        metadata = p.committed_metadata
        if metadata is not None and len(metadata.encode("utf-8")) > max_bytes:
            step.fire(COMMIT_METADATA_TOO_LARGE)
            results.append(
                OffsetCommitPartitionResponse(
                    p.topic, p.partition, ErrorCode.OFFSET_METADATA_TOO_LARGE
                )
            )
            continue
        value = OffsetCommitValue(
            offset=p.committed_offset,
            leader_epoch=p.committed_leader_epoch,
            metadata=metadata,
            commit_timestamp_ms=step.now_ms,
            expire_timestamp_ms=expire,
        )
        partition = TopicPartition(p.topic, p.partition)
        group = group.with_offset(partition, value)
        records.append(offset_record(request.group_id, partition, value))
        results.append(OffsetCommitPartitionResponse(p.topic, p.partition, ErrorCode.NONE))
    if records:
        failure = step.write(records)
        if failure is not None:
            step.fire(COMMIT_WRITE_FAILED)
            step.respond(ref, commit_error_response(request, append_error_to_response(failure)))
            return state
    step.respond(ref, OffsetCommitResponse(tuple(results)))
    return state.with_group(group)


def _no_offset(partition: TopicPartition) -> OffsetFetchPartitionResponse:
    return OffsetFetchPartitionResponse(
        partition.topic, partition.partition, -1, -1, "", ErrorCode.NONE
    )


def offset_fetch(
    step: Step, state: CoordinatorState, ref: RequestRef, request: OffsetFetchRequest
) -> CoordinatorState:
    """Handle an OffsetFetch (allowed in every group state).

    Transactional offset commits are not modelled, so `require_stable` never meets pending
    transactional offsets and UNSTABLE_OFFSET_COMMIT is never returned.
    """
    group = state.group(request.group_id)
    if group is None or group.state is DEAD:
        step.fire(FETCH_UNKNOWN_GROUP)
        partitions = tuple(_no_offset(p) for p in request.partitions or ())
        step.respond(ref, OffsetFetchResponse(ErrorCode.NONE, partitions))
        return state
    wanted = (
        request.partitions
        if request.partitions is not None
        else tuple(tp for tp, _ in group.offsets)
    )
    step.fire(FETCH_OFFSETS if request.partitions is not None else FETCH_ALL_OFFSETS)
    answers = []
    for partition in wanted:
        value = group.offset(partition)
        if value is None:
            answers.append(_no_offset(partition))
        else:
            answers.append(
                OffsetFetchPartitionResponse(
                    partition.topic,
                    partition.partition,
                    value.offset,
                    value.leader_epoch,
                    value.metadata,
                    ErrorCode.NONE,
                )
            )
    step.respond(ref, OffsetFetchResponse(ErrorCode.NONE, tuple(answers)))
    return state


ExpiryBase = Callable[[OffsetCommitValue], int]


def offset_expiration_condition(group: Group) -> tuple[ExpiryBase, frozenset[str] | None] | None:
    """Which offsets of `group` may expire, and from which base time (reference §6 table).

    Returns None when none may; else (base time of an offset, topics exempt from expiry).
    """
    if group.protocol_type is not None:
        if group.state is EMPTY:
            became_empty = group.current_state_timestamp_ms
            return (
                lambda v: became_empty if became_empty is not None else v.commit_timestamp_ms
            ), None
        if (
            group.protocol_type == CONSUMER_PROTOCOL_TYPE
            and group.subscribed_topics is not None
            and group.state is STABLE
        ):
            return (lambda v: v.commit_timestamp_ms), group.subscribed_topics
        return None
    return (lambda v: v.commit_timestamp_ms), None


def expire_offsets(step: Step, group: Group) -> tuple[Group, list[TopicPartition]]:
    """Drop the group's expired offsets; returns the group and what expired."""
    condition = offset_expiration_condition(group)
    if condition is None:
        return group, []
    base_time, exempt_topics = condition
    expired: list[TopicPartition] = []
    for partition, value in group.offsets:
        if exempt_topics is not None and partition.topic in exempt_topics:
            continue
        if value.expire_timestamp_ms is not None:
            is_expired = step.now_ms >= value.expire_timestamp_ms
        else:
            is_expired = step.now_ms - base_time(value) >= step.config.offsets_retention_ms
        if is_expired:
            expired.append(partition)
    for partition in expired:
        group = group.with_offset(partition, None)
    return group, expired


def run_offset_retention(step: Step, state: CoordinatorState) -> CoordinatorState:
    """The periodic retention check: expire offsets, delete Empty groups left with none."""
    step.fire(RETENTION_CHECK)
    next_state = replace(
        state,
        retention_check_deadline_ms=step.now_ms + step.config.offsets_retention_check_interval_ms,
    )
    for group in state.groups:
        updated, expired = expire_offsets(step, group)
        records = [offset_tombstone(group.group_id, tp) for tp in expired]
        delete_group = updated.state is EMPTY and not updated.offsets
        if delete_group:
            records.append(group_tombstone(group.group_id))
        if not records:
            continue
        if step.write(records) is not None:
            step.fire(RETENTION_WRITE_FAILED)
            continue
        if expired:
            step.fire(RETENTION_OFFSETS_EXPIRED)
        if delete_group:
            step.fire(RETENTION_EMPTY_GROUP_DELETED)
            # Dead, then dropped from memory; the call enforces that the move is legal.
            updated.transition_to(DEAD, step.now_ms)
            next_state = next_state.without_group(group.group_id)
        else:
            next_state = next_state.with_group(updated)
    return next_state
