"""KAFKA-20066: the strict member-epoch check of OffsetCommit fenced legitimate commits.

Before KIP-1251 (apache/kafka#21508, #21558, #21692; Kafka 4.3.0) a consumer-protocol member's
commit was accepted only at its current member epoch. A heartbeat answered between the poll that
read the records and the commit moves the epoch on, so a member that still owns every partition
it commits got STALE_MEMBER_EPOCH: a false fencing, fatal to a transactional producer's offsets.
Kafka 4.3 accepts a commit at an older epoch for partitions the member has held since that epoch
(docs/protocol.md §12.17). The fault puts the old check back into the 4.3+ coordinator; the
4.0-4.2 profile (`kafka_version=4.0-4.2`) is the same check as Kafka shipped it.
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec.kip848 import ConsumerGroupsState
from groupspec.spec.kip848.config import ConsumerGroupConfig
from groupspec.spec.kip848.events import ConsumerGroupInput
from groupspec.spec.kip848.rules import (
    CG_OFFSET_COMMIT_ASSIGNED_BY_EPOCH,
    CG_OFFSET_COMMIT_EPOCH_MISMATCH,
)
from groupspec.spec.kip848.step import Outcome
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.responses import OffsetCommitPartitionResponse, OffsetCommitResponse

from .switch import Bug, Kip848Fault

NAME = "KAFKA-20066"


class StrictCommitEpoch(Kip848Fault):
    """A commit at an epoch older than the member's is refused, whatever it owns."""

    name = NAME
    summary = "OffsetCommit accepts a member's commit only at its current epoch (before KIP-1251)"
    bug = Bug(
        NAME,
        "KAFKA-20066 (KIP-1251; apache/kafka#21508, #21558, #21692)",
        "a member that still owns the partitions it commits is fenced with STALE_MEMBER_EPOCH "
        "because a heartbeat moved its epoch between its poll and its commit",
        NAME,
        "CommitJudged",
        "kip848-commits-2",
        {"check_convergence": "false"},
        15,
    )

    def coordinator_outcome(
        self,
        config: ConsumerGroupConfig,
        before: ConsumerGroupsState,
        event: ConsumerGroupInput,
        outcome: Outcome,
    ) -> Outcome:
        """A commit the per-partition check accepted is refused instead, and stores nothing."""
        del config, event
        if CG_OFFSET_COMMIT_ASSIGNED_BY_EPOCH.rule_id not in outcome.rules:
            return outcome
        replies = tuple(
            replace(reply, body=_refused(reply.body))
            if isinstance(reply.body, OffsetCommitResponse)
            else reply
            for reply in outcome.responses
        )
        rules = tuple(
            CG_OFFSET_COMMIT_EPOCH_MISMATCH.rule_id
            if rule == CG_OFFSET_COMMIT_ASSIGNED_BY_EPOCH.rule_id
            else rule
            for rule in outcome.rules
        )
        return replace(outcome, state=before, responses=replies, rules=rules)


def _refused(response: OffsetCommitResponse) -> OffsetCommitResponse:
    return OffsetCommitResponse(
        tuple(
            OffsetCommitPartitionResponse(p.topic, p.partition, ErrorCode.STALE_MEMBER_EPOCH)
            for p in response.partitions
        )
    )


FAULT = StrictCommitEpoch()
