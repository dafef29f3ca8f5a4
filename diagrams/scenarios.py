"""Canonical scenarios of the classic protocol, found by searching the model, not written by hand.

A scenario names a preset (with overrides), the steps it may take, and one or more milestones:
goals judged on a step. Its run is the shortest run to the first milestone, continued by the
shortest run from there to the next, and so on (`diagram_explore.shortest_run`). Milestones
say *what* must happen ("a second client joins a Stable group of one"); the model decides how,
so the diagrams show the protocol as specified and change when the specification does.

Goals only look at symmetry-invariant facts (no client is singled out by name), because the
search runs over symmetry representatives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from groupspec.checker.model import Transition
from groupspec.models.group_world import GroupWorld
from groupspec.models.world_state import GROUP_ID, WorldState
from groupspec.spec.consumer import ConsumerPhase, phase
from groupspec.vocabulary.group_state import STABLE

from .explore import Run, shortest_run
from .graphs import DiagramSource

Goal = Callable[[GroupWorld, WorldState, Transition[WorldState]], bool]
# Steps no scenario needs; leaving them out keeps the searches small without changing what a
# shortest run does (a shortest run never takes a step it does not need).
BACKGROUND = frozenset({"Process"})
# Heartbeats are needed only to learn of a rebalance; a run to a first convergence has none.
QUIET = frozenset({"HeartbeatDue"})
FENCED = ("UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION")
FAILOVER_ERRORS = ("NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS")


@dataclass(frozen=True)
class Milestone:
    """A goal a scenario's run reaches, in order, and what it means."""

    description: str
    goal: Goal
    # Action kinds this leg of the run does without (it never needs them), to search less.
    excluded: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Scenario:
    """A canonical scenario: where to search, which steps are allowed, which milestones."""

    name: str
    title: str
    source: DiagramSource
    milestones: tuple[Milestone, ...]
    faults: frozenset[str] = frozenset()
    excluded: frozenset[str] = BACKGROUND

    def allows(self, step: Transition[WorldState]) -> bool:
        """Whether the scenario may take `step`: not excluded, and a fault only if named."""
        if step.action in self.excluded:
            return False
        return not step.label.startswith("fault ") or step.action in self.faults

    def steps_note(self) -> str:
        """What the search was allowed to do, for the diagram's caption."""
        faults = ", ".join(sorted(self.faults)) or "none"
        note = f"faults allowed: {faults}; steps left out: {', '.join(sorted(self.excluded))}"
        for number, milestone in enumerate(self.milestones, start=1):
            if milestone.excluded:
                note += f", and {', '.join(sorted(milestone.excluded))} until milestone {number}"
        return note


@dataclass(frozen=True)
class ScenarioRun:
    """A scenario's run, and the number of steps taken when each milestone was reached."""

    world: GroupWorld
    run: Run[WorldState]
    milestone_steps: tuple[int, ...]


def find_run(scenario: Scenario) -> ScenarioRun:
    """The scenario's run: shortest runs to each milestone in turn, from the initial state."""
    world = scenario.source.world()
    initial = world.initial_states()[0]
    start = initial
    steps: list[Transition[WorldState]] = []
    reached: list[int] = []
    for milestone in scenario.milestones:

        def goal(
            state: WorldState, step: Transition[WorldState], milestone: Milestone = milestone
        ) -> bool:
            return milestone.goal(world, state, step)

        def allowed(step: Transition[WorldState], milestone: Milestone = milestone) -> bool:
            return step.action not in milestone.excluded and scenario.allows(step)

        run = shortest_run(world, start, goal, allowed)
        steps.extend(run.steps)
        reached.append(len(steps))
        start = run.final
    return ScenarioRun(world, Run(initial, tuple(steps)), tuple(reached))


# -- goals ------------------------------------------------------------------------------------


def _converged(members: int, generation: int) -> Goal:
    """The group converged (see GroupWorld.converged) at `generation` with `members` members."""

    def goal(world: GroupWorld, before: WorldState, step: Transition[WorldState]) -> bool:
        after = step.state
        group = after.coordinator.group(GROUP_ID)
        return (
            group is not None
            and group.generation_id == generation
            and len(group.members) == members
            and world.converged(after)
        )

    return goal


def _alone_owning_everything(
    world: GroupWorld, before: WorldState, step: Transition[WorldState]
) -> bool:
    """One client is the Stable group's only member and owns every partition; the others have
    not started (no coordinator known, nothing sent)."""
    after = step.state
    group = after.coordinator.group(GROUP_ID)
    if group is None or group.state is not STABLE or len(group.members) != 1:
        return False
    stable = [s for s in after.clients if phase(s.consumer) is ConsumerPhase.STABLE]
    idle = [
        s
        for s in after.clients
        if s.consumer.coordinator is None and not s.consumer.in_flight and not s.outbound
    ]
    everything = after.cluster.partitions(after.cluster.topics)
    return (
        len(stable) == 1
        and len(idle) == len(after.clients) - 1
        and tuple(sorted(stable[0].consumer.owned)) == tuple(everything)
        and not stable[0].consumer.in_flight
    )


