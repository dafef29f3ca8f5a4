"""OffsetCommit and OffsetFetch on consumer-protocol groups: who may commit or fetch, judged by
member id and member epoch (Kafka 4.3.0's `ConsumerGroup.validateOffsetCommit` and
`validateOffsetFetch`, with KIP-1251's per-partition assignment epochs), and where the
committed offsets are kept.

From OffsetCommit v9 the generation id field carries the member epoch. A commit at an epoch
older than the member's passes only when every partition in it has been the member's since
that epoch or earlier; one partition failing fails the whole commit and nothing is written.
A classic member inside the group (impl/kip848/classic_members.py) commits at its generation,
its member epoch, with any version, judged as above but refused with ILLEGAL_GENERATION.
Not served, as in the specification: transactional commits, OFFSET_METADATA_TOO_LARGE,
require_stable (no pending transactional offsets exist).
"""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import OffsetCommitRequest, OffsetFetchRequest, TopicPartition
from groupspec.vocabulary.responses import (
    OffsetCommitPartitionResponse,
    OffsetCommitResponse,
    OffsetFetchPartitionResponse,
    OffsetFetchResponse,
)

from ..errors import UnknownRequestError
from ..state import Ref
from .heartbeat import Refused
from .runtime import Runtime
from .state import Member

# OffsetCommit v9 is the first version a consumer-protocol member may commit with (its
# generation id field is the member epoch); older versions answer an unknown group with
# ILLEGAL_GENERATION.
MEMBER_EPOCH_COMMIT_VERSION = 9
NO_OFFSET = -1
NO_LEADER_EPOCH = -1


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    """One partition's committed offset as the coordinator keeps it."""

    offset: int
    leader_epoch: int = NO_LEADER_EPOCH
    # Kafka keeps a null metadata as "" (OffsetAndMetadata.NO_METADATA).
    metadata: str = ""
    commit_timestamp_ms: int = 0


def offset_commit(rt: Runtime, ref: Ref, request: OffsetCommitRequest) -> None:
    """Validate the committer, then store every partition's offset, or none with the error."""
    try:
        _validate_commit(rt, request)
    except Refused as refused:
        rt.respond(ref, _commit_answer(request, refused.error))
        return
    offsets = rt.offsets.setdefault(request.group_id, {})
    for entry in request.partitions:
        offsets[TopicPartition(entry.topic, entry.partition)] = CommittedOffset(
            entry.committed_offset,
            entry.committed_leader_epoch,
            entry.committed_metadata or "",
            rt.now,
        )
    rt.respond(ref, _commit_answer(request, ErrorCode.NONE))


def _validate_commit(rt: Runtime, request: OffsetCommitRequest) -> None:
    # An empty group id names no consumer group (Kafka refuses only a null one): unknown group.
    epoch = request.generation_id
    group = rt.groups.get(request.group_id)
    if group is None:
        if epoch < 0:
            raise UnknownRequestError(
                "OffsetCommit at a negative generation to a group this coordinator does not "
                "hold creates a simple classic group: the classic coordinator serves it"
            )
        if request.api_version >= MEMBER_EPOCH_COMMIT_VERSION:
            raise Refused(ErrorCode.GROUP_ID_NOT_FOUND)
        raise Refused(ErrorCode.ILLEGAL_GENERATION)
    if epoch < 0 and not group.members:
        return  # an admin client, or a consumer without group management, into an empty group
    member = group.members.get(request.member_id)
    if member is None:
        raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
    # A classic member commits with its generation, the member epoch, at any version, and is
    # refused with ILLEGAL_GENERATION where a consumer-protocol member gets STALE_MEMBER_EPOCH.
    if member.classic is None and request.api_version < MEMBER_EPOCH_COMMIT_VERSION:
        raise Refused(ErrorCode.UNSUPPORTED_VERSION)
    if epoch == member.member_epoch:
        return
    stale = ErrorCode.STALE_MEMBER_EPOCH if member.classic is None else ErrorCode.ILLEGAL_GENERATION
    if epoch > member.member_epoch:
        raise Refused(stale)
    _check_assignment_epochs(member, epoch, request, stale)


def _check_assignment_epochs(
    member: Member, epoch: int, request: OffsetCommitRequest, stale: ErrorCode
) -> None:
    """KIP-1251: a commit at an older epoch than the member's passes only for partitions the
    member has owned (assigned or pending revocation) since that epoch or earlier."""
    owned = member.assigned | member.pending_revocation
    epochs = member.assignment_epochs
    for entry in request.partitions:
        partition = TopicPartition(entry.topic, entry.partition)
        assigned_at = epochs.get(partition)
        if partition not in owned or assigned_at is None or epoch < assigned_at:
            raise Refused(stale)


def _commit_answer(request: OffsetCommitRequest, error: ErrorCode) -> OffsetCommitResponse:
    return OffsetCommitResponse(
        tuple(
            OffsetCommitPartitionResponse(entry.topic, entry.partition, error)
            for entry in request.partitions
        )
    )


def offset_fetch(rt: Runtime, ref: Ref, request: OffsetFetchRequest) -> None:
    """Validate the fetcher (an admin without member id, or a member at its epoch), then
    answer with the committed offsets; nothing changes."""
    group = rt.groups.get(request.group_id)
    if group is None:
        rt.respond(ref, _fetch_answer(request, {}))
        return
    if request.member_id is not None or request.member_epoch >= 0:
        member = group.members.get(request.member_id or "")
        if member is None:
            rt.respond(ref, OffsetFetchResponse(ErrorCode.UNKNOWN_MEMBER_ID))
            return
        if request.member_epoch != member.member_epoch:
            error = (
                ErrorCode.STALE_MEMBER_EPOCH
                if member.classic is None
                else ErrorCode.ILLEGAL_GENERATION
            )
            rt.respond(ref, OffsetFetchResponse(error))
            return
    rt.respond(ref, _fetch_answer(request, rt.offsets.get(request.group_id, {})))


def _fetch_answer(
    request: OffsetFetchRequest, offsets: dict[TopicPartition, CommittedOffset]
) -> OffsetFetchResponse:
    wanted = sorted(offsets) if request.partitions is None else list(request.partitions)
    answers = []
    for partition in wanted:
        committed = offsets.get(partition)
        if committed is None:
            answers.append(
                OffsetFetchPartitionResponse(
                    partition.topic,
                    partition.partition,
                    NO_OFFSET,
                    NO_LEADER_EPOCH,
                    # Kafka answers an offset never committed with metadata "", not null.
                    "",
                    ErrorCode.NONE,
                )
            )
        else:
            answers.append(
                OffsetFetchPartitionResponse(
                    partition.topic,
                    partition.partition,
                    committed.offset,
                    committed.leader_epoch,
                    committed.metadata,
                    ErrorCode.NONE,
                )
            )
    return OffsetFetchResponse(ErrorCode.NONE, tuple(answers))
