"""Seeded stickiness scenarios and the cost of solving them exactly (the z3 oracle).

A scenario is a group after a previous round: members' owned partitions come from a seeded
random assignment of a previous membership (one member has left, one is new), each member
claiming the generation of that round. "identical" scenarios subscribe every member to every
topic (Kafka's constrained path); "uneven" ones give each member a random non-empty subset.
For each scenario the bench reports the oracle's figures and, for the sticky family, our
assignors' moves and their gap to the optimum.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from groupspec.oracle.assignor.optimal_stickiness import StickinessOracleError, optimal_stickiness
from groupspec.spec.assignment import (
    Cluster,
    GroupSubscription,
    Member,
    Subscription,
    TopicPartition,
    sorted_partitions,
)
from groupspec.spec.assignors.properties import partition_moves
from groupspec.spec.assignors.registry import assignor_named
from groupspec.spec.assignors.sticky_user_data import encode_sticky_user_data

SCENARIO_KINDS = ("identical", "uneven")
STICKY_FAMILY = ("sticky", "cooperative-sticky")
PREVIOUS_GENERATION = 7


@dataclass(frozen=True)
class StickinessFigures:
    """What one scenario cost the oracle, and how our sticky assignors compare."""

    kind: str
    members: int
    partitions: int
    topics: int
    seed: int
    previously_owned: int
    optimum_moves: int | None
    variables: int
    constraints: int
    solve_seconds: float
    error: str | None
    assignor_moves: tuple[tuple[str, int], ...]


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
    kind: str, *, members: int, partitions: int, topics: int, seed: int, timeout_ms: int
) -> StickinessFigures:
    """Solve one scenario with the oracle and measure our sticky assignors against it."""
    group = build_scenario(kind, members=members, partitions=partitions, topics=topics, seed=seed)
    moves = tuple(
        (name, partition_moves(group, assignor_named(name).assign(group))) for name in STICKY_FAMILY
    )
    try:
        result = optimal_stickiness(group, timeout_ms=timeout_ms)
    except StickinessOracleError as error:
        return StickinessFigures(
            kind,
            members,
            partitions,
            topics,
            seed,
            0,
            None,
            0,
            0,
            timeout_ms / 1000,
            str(error),
            moves,
        )
    return StickinessFigures(
        kind,
        members,
        partitions,
        topics,
        seed,
        result.previously_owned,
        result.optimum_moves,
        result.variables,
        result.constraints,
        result.solve_seconds,
        None,
        moves,
    )
