"""OffsetCommit with zombie fencing, OffsetFetch, and offset retention."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode, append_error_to_response
from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from groupspec.vocabulary.requests import OffsetCommitRequest, OffsetFetchRequest
from groupspec.vocabulary.responses import (
    OffsetCommitPartitionResponse,
    OffsetCommitResponse,
    OffsetFetchPartitionResponse,
    OffsetFetchResponse,
)

from .consumer_protocol import CONSUMER_PROTOCOL_TYPE
from .log import GroupMetadataWrite, LogRecord, OffsetCommitValue, OffsetWrite
from .membership import validate_member_and_generation
from .runtime import Ref, Runtime
from .state import Group


def commit_error_response(request: OffsetCommitRequest, error: ErrorCode) -> OffsetCommitResponse:
    """Every partition of the commit answered with `error`."""
    return OffsetCommitResponse(
        tuple(
            OffsetCommitPartitionResponse(p.topic, p.partition, error) for p in request.partitions
        )
    )


def validate_offset_commit(group: Group, request: OffsetCommitRequest) -> ErrorCode | None:
    """ClassicGroup.validateOffsetCommit: Kafka's fencing order for non-transactional commits."""
    state = group.state
    if request.generation_id < 0 and state is EMPTY:
        return None  # admin tools and manual assignment commit into an empty group
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
    elif state is not EMPTY:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if state is COMPLETING_REBALANCE:
        return ErrorCode.REBALANCE_IN_PROGRESS
    return None


def offset_commit(rt: Runtime, ref: Ref, request: OffsetCommitRequest) -> None:
    """Handle an OffsetCommit."""
    group_id = request.group_id
    error = rt.coordinator_error(group_id)
    if error is not None:
        # rule: coordinator.check_failed
        rt.respond(ref, commit_error_response(request, error))
        return
    group = rt.groups.get(group_id)
    is_new_group = group is None
    if group is None:
        if request.generation_id >= 0:
            error = (
                ErrorCode.GROUP_ID_NOT_FOUND
                if request.api_version >= 9
                else ErrorCode.ILLEGAL_GENERATION
            )
            # rule: commit.unknown_group_with_generation
            rt.respond(ref, commit_error_response(request, error))
            return
        # rule: commit.simple_group_created
        # A "simple" group (manual assignment): it exists once this commit is accepted.
        group = Group(group_id, rt.partition_of(group_id))
    error = validate_offset_commit(group, request)
    if error is not None:
        # rule: commit.rejected_by_fencing
        rt.respond(ref, commit_error_response(request, error))
        return
    # rule: commit.accepted
    now = rt.now
    max_bytes = rt.config.offset_metadata_max_bytes
    expire = now + request.retention_time_ms if request.retention_time_ms != -1 else None
    results: list[OffsetCommitPartitionResponse] = []
    writes: list[OffsetWrite] = []
    for p in request.partitions:
        metadata = p.committed_metadata
        if metadata is not None and len(metadata.encode("utf-8")) > max_bytes:
            # rule: commit.metadata_too_large
            results.append(
                OffsetCommitPartitionResponse(
                    p.topic, p.partition, ErrorCode.OFFSET_METADATA_TOO_LARGE
                )
            )
            continue
        value = OffsetCommitValue(
            p.committed_offset, p.committed_leader_epoch, metadata, now, expire
        )
        writes.append(OffsetWrite(group_id, p.topic, p.partition, value))
        results.append(OffsetCommitPartitionResponse(p.topic, p.partition, ErrorCode.NONE))
    if writes:
        error = rt.append(group.partition, group_id, writes)
        if error is not None:
            # rule: commit.write_failed
            # Nothing of this commit happened: no offsets, no session reset, no new group.
            rt.respond(ref, commit_error_response(request, append_error_to_response(error)))
            return
        offsets = group.offsets
        for write in writes:
            # Every write above carries a value (OffsetWrite's is Optional for tombstones).
            offsets[write.topic, write.partition] = write.value  # type: ignore[assignment]
    if is_new_group:
        rt.groups[group_id] = group
    member = group.members.get(request.member_id)
    if member is not None and (group.state is STABLE or group.state is PREPARING_REBALANCE):
        rt.schedule_heartbeat(group, member)
    rt.respond(ref, OffsetCommitResponse(tuple(results)))


