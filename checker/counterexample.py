"""Counterexamples: the concrete steps from an initial state to a violation.

A search stores only fingerprints and BFS parents, and states are stored as symmetry
representatives. A counterexample is rebuilt by replaying the model from an initial state and,
at each step, taking a transition whose successor reduces to the next fingerprint on the path.
The result is a concrete run in the model's own identities, as short as BFS found it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from .bfs import FoundProblem
from .fingerprint import fingerprint
from .model import Model, Transition

S = TypeVar("S")


class ReplayError(RuntimeError):
    """The model did not reproduce a recorded path (it is not deterministic in its inputs)."""


@dataclass(frozen=True)
class Counterexample(Generic[S]):
    """A violated property with the run that violates it: the initial state, then each step."""

    kind: str
    property_name: str
    detail: str
    initial: S
    steps: tuple[Transition[S], ...]


def _matches(model: Model[S], state: S, target: int) -> bool:
    return fingerprint(model.representative(state)) == target


def _violates(model: Model[S], before: S, transition: Transition[S], found: FoundProblem) -> bool:
    problem = found.problem
    for action_property in model.action_properties:
        if action_property.name == problem.property_name:
            return problem.detail in action_property.check(before, transition)
    return False


def reconstruct(model: Model[S], found: FoundProblem) -> Counterexample[S]:
    """The concrete run from an initial state along `found.path`."""
    path = found.path
    initial = next((s for s in model.initial_states() if _matches(model, s, path[0])), None)
    if initial is None:
        raise ReplayError("no initial state has the path's first fingerprint")
    state = initial
    steps: list[Transition[S]] = []
    for index, target in enumerate(path[1:], start=1):
        candidates = [t for t in model.transitions(state) if _matches(model, t.state, target)]
        if not candidates:
            raise ReplayError(f"step {index}: no transition reaches the recorded state")
        chosen = candidates[0]
        if found.problem.kind == "action" and index == len(path) - 1:
            # Several steps can reach the same state; show one that breaks the property.
            chosen = next((t for t in candidates if _violates(model, state, t, found)), chosen)
        steps.append(chosen)
        state = chosen.state
    problem = found.problem
    return Counterexample(
        problem.kind, problem.property_name, problem.detail, initial, tuple(steps)
    )
