"""Expanding states: the unit of work every exploration engine hands to a worker.

Expanding a state means computing its transitions, reducing each successor to its symmetry
representative, fingerprinting it, and checking the action properties of the step and the
invariants of the successor. Engines only merge the results, so the single-process engine, the
multi-process engine and the Spark engine all judge states with this one function.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .fingerprint import fingerprint
from .model import LivenessProperty, Model, Transition, liveness_properties

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

    `marks` holds, for liveness property k of the model, bit 3k when the expanded state is a goal
    state, bit 3k+1 when the property applies to it and bit 3k+2 when a bound cuts the run short
    there; it is 0 unless marks were asked for.
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
    """The goal, applies and cut-short bits of `state` for each property (see
    `Expansion.marks`)."""
    marks = 0
    for index, prop in enumerate(properties):
        if prop.goal(state):
            marks |= 1 << (3 * index)
        if prop.applies(state):
            marks |= 1 << (3 * index + 1)
        if prop.cut_short(state):
            marks |= 1 << (3 * index + 2)
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


@dataclass(frozen=True)
class BatchResult(Generic[S]):
    """A batch expanded for the breadth-first merge: flat, cheap to build, ship and merge.

    Expanded state i has fingerprint `parents[i]` and successors `offsets[i]` to
    `offsets[i + 1]` of `targets` (fingerprints) and `states`. A successor's state is None when
    the expander knows the merge has already seen it (so neither it nor its verdict is needed);
    otherwise it is the representative. `problems`
    maps i to its problems in the order `expand` finds them; `deadlocked` lists the i that
    deadlock. `kinds` holds each successor's (action kind, label) and `marks` each expanded
    state's liveness marks, both only when the graph is recorded. Action and rule counts are
    summed over the batch, in first-occurrence order.
    """

    parents: tuple[int, ...]
    offsets: tuple[int, ...]
    targets: tuple[int, ...]
    states: tuple[object, ...]
    problems: dict[int, tuple[Problem, ...]]
    deadlocked: tuple[int, ...]
    action_counts: dict[str, int]
    rule_counts: dict[str, int]
    kinds: tuple[tuple[str, str], ...] = ()
    marks: tuple[int, ...] = ()


# Told of every explored step: the expanded state's fingerprint, the state, the transition, the
# successor's fingerprint, and whether this step is the first to reach that successor.
StepObserver = Callable[[int, S, Transition[S], int, bool], None]


def expand_for_merge(
    model: Model[S],
    batch: Sequence[tuple[int, S]],
    settled: Container[int],
    shipped: set[int],
    *,
    graph: bool = False,
    observer: StepObserver[S] | None = None,
) -> BatchResult[S]:
    """Expand a batch like `expand_batch` does, in the compact form the BFS merge reads.

    A successor whose fingerprint is in `settled` (the merge's seen set, when the expander runs
    in the merging process) or in `shipped` (successors this expander already sent, in this
    batch or an earlier one of the same search) is not judged again and its state is not sent:
    batches are merged in order, so the state and its verdict reach the merge first with the
    earlier occurrence. Fingerprints sent with a state are added to `shipped`. `observer`, when
    given, is told of every step in the order the merge will see them (one process only).
    """
    invariants = tuple(model.invariants)
    action_properties = tuple(model.action_properties)
    properties = liveness_properties(model) if graph else ()
    representative = model.representative
    transitions_of = model.transitions
    parents: list[int] = []
    offsets: list[int] = [0]
    targets: list[int] = []
    states: list[object] = []
    kinds: list[tuple[str, str]] = []
    marks: list[int] = []
    problems_at: dict[int, tuple[Problem, ...]] = {}
    deadlocked: list[int] = []
    action_counts: dict[str, int] = {}
    rule_tuples: dict[tuple[str, ...], int] = {}
    for position, (parent, state) in enumerate(batch):
        parents.append(parent)
        transitions = transitions_of(state)
        problems: list[Problem] = []
        for transition in transitions:
            successor = representative(transition.state)
            successor_fp = fingerprint(successor)
            targets.append(successor_fp)
            action = transition.action
            action_counts[action] = action_counts.get(action, 0) + 1
            rules = transition.rules
            if rules:
                rule_tuples[rules] = rule_tuples.get(rules, 0) + 1
            if graph:
                kinds.append((action, transition.label))
            for action_property in action_properties:
                for detail in action_property.check(state, transition):
                    problems.append(Problem("action", action_property.name, detail, successor_fp))
            known = successor_fp in shipped or successor_fp in settled
            if observer is not None:
                observer(parent, state, transition, successor_fp, not known)
            if known:
                states.append(None)
                continue
            shipped.add(successor_fp)
            states.append(successor)
            for invariant in invariants:
                for detail in invariant.check(transition.state):
                    problems.append(Problem("invariant", invariant.name, detail, successor_fp))
        offsets.append(len(targets))
        if problems:
            problems_at[position] = tuple(problems)
        if not transitions and not model.is_terminal(state):
            deadlocked.append(position)
        if graph:
            marks.append(liveness_marks(properties, state) if properties else 0)
    rule_counts: dict[str, int] = {}
    for rules, count in rule_tuples.items():
        for rule in rules:
            rule_counts[rule] = rule_counts.get(rule, 0) + count
    return BatchResult(
        tuple(parents),
        tuple(offsets),
        tuple(targets),
        tuple(states),
        problems_at,
        tuple(deadlocked),
        action_counts,
        rule_counts,
        tuple(kinds),
        tuple(marks),
    )
