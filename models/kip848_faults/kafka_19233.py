"""KAFKA-19233: a fenced member could not rejoin its consumer group with member epoch 0.

Before apache/kafka#21305 (January 2026), `throwIfConsumerGroupMemberEpochIsInvalid` in
GroupMetadataManager had no early return for epoch 0: a heartbeat at epoch 0 from a member the
coordinator still knew at a higher epoch went through the lagging-epoch check, which accepts
only the member's previous epoch with owned partitions inside its assignment. A member fenced by
FENCED_MEMBER_EPOCH (the Java consumer keeps its member id and rejoins at epoch 0, KIP-1082) was
fenced again on every rejoin, unless its previous epoch happened to be 0.
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec.kip848 import ConsumerGroupsState
from groupspec.spec.kip848.config import ConsumerGroupConfig
from groupspec.spec.kip848.events import ConsumerGroupInput, RequestArrived
from groupspec.spec.kip848.heartbeat import owned_partitions
from groupspec.spec.kip848.reconciliation import within
from groupspec.spec.kip848.rules import (
    CG_HEARTBEAT_FENCED_MEMBER_EPOCH,
    CG_HEARTBEAT_REJOIN_KNOWN_MEMBER,
)
from groupspec.spec.kip848.step import Outcome, Reply
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.vocabulary.errors import ErrorCode

from .switch import Bug, Kip848Fault

NAME = "KAFKA-19233"


class RejoinAtZeroFenced(Kip848Fault):
    """A known member's rejoin at epoch 0 meets the lagging-epoch check."""

    name = NAME
    summary = "a known member's rejoin at epoch 0 is fenced unless 0 was its previous epoch"
    bug = Bug(
        NAME,
        "KAFKA-19233 (apache/kafka#21305)",
        "a member fenced by FENCED_MEMBER_EPOCH rejoins at epoch 0 with its member id and is "
        "fenced again: it never gets back into the group",
        NAME,
        "Converges",
        "kip848-faults-1",
        {},
        15,
    )

    def coordinator_outcome(
        self,
        config: ConsumerGroupConfig,
        before: ConsumerGroupsState,
        event: ConsumerGroupInput,
        outcome: Outcome,
    ) -> Outcome:
        """The rejoin refused with FENCED_MEMBER_EPOCH, the state unchanged."""
        if CG_HEARTBEAT_REJOIN_KNOWN_MEMBER.rule_id not in outcome.rules:
            return outcome
        assert isinstance(event, RequestArrived)
        request = event.request
        assert isinstance(request, ConsumerGroupHeartbeatRequest)
        group = before.group(request.group_id)
        member = None if group is None else group.member(request.member_id)
        if member is None or member.member_epoch == 0:
            return outcome
        # What the lagging-epoch check let through: the previous epoch, owning nothing else.
        owned = owned_partitions(config, request)
        if member.previous_member_epoch == 0 and within(owned, member.assigned):
            return outcome
        position = outcome.rules.index(CG_HEARTBEAT_REJOIN_KNOWN_MEMBER.rule_id)
        refusal = ConsumerGroupHeartbeatResponse(ErrorCode.FENCED_MEMBER_EPOCH)
        return replace(
            outcome,
            state=before,
            responses=(Reply(event.ref, refusal),),
            rules=(*outcome.rules[:position], CG_HEARTBEAT_FENCED_MEMBER_EPOCH.rule_id),
            choices=(),
        )


FAULT = RejoinAtZeroFenced()
