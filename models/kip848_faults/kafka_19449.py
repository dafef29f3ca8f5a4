"""KAFKA-19449: a member's own partitions pending revocation counted as another's, unreleased.

When a member that was revoking a partition gets it back in its next target, the partition is
still in its own pending-revocation set; before apache/kafka#20781 (October 2025),
CurrentAssignmentBuilder's computeNextAssignment held it back as unreleased (owned by "another
member") and moved the member to UnreleasedPartitions, one needless heartbeat away from Stable,
with nobody holding the partition meanwhile.
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec.kip848 import ConsumerGroupsState, MemberState
from groupspec.spec.kip848.config import ConsumerGroupConfig
from groupspec.spec.kip848.events import ConsumerGroupInput
from groupspec.spec.kip848.heartbeat import topic_partitions
from groupspec.spec.kip848.rules import CG_RECONCILE_TO_STABLE, CG_RECONCILE_TO_UNRELEASED
from groupspec.spec.kip848.state import Partitions
from groupspec.spec.kip848.step import Outcome, Reply
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupHeartbeatAssignment,
    ConsumerGroupHeartbeatResponse,
)

from .switch import Bug, Kip848Fault

NAME = "KAFKA-19449"


class OwnRevokingUnreleased(Kip848Fault):
    """Partitions a member takes back from its own pending revocation are held back."""

    name = NAME
    summary = "a member's own partitions pending revocation are held back as unreleased"
    bug = Bug(
        NAME,
        "KAFKA-19449 (apache/kafka#20781)",
        "a member given back a partition it was revoking waits in UnreleasedPartitions for "
        "itself: nobody holds the partition for one more heartbeat",
        NAME,
        "UnreleasedWaitsForOwner",
        "kip848-2",
        {"leaves": "1", "check_convergence": "false"},
        18,
    )

    def coordinator_outcome(
        self,
        config: ConsumerGroupConfig,
        before: ConsumerGroupsState,
        event: ConsumerGroupInput,
        outcome: Outcome,
    ) -> Outcome:
        """The member keeps the taken-back partitions out of its assignment, UnreleasedPartitions."""
        del event
        moved = {CG_RECONCILE_TO_STABLE.rule_id, CG_RECONCILE_TO_UNRELEASED.rule_id}
        if not moved & set(outcome.rules):
            return outcome
        state = outcome.state
        responses = outcome.responses
        for group in outcome.state.iter_groups():
            was = before.group(group.group_id)
            if was is None:
                continue
            for member in group.iter_members():
                old = was.member(member.member_id)
                if old is None:
                    continue
                taken_back = (member.assigned - old.assigned) & old.pending_revocation
                if not taken_back:
                    continue
                held = replace(
                    member,
                    assigned=member.assigned - taken_back,
                    state=MemberState.UNRELEASED_PARTITIONS,
                )
                group = group.with_member(held)
                state = state.with_group(group)
                responses = tuple(_answer(config, reply, held.assigned) for reply in responses)
        rules = tuple(
            CG_RECONCILE_TO_UNRELEASED.rule_id if r == CG_RECONCILE_TO_STABLE.rule_id else r
            for r in outcome.rules
        )
        return replace(outcome, state=state, responses=responses, rules=rules)


def _answer(config: ConsumerGroupConfig, reply: Reply, assigned: Partitions) -> Reply:
    body = reply.body
    if not isinstance(body, ConsumerGroupHeartbeatResponse) or body.assignment is None:
        return reply
    assignment = ConsumerGroupHeartbeatAssignment(topic_partitions(config, assigned))
    return Reply(reply.ref, replace(body, assignment=assignment))


FAULT = OwnRevokingUnreleased()
