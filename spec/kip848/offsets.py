"""OffsetCommit and OffsetFetch on consumer-protocol groups (docs/protocol.md §12.17): who may
commit or fetch, judged by member id and member epoch.

Kafka: `G/OffsetMetadataManager.java` (`validateOffsetCommit`, `commitOffset`, `fetchOffsets`)
and `G/modern/consumer/ConsumerGroup.java` (`validateOffsetCommit`, `validateOffsetFetch`,
`createAssignmentEpochValidator` from 4.3.0). From OffsetCommit v9 the generation id field
carries the member epoch. Where the releases differ the profile decides
(spec/kip848/profiles.py): before 4.3 the epoch must equal the member's; from 4.3 (KIP-1251) an
older epoch is accepted for each partition the member has owned since that epoch or earlier.
A partition that fails the 4.3 check fails the whole request: Kafka's validator throws out of
the loop that builds the commit, so nothing is written. A classic member inside the group
(classic_members.py) commits at its generation, which is its member epoch, with any version, and
is refused with ILLEGAL_GENERATION where a consumer-protocol member is refused with
STALE_MEMBER_EPOCH (`validateMemberEpoch` and the 4.3.0 validator branch on
`useClassicProtocol`); the same holds for its OffsetFetch.

Not modelled: a commit at a negative epoch to a group the coordinator does not hold creates a
simple classic group (the classic spec, spec/offsets.py, covers it), transactional commits,
OFFSET_METADATA_TOO_LARGE and require_stable.
"""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode
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

from ..errors import UnknownApiError
from .heartbeat import Refused
from .mixed_rules import CG_CLASSIC_OFFSET_COMMIT, CG_CLASSIC_OFFSET_FETCH
from .profiles import has_assignment_epochs
from .rules import (
    CG_OFFSET_COMMIT_ADMIN_EMPTY_GROUP,
    CG_OFFSET_COMMIT_ADMIN_NON_EMPTY_GROUP,
    CG_OFFSET_COMMIT_ASSIGNED_BY_EPOCH,
    CG_OFFSET_COMMIT_ASSIGNED_LATER,
    CG_OFFSET_COMMIT_EPOCH_MATCHES,
    CG_OFFSET_COMMIT_EPOCH_MISMATCH,
    CG_OFFSET_COMMIT_EPOCH_NEWER,
    CG_OFFSET_COMMIT_PARTITION_NOT_OWNED,
    CG_OFFSET_COMMIT_UNKNOWN_GROUP,
    CG_OFFSET_COMMIT_UNKNOWN_GROUP_OLD_VERSION,
    CG_OFFSET_COMMIT_UNKNOWN_MEMBER,
    CG_OFFSET_COMMIT_UNSUPPORTED_VERSION,
    CG_OFFSET_FETCH_MEMBER,
    CG_OFFSET_FETCH_STALE_MEMBER_EPOCH,
    CG_OFFSET_FETCH_UNKNOWN_GROUP,
    CG_OFFSET_FETCH_UNKNOWN_MEMBER,
    CG_OFFSET_FETCH_WITHOUT_MEMBER,
)
from .state import CommittedOffset, ConsumerGroup, ConsumerGroupMember, ConsumerGroupsState
from .step import Step

# OffsetCommit v9 is the first version a consumer-protocol member may use (its generation id is
# the member epoch); older versions answer an unknown group with ILLEGAL_GENERATION.
MEMBER_EPOCH_COMMIT_VERSION = 9
NO_OFFSET = -1
NOT_COMMITTED = CommittedOffset(NO_OFFSET)


def offset_commit(
    step: Step, state: ConsumerGroupsState, ref: RequestRef, request: OffsetCommitRequest
) -> ConsumerGroupsState:
    """Validate the committer, then store every partition's offset, or none with the error."""
    try:
        _validate_commit(step, state, request)
    except Refused as refused:
        step.respond(ref, _commit_answer(request, refused.error))
        return state
    offsets = state.offsets(request.group_id)
    for entry in request.partitions:
        offsets[TopicPartition(entry.topic, entry.partition)] = CommittedOffset(
            entry.committed_offset, entry.committed_leader_epoch, entry.committed_metadata or ""
        )
    step.respond(ref, _commit_answer(request, ErrorCode.NONE))
    return state.with_offsets(request.group_id, offsets)


