"""The Java consumer's offset commits under the consumer protocol (docs/protocol.md §12.17): a
commit carries the member's latest epoch, and one refused with STALE_MEMBER_EPOCH is sent again
at the newer epoch the member has learnt since.

Kafka's clients module (`org.apache.kafka.clients.consumer.internals.CommitRequestManager`, read
at commit 1eb7644 of trunk, the code of 4.0.0): `OffsetCommitRequestState.buildRequest` sets the
generation-id-or-member-epoch field from `memberInfo.memberEpoch` (kept current by
`onMemberEpochUpdated`), and `isStaleEpochErrorAndValidEpochAvailable` makes STALE_MEMBER_EPOCH
retriable while an epoch is known. The auto-commit retry recommits the latest positions of what
the consumer then holds, which is what a retry here carries. Simplified: a retry is made only
when the epoch has moved since the commit was sent (Kafka also retries at the same epoch until
its timeout, which changes nothing the coordinator judges), and positions are not modelled: a
commit names its partitions.
"""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import OffsetCommitPartition, OffsetCommitRequest

from ...consumer.rules import ConsumerRule
from .machine import Assignment, ConsumerState, KafkaConsumer
from .rules import (
    CG_CLIENT_COMMIT_COMPLETED,
    CG_CLIENT_COMMIT_FAILED,
    CG_CLIENT_COMMIT_RETRIED,
    CG_CLIENT_COMMIT_SENT,
)

# Every commit of the model writes this offset: what is judged is who commits, not what.
COMMITTED_OFFSET = 1
# The states a member commits in: it holds what it was given, or commits before it leaves
# (a Fenced member has dropped its epoch; a Leaving one has released its partitions).
COMMITTING_STATES = frozenset(
    {
        ConsumerState.RECONCILING,
        ConsumerState.ACKNOWLEDGING,
        ConsumerState.STABLE,
        ConsumerState.PREPARE_LEAVING,
    }
)


@dataclass(frozen=True)
class Commit:
    """An OffsetCommit on its way: from the consumer incarnation `member_id`, at `epoch`."""

    member_id: str
    epoch: int
    partitions: Assignment

    def request(self, group_id: str) -> OffsetCommitRequest:
        """The OffsetCommit v9 it is sent as."""
        entries = tuple(
            OffsetCommitPartition(p.topic, p.partition, COMMITTED_OFFSET) for p in self.partitions
        )
        return OffsetCommitRequest(group_id, entries, self.epoch, self.member_id, api_version=9)


@dataclass(frozen=True)
class CommitStep:
    """What the consumer does about a commit: the rule it fires and the commit it sends, if any."""

    rule: str
    commit: Commit | None = None


class _Fired:
    """The one rule a commit step fires, recorded as the machine's steps record theirs."""

    def __init__(self) -> None:
        self.rule = ""

    def fire(self, rule: ConsumerRule) -> None:
        """Record that `rule` applied."""
        self.rule = rule.rule_id

    def done(self, sent: Commit | None = None) -> CommitStep:
        """The step: its rule and the commit it sends."""
        return CommitStep(self.rule, sent)


def commit(consumer: KafkaConsumer) -> CommitStep | None:
    """The commit a member holding partitions may send now, at its latest epoch."""
    if consumer.state not in COMMITTING_STATES or consumer.member_epoch <= 0 or not consumer.owned:
        return None
    effects = _Fired()
    effects.fire(CG_CLIENT_COMMIT_SENT)
    return effects.done(Commit(consumer.member_id, consumer.member_epoch, consumer.owned))


def on_commit_response(consumer: KafkaConsumer, sent: Commit, error: ErrorCode) -> CommitStep:
    """What the consumer does with the answer to `sent`."""
    effects = _Fired()
    if error is ErrorCode.NONE:
        effects.fire(CG_CLIENT_COMMIT_COMPLETED)
        return effects.done()
    newer = consumer.member_epoch > 0 and consumer.member_epoch != sent.epoch
    if error is ErrorCode.STALE_MEMBER_EPOCH and newer and consumer.owned:
        effects.fire(CG_CLIENT_COMMIT_RETRIED)
        return effects.done(Commit(consumer.member_id, consumer.member_epoch, consumer.owned))
    effects.fire(CG_CLIENT_COMMIT_FAILED)
    return effects.done()
