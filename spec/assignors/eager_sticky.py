"""Kafka's StickyAssignor ("sticky", EAGER only), reference §8.

Under EAGER rebalancing a member revokes everything before it joins, so its subscription's
owned partitions are empty. The StickyAssignor therefore remembers the member's last assignment
and generation itself (from `onAssignment`) and sends them as user data
(`sticky_user_data.encode_sticky_user_data`); the leader reads each member's claim from that
user data only, ignoring the subscription's owned partitions and generation field (which Kafka
still consults for the other side of a claim conflict, see `owned_partitions`). Then it runs
the shared sticky assignment (`sticky.sticky_assign`).

In this interface the consumer passes in what the assignor remembers: `subscription_user_data`
gets the member's last assignment and the generation it came with. A member that never received
an assignment (no partitions, generation −1) sends no user data, as Kafka does before the first
`onAssignment`.

Not modelled: rack-aware assignment (KIP-881).
"""

from __future__ import annotations

from groupspec.vocabulary.requests import TopicPartition

from ..assignment import DEFAULT_GENERATION, GroupAssignment, GroupSubscription, RebalanceProtocol
from .sticky import sticky_assign
from .sticky_user_data import decode_sticky_user_data, encode_sticky_user_data


class StickyAssignor:
    """The eager sticky assignor: balanced, then as sticky as possible (reference §8)."""

    @property
    def name(self) -> str:
        """The protocol name "sticky"."""
        return "sticky"

    @property
    def supported_protocols(self) -> tuple[RebalanceProtocol, ...]:
        """StickyAssignor only supports EAGER rebalancing."""
        return (RebalanceProtocol.EAGER,)

    def subscription_user_data(
        self, owned: tuple[TopicPartition, ...], generation: int
    ) -> bytes | None:
        """The member's last assignment and its generation; None if it never had one."""
        if not owned and generation == DEFAULT_GENERATION:
            return None
        return encode_sticky_user_data(owned, generation)

    def assign(self, group: GroupSubscription) -> GroupAssignment:
        """The sticky assignment, each member's claim read from its user data."""
        member_data = {
            member.member_id: decode_sticky_user_data(member.subscription.user_data)
            for member in group.members
        }
        return sticky_assign(group, member_data).assignment
