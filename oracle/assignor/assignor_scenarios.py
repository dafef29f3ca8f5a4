"""A fixed suite of group changes, run through any assignor, measured the same way.

Each scenario is a list of group configurations ("steps"): the assignor under test runs the
"before" steps itself, so the ownership it is measured against is its own, then the "after" step
(the perturbation) is measured. Every step is one rebalance; with the COOPERATIVE protocol a step
also runs the follow-up rebalances the members request (reference §7: a member that had
partitions revoked rejoins) until no partition is withheld and nobody revoked anything, at most
`MAX_FOLLOW_UPS` extra rounds.

How members are simulated between rounds (reference §7, Java's ConsumerCoordinator):

- A consumer is identified across rounds by its instance id when static, else its member id.
  Its state is what it last received in SyncGroup: its assignment and that generation.
- Each round the group generation goes up by one, and every member's state becomes its new
  assignment at the new generation.
- Subscriptions: EAGER members revoke everything before JoinGroup, so they send no owned
  partitions; COOPERATIVE members send what they own (minus topics they no longer subscribe to).
  Both send their generation, and the user data the assignor computes from their last assignment
  and generation (the sticky assignor's userData carries the previous assignment under EAGER).
- The protocol is the highest one the assignor supports (cooperative-sticky runs COOPERATIVE).

Static restart (what the scenario models, and why): a static member's process restarts and
rejoins with member id "" and its instance id; the coordinator gives it a new member id
(reference §9). A new process has no assignment in memory, so it sends no owned partitions,
generation -1 and fresh user data. If the group is Stable and the protocol unchanged, the
coordinator simply hands it the old assignment without running any assignor — nothing to
measure. The scenario therefore models the case where the assignor does run: the restart lands
while a rebalance is under way, so the leader sees the restarted member under its new id and
without ownership, and everyone else with theirs. Moves are counted per consumer identity (the
instance id), so a member that gets its old partitions back under its new id moved nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from groupspec.spec.assignment import (
    DEFAULT_GENERATION,
    Cluster,
    GroupAssignment,
    GroupSubscription,
    Member,
    RebalanceProtocol,
    Subscription,
)
from groupspec.spec.assignors.base import Assignor
from groupspec.spec.assignors.owned_partitions import PreviousOwnership
from groupspec.spec.assignors.properties import (
    check_assignment,
    partition_moves,
    sticky_balance_violations,
)
from groupspec.vocabulary.requests import TopicPartition

from .adapter import protocol_name_of
from .optimal_stickiness_milp import optimal_stickiness_milp

MAX_FOLLOW_UPS = 3  # extra cooperative rounds per step; cooperative-sticky needs one
ASSIGNOR_ERROR = "AssignorRaised"  # the property name under which a crashing assignor is reported
STICKY_FAMILY = frozenset({"sticky", "cooperative-sticky"})


@dataclass(frozen=True)
class Consumer:
    """One consumer in a step: member id, subscribed topics, optional instance id.

    `restarted` marks a consumer whose process restarted before this step: it keeps its
    identity (instance id) but has no assignment in memory.
    """

    member_id: str
    topics: tuple[str, ...]
    instance_id: str | None = None
    restarted: bool = False

    @property
    def identity(self) -> str:
        """What stays the same across rounds and restarts: the instance id, else the member id."""
        return self.instance_id if self.instance_id is not None else self.member_id


@dataclass(frozen=True)
class Step:
    """A group configuration that triggers one rebalance: topic sizes and consumers.

    `lagging` and `claims` disturb the members' state after this step's rebalance, before the
    next one (the random groups use them): `(identity, n)` is a member that missed the last n
    generations, so it reports its assignment under a generation n lower; `(claimer, owner, k)`
    makes `claimer` also claim the owner's k-th partition (k modulo what the owner holds; none
    if it holds nothing) in the owner's generation, the same-generation conflict of KAFKA-12984.
    """

    partitions: tuple[tuple[str, int], ...]
    consumers: tuple[Consumer, ...]
    lagging: tuple[tuple[str, int], ...] = ()
    claims: tuple[tuple[str, str, int], ...] = ()

    @property
    def cluster(self) -> Cluster:
        """The leader's metadata snapshot for this step."""
        return Cluster.of(dict(self.partitions))


@dataclass(frozen=True)
class Scenario:
    """Named before-steps (the assignor's own history) and the measured after-step."""

    name: str
    description: str
    before: tuple[Step, ...]
    after: Step


def _step(partitions: Mapping[str, int], *consumers: Consumer) -> Step:
    return Step(tuple(sorted(partitions.items())), consumers)


