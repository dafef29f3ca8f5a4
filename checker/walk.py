"""Seeded random walks over any model: beyond exhaustive bounds, the same properties.

Each walk starts from an initial state and takes `steps` steps, each chosen uniformly among the
enabled transitions. Every state is checked against every invariant and every step against
every action property; a state with no enabled step that is not a legitimate end is a deadlock.
The same seed always gives the same walks, and a violation's trace is a list of step labels
that `checker.replay.follow` can retrace.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from .fingerprint import fingerprint
from .model import Model

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


def random_walks(
    model: Model[S],
    *,
    seed: int,
    runs: int,
    steps: int,
    stop_at_first: bool = True,
    progress: WalkProgress | None = None,
) -> WalkReport:
    """`runs` random walks of up to `steps` steps over `model`, checking every property."""
    if runs < 1 or steps < 1:
        raise ValueError(f"runs and steps must be at least 1 (got runs={runs}, steps={steps})")
    rng = random.Random(seed)
    report = WalkReport(seed=seed)
    seen: set[int] = set()
    started = time.perf_counter()
    initials = list(model.initial_states())
    for run in range(runs):
        report.runs += 1
        state = rng.choice(initials)
        trace: list[str] = []
        found = _invariant_violations(model, state, run, trace)
        for _ in range(steps):
            if found:
                break
            transitions = model.transitions(state)
            if not transitions:
                if not model.is_terminal(state):
                    found.append(
                        WalkViolation(
                            "deadlock", "Deadlock", "no step is enabled", run, tuple(trace)
                        )
                    )
                break
            step = rng.choice(transitions)
            trace.append(step.label)
            report.steps += 1
            report.action_counts[step.action] += 1
            report.rule_counts.update(step.rules)
            for action_property in model.action_properties:
                found.extend(
                    WalkViolation("action", action_property.name, detail, run, tuple(trace))
                    for detail in action_property.check(state, step)
                )
            state = step.state
            seen.add(fingerprint(model.representative(state)))
            found.extend(_invariant_violations(model, state, run, trace))
        report.violations.extend(found)
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
        for invariant in model.invariants
        for detail in invariant.check(state)
    ]
