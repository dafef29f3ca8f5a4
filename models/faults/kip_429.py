"""KIP-429's hazard: a cooperative leader hands a partition over in the rebalance that revokes it.

The cooperative protocol withholds a partition that moves between members for one rebalance:
the old owner revokes it first, and only the next rebalance gives it to its new owner. A leader
that skips the withholding gives it at once, and for a while two members own it.
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec.assignment import Cluster, Subscription
from groupspec.spec.consumer import (
    ConsumerEvent,
    ConsumerOutcome,
    ConsumerState,
    ResponseReceived,
)
from groupspec.spec.consumer.outcome import Send
from groupspec.spec.consumer_protocol import (
    SubscriptionDecodeError,
    decode_assignment,
    decode_subscription,
    encode_assignment,
)
from groupspec.vocabulary.requests import SyncGroupAssignment, SyncGroupRequest, TopicPartition
from groupspec.vocabulary.responses import JoinGroupResponse

from .switch import Bug, FaultSwitch

NAME = "KIP-429"


class NoWithholding(FaultSwitch):
    """The cooperative leader gives transferring partitions to their new owner at once."""

    name = NAME
    summary = "cooperative leader gives transferring partitions to their new owner"
    bug = Bug(
        "KIP-429",
        "KIP-429 design",
        "a cooperative leader hands a partition to its new owner in the same rebalance that "
        "revokes it from the old owner",
        NAME,
        "CooperativeRevokeBeforeAssign",
        "cooperative-3",
        {"clients": "2", "max_generation": "2"},
        26,
    )

    def consumer_outcome(
        self, consumer: ConsumerState, event: ConsumerEvent, outcome: ConsumerOutcome
    ) -> ConsumerOutcome:
        """The leader's SyncGroup, sent on its JoinGroup response, gives away what it withheld."""
        if isinstance(event, ResponseReceived) and isinstance(event.body, JoinGroupResponse):
            return _give_withheld(outcome, event.body, consumer.cluster)
        return outcome


def _give_withheld(
    outcome: ConsumerOutcome, body: JoinGroupResponse, cluster: Cluster
) -> ConsumerOutcome:
    """KIP-429 hazard: the cooperative leader gives every partition its assignor withheld (a
    partition moving to another member) straight to the least-loaded member not claiming it,
    in the same rebalance that revokes it from its current owner."""
    subscriptions: dict[str, Subscription] = {}
    for member in body.members:
        try:
            subscriptions[member.member_id] = decode_subscription(member.metadata)
        except SubscriptionDecodeError:
            return outcome
    sends = []
    changed = False
    for send in outcome.sends:
        request = send.request
        if isinstance(request, SyncGroupRequest) and request.assignments:
            assigned: dict[str, list[TopicPartition]] = {}
            user_data: dict[str, bytes | None] = {}
            for entry in request.assignments:
                partitions, data = decode_assignment(entry.assignment)
                assigned[entry.member_id] = list(partitions)
                user_data[entry.member_id] = data
            topics = {topic for s in subscriptions.values() for topic in s.topics}
            given = {p for partitions in assigned.values() for p in partitions}
            for partition in cluster.partitions(topics):
                if partition in given:
                    continue
                takers = [
                    member_id
                    for member_id in sorted(assigned)
                    if member_id in subscriptions
                    and partition.topic in subscriptions[member_id].topics
                    and partition not in subscriptions[member_id].owned_partitions
                ]
                if not takers:
                    continue
                taker = min(takers, key=lambda member_id: len(assigned[member_id]))
                assigned[taker].append(partition)
                changed = True
            entries = tuple(
                SyncGroupAssignment(
                    entry.member_id,
                    encode_assignment(
                        sorted(assigned[entry.member_id]), user_data[entry.member_id]
                    ),
                )
                for entry in request.assignments
            )
            request = replace(request, assignments=entries)
        sends.append(Send(send.correlation_id, request))
    return replace(outcome, sends=tuple(sends)) if changed else outcome


SWITCH = NoWithholding()
