"""KAFKA-19546: a static classic member replacing the last consumer-protocol member downgraded
the group without the rebalance its new subscription needed.

Kafka 4.0.0 and 4.1.0, `GroupMetadataManager.classicGroupJoinToConsumerGroup` then
`convertToClassicGroup`: a downgrade triggered by a joining static member (rather than by members
leaving) never called `prepareRebalance`. The classic group started Stable at the group epoch,
and `ClassicGroup.fromConsumerGroup` gave the newcomer the replaced member's target, computed
for the replaced member's subscription. When the newcomer subscribed to other topics, it was
handed partitions it does not subscribe to and nothing made the group rebalance. Fixed by
apache/kafka#20417 (4.2.0; backported to 4.0 and 4.1 by #20580/#20581), which rebalances when
the subscription changed; 4.3.0 rebalances whenever the target is behind the group epoch.
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec.kip848.mixed import MixedInput, MixedOutcome
from groupspec.spec.kip848.mixed_rules import (
    CG_CONVERT_DOWNGRADE_ON_REPLACEMENT,
    CG_CONVERT_DOWNGRADE_ON_REPLACEMENT_REBALANCE,
)
from groupspec.spec.kip848.mixed_state import GroupKind, MixedState
from groupspec.vocabulary.group_state import STABLE
from groupspec.vocabulary.responses import JoinGroupResponse, Response

from .switch import Bug, MixedFault

NAME = "KAFKA-19546"


class DowngradeWithoutRebalance(MixedFault):
    """A downgrade on a static replacement leaves the classic group Stable, whatever changed."""

    name = NAME
    summary = (
        "a static classic member replacing the last consumer-protocol member downgrades the "
        "group without a rebalance, keeping the replaced member's assignment"
    )
    bug = Bug(
        NAME,
        "KAFKA-19546 (apache/kafka#20417)",
        "an application instance restarted as a classic consumer with another subscription "
        "replaced its consumer-protocol static member: the group became a Stable classic group "
        "that handed the newcomer the old member's partitions, of a topic it does not subscribe "
        "to, and never rebalanced",
        NAME,
        "ClassicAssignmentsSubscribed",
        "kip848-downgrade-1",
        {},
        12,
    )

    def coordinator_outcome(
        self, before: MixedState, event: MixedInput, outcome: MixedOutcome
    ) -> MixedOutcome:
        """The rebalancing downgrade as 4.0.0 did it: Stable, no join timer, and the newcomer's
        generation the group's."""
        if CG_CONVERT_DOWNGRADE_ON_REPLACEMENT_REBALANCE.rule_id not in outcome.rules:
            return outcome
        del event
        # The group the step downgraded: a consumer group before, a classic group now.
        (group,) = (
            g
            for g in outcome.state.classic.groups
            if before.kind_of(g.group_id) is GroupKind.CONSUMER
        )
        stable = replace(group, state=STABLE, previous_state=None, join_timer=None)
        rules = tuple(
            CG_CONVERT_DOWNGRADE_ON_REPLACEMENT.rule_id
            if rule == CG_CONVERT_DOWNGRADE_ON_REPLACEMENT_REBALANCE.rule_id
            else rule
            for rule in outcome.rules
        )
        responses = tuple(
            _with_generation(reply, stable.generation_id) if isinstance(reply, Response) else reply
            for reply in outcome.responses
        )
        return replace(
            outcome,
            state=outcome.state.with_classic_group(stable),
            responses=responses,
            rules=rules,
        )


def _with_generation(reply: Response, generation: int) -> Response:
    """A JoinGroup answer carrying `generation`; any other answer as it is."""
    body = reply.body
    if not isinstance(body, JoinGroupResponse):
        return reply
    return replace(reply, body=replace(body, generation_id=generation))


FAULT = DowngradeWithoutRebalance()
