"""The catalog of historical bugs, each a fault switch of the group world (DESIGN decision 6).

Every entry names the bug, what went wrong in Kafka, the property that must fail when the fault
is on, the preset and `--set` bounds that expose it, and the length of the shortest
counterexample measured with those bounds. `expected` entries are not bugs: they are the classic
protocol's documented behaviour that a naive property gets wrong (the zombie window).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from . import faults


@dataclass(frozen=True)
class Bug:
    """One catalog entry: a fault (or none), the property it breaks, and where to look."""

    name: str
    reference: str
    what_went_wrong: str
    fault: str
    property_name: str
    preset: str
    overrides: Mapping[str, str] = field(default_factory=dict)
    counterexample_length: int = 0
    expected: bool = False

    def all_overrides(self) -> dict[str, str]:
        """The `--set` overrides, including the fault parameter."""
        overrides = dict(self.overrides)
        if self.fault:
            overrides["fault"] = self.fault
        return overrides


BUGS: tuple[Bug, ...] = (
    Bug(
        "KAFKA-2555",
        "KAFKA-2555, KAFKA-9823",
        "offset commits not fenced by generation: a member evicted while stalled commits "
        "offsets of partitions that now belong to the next generation",
        faults.UNFENCED_COMMIT,
        "NoZombieCommit",
        "eager-2",
        {},
        23,
    ),
    Bug(
        "KAFKA-8500",
        "KAFKA-8500",
        "a static member rejoining with an unknown member id during PreparingRebalance got a "
        "new member id while the old one stayed in the group, unfenced",
        faults.STATIC_REJOIN_UNFENCED,
        "InstanceMapConsistent",
        "static-2",
        {},
        11,
    ),
    Bug(
        "KAFKA-12890",
        "KAFKA-12890",
        "no pending-sync timer: a follower that never sends SyncGroup leaves the group in "
        "CompletingRebalance forever",
        faults.NO_SYNC_TIMER,
        "Convergence",
        "eager-2",
        {"evictions": "0", "commits": "0", "check_convergence": "true"},
        20,
    ),
    Bug(
        "KAFKA-12984",
        "KAFKA-12984",
        "corrupt ownedPartitions: two members claim the same partition in the same generation",
        faults.CORRUPT_OWNED_PARTITIONS,
        "OwnedPartitionsConsistent",
        "cooperative-3",
        {"clients": "2", "partition_growths": "1"},
        32,
    ),
    Bug(
        "KIP-429",
        "KIP-429 design",
        "a cooperative leader hands a partition to its new owner in the same rebalance that "
        "revokes it from the old owner",
        faults.NO_WITHHOLDING,
        "CooperativeRevokeBeforeAssign",
        "cooperative-3",
        {"clients": "2"},
        26,
    ),
    Bug(
        "zombie-window",
        "classic protocol (expected)",
        "a member evicted while stalled still processes its partitions after they were given "
        "to another member; only its commits are fenced",
        "",
        "ExclusiveOwnershipCountingZombies",
        "eager-2",
        {"naive_zombie_property": "true"},
        24,
        expected=True,
    ),
)


def bug_named(name: str) -> Bug:
    """The catalog entry called `name`; KeyError naming the known ones otherwise."""
    for bug in BUGS:
        if bug.name == name:
            return bug
    raise KeyError(faults.unknown_fault_message(name))
