"""KAFKA-20442: fencing a group's last member left the Empty group's epochs apart.

`consumerGroupFenceMembers` bumps the group epoch when it removes members; before
apache/kafka#22045 (April 2026; Kafka 4.4.0 has the fix, 4.3.0 not) it did not also move the
target-assignment epoch when the group became empty, so an Empty group kept
`groupEpoch > assignmentEpoch` (the state Kafka derives as Assigning once a member joins back).
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec.kip848 import ConsumerGroupsState
from groupspec.spec.kip848.config import ConsumerGroupConfig
from groupspec.spec.kip848.events import ConsumerGroupInput
from groupspec.spec.kip848.rules import CG_HEARTBEAT_LAST_MEMBER_FENCED
from groupspec.spec.kip848.step import Outcome

from .switch import Bug, Kip848Fault

NAME = "KAFKA-20442"


class EmptyGroupEpochsApart(Kip848Fault):
    """Fencing the last member bumps the group epoch only."""

    name = NAME
    summary = "fencing the last member bumps the group epoch but not the assignment epoch"
    bug = Bug(
        NAME,
        "KAFKA-20442 (apache/kafka#22045)",
        "the last member fenced (session timeout, rebalance timeout or leave) leaves an Empty "
        "group whose group epoch is ahead of its target-assignment epoch",
        NAME,
        "EmptyEpochsAgree",
        "kip848-faults-1",
        {},
        5,
    )

    def coordinator_outcome(
        self,
        config: ConsumerGroupConfig,
        before: ConsumerGroupsState,
        event: ConsumerGroupInput,
        outcome: Outcome,
    ) -> Outcome:
        """Each group the step emptied keeps its assignment epoch and time from before."""
        del config, event
        if CG_HEARTBEAT_LAST_MEMBER_FENCED.rule_id not in outcome.rules:
            return outcome
        state = outcome.state
        for group in outcome.state.iter_groups():
            was = before.group(group.group_id)
            if was is None or group.members_by_id or not was.members_by_id:
                continue
            state = state.with_group(
                replace(
                    group,
                    assignment_epoch=was.assignment_epoch,
                    assignment_timestamp_ms=was.assignment_timestamp_ms,
                )
            )
        rules = tuple(r for r in outcome.rules if r != CG_HEARTBEAT_LAST_MEMBER_FENCED.rule_id)
        return replace(outcome, state=state, rules=rules)


FAULT = EmptyGroupEpochsApart()
