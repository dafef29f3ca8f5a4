"""The catalog of historical bugs, each a fault switch of the group world (DESIGN decision 6).

Each switch's module under `models/faults/` carries its own entry; this is the list.

Every entry names the bug, what went wrong in Kafka, the property that must fail when the fault
is on, the preset and `--set` bounds that expose it, and the length of the shortest
counterexample measured with those bounds. `expected` entries are not bugs: they are the classic
protocol's documented behaviour that a naive property gets wrong (the zombie window). `finding`
entries are failures of the correct protocol the checker found (no fault switch).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from groupspec.checker.check import check, in_process

from .fault_names import unknown_fault_message
from .faults import FAULT_SWITCHES, Bug
from .kip848_faults import KIP848_FAULT_SWITCHES
from .mixed_faults import MIXED_FAULT_SWITCHES
from .preset_models import load_model

__all__ = ["BUGS", "Bug", "BugRun", "bug_named", "run_bug"]

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

# A finding: the correct protocol, no fault switch, fails Convergence (docs/bugs.md).
STATIC_FAILOVER_FENCED = Bug(
    "static-failover-fenced",
    "classic protocol (finding)",
    "a static member that restarts during a rebalance gets a new member id that the "
    "coordinator keeps only in memory until the generation is synced; a failover before then "
    "reloads the old id, and the live incarnation's SyncGroup gets FENCED_INSTANCE_ID, fatal "
    "to the consumer",
    "",
    "Convergence",
    "static-2",
    {"failovers": "1", "evictions": "0"},
    30,
    finding=True,
)

# A finding: a static leader restarted with a wider subscription keeps its old assignment.
STATIC_LEADER_SUBSCRIPTION = Bug(
    "static-leader-new-topic-unassigned",
    "classic protocol (finding)",
    "a lone static member restarts with a subscription that adds a topic; the coordinator "
    "keeps the group Stable (the selected assignor did not change) and lets the returning "
    "leader skip the assignment (KIP-814), so the new topic's partitions are assigned to "
    "nobody while the group stays Stable",
    "",
    "Convergence",
    "static-2",
    {
        "clients": "1",
        "static_clients": "1",
        "topics": "t,u",
        "partitions": "1,1",
        "alternative_subscription": "t",
        "subscription_changes": "1",
        "evictions": "0",
    },
    15,
    finding=True,
)

# Every switch's entry (models/faults/, then KIP-848's models/kip848_faults/ and the mixed
# groups' models/mixed_faults/), by reference, then
# the expected behaviour and the findings.
BUGS: tuple[Bug, ...] = (
    *(switch.bug for switch in FAULT_SWITCHES.values() if switch.bug is not None),
    *(fault.bug for fault in KIP848_FAULT_SWITCHES.values() if fault.bug is not None),
    *(fault.bug for fault in MIXED_FAULT_SWITCHES.values() if fault.bug is not None),
    ZOMBIE_WINDOW,
    STATIC_FAILOVER_FENCED,
    STATIC_LEADER_SUBSCRIPTION,
)


def bug_named(name: str) -> Bug:
    """The catalog entry called `name`; KeyError naming the known ones otherwise."""
    for bug in BUGS:
        if bug.name == name:
            return bug
    raise KeyError(unknown_fault_message(name))


@dataclass(frozen=True)
class BugRun:
    """What checking one catalog entry found."""

    bug: Bug
    failed: tuple[str, ...]
    states: int
    length: int
    seconds: float
    # How the first failure showed: invariant, action, deadlock, goal-unreachable, fair-cycle.
    kind: str = ""

    @property
    def found(self) -> bool:
        """Whether the expected property, and only it, failed."""
        return self.failed == (self.bug.property_name,)


def run_bug(bug: Bug, workers: int = 1) -> BugRun:
    """Check `bug`'s preset with its fault and bounds; which properties failed, and how.

    Safety comes first: liveness is judged only when every safety property held (a safety
    counterexample is shorter and says more)."""
    started = time.perf_counter()
    loaded = load_model(bug.preset, bug.all_overrides())
    checked = check(loaded.model, engine=in_process(workers))
    result = checked.search
    failed = [found.problem.property_name for found in result.problems]
    lengths = [len(found.path) - 1 for found in result.problems]
    kinds = [found.problem.kind for found in result.problems]
    if not result.problems:
        for item in checked.liveness:
            if item.verdict == "fail":
                failed.append(item.property_name)
                lengths += [len(v.path) - 1 for v in item.violations[:1]]
                kinds += [v.kind for v in item.violations[:1]]
    return BugRun(
        bug,
        tuple(dict.fromkeys(failed)),
        result.distinct_states,
        lengths[0] if lengths else 0,
        time.perf_counter() - started,
        kinds[0] if kinds else "",
    )