def _no_offset(topic: str, partition: int) -> OffsetFetchPartitionResponse:
    return OffsetFetchPartitionResponse(topic, partition, -1, -1, "", ErrorCode.NONE)


def offset_fetch(rt: Runtime, ref: Ref, request: OffsetFetchRequest) -> None:
    """Handle an OffsetFetch (allowed in every group state).

    Transactional commits are not served, so `require_stable` never meets pending
    transactional offsets and UNSTABLE_OFFSET_COMMIT is never returned.
    """
    group_id = request.group_id
    error = rt.coordinator_error(group_id)
    if error is not None:
        # rule: coordinator.check_failed
        rt.respond(ref, OffsetFetchResponse(error))
        return
    group = rt.groups.get(group_id)
    if group is None:
        # rule: fetch.unknown_group
        answers = tuple(_no_offset(tp.topic, tp.partition) for tp in request.partitions or ())
        rt.respond(ref, OffsetFetchResponse(ErrorCode.NONE, answers))
        return
    offsets = group.offsets
    if request.partitions is None:
        # rule: fetch.all_offsets
        wanted = list(offsets)
    else:
        # rule: fetch.offsets
        wanted = [(tp.topic, tp.partition) for tp in request.partitions]
    answers_list = []
    for key in wanted:
        value = offsets.get(key)
        if value is None:
            answers_list.append(_no_offset(*key))
        else:
            answers_list.append(
                OffsetFetchPartitionResponse(
                    key[0], key[1], value.offset, value.leader_epoch, value.metadata, ErrorCode.NONE
                )
            )
    rt.respond(ref, OffsetFetchResponse(ErrorCode.NONE, tuple(answers_list)))


def expired_offsets(group: Group, now_ms: int, retention_ms: int) -> list[tuple[str, int]]:
    """Which of the group's offsets have expired at `now_ms` (Kafka's expiration condition).

    - Empty with a protocol type: from the time the group became Empty (or the commit time).
    - A Stable consumer group with known subscriptions: offsets of unsubscribed topics only.
    - A group without protocol type (simple group): from the commit time.
    - Anything else: none.
    """
    exempt: frozenset[str] | None = None
    became_empty: int | None = None
    if group.protocol_type is not None:
        if group.state is EMPTY:
            became_empty = group.current_state_timestamp_ms
        elif (
            group.protocol_type == CONSUMER_PROTOCOL_TYPE
            and group.subscribed_topics is not None
            and group.state is STABLE
        ):
            exempt = group.subscribed_topics
        else:
            return []
    expired = []
    for key, value in group.offsets.items():
        if exempt is not None and key[0] in exempt:
            continue
        if value.expire_timestamp_ms is not None:
            if now_ms >= value.expire_timestamp_ms:
                expired.append(key)
            continue
        base = became_empty if became_empty is not None else value.commit_timestamp_ms
        if now_ms - base >= retention_ms:
            expired.append(key)
    return expired


def run_offset_retention(rt: Runtime) -> None:
    """The periodic retention check: expire offsets, delete Empty groups left with none."""
    # rule: retention.check
    rt.arm_retention()
    now = rt.now
    retention_ms = rt.config.offsets_retention_ms
    for group in list(rt.groups.values()):
        expired = expired_offsets(group, now, retention_ms)
        group_id = group.group_id
        records: list[LogRecord] = [OffsetWrite(group_id, t, p, None) for t, p in expired]
        delete_group = group.state is EMPTY and len(group.offsets) == len(expired)
        if delete_group:
            records.append(GroupMetadataWrite(group_id, None))
        if not records:
            continue
        if rt.append(group.partition, group_id, records) is not None:
            # rule: retention.write_failed
            continue  # nothing expires this round; the next check tries again
        # rule: retention.offsets_expired
        for key in expired:
            del group.offsets[key]
        if delete_group:
            # rule: retention.empty_group_deleted
            group.transition_to(DEAD, now)
            del rt.groups[group_id]
