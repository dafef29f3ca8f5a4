"""The interface every assignor offers, ours and adapted third-party ones alike."""

from __future__ import annotations

from typing import Protocol

from groupspec.vocabulary.requests import TopicPartition

from ..assignment import GroupAssignment, GroupSubscription, RebalanceProtocol


class Assignor(Protocol):
    """A partition assignor as the group leader runs it (Kafka's ConsumerPartitionAssignor).

    `name` is the protocol name members offer in JoinGroup ("range", "roundrobin", "sticky",
    "cooperative-sticky"). `supported_protocols` lists the rebalance protocols it works with.
    """

    @property
    def name(self) -> str:
        """The protocol name the assignor is offered under."""
        ...

    @property
    def supported_protocols(self) -> tuple[RebalanceProtocol, ...]:
        """The rebalance protocols this assignor supports."""
        ...

    def subscription_user_data(
        self, owned: tuple[TopicPartition, ...], generation: int
    ) -> bytes | None:
        """The user data a member puts in its subscription for this assignor (None for none)."""
        ...

    def assign(self, group: GroupSubscription) -> GroupAssignment:
        """The assignment for every member of `group` (every member gets an entry)."""
        ...
