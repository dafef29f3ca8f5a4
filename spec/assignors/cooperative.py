"""The KIP-429 rule that no partition changes owner within a single rebalance (reference §7).

Under COOPERATIVE rebalancing a partition may only be given to a new owner after its old owner
has revoked it, which takes a follow-up rebalance. The leader checks this for every COOPERATIVE
assignor except cooperative-sticky (Kafka's `ConsumerCoordinator.validateCooperativeAssignment`):
across the assignment, the partitions *added* to some member (assigned, not owned by it) must
not overlap the partitions *revoked* from some member (owned by it, not assigned). It uses the
owned partitions exactly as the subscriptions report them, with no generation filtering, and
only the members that have an entry in the assignment (a member without one is not counted as
revoking anything; a member unknown to the group is taken to own nothing, where Kafka would
fail with a NullPointerException).

cooperative-sticky skips the check and withholds such partitions itself (`cooperative_sticky`).
"""

from __future__ import annotations

from groupspec.vocabulary.requests import TopicPartition

from ..assignment import GroupAssignment, GroupSubscription


class IllegalCooperativeAssignmentError(Exception):
    """A COOPERATIVE assignment gives a partition to a new owner while another still owns it.

    Kafka's leader fails the rebalance with an IllegalStateException. This is a behaviour the
    spec models (a third-party assignor can produce such an assignment), so it is neither a
    refused input (`SpecInputError`) nor a defect of the spec.
    """

    def __init__(self, partitions: tuple[TopicPartition, ...]) -> None:
        names = ", ".join(str(partition) for partition in partitions)
        super().__init__(
            "with the COOPERATIVE protocol, owned partitions cannot be reassigned to other "
            f"members; the assignor reassigned partitions still owned by some member: {names}"
        )
        self.partitions = partitions


def transferring_partitions(
    group: GroupSubscription, assignment: GroupAssignment
) -> tuple[TopicPartition, ...]:
    """Partitions added to some member that some member (other than the new owner) still owns."""
    owned = {
        member.member_id: set(member.subscription.owned_partitions) for member in group.members
    }
    added: set[TopicPartition] = set()
    revoked: set[TopicPartition] = set()
    for member_id, partitions in assignment.assignments:
        member_owns = owned.get(member_id, set())
        added |= set(partitions) - member_owns
        revoked |= member_owns - set(partitions)
    return tuple(sorted(added & revoked))


def validate_cooperative_assignment(group: GroupSubscription, assignment: GroupAssignment) -> None:
    """Raise `IllegalCooperativeAssignmentError` if `assignment` moves an owned partition at once."""
    partitions = transferring_partitions(group, assignment)
    if partitions:
        raise IllegalCooperativeAssignmentError(partitions)
