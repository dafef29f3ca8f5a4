"""Seeded random walks over any model: beyond exhaustive bounds, the same properties.

Each walk starts from an initial state and takes `steps` steps, each chosen uniformly among the
enabled transitions (or, for a model that groups its steps with weights, a group by weight and
then one of its steps; see `one_walk`), with a random generator of its own seeded from the run's seed (so the
Spark engine can take the walks on different machines and get the same ones). Every state is checked against every invariant and every step against
every action property; a state with no enabled step that is not a legitimate end is a deadlock.
The same seed always gives the same walks, and a violation's trace is a list of step labels
that `checker.replay.follow` can retrace.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from .derived import (
    action_problems,
    action_properties,
    initial_states,
    invariant_problems,
    invariants,
    is_end,
    representative,
)
from .derived import transitions as transitions_of
from .fingerprint import fingerprint
from .model import Model, Transition

S = TypeVar("S")


@dataclass(frozen=True)
class WalkViolation:
    """A property that failed on a walk, with the labels of the steps that led there."""

    kind: str
    property_name: str
    detail: str
    run: int
    trace: tuple[str, ...]


@dataclass
class WalkReport:
    """What the walks covered and found."""

    seed: int
    runs: int = 0
    steps: int = 0
    distinct_states: int = 0
    elapsed_s: float = 0.0
    action_counts: Counter[str] = field(default_factory=Counter)
    rule_counts: Counter[str] = field(default_factory=Counter)
    violations: list[WalkViolation] = field(default_factory=list)


WalkProgress = Callable[[WalkReport], None]


def walk_seeds(seed: int, runs: int) -> list[int]:
    """The seed of each of `runs` walks, drawn from `seed`: every walk has a random generator
    of its own, so walks are independent and any engine can take any walk alone."""
    rng = random.Random(seed)
    return [rng.getrandbits(64) for _ in range(runs)]


@dataclass(frozen=True)
class Walk:
    """One walk: its steps, what they did, the states it visited and what it found."""

    run: int
    steps: int
    action_counts: Counter[str]
    rule_counts: Counter[str]
    visited: frozenset[int]
    violations: tuple[WalkViolation, ...]


def one_walk(model: Model[S], walk_seed: int, run: int, steps: int) -> Walk:
    """Walk number `run` (with seed `walk_seed`, see `walk_seeds`) of up to `steps` steps."""
    rng = random.Random(walk_seed)
    actions: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    seen: set[int] = set()
    taken = 0
    # A model may group its steps and say how often a walk picks each group (`weighted_steps`:
    # (weight, the group's transitions on demand)); otherwise every step is as likely.
    weighted = getattr(model, "weighted_steps", None)
    state = rng.choice(initial_states(model))
    trace: list[str] = []
    found = _invariant_violations(model, state, run, trace)
    for _ in range(steps):
        if found:
            break
        transitions: Sequence[Transition[S]]
        if weighted is not None:
            transitions = _weighted_choice(weighted(state), rng)
        else:
            transitions = transitions_of(model, state)
        if not transitions:
            if not is_end(model, state):
                found.append(
                    WalkViolation("deadlock", "Deadlock", "no step is enabled", run, tuple(trace))
                )
            break
        step = rng.choice(transitions)
        trace.append(step.label)
        taken += 1
        actions[step.action] += 1
        rules.update(step.rules)
        for action_property in action_properties(model):
            found.extend(
                WalkViolation("action", action_property.name, detail, run, tuple(trace))
                for detail in action_problems(model, action_property, state, step)
            )
        state = step.state
        seen.add(fingerprint(representative(model, state)))
        found.extend(_invariant_violations(model, state, run, trace))
    return Walk(run, taken, actions, rules, frozenset(seen), tuple(found))


def _weighted_choice(
    groups: list[tuple[float, Callable[[], Sequence[Transition[S]]]]], rng: random.Random
) -> Sequence[Transition[S]]:
    """The transitions of one group picked by weight among those with any (none if no group
    has a transition); only the groups drawn are computed."""
    while groups:
        index = rng.choices(range(len(groups)), weights=[weight for weight, _ in groups])[0]
        transitions = groups[index][1]()
        if transitions:
            return transitions
        groups = groups[:index] + groups[index + 1 :]
    return ()


def add_walk(report: WalkReport, walk: Walk) -> None:
    """Count `walk` into `report` (all but the distinct states, which need the union)."""
    report.runs += 1
    report.steps += walk.steps
    report.action_counts.update(walk.action_counts)
    report.rule_counts.update(walk.rule_counts)
    report.violations.extend(walk.violations)


def random_walks(
    model: Model[S],
    *,
    seed: int,
    runs: int,
    steps: int,
    stop_at_first: bool = True,
    progress: WalkProgress | None = None,
) -> WalkReport:
    """`runs` random walks of up to `steps` steps over `model`, checking every property.

    Walk r uses seed `walk_seeds(seed, runs)[r]`; with `stop_at_first`, the walks after the
    first one that finds a violation are not taken.
    """
    if runs < 1 or steps < 1:
        raise ValueError(f"runs and steps must be at least 1 (got runs={runs}, steps={steps})")
    report = WalkReport(seed=seed)
    seen: set[int] = set()
    started = time.perf_counter()
    for run, walk_seed in enumerate(walk_seeds(seed, runs)):
        walk = one_walk(model, walk_seed, run, steps)
        add_walk(report, walk)
        seen |= walk.visited
        report.distinct_states = len(seen)
        if progress is not None:
            progress(report)
        if report.violations and stop_at_first:
            break
    report.elapsed_s = time.perf_counter() - started
    return report


def _invariant_violations(
    model: Model[S], state: S, run: int, trace: list[str]
) -> list[WalkViolation]:
    return [
        WalkViolation("invariant", invariant.name, detail, run, tuple(trace))
        for invariant in invariants(model)
        for detail in invariant_problems(model, invariant, state)
    ]
