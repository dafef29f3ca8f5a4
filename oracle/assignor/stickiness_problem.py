"""The stickiness optimum as a counting problem, shared by its two solvers (z3 and HiGHS).

Partitions of one topic differ only in who owned them, so both solvers decide how MANY
partitions of each topic each member gets, n[m, t], never which ones. This module states that
problem once — who may take which topic, how large each topic is, how many partitions of a topic
each member owned and may keep — and turns a solver's counts back into an assignment. What the
solvers are asked (fewest moves under completeness and isBalanced) is written out in
`optimal_stickiness.py`; the two encode it independently so that each checks the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from groupspec.spec.assignment import GroupAssignment, GroupSubscription
from groupspec.spec.assignors.owned_partitions import PreviousOwnership, previous_owners
from groupspec.spec.assignors.properties import partition_moves
from groupspec.vocabulary.requests import TopicPartition


class StickinessOracleError(RuntimeError):
    """A solver could not decide the optimum (e.g. a timeout) or found no balanced assignment."""


@dataclass(frozen=True)
class OptimalStickiness:
    """The optimum, one assignment reaching it, and what solving it took."""

    optimum_moves: int
    assignment: GroupAssignment
    previously_owned: int
    variables: int
    constraints: int
    solve_seconds: float


@dataclass(frozen=True)
class StickinessProblem:
    """One group's counting problem.

    `takeable[m]` are the topics m subscribes to that have partitions; `sizes[t]` counts topic
    t's partitions; `owned[m, t]` lists the partitions of t that m owned before and may keep
    (it still subscribes to t); `ownership` is the previous ownership moves are counted against.
    """

    member_ids: tuple[str, ...]
    takeable: Mapping[str, frozenset[str]]
    sizes: Mapping[str, int]
    owned: Mapping[tuple[str, str], tuple[TopicPartition, ...]]
    partitions: tuple[TopicPartition, ...]
    ownership: PreviousOwnership

    @property
    def previously_owned(self) -> int:
        """Partitions with a trusted previous owner (the most moves any assignment can make)."""
        return len(self.ownership.owner)

    def takers(self, topic: str) -> tuple[str, ...]:
        """The members that may take partitions of `topic`, in member order."""
        return tuple(m for m in self.member_ids if topic in self.takeable[m])

    def owned_count(self, member_id: str, topic: str) -> int:
        """How many partitions of `topic` `member_id` owned and may keep."""
        return len(self.owned.get((member_id, topic), ()))


def stickiness_problem(
    group: GroupSubscription, ownership: PreviousOwnership | None = None
) -> StickinessProblem:
    """The counting problem of `group`; ownership defaults to `previous_owners(group)`."""
    ownership = previous_owners(group) if ownership is None else ownership
    partitions = group.subscribed_partitions
    sizes: dict[str, int] = {}
    for partition in partitions:
        sizes[partition.topic] = sizes.get(partition.topic, 0) + 1
    takeable = {
        member.member_id: frozenset(t for t in member.subscription.topics if t in sizes)
        for member in group.members
    }
    owned: dict[tuple[str, str], list[TopicPartition]] = {}
    for partition, member_id in ownership.owner:
        if partition.topic in takeable.get(member_id, ()):
            owned.setdefault((member_id, partition.topic), []).append(partition)
    return StickinessProblem(
        member_ids=group.member_ids,
        takeable=takeable,
        sizes=sizes,
        owned={key: tuple(sorted(value)) for key, value in owned.items()},
        partitions=partitions,
        ownership=ownership,
    )


def assignment_from_counts(
    problem: StickinessProblem, counts: Mapping[tuple[str, str], int]
) -> GroupAssignment:
    """The assignment giving each member `counts[m, t]` partitions of t, keeping what it can.

    Each member keeps its lowest-numbered owned partitions of t up to its count, and takes the
    rest from the partitions of t nobody keeps, in order.
    """
    chosen: dict[str, list[TopicPartition]] = {member_id: [] for member_id in problem.member_ids}
    for topic in problem.sizes:
        takers = problem.takers(topic)
        taken: set[TopicPartition] = set()
        for member_id in takers:
            keep = problem.owned.get((member_id, topic), ())[: counts.get((member_id, topic), 0)]
            chosen[member_id].extend(keep)
            taken.update(keep)
        pool = iter(p for p in problem.partitions if p.topic == topic and p not in taken)
        for member_id in takers:
            kept = sum(1 for p in chosen[member_id] if p.topic == topic)
            for _ in range(counts.get((member_id, topic), 0) - kept):
                chosen[member_id].append(next(pool))
    return GroupAssignment.of(chosen)


def solved(
    problem: StickinessProblem,
    counts: Mapping[tuple[str, str], int],
    kept: int,
    *,
    solver: str,
    variables: int,
    constraints: int,
    seconds: float,
) -> OptimalStickiness:
    """The result of a solver's counts; raises if the rebuilt assignment disagrees with `kept`."""
    assignment = assignment_from_counts(problem, counts)
    moves = partition_moves(problem.ownership, assignment)
    if moves != problem.previously_owned - kept:
        raise StickinessOracleError(
            f"internal ({solver}): the rebuilt assignment moves {moves} partitions, the model "
            f"says {problem.previously_owned - kept}"
        )
    return OptimalStickiness(
        optimum_moves=moves,
        assignment=assignment,
        previously_owned=problem.previously_owned,
        variables=variables,
        constraints=constraints,
        solve_seconds=seconds,
    )
