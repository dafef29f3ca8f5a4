"""Replaying a recorded counterexample: follow its step labels and re-check the property.

A counterexample in a `groupspec check --json` file is a list of step labels. Replaying starts
from the model's initial state, takes at each step the transition with the recorded label, and
at the end evaluates the violated property again, so a reader can confirm the violation with the
current code (or see that a fix removed it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .derived import (
    action_problems,
    initial_states,
    invariant_problems,
    is_end,
    named_action_property,
    named_invariant,
    transitions,
)
from .describe import describe_state
from .model import ActionProperty, Invariant, Model, Transition

S = TypeVar("S")


class ReplayFailed(ValueError):
    """The trace cannot be followed: a label names no enabled step (the model changed)."""


@dataclass(frozen=True)
class Replay(Generic[S]):
    """A followed trace and whether the property still fails at its end."""

    initial: S
    steps: tuple[Transition[S], ...]
    reproduced: bool
    details: tuple[str, ...]


def follow(
    model: Model[S],
    labels: Sequence[str],
    states: Sequence[Mapping[str, Any] | None] = (),
) -> tuple[S, tuple[Transition[S], ...]]:
    """The initial state and the steps taken by following `labels` (from any initial state).

    Where several enabled steps carry a step's label (a choice the label does not name), the
    one whose successor is described as `states` records it (`checker.describe`) is taken, when
    the file recorded it; otherwise the first."""
    failures: list[str] = []
    for initial in initial_states(model):
        state, steps = initial, []
        for number, label in enumerate(labels, start=1):
            candidates = [t for t in transitions(model, state) if t.label == label]
            if not candidates:
                failures.append(f"step {number}: no enabled step is labelled {label!r}")
                break
            recorded = states[number - 1] if number <= len(states) else None
            step = candidates[0]
            if len(candidates) > 1 and recorded is not None:
                step = next(
                    (t for t in candidates if describe_state(model, t.state) == recorded), step
                )
            steps.append(step)
            state = step.state
        else:
            return initial, tuple(steps)
    raise ReplayFailed("; ".join(failures) or "the model has no initial state")


def replay(
    model: Model[S],
    kind: str,
    property_name: str,
    labels: Sequence[str],
    states: Sequence[Mapping[str, Any] | None] = (),
) -> Replay[S]:
    """Follow `labels` (see `follow`), then evaluate the recorded property at the end of the
    trace."""
    initial, steps = follow(model, labels, states)
    details = property_details(model, kind, property_name, initial, steps)
    return Replay(initial, steps, bool(details), details)


def property_details(
    model: Model[S],
    kind: str,
    property_name: str,
    initial: S,
    steps: Sequence[Transition[S]],
) -> tuple[str, ...]:
    """What the property `property_name` (of `kind`) finds wrong at the end of the run
    `initial`, `steps`: nothing when it holds there."""
    final = steps[-1].state if steps else initial
    details: Sequence[str] = ()
    if kind == "invariant":
        details = invariant_problems(model, _invariant(model, property_name), final)
    elif kind == "action":
        if not steps:
            raise ReplayFailed("an action property needs at least one step")
        before = steps[-2].state if len(steps) > 1 else initial
        details = action_problems(model, _action_property(model, property_name), before, steps[-1])
    elif kind == "deadlock":
        if not transitions(model, final) and not is_end(model, final):
            details = ("no step is enabled",)
    else:
        raise ReplayFailed(f"unknown property kind {kind!r}")
    return tuple(details)


def _invariant(model: Model[S], name: str) -> Invariant[S]:
    found = named_invariant(model, name)
    if found is None:
        raise ReplayFailed(f"the model has no invariant named {name!r}")
    return found


def _action_property(model: Model[S], name: str) -> ActionProperty[S]:
    found = named_action_property(model, name)
    if found is None:
        raise ReplayFailed(f"the model has no action property named {name!r}")
    return found
