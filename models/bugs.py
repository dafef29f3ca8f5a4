"""The catalog of historical bugs, each a fault switch of the group world (DESIGN decision 6).

Each switch's module under `models/faults/` carries its own entry; this is the list.

Every entry names the bug, what went wrong in Kafka, the property that must fail when the fault
is on, the preset and `--set` bounds that expose it, and the length of the shortest
counterexample measured with those bounds. `expected` entries are not bugs: they are the classic
protocol's documented behaviour that a naive property gets wrong (the zombie window).
"""

from __future__ import annotations

from .faults import FAULT_SWITCHES, Bug, unknown_fault_message

__all__ = ["BUGS", "Bug", "bug_named"]

# Not a bug: the classic protocol's documented behaviour, which a naive property gets wrong.
ZOMBIE_WINDOW = Bug(
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
)

# Every switch's entry (models/faults/), by reference, then the expected behaviour.
BUGS: tuple[Bug, ...] = (
    *(switch.bug for switch in FAULT_SWITCHES.values() if switch.bug is not None),
    ZOMBIE_WINDOW,
)


def bug_named(name: str) -> Bug:
    """The catalog entry called `name`; KeyError naming the known ones otherwise."""
    for bug in BUGS:
        if bug.name == name:
            return bug
    raise KeyError(unknown_fault_message(name))
