"""Seeded stickiness scenarios and the cost of solving them exactly, by HiGHS and by z3.

A scenario is a group after a previous round: members' owned partitions come from a seeded
random assignment of a previous membership (one member has left, one is new), each member
claiming the generation of that round. "identical" scenarios subscribe every member to every
topic (Kafka's constrained path); "uneven" ones give each member a random non-empty subset.
For each scenario the bench times both solvers in the same run (wall clock of the whole call,
building the model included), checks that they agree, and reports our sticky assignors' moves
and their gap to the optimum. `bench_suite` does the same for the optimum every scenario of
`groupspec assignors` needs.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from groupspec.oracle.assignor.assignor_scenarios import SCENARIOS, play
from groupspec.oracle.assignor.optimal_stickiness import optimal_stickiness
from groupspec.oracle.assignor.optimal_stickiness_milp import optimal_stickiness_milp
from groupspec.oracle.assignor.stickiness_problem import OptimalStickiness, StickinessOracleError
from groupspec.spec.assignment import (
    Cluster,
    GroupSubscription,
    Member,
    Subscription,
    sorted_partitions,
)
from groupspec.spec.assignors.owned_partitions import PreviousOwnership
from groupspec.spec.assignors.properties import partition_moves
from groupspec.spec.assignors.registry import ASSIGNORS, assignor_named
from groupspec.spec.assignors.sticky_user_data import encode_sticky_user_data
from groupspec.vocabulary.requests import TopicPartition

SCENARIO_KINDS = ("identical", "uneven")
STICKY_FAMILY = ("sticky", "cooperative-sticky")
PREVIOUS_GENERATION = 7


@dataclass(frozen=True)
class SolverRun:
    """One solver on one group: wall-clock seconds, the optimum (None if unsolved), model size."""

    solver: str
    seconds: float
    optimum_moves: int | None
    previously_owned: int | None
    variables: int
    constraints: int
    error: str | None


@dataclass(frozen=True)
class StickinessFigures:
    """What one scenario cost each solver, and how our sticky assignors compare."""

    kind: str
    members: int
    partitions: int
    topics: int
    seed: int
    highs: SolverRun
    z3: SolverRun
    assignor_moves: tuple[tuple[str, int], ...]

    @property
    def optimum_moves(self) -> int | None:
        """The optimum (HiGHS's; z3's when only z3 solved)."""
        return self.highs.optimum_moves if self.highs.error is None else self.z3.optimum_moves


def time_solver(
    solver: str,
    solve: Callable[[], OptimalStickiness],
) -> SolverRun:
    """Run one solver call, timing all of it; an unsolved run is reported, never raised."""
    started = time.perf_counter()
    try:
        result = solve()
    except StickinessOracleError as error:
        return SolverRun(solver, time.perf_counter() - started, None, None, 0, 0, str(error))
    return SolverRun(
        solver,
        time.perf_counter() - started,
        result.optimum_moves,
        result.previously_owned,
        result.variables,
        result.constraints,
        None,
    )


def solve_both(
    group: GroupSubscription, ownership: PreviousOwnership | None, timeout_s: float
) -> tuple[SolverRun, SolverRun]:
    """HiGHS then z3 on the same group, each limited to `timeout_s`."""
    highs = time_solver(
        "HiGHS",
        lambda: optimal_stickiness_milp(group, ownership=ownership, time_limit_s=timeout_s),
    )
    z3 = time_solver(
        "z3",
        lambda: optimal_stickiness(group, ownership=ownership, timeout_ms=int(timeout_s * 1000)),
    )
    return highs, z3


def build_scenario(
    kind: str, *, members: int, partitions: int, topics: int, seed: int
) -> GroupSubscription:
    """A seeded group with previous ownership from a prior round of a slightly different membership."""
    if kind not in SCENARIO_KINDS:
        raise ValueError(f"unknown scenario kind {kind!r}; known: {', '.join(SCENARIO_KINDS)}")
    rng = random.Random(f"{kind}/{members}/{partitions}/{topics}/{seed}")
    names = [f"topic-{index}" for index in range(topics)]
    counts = {
        name: partitions // topics + (1 if index < partitions % topics else 0)
        for index, name in enumerate(names)
    }
    cluster = Cluster.of(counts)
    member_ids = [f"member-{index:03}" for index in range(members)]
    subscriptions = {
        mid: names if kind == "identical" else sorted(rng.sample(names, rng.randint(1, topics)))
        for mid in member_ids
    }
    # The previous round: the last member is new, and a member that has since left took part.
    previous = [*member_ids[:-1], "member-left"] if members > 1 else ["member-left"]
    owned: dict[str, list[TopicPartition]] = {mid: [] for mid in previous}
    for partition in cluster.partitions(names):
        owned[rng.choice(previous)].append(partition)
    return GroupSubscription.of(
        cluster,
        (
            Member(
                mid,
                # Owned partitions and generation for cooperative-sticky, and the same claim as
                # StickyAssignor user data for the eager "sticky", so both judge the same history.
                Subscription.of(
                    subscriptions[mid],
                    owned.get(mid, ()),
                    PREVIOUS_GENERATION,
                    user_data=encode_sticky_user_data(
                        sorted_partitions(owned.get(mid, ())), PREVIOUS_GENERATION
                    ),
                ),
            )
            for mid in member_ids
        ),
    )


def bench_scenario(
    kind: str, *, members: int, partitions: int, topics: int, seed: int, timeout_s: float
) -> StickinessFigures:
    """Solve one scenario with both solvers and measure our sticky assignors against it."""
    group = build_scenario(kind, members=members, partitions=partitions, topics=topics, seed=seed)
    moves = tuple(
        (name, partition_moves(group, assignor_named(name).assign(group))) for name in STICKY_FAMILY
    )
    highs, z3 = solve_both(group, None, timeout_s)
    return StickinessFigures(kind, members, partitions, topics, seed, highs, z3, moves)


@dataclass(frozen=True)
class SuiteFigures:
    """Both solvers on the optimum one scenario of `groupspec assignors` needs, per assignor."""

    scenario: str
    runs: tuple[tuple[str, SolverRun, SolverRun], ...]  # (assignor, HiGHS, z3)


def bench_suite(timeout_s: float) -> tuple[SuiteFigures, ...]:
    """Both solvers on every scenario of `groupspec assignors` under each of our assignors.

    The group and ownership are the measured round's, exactly as `run_scenario` solves them.
    """
    figures = []
    for scenario in SCENARIOS:
        runs = []
        for name, assignor in ASSIGNORS.items():
            played = play(scenario, assignor)
            highs, z3 = solve_both(played.group, played.previous, timeout_s)
            runs.append((name, highs, z3))
        figures.append(SuiteFigures(scenario.name, tuple(runs)))
    return tuple(figures)


def disagreements(runs: list[tuple[SolverRun, SolverRun]]) -> int:
    """How many (HiGHS, z3) pairs that both solved found different optima."""
    return sum(
        1
        for highs, z3 in runs
        if highs.error is None and z3.error is None and highs.optimum_moves != z3.optimum_moves
    )