def _converged_after_crash(
    world: GroupWorld, before: WorldState, step: Transition[WorldState]
) -> bool:
    after = step.state
    return after.budgets.crashes == 0 and _converged(len(after.clients), 1)(world, before, step)


def _converged_with_commit(
    world: GroupWorld, before: WorldState, step: Transition[WorldState]
) -> bool:
    """Converged at generation 1 with every client a member, and a commit acknowledged."""
    members = len(step.state.clients)
    return bool(step.state.acknowledged) and _converged(members, 1)(world, before, step)


def _evicts_live_member(
    world: GroupWorld, before: WorldState, step: Transition[WorldState]
) -> bool:
    return step.action == "HeartbeatExpired" and step.label.startswith("fault ")


def _received_error(step_action: str, errors: tuple[str, ...]) -> Goal:
    """A client reads a response of `step_action` that carries one of `errors`."""

    def goal(world: GroupWorld, before: WorldState, step: Transition[WorldState]) -> bool:
        return step.action == step_action and any(error in step.label for error in errors)

    return goal


def _fenced_commit_after_takeover(
    world: GroupWorld, before: WorldState, step: Transition[WorldState]
) -> bool:
    """A client's OffsetCommit is rejected as fenced while another client is a Stable member of
    the next generation (it took the partitions over)."""
    if not _received_error("ReceiveOffsetCommit", FENCED)(world, before, step):
        return False
    group = step.state.coordinator.group(GROUP_ID)
    if group is None or group.state is not STABLE or group.generation_id != 2:
        return False
    return any(
        phase(slot.consumer) is ConsumerPhase.STABLE and slot.consumer.generation.generation_id == 2
        for slot in step.state.clients
    )


def _converged_after_failover(
    world: GroupWorld, before: WorldState, step: Transition[WorldState]
) -> bool:
    after = step.state
    rediscovered = all(slot.consumer.coordinator_known for slot in after.clients)
    return after.budgets.failovers == 0 and rediscovered and world.converged(after)


def _source(preset: str, **overrides: str) -> DiagramSource:
    return DiagramSource(preset, tuple(sorted(overrides.items())))


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "startup-3",
        "Start-up of a three-member group (eager, range)",
        _source("eager-3", max_generation="1"),
        (
            Milestone(
                "all three clients are Stable members of generation 1",
                _converged(3, 1),
                QUIET,
            ),
        ),
        excluded=BACKGROUND | {"CommitRequested"},
    ),
    Scenario(
        "eager-scale-out",
        "Eager scale-out: a second consumer joins a Stable group of one",
        _source("eager-2", evictions="0", commits="0"),
        (
            Milestone(
                "one client is the only member of generation 1 and owns every partition",
                _alone_owning_everything,
                QUIET,
            ),
            Milestone("both clients are Stable members of generation 2", _converged(2, 2)),
        ),
    ),
    Scenario(
        "cooperative-scale-out",
        "Cooperative scale-out: two rebalances, revocation before reassignment (KIP-429)",
        _source("cooperative-3", clients="2", max_generation="3"),
        (
            Milestone(
                "one client is the only member of generation 1 and owns every partition",
                _alone_owning_everything,
                QUIET,
            ),
            Milestone("both clients are Stable members of generation 3", _converged(2, 3)),
        ),
    ),
    Scenario(
        "static-restart",
        "Static member restart without a rebalance (KIP-345)",
        _source("static-2"),
        (
            Milestone("both static members are Stable in generation 1", _converged(2, 1), QUIET),
            Milestone(
                "a client crashed, restarted and is Stable again, still in generation 1",
                _converged_after_crash,
            ),
        ),
        faults=frozenset({"Crash"}),
        excluded=BACKGROUND | {"CommitRequested"},
    ),
    Scenario(
        "zombie-fenced-commit",
        "Session-timeout eviction of a zombie, and its fenced commit",
        _source("eager-2"),
        (
            Milestone("both clients are Stable members of generation 1", _converged(2, 1), QUIET),
            Milestone("the coordinator evicts a live (stalled) member", _evicts_live_member),
            Milestone(
                "the other client owns the partitions in generation 2, and the zombie's "
                "OffsetCommit is rejected",
                _fenced_commit_after_takeover,
            ),
        ),
        faults=frozenset({"HeartbeatExpired"}),
    ),
    Scenario(
        "coordinator-failover",
        "Coordinator failover: unload, replay of __consumer_offsets, rediscovery",
        _source("failover"),
        (
            Milestone(
                "both clients are Stable in generation 1 and a commit was acknowledged",
                _converged_with_commit,
                QUIET,
            ),
            Milestone(
                "a client is told the coordinator moved or is loading",
                _received_error("ReceiveHeartbeat", FAILOVER_ERRORS),
            ),
            Milestone(
                "every client found the coordinator again and the group converged",
                _converged_after_failover,
            ),
        ),
        faults=frozenset({"Unload"}),
    ),
)


def scenario_named(name: str) -> Scenario:
    """The scenario called `name` (KeyError listing the known ones otherwise)."""
    for scenario in SCENARIOS:
        if scenario.name == name:
            return scenario
    raise KeyError(f"no scenario {name!r}; known: {', '.join(s.name for s in SCENARIOS)}")