def _consumers(count: int, topics: Sequence[str], first: int = 1) -> tuple[Consumer, ...]:
    return tuple(Consumer(f"c{n}", tuple(sorted(topics))) for n in range(first, first + count))


def _static(number: int, topics: Sequence[str], incarnation: str) -> Consumer:
    # Kafka names a static member "<instance id>-<uuid>"; the suffix changes on every restart.
    return Consumer(f"i{number}-{incarnation}", tuple(sorted(topics)), instance_id=f"i{number}")


def _scenarios() -> tuple[Scenario, ...]:
    two = {"orders": 12, "payments": 6}
    both = ("orders", "payments")
    three = {"orders": 8, "payments": 6, "audit": 4}
    statics = tuple(_static(n, both, "7f3a") for n in range(1, 5))
    return (
        Scenario(
            "start-up",
            "3 consumers join an empty group (orders:12, payments:6)",
            (),
            _step(two, *_consumers(3, both)),
        ),
        Scenario(
            "scale-out",
            "a 4th consumer joins 3 (orders:12, payments:6)",
            (_step(two, *_consumers(3, both)),),
            _step(two, *_consumers(4, both)),
        ),
        Scenario(
            "scale-in",
            "c2 of 4 consumers leaves (orders:12, payments:6)",
            (_step(two, *_consumers(4, both)),),
            _step(two, *(c for c in _consumers(4, both) if c.member_id != "c2")),
        ),
        Scenario(
            "topic-added",
            "topic audit:6 is created and all 3 consumers subscribe to it",
            (_step(two, *_consumers(3, both)),),
            _step({**two, "audit": 6}, *_consumers(3, (*both, "audit"))),
        ),
        Scenario(
            "partitions-added",
            "payments grows from 6 to 12 partitions under 3 consumers",
            (_step(two, *_consumers(3, both)),),
            _step({"orders": 12, "payments": 12}, *_consumers(3, both)),
        ),
        Scenario(
            "uneven-subscriptions",
            "c1{orders} c2{orders,payments} c3{all}; c4{payments,audit} joins (orders:8, payments:6, audit:4)",
            (
                _step(
                    three,
                    Consumer("c1", ("orders",)),
                    Consumer("c2", ("orders", "payments")),
                    Consumer("c3", ("audit", "orders", "payments")),
                ),
            ),
            _step(
                three,
                Consumer("c1", ("orders",)),
                Consumer("c2", ("orders", "payments")),
                Consumer("c3", ("audit", "orders", "payments")),
                Consumer("c4", ("audit", "payments")),
            ),
        ),
        Scenario(
            "static-restart",
            "static member i3 of 4 restarts during a rebalance: new member id, no owned partitions",
            (_step(two, *statics),),
            _step(
                two,
                *(
                    Consumer("i3-0c1e", both, instance_id="i3", restarted=True)
                    if c.instance_id == "i3"
                    else c
                    for c in statics
                ),
            ),
        ),
    )


SCENARIOS: tuple[Scenario, ...] = _scenarios()
SCENARIO_NAMES: tuple[str, ...] = tuple(scenario.name for scenario in SCENARIOS)


def scenario_named(name: str) -> Scenario:
    """The scenario called `name`; KeyError naming the valid ones otherwise."""
    for scenario in SCENARIOS:
        if scenario.name == name:
            return scenario
    raise KeyError(f"unknown scenario {name!r}; valid: {', '.join(SCENARIO_NAMES)}")


@dataclass(frozen=True)
class Finding:
    """A property violation in one round: property name, detail, and which round."""

    property: str
    detail: str
    round: str


@dataclass(frozen=True)
class ScenarioResult:
    """What one assignor did in one scenario.

    The measures describe the converged result of the measured step; they are None when the
    assignor raised before producing one. `spread` is max − min partitions per member;
    `moves` counts partitions whose owner differs from the one before the perturbation (by
    consumer identity); `optimal_moves` is the fewest moves any valid balanced assignment needs
    (HiGHS, cross-checked by z3 in the tests); `gap` is the difference. `rounds` counts the
    rebalances of the measured step.
    """

    scenario: str
    assignor: str
    protocol: RebalanceProtocol
    findings: tuple[Finding, ...]
    rounds: int
    converged: bool
    spread: int | None = None
    balanced: bool | None = None
    moves: int | None = None
    optimal_moves: int | None = None
    assignment: GroupAssignment | None = None
    group: GroupSubscription | None = field(default=None, repr=False)
    previous: PreviousOwnership | None = field(default=None, repr=False)

    @property
    def gap(self) -> int | None:
        """Moves beyond the optimum (None when either is unknown)."""
        if self.moves is None or self.optimal_moves is None:
            return None
        return self.moves - self.optimal_moves


