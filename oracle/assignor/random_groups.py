"""Seeded random groups with a history: scenarios any assignor can be judged on.

`random_scenario(seed)` builds a `Scenario` from a seed alone: a cluster of 1–5 topics (at most
64 partitions) and 1–12 consumers (about one in three static), 1–3 rebalances the assignor under
test runs itself, and a measured one. Between rebalances the group changes the way groups do:

- a consumer leaves, a consumer joins (identical subscriptions keep every consumer on every
  topic; otherwise each subscribes to a random non-empty subset);
- a consumer changes its subscription; a topic is created, or a topic gains a partition;
- a consumer misses a generation or two, so its claim is stale (`Step.lagging`);
- a consumer claims a partition another owns, in the same generation, as in KAFKA-12984
  (`Step.claims`).

Everything is drawn from the seed, never from what an assignor did, so every assignor meets the
same scenario and a seed reproduces it (`groupspec assignors --random N --seed S` runs seeds S
… S+N−1). The property tests hold our assignors to their properties on these scenarios.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .assignor_scenarios import Consumer, Scenario, Step

MAX_MEMBERS = 12
MAX_TOPICS = 5
MAX_PARTITIONS = 64
MAX_EARLIER_ROUNDS = 3
STATIC_SHARE = 0.3  # how often a joining consumer has a group.instance.id


@dataclass
class _Member:
    topics: set[str]
    instance_id: str | None

    def consumer(self, member_id: str) -> Consumer:
        return Consumer(member_id, tuple(sorted(self.topics)), self.instance_id)


@dataclass
class _Draft:
    """The group as it evolves while a scenario is drawn."""

    rng: random.Random
    identical: bool
    counts: dict[str, int]
    members: dict[str, _Member]
    next_id: int = 0

    def add_member(self) -> None:
        topics = set(self.counts) if self.identical else self._random_topics()
        instance = f"i{self.next_id}" if self.rng.random() < STATIC_SHARE else None
        self.members[f"m{self.next_id:02}"] = _Member(topics, instance)
        self.next_id += 1

    def _random_topics(self) -> set[str]:
        names = sorted(self.counts)
        return set(self.rng.sample(names, self.rng.randint(1, len(names))))

    def identity(self, member_id: str) -> str:
        instance = self.members[member_id].instance_id
        return member_id if instance is None else instance

    def step(
        self,
        lagging: tuple[tuple[str, int], ...] = (),
        claims: tuple[tuple[str, str, int], ...] = (),
    ) -> Step:
        return Step(
            tuple(sorted(self.counts.items())),
            tuple(member.consumer(mid) for mid, member in sorted(self.members.items())),
            lagging,
            claims,
        )

    def disturbances(self) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, str, int], ...]]:
        """Stale generations and same-generation claims after a rebalance."""
        rng = self.rng
        lagging: tuple[tuple[str, int], ...] = ()
        claims: tuple[tuple[str, str, int], ...] = ()
        if rng.random() < 0.2:
            lagging = ((self.identity(rng.choice(sorted(self.members))), rng.randint(1, 2)),)
        if rng.random() < 0.15 and len(self.members) > 1:
            owner, claimer = rng.sample(sorted(self.members), 2)
            claims = (
                (self.identity(claimer), self.identity(owner), rng.randrange(MAX_PARTITIONS)),
            )
        return lagging, claims

    def change(self) -> None:
        """Membership, subscription and metadata changes before the next rebalance."""
        rng = self.rng
        if rng.random() < 0.3 and len(self.members) > 1:
            del self.members[rng.choice(sorted(self.members))]
        if rng.random() < 0.3 and len(self.members) < MAX_MEMBERS:
            self.add_member()
        if rng.random() < 0.2 and not self.identical:
            self.members[rng.choice(sorted(self.members))].topics = self._random_topics()
        if rng.random() < 0.2 and sum(self.counts.values()) < MAX_PARTITIONS:
            if len(self.counts) < MAX_TOPICS and rng.random() < 0.5:
                new_topic = f"t{len(self.counts)}"
                self.counts[new_topic] = rng.randint(1, MAX_PARTITIONS - sum(self.counts.values()))
                if self.identical:
                    for member in self.members.values():
                        member.topics.add(new_topic)
            else:
                self.counts[rng.choice(sorted(self.counts))] += 1


def random_scenario(
    seed: int,
    *,
    members: int | None = None,
    topics: int | None = None,
    earlier_rounds: int | None = None,
    identical: bool | None = None,
) -> Scenario:
    """The scenario of `seed`; the shape arguments, when given, override what the seed draws.

    members: 1–12 at the start; topics: 1–5 at the start; earlier_rounds: 1–3 rebalances before
    the measured one; identical: whether every consumer subscribes to every topic.
    """
    rng = random.Random(seed)
    members = rng.randint(1, MAX_MEMBERS) if members is None else members
    topics = rng.randint(1, MAX_TOPICS) if topics is None else topics
    earlier_rounds = (
        rng.randint(1, MAX_EARLIER_ROUNDS) if earlier_rounds is None else earlier_rounds
    )
    identical = rng.random() < 0.5 if identical is None else identical
    if not (1 <= members <= MAX_MEMBERS and 1 <= topics <= MAX_TOPICS and earlier_rounds >= 0):
        raise ValueError(
            f"random group shape out of range: members {members} (1–{MAX_MEMBERS}), "
            f"topics {topics} (1–{MAX_TOPICS}), earlier rounds {earlier_rounds} (≥ 0)"
        )
    budget = MAX_PARTITIONS // 2
    counts: dict[str, int] = {}
    for index in range(topics):
        room = max(0, budget - sum(counts.values())) // max(1, topics - index) * 2
        counts[f"t{index}"] = rng.randint(0, room)
    draft = _Draft(rng, identical, counts, {})
    for _ in range(members):
        draft.add_member()
    before = []
    for _ in range(earlier_rounds):
        lagging, claims = draft.disturbances()
        before.append(draft.step(lagging, claims))
        draft.change()
    after = draft.step()
    shape = "identical" if identical else "uneven"
    description = (
        f"seed {seed}: {len(after.consumers)} consumers, {len(after.partitions)} topics, "
        f"{sum(count for _, count in after.partitions)} partitions, {shape} subscriptions, "
        f"{earlier_rounds} earlier rebalance{'s' if earlier_rounds != 1 else ''}"
    )
    return Scenario(f"random-{seed}", description, tuple(before), after)


def random_scenarios(count: int, seed: int) -> tuple[Scenario, ...]:
    """`count` scenarios, of seeds `seed` … `seed + count − 1`."""
    if count < 0:
        raise ValueError(f"the number of random groups must be ≥ 0, got {count}")
    return tuple(random_scenario(seed + offset) for offset in range(count))
