"""Kafka's CooperativeStickyAssignor ("cooperative-sticky", COOPERATIVE and EAGER), reference §7–8.

Each member's claim is its subscription's owned partitions with the subscription's generation
(ConsumerProtocolSubscription v2+). When the subscription has no generation (v0/v1, or −1), the
generation comes from the assignor's user data (`sticky_user_data`): none without user data,
−1 if the user data does not parse. Then the shared sticky assignment runs (`sticky`), and
partitions that change owner this round are withheld from their new owner (Kafka's
`adjustAssignment`): the old owner revokes them, rejoins, and the follow-up rebalance hands them
out. The partitions changing owner are those the constrained path reports (moved from a
trusted owner, or conflicted), or after the general path those added to one member while another
still owns them (`cooperative.transferring_partitions`, raw owned partitions).

So the assignment of one round may leave partitions unassigned; it is complete only once no
partition needs to move. The same steps run whichever rebalance protocol the group uses.

Not modelled: rack-aware assignment (KIP-881).
"""

from __future__ import annotations

from groupspec.vocabulary.requests import TopicPartition

from ..assignment import GroupAssignment, GroupSubscription, RebalanceProtocol, Subscription
from .cooperative import transferring_partitions
from .owned_partitions import member_data_from_subscription, subscription_generation
from .sticky import sticky_assign
from .sticky_user_data import (
    MemberData,
    decode_cooperative_sticky_generation,
    encode_cooperative_sticky_user_data,
)


def cooperative_member_data(subscription: Subscription) -> MemberData:
    """The member's claim as cooperative-sticky reads it (subscription first, then user data)."""
    if subscription_generation(subscription) is not None:
        return member_data_from_subscription(subscription)
    return MemberData(
        subscription.owned_partitions,
        decode_cooperative_sticky_generation(subscription.user_data),
    )


def withhold_transferring(
    assignment: GroupAssignment, transferring: tuple[tuple[TopicPartition, str], ...]
) -> GroupAssignment:
    """Kafka's adjustAssignment: remove each transferring partition from its new owner."""
    withheld = set(transferring)
    return GroupAssignment.of(
        {
            member_id: [p for p in partitions if (p, member_id) not in withheld]
            for member_id, partitions in assignment.assignments
        }
    )


class CooperativeStickyAssignor:
    """The cooperative sticky assignor: sticky, handing over moved partitions a round later."""

    @property
    def name(self) -> str:
        """The protocol name "cooperative-sticky"."""
        return "cooperative-sticky"

    @property
    def supported_protocols(self) -> tuple[RebalanceProtocol, ...]:
        """COOPERATIVE (preferred) and EAGER."""
        return (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def subscription_user_data(
        self, owned: tuple[TopicPartition, ...], generation: int
    ) -> bytes | None:
        """The member's generation (always sent, −1 before the first assignment)."""
        return encode_cooperative_sticky_user_data(generation)

    def assign(self, group: GroupSubscription) -> GroupAssignment:
        """The sticky assignment minus the partitions that change owner this round."""
        member_data = {
            member.member_id: cooperative_member_data(member.subscription)
            for member in group.members
        }
        sticky_round = sticky_assign(group, member_data)
        transferring = sticky_round.transferring
        if transferring is None:
            new_owner = sticky_round.assignment.owners()
            transferring = tuple(
                (partition, new_owner[partition][0])
                for partition in transferring_partitions(group, sticky_round.assignment)
            )
        return withhold_transferring(sticky_round.assignment, transferring)