class AssignorRaisedError(Exception):
    """The assignor under test raised; carries the round and the findings before it."""

    def __init__(
        self, round_label: str, error: Exception, findings: Sequence[Finding] = ()
    ) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.round_label = round_label
        self.findings = tuple(findings)


@dataclass
class GroupRunner:
    """Drives one assignor through successive steps, keeping each consumer's state.

    `states` (identity → last assignment and its generation) may be preset to start from a
    given ownership; `generation` is the group generation of the last completed rebalance.
    `checked` False skips the property checks of every round (for a run that only needs the
    groups and assignments, such as the differential against Kafka's assignors).
    """

    assignor: Assignor
    protocol: RebalanceProtocol
    # identity → (last assignment, its generation); plain per-run state, never shared.
    states: dict[str, tuple[tuple[TopicPartition, ...], int]] = field(default_factory=dict)
    generation: int = 0
    findings: list[Finding] = field(default_factory=list)
    checked: bool = True

    def group_for(self, step: Step) -> GroupSubscription:
        """The subscriptions the members of `step` send, given what each owns now."""
        members = []
        for consumer in step.consumers:
            if consumer.restarted:
                self.states.pop(consumer.identity, None)
            assigned, generation = self.states.get(consumer.identity, ((), DEFAULT_GENERATION))
            still_subscribed = tuple(tp for tp in assigned if tp.topic in consumer.topics)
            owned = still_subscribed if self.protocol is RebalanceProtocol.COOPERATIVE else ()
            user_data = self.assignor.subscription_user_data(assigned, generation)
            subscription = Subscription.of(consumer.topics, owned, generation, user_data=user_data)
            members.append(Member(consumer.member_id, subscription, consumer.instance_id))
        return GroupSubscription.of(step.cluster, members)

    def round(self, step: Step, label: str) -> tuple[GroupSubscription, GroupAssignment]:
        """One rebalance: subscriptions, assignment, property checks, new member states."""
        group = self.group_for(step)
        try:
            assignment = self.assignor.assign(group)
        except Exception as error:  # a third-party assignor may raise anything; it is a finding
            raise AssignorRaisedError(label, error, self.findings) from error
        if self.checked:
            self.findings.extend(
                Finding(v.property, v.detail, label)
                for v in check_assignment(protocol_name_of(self.assignor), group, assignment)
            )
        self.generation += 1
        given = assignment.as_dict()
        for consumer in step.consumers:
            self.states[consumer.identity] = (given.get(consumer.member_id, ()), self.generation)
        for identity in set(self.states) - {c.identity for c in step.consumers}:
            del self.states[identity]  # departed consumers drop out of the group
        return group, assignment

    def settle(self, step: Step, label: str) -> tuple[GroupSubscription, GroupAssignment, int]:
        """Run the step's rebalance and, under COOPERATIVE, its follow-ups; returns the last."""
        owned_before = {c.member_id: self._owned(c) for c in step.consumers}
        group, assignment = self.round(step, label)
        rounds = 1
        while self.protocol is RebalanceProtocol.COOPERATIVE and rounds <= MAX_FOLLOW_UPS:
            revoked = any(
                set(owned_before[m]) - set(assignment.partitions_of(m)) for m in owned_before
            )
            if not revoked and not _withheld(group, assignment):
                break
            owned_before = {c.member_id: self._owned(c) for c in step.consumers}
            group, assignment = self.round(_without_restarts(step), f"{label} follow-up {rounds}")
            rounds += 1
        self._disturb(step)
        return group, assignment, rounds

    def _disturb(self, step: Step) -> None:
        for identity, missed in step.lagging:
            if identity in self.states:
                assigned, generation = self.states[identity]
                self.states[identity] = (assigned, max(DEFAULT_GENERATION, generation - missed))
        for claimer, owner, index in step.claims:
            held, generation = self.states.get(owner, ((), DEFAULT_GENERATION))
            if held:
                claimed = self.states.get(claimer, ((), DEFAULT_GENERATION))[0]
                extra = held[index % len(held)]
                self.states[claimer] = (tuple(sorted({*claimed, extra})), generation)

    def _owned(self, consumer: Consumer) -> tuple[TopicPartition, ...]:
        if consumer.restarted:
            return ()
        return self.states.get(consumer.identity, ((), DEFAULT_GENERATION))[0]

    def ownership(self, step: Step) -> PreviousOwnership:
        """Who owns what now, under the member ids consumers have in `step` (by identity).

        A partition two consumers claim goes to the one of the later generation; claimed twice
        in one generation it is conflicted and owned by nobody (KIP-792's rule).
        """
        member_of = {c.identity: c.member_id for c in step.consumers}
        claims: dict[TopicPartition, list[tuple[int, str]]] = {}
        for identity, (assigned, generation) in self.states.items():
            for partition in assigned:
                claims.setdefault(partition, []).append(
                    (generation, member_of.get(identity, identity))
                )
        owner: dict[TopicPartition, str] = {}
        conflicted: list[TopicPartition] = []
        for partition, claimants in claims.items():
            claimants.sort(reverse=True)
            if len(claimants) > 1 and claimants[0][0] == claimants[1][0]:
                conflicted.append(partition)
            else:
                owner[partition] = claimants[0][1]
        return PreviousOwnership(tuple(sorted(owner.items())), tuple(sorted(conflicted)))


