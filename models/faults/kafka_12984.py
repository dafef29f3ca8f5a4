"""KAFKA-12984: corrupt ownedPartitions in a cooperative consumer's JoinGroup.

A cooperative consumer's subscription metadata claimed partitions it did not own, so two
members claimed the same partition in the same generation and the cooperative-sticky assignor
trusted both. The world lets a consumer that owns anything claim every partition of its
subscription, at its current generation.
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.spec.assignment import Cluster, Subscription
from groupspec.spec.consumer import ConsumerEvent, ConsumerOutcome, ConsumerState
from groupspec.spec.consumer.outcome import Send
from groupspec.spec.consumer_protocol import (
    SubscriptionDecodeError,
    decode_subscription,
    encode_subscription,
)
from groupspec.vocabulary.requests import JoinGroupRequest

from .switch import Bug, FaultSwitch

NAME = "KAFKA-12984"


class CorruptOwnedPartitions(FaultSwitch):
    """A cooperative JoinGroup claims every subscribed partition."""

    name = NAME
    summary = "a cooperative JoinGroup claims every subscribed partition"
    bug = Bug(
        "KAFKA-12984",
        "KAFKA-12984",
        "corrupt ownedPartitions: two members claim the same partition in the same generation",
        NAME,
        "OwnedPartitionsConsistent",
        "cooperative-3",
        {"clients": "2", "partition_growths": "1", "max_generation": "2"},
        32,
    )

    def consumer_outcome(
        self, consumer: ConsumerState, event: ConsumerEvent, outcome: ConsumerOutcome
    ) -> ConsumerOutcome:
        """Every JoinGroup the consumer sends claims its whole subscription as owned."""
        del event
        return _corrupt(outcome, consumer.cluster)


def _corrupt(outcome: ConsumerOutcome, cluster: Cluster) -> ConsumerOutcome:
    """KAFKA-12984: a consumer that owns anything claims every partition of its subscription
    in its JoinGroup metadata, at its current generation (corrupt ownedPartitions)."""
    sends = []
    changed = False
    for send in outcome.sends:
        request = send.request
        if isinstance(request, JoinGroupRequest):
            protocols = []
            for protocol in request.protocols:
                try:
                    subscription = decode_subscription(protocol.metadata)
                except SubscriptionDecodeError:
                    protocols.append(protocol)
                    continue
                if subscription.owned_partitions:
                    claimed = tuple(cluster.partitions(subscription.topics))
                    if claimed != subscription.owned_partitions:
                        corrupt = Subscription.of(
                            subscription.topics,
                            claimed,
                            subscription.generation,
                            subscription.rack,
                            subscription.user_data,
                        )
                        protocol = replace(protocol, metadata=encode_subscription(corrupt))
                        changed = True
                protocols.append(protocol)
            request = replace(request, protocols=tuple(protocols))
        sends.append(Send(send.correlation_id, request))
    return replace(outcome, sends=tuple(sends)) if changed else outcome


SWITCH = CorruptOwnedPartitions()
