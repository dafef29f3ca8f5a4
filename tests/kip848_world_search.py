"""Find a step of the KIP-848 world breadth first: the tests of its steps start from the first
state where a step of a kind fires a rule."""

from __future__ import annotations

from collections.abc import Iterator

from groupspec.checker.model import Cut, Transition
from groupspec.models.kip848_world import Kip848World, Kip848WorldState


def reachable_steps(
    world: Kip848World,
) -> Iterator[tuple[Kip848WorldState, Transition[Kip848WorldState]]]:
    """Every step of every reachable state, breadth first: (the state before, the step)."""
    seen: set[Kip848WorldState] = set()
    frontier = list(world.initial_states())
    while frontier:
        following = []
        for state in frontier:
            for step in world.transitions(state):
                if isinstance(step, Cut):
                    continue
                yield state, step
                if step.state not in seen:
                    seen.add(step.state)
                    following.append(step.state)
        frontier = following


def first_step(
    world: Kip848World, rule: str, *, action: str | None = None, label: str | None = None
) -> tuple[Kip848WorldState, Transition[Kip848WorldState]]:
    """Breadth first, the first step (of kind `action`, labelled `label`, when given) that fires
    `rule`: (the state before, the step)."""
    for state, step in reachable_steps(world):
        wanted = (action is None or step.action == action) and (
            label is None or step.label == label
        )
        if wanted and rule in step.rules:
            return state, step
    raise AssertionError(f"no step {action or label or ''} firing {rule}")