def _without_restarts(step: Step) -> Step:
    # A restart happens once; in follow-up rounds the restarted member keeps its new state.
    return Step(
        step.partitions,
        tuple(
            Consumer(c.member_id, c.topics, c.instance_id) if c.restarted else c
            for c in step.consumers
        ),
        step.lagging,
        step.claims,
    )


def _withheld(group: GroupSubscription, assignment: GroupAssignment) -> bool:
    assigned = set(assignment.owners())
    return any(tp not in assigned for tp in group.subscribed_partitions)


def _spread(group: GroupSubscription, assignment: GroupAssignment) -> int:
    counts = [len(assignment.partitions_of(member_id)) for member_id in group.member_ids]
    return max(counts) - min(counts) if counts else 0


def protocol_for(assignor: Assignor) -> RebalanceProtocol:
    """The rebalance protocol a group of these assignors runs: the highest supported."""
    return max(assignor.supported_protocols)


@dataclass(frozen=True)
class Played:
    """A scenario played through one assignor: the runner (with its findings), the measured
    round's group and assignment, its rebalance count, and the ownership before it."""

    runner: GroupRunner
    group: GroupSubscription
    assignment: GroupAssignment
    rounds: int
    previous: PreviousOwnership


def play(scenario: Scenario, assignor: Assignor, *, checked: bool = True) -> Played:
    """Run the assignor through the scenario's steps; raises `AssignorRaisedError` if it raises.
    `checked` False leaves out the property checks of every round (`GroupRunner.checked`)."""
    runner = GroupRunner(assignor, protocol_for(assignor), checked=checked)
    for index, step in enumerate(scenario.before, start=1):
        runner.settle(step, f"before {index}")
    previous = runner.ownership(scenario.after)
    group, assignment, rounds = runner.settle(scenario.after, "measured")
    return Played(runner, group, assignment, rounds, previous)


def run_scenario(scenario: Scenario, assignor: Assignor) -> ScenarioResult:
    """Run the assignor through the scenario's before-steps and measure the after-step.

    The optimum is HiGHS's (`optimal_stickiness_milp`); the tests hold z3's to the same.
    """
    protocol = protocol_for(assignor)
    try:
        played = play(scenario, assignor)
    except AssignorRaisedError as error:
        finding = Finding(ASSIGNOR_ERROR, str(error), error.round_label)
        findings = (*error.findings, finding)
        return ScenarioResult(
            scenario.name, assignor.name, protocol, findings, rounds=0, converged=False
        )
    group, assignment = played.group, played.assignment
    balanced = (
        not sticky_balance_violations(group, assignment)
        if protocol_name_of(assignor) in STICKY_FAMILY
        else None
    )
    return ScenarioResult(
        scenario.name,
        assignor.name,
        protocol,
        tuple(played.runner.findings),
        rounds=played.rounds,
        converged=not _withheld(group, assignment),
        spread=_spread(group, assignment),
        balanced=balanced,
        moves=partition_moves(played.previous, assignment),
        optimal_moves=optimal_stickiness_milp(group, ownership=played.previous).optimum_moves,
        assignment=assignment,
        group=group,
        previous=played.previous,
    )


def run_suite(
    assignors: Sequence[Assignor], scenarios: Sequence[Scenario] = SCENARIOS
) -> tuple[ScenarioResult, ...]:
    """Every scenario under every assignor, scenario by scenario."""
    return tuple(
        run_scenario(scenario, assignor) for scenario in scenarios for assignor in assignors
    )
