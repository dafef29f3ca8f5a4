"""The Java consumer's committed-offset fetches under the consumer protocol (docs/protocol.md
§12.17): a member that was given partitions fetches their committed offsets with OffsetFetch v9,
carrying its member id and latest epoch, and one refused with STALE_MEMBER_EPOCH is sent again at
the newer epoch the member has learnt since.

Kafka's clients module (`org.apache.kafka.clients.consumer.internals`, read at commit 1eb7644 of
trunk, the code of 4.0.0): a poll's `OffsetsRequestManager.updatePositionsWithOffsets` calls
`initWithCommittedOffsetsIfNeeded` for the partitions still initializing (assigned, no position
yet), which calls `CommitRequestManager.fetchOffsets`; `OffsetFetchRequestState.toUnsentRequest`
builds the request with `memberInfo`'s member id and epoch when both are known (kept current by
`onMemberEpochUpdated`). `fetchOffsetsWithRetries` retries a STALE_MEMBER_EPOCH while an epoch is
known (`isStaleEpochErrorAndValidEpochAvailable`), rebuilding the request with the latest epoch;
`OffsetFetchRequestState.onFailure` fails the fetch on UNKNOWN_MEMBER_ID; NOT_COORDINATOR and
COORDINATOR_LOAD_IN_PROGRESS are retriable and retried.

Simplified as the commits are (commits.py): a fetch names every partition the member holds (Kafka
names only those without a position, which the model does not track); a retry is made only when
the epoch has moved since the fetch was sent (Kafka also retries at the same epoch until its
deadline, which changes nothing the coordinator judges), and a member whose epoch is no longer
known (it left or was fenced) lets a retriable fetch fail rather than send it without member id; positions are not modelled, so a
completed fetch changes nothing in the consumer.
"""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import OffsetFetchRequest

from ...consumer.rules import ConsumerRule
from .machine import Assignment, ConsumerState, KafkaConsumer
from .rules import (
    CG_CLIENT_FETCH_COMPLETED,
    CG_CLIENT_FETCH_FAILED,
    CG_CLIENT_FETCH_RETRIED,
    CG_CLIENT_FETCH_SENT,
)

# The states in which a poll initializes the positions of partitions the member was given: it
# holds what a reconciliation assigned (a Joining member holds nothing; a leaving or fenced one
# has released its partitions, and its epoch is no longer known to CommitRequestManager).
FETCHING_STATES = frozenset(
    {ConsumerState.RECONCILING, ConsumerState.ACKNOWLEDGING, ConsumerState.STABLE}
)


# Errors `fetchOffsetsWithRetries` retries as RetriableExceptions (the coordinator moved or is
# loading): the fetch is sent again, with the member's latest epoch.
RETRIABLE_COORDINATOR_ERRORS = frozenset(
    {
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    }
)


@dataclass(frozen=True)
class OffsetFetch:
    """An OffsetFetch on its way: from the consumer incarnation `member_id`, at `epoch`."""

    member_id: str
    epoch: int
    partitions: Assignment

    def request(self, group_id: str) -> OffsetFetchRequest:
        """The OffsetFetch v9 it is sent as (require_stable, as the Java consumer sets it)."""
        return OffsetFetchRequest(
            group_id,
            tuple(self.partitions),
            require_stable=True,
            member_id=self.member_id,
            member_epoch=self.epoch,
        )


@dataclass(frozen=True)
class FetchStep:
    """What the consumer does about a fetch: the rule it fires and the fetch it sends, if any."""

    rule: str
    fetch: OffsetFetch | None = None


class _Fired:
    """The one rule a fetch step fires, recorded as the machine's steps record theirs."""

    def __init__(self) -> None:
        self.rule = ""

    def fire(self, rule: ConsumerRule) -> None:
        """Record that `rule` applied."""
        self.rule = rule.rule_id

    def done(self, sent: OffsetFetch | None = None) -> FetchStep:
        """The step: its rule and the fetch it sends."""
        return FetchStep(self.rule, sent)


def fetch(consumer: KafkaConsumer) -> FetchStep | None:
    """The fetch of committed offsets a member holding partitions may send now, at its latest
    epoch."""
    if consumer.state not in FETCHING_STATES or consumer.member_epoch <= 0 or not consumer.owned:
        return None
    effects = _Fired()
    effects.fire(CG_CLIENT_FETCH_SENT)
    return effects.done(OffsetFetch(consumer.member_id, consumer.member_epoch, consumer.owned))


def on_fetch_response(consumer: KafkaConsumer, sent: OffsetFetch, error: ErrorCode) -> FetchStep:
    """What the consumer does with the answer to `sent`."""
    effects = _Fired()
    if error is ErrorCode.NONE:
        effects.fire(CG_CLIENT_FETCH_COMPLETED)
        return effects.done()
    retry = OffsetFetch(sent.member_id, consumer.member_epoch, sent.partitions)
    newer = consumer.member_epoch > 0 and consumer.member_epoch != sent.epoch
    stale_retried = error is ErrorCode.STALE_MEMBER_EPOCH and newer
    coordinator_retried = error in RETRIABLE_COORDINATOR_ERRORS and consumer.member_epoch > 0
    if stale_retried or coordinator_retried:
        effects.fire(CG_CLIENT_FETCH_RETRIED)
        return effects.done(retry)
    effects.fire(CG_CLIENT_FETCH_FAILED)
    return effects.done()
