"""Names of the fault switches a group world can apply (see `bugs.py` for the catalog).

A fault switch re-introduces one historical Kafka bug into the closed world without touching the
specification: the world wraps the coordinator's handling of a request, a consumer's outgoing
requests, or the coordinator's timers. The specification stays correct; the world around it
misbehaves the way the buggy Kafka did. Kept apart from `bugs.py` so that `world_params` can
validate a `fault` parameter without importing the catalog (which imports the world).
"""

from __future__ import annotations

from collections.abc import Mapping

# The coordinator ignores the generation of an OffsetCommit (it checks only the member id).
UNFENCED_COMMIT = "KAFKA-2555"
# A static member rejoining with an unknown member id during PreparingRebalance gets a new
# member id while its old member id stays in the group, unfenced.
STATIC_REJOIN_UNFENCED = "KAFKA-8500"
# No pending-sync timer, and a follower's SyncGroup may be lost.
NO_SYNC_TIMER = "KAFKA-12890"
# A cooperative consumer's JoinGroup claims partitions it does not own (corrupt ownedPartitions).
CORRUPT_OWNED_PARTITIONS = "KAFKA-12984"
# The cooperative leader hands a transferring partition to its new owner at once.
NO_WITHHOLDING = "KIP-429"

FAULTS: Mapping[str, str] = {
    UNFENCED_COMMIT: "OffsetCommit accepted without checking its generation",
    STATIC_REJOIN_UNFENCED: "static rejoin in PreparingRebalance leaves the old member id",
    NO_SYNC_TIMER: "no pending-sync timer; a follower's SyncGroup may be lost",
    CORRUPT_OWNED_PARTITIONS: "a cooperative JoinGroup claims every subscribed partition",
    NO_WITHHOLDING: "cooperative leader gives transferring partitions to their new owner",
}


def unknown_fault_message(name: str) -> str:
    """The error text for a fault name that is not in the catalog."""
    return f"unknown fault {name!r}; known: {', '.join(sorted(FAULTS))}"
