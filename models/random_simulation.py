"""Seeded random simulation: walk a model, checking every invariant and action property.

Each run starts from the model's initial world and takes `steps` random actions, choosing
uniformly among enabled actions and among the outcomes the specification allows. The same seed
always produces the same walks, so a reported violation can be reproduced exactly.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from groupspec.spec.invariants import check_state, check_step
from groupspec.spec.rules import RULE_IDS

from .random_clients import Action, RandomClientsWorld, World


@dataclass(frozen=True)
class Violation:
    """A property that failed, where, and the actions that led there."""

    property_name: str
    detail: str
    run: int
    step: int
    trace: tuple[str, ...]


@dataclass
class SimulationReport:
    """What a simulation covered and found."""

    seed: int
    runs: int
    steps: int = 0
    distinct_states: int = 0
    elapsed_s: float = 0.0
    rules_fired: Counter[str] = field(default_factory=Counter)
    violations: list[Violation] = field(default_factory=list)

    @property
    def rules_never_fired(self) -> tuple[str, ...]:
        """Catalog rules no step applied."""
        return tuple(sorted(RULE_IDS - set(self.rules_fired)))


ProgressCallback = Callable[[int, SimulationReport], None]


def simulate(
    world: RandomClientsWorld,
    *,
    seed: int,
    runs: int,
    steps: int,
    stop_at_first: bool = True,
    progress: ProgressCallback | None = None,
) -> SimulationReport:
    """Random walks over `world`; every state and step is checked against every property."""
    if runs < 1 or steps < 1:
        raise ValueError(f"runs and steps must be at least 1 (got runs={runs}, steps={steps})")
    rng = random.Random(seed)
    report = SimulationReport(seed=seed, runs=runs)
    seen: set[int] = set()
    started = time.perf_counter()
    for run in range(runs):
        current = world.initial()
        trace: list[str] = []
        for step_number in range(1, steps + 1):
            enabled = world.actions(current)
            action = rng.choices(enabled, weights=[a.weight for a in enabled])[0]
            current, found = _take(world, current, action, rng, report)
            trace.append(action.label)
            seen.add(hash(current.coordinator))
            report.steps += 1
            for name, detail in found:
                report.violations.append(Violation(name, detail, run, step_number, tuple(trace)))
            if found and stop_at_first:
                break
        if progress is not None:
            report.distinct_states = len(seen)
            progress(run + 1, report)
        if report.violations and stop_at_first:
            break
    report.distinct_states = len(seen)
    report.elapsed_s = time.perf_counter() - started
    return report


def _take(
    world: RandomClientsWorld,
    current: World,
    action: Action,
    rng: random.Random,
    report: SimulationReport,
) -> tuple[World, list[tuple[str, str]]]:
    """Apply one action with a randomly chosen allowed outcome; returns the violations found."""
    outcomes = world.outcomes(current, action)
    if not outcomes:
        return world.apply(current, action, None), []
    outcome = rng.choice(outcomes)
    report.rules_fired.update(outcome.rules)
    found = check_step(current.coordinator, action.event, outcome.state, outcome.responses)
    found += check_state(outcome.state)
    return world.apply(current, action, outcome), found