def _validate_commit(step: Step, state: ConsumerGroupsState, request: OffsetCommitRequest) -> None:
    # An empty group id is a group id like any other (Kafka 4.3.0 GroupCoordinatorService
    # .commitOffsets refuses only a null one, which the non-nullable schema field never carries,
    # "for backwards compatibility"): no consumer group has it, so it is an unknown group.
    epoch = request.generation_id
    group = state.group(request.group_id)
    if group is None:
        if epoch < 0:
            raise UnknownApiError(
                "OffsetCommit at a negative generation to a group the coordinator does not hold "
                "creates a simple classic group: the classic spec models it (spec/offsets.py)"
            )
        if request.api_version >= MEMBER_EPOCH_COMMIT_VERSION:
            step.fire(CG_OFFSET_COMMIT_UNKNOWN_GROUP)
            raise Refused(ErrorCode.GROUP_ID_NOT_FOUND)
        step.fire(CG_OFFSET_COMMIT_UNKNOWN_GROUP_OLD_VERSION)
        raise Refused(ErrorCode.ILLEGAL_GENERATION)
    if epoch < 0 and not group.members_by_id:
        step.fire(CG_OFFSET_COMMIT_ADMIN_EMPTY_GROUP)
        return
    member = group.member(request.member_id)
    if member is None:
        step.fire(
            CG_OFFSET_COMMIT_ADMIN_NON_EMPTY_GROUP if epoch < 0 else CG_OFFSET_COMMIT_UNKNOWN_MEMBER
        )
        raise Refused(ErrorCode.UNKNOWN_MEMBER_ID)
    if member.uses_classic_protocol:
        # A classic member inside the group commits at its generation, which is its member
        # epoch, with any version; ConsumerGroup.validateOffsetCommit refuses it with
        # ILLEGAL_GENERATION where it refuses a consumer-protocol member with STALE_MEMBER_EPOCH.
        step.fire(CG_CLASSIC_OFFSET_COMMIT)
    elif request.api_version < MEMBER_EPOCH_COMMIT_VERSION:
        step.fire(CG_OFFSET_COMMIT_UNSUPPORTED_VERSION)
        raise Refused(ErrorCode.UNSUPPORTED_VERSION)
    stale = _stale_epoch_error(member)
    if epoch == member.member_epoch:
        step.fire(CG_OFFSET_COMMIT_EPOCH_MATCHES)
        return
    if not has_assignment_epochs(step.config.kafka_version):
        step.fire(CG_OFFSET_COMMIT_EPOCH_MISMATCH)
        raise Refused(stale)
    if epoch > member.member_epoch:
        step.fire(CG_OFFSET_COMMIT_EPOCH_NEWER)
        raise Refused(stale)
    _check_assignment_epochs(step, member, epoch, request)


def _stale_epoch_error(member: ConsumerGroupMember) -> ErrorCode:
    """How a commit or fetch at the wrong epoch is refused: ILLEGAL_GENERATION for a classic
    member (its epoch is a generation to it), STALE_MEMBER_EPOCH otherwise."""
    if member.uses_classic_protocol:
        return ErrorCode.ILLEGAL_GENERATION
    return ErrorCode.STALE_MEMBER_EPOCH


def _check_assignment_epochs(
    step: Step, member: ConsumerGroupMember, epoch: int, request: OffsetCommitRequest
) -> None:
    """KIP-1251's per-partition check of a commit at an epoch older than the member's."""
    for entry in request.partitions:
        partition = TopicPartition(entry.topic, entry.partition)
        assigned_at = member.assignment_epoch_of(partition)
        if partition not in member.owned or assigned_at is None:
            step.fire(CG_OFFSET_COMMIT_PARTITION_NOT_OWNED)
            raise Refused(_stale_epoch_error(member))
        if epoch < assigned_at:
            step.fire(CG_OFFSET_COMMIT_ASSIGNED_LATER)
            raise Refused(_stale_epoch_error(member))
    step.fire(CG_OFFSET_COMMIT_ASSIGNED_BY_EPOCH)


def commit_allowed(
    group: ConsumerGroup | None,
    member_id: str,
    epoch: int,
    partitions: frozenset[TopicPartition],
    kafka_version: str,
) -> bool:
    """Whether the profile accepts a member's commit of `partitions` at `epoch` (a member id and
    epoch >= 0): the judgement `offset_commit` makes, for properties that check it."""
    member = None if group is None else group.member(member_id)
    if member is None:
        return False
    if epoch == member.member_epoch:
        return True
    if not has_assignment_epochs(kafka_version) or epoch > member.member_epoch:
        return False
    for partition in partitions:
        assigned_at = member.assignment_epoch_of(partition)
        if partition not in member.owned or assigned_at is None or epoch < assigned_at:
            return False
    return True


def _commit_answer(request: OffsetCommitRequest, error: ErrorCode) -> OffsetCommitResponse:
    return OffsetCommitResponse(
        tuple(
            OffsetCommitPartitionResponse(entry.topic, entry.partition, error)
            for entry in request.partitions
        )
    )


def offset_fetch(
    step: Step, state: ConsumerGroupsState, ref: RequestRef, request: OffsetFetchRequest
) -> ConsumerGroupsState:
    """Validate the fetcher, then answer with the committed offsets; the state does not change.
    An empty group id is an unknown group, as for a commit (GroupCoordinatorService.fetchOffsets
    refuses only a null one)."""
    group = state.group(request.group_id)
    if group is None:
        step.fire(CG_OFFSET_FETCH_UNKNOWN_GROUP)
        step.respond(ref, _fetch_answer(request, {}))
        return state
    if request.member_id is None and request.member_epoch < 0:
        step.fire(CG_OFFSET_FETCH_WITHOUT_MEMBER)
    else:
        member = group.member(request.member_id or "")
        if member is None:
            step.fire(CG_OFFSET_FETCH_UNKNOWN_MEMBER)
            step.respond(ref, OffsetFetchResponse(ErrorCode.UNKNOWN_MEMBER_ID))
            return state
        if member.uses_classic_protocol:
            step.fire(CG_CLASSIC_OFFSET_FETCH)
        if request.member_epoch != member.member_epoch:
            step.fire(CG_OFFSET_FETCH_STALE_MEMBER_EPOCH)
            step.respond(ref, OffsetFetchResponse(_stale_epoch_error(member)))
            return state
        step.fire(CG_OFFSET_FETCH_MEMBER)
    step.respond(ref, _fetch_answer(request, state.offsets(request.group_id)))
    return state


def _fetch_answer(
    request: OffsetFetchRequest, offsets: dict[TopicPartition, CommittedOffset]
) -> OffsetFetchResponse:
    wanted = sorted(offsets) if request.partitions is None else list(request.partitions)
    answers = []
    for partition in wanted:
        # An offset never committed: -1, -1 and metadata "", not null (4.3.0
        # OffsetMetadataManager.fetchOffsets).
        committed = offsets.get(partition, NOT_COMMITTED)
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
