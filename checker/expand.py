"""Expanding states: the unit of work every exploration engine hands to a worker.

Expanding a state means computing its transitions, reducing each successor to its symmetry
representative, fingerprinting it, and checking the action properties of the step and the
invariants of the successor. Engines only merge the results, so the single-process engine, the
multi-process engine and the Spark engine all judge states with this one function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .fingerprint import fingerprint
from .model import LivenessProperty, Model, liveness_properties

S = TypeVar("S")


@dataclass(frozen=True)
class Problem:
    """A property that failed: on a successor state (invariant) or on a step (action property).

    `kind` is "invariant", "action" or "deadlock"; `successor` is the fingerprint of the state
    the problem was found on (for an action property, the state the step led to).
    """

    kind: str
    property_name: str
    detail: str
    successor: int


@dataclass(frozen=True)
class Successor(Generic[S]):
    """One explored step: fingerprint, action kind, rules, representative state and label."""

    fingerprint: int
    action: str
    rules: tuple[str, ...]
    state: S
    label: str = ""


@dataclass(frozen=True)
class Expansion(Generic[S]):
    """Everything found when expanding one state.

    `marks` holds, for liveness property k of the model, bit 2k when the expanded state is a goal
    state and bit 2k+1 when the property applies to it; it is 0 unless marks were asked for.
    """

    parent: int
    successors: tuple[Successor[S], ...]
    problems: tuple[Problem, ...]
    deadlocked: bool
    marks: int = 0


def invariant_problems(model: Model[S], state: S, at: int) -> list[Problem]:
    """Every invariant `state` violates, as problems located at fingerprint `at`."""
    return [
        Problem("invariant", invariant.name, detail, at)
        for invariant in model.invariants
        for detail in invariant.check(state)
    ]


def liveness_marks(properties: Sequence[LivenessProperty[S]], state: S) -> int:
    """The goal and applies bits of `state` for each property (see `Expansion.marks`)."""
    marks = 0
    for index, prop in enumerate(properties):
        if prop.goal(state):
            marks |= 1 << (2 * index)
        if prop.applies(state):
            marks |= 1 << (2 * index + 1)
    return marks


def expand(
    model: Model[S],
    parent: int,
    state: S,
    checked: set[int],
    liveness: Sequence[LivenessProperty[S]] = (),
) -> Expansion[S]:
    """Expand `state` (fingerprint `parent`); `checked` holds successors already judged.

    A successor's invariants are checked once per `checked` set: the caller keeps one set per
    batch of work, which is enough for the first occurrence of every state in the whole search
    to carry its verdict (engines merge batches in a fixed order). `liveness` are the properties
    whose marks the expansion carries (every state is expanded once, so marked once).
    """
    transitions = model.transitions(state)
    successors: list[Successor[S]] = []
    problems: list[Problem] = []
    for transition in transitions:
        representative = model.representative(transition.state)
        successor_fp = fingerprint(representative)
        successors.append(
            Successor(
                successor_fp,
                transition.action,
                transition.rules,
                representative,
                transition.label,
            )
        )
        for action_property in model.action_properties:
            problems.extend(
                Problem("action", action_property.name, detail, successor_fp)
                for detail in action_property.check(state, transition)
            )
        if successor_fp not in checked:
            checked.add(successor_fp)
            problems.extend(invariant_problems(model, transition.state, successor_fp))
    deadlocked = not transitions and not model.is_terminal(state)
    marks = liveness_marks(liveness, state) if liveness else 0
    return Expansion(parent, tuple(successors), tuple(problems), deadlocked, marks)


def expand_batch(
    model: Model[S], batch: Sequence[tuple[int, S]], marks: bool = False
) -> tuple[Expansion[S], ...]:
    """Expand a batch of (fingerprint, state) pairs in order; `marks` asks for liveness marks."""
    checked: set[int] = set()
    properties = liveness_properties(model) if marks else ()
    return tuple(expand(model, parent, state, checked, properties) for parent, state in batch)
