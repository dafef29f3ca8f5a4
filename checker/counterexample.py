"""Counterexamples: the concrete steps from an initial state to a violation.

A search stores only fingerprints and BFS parents, and states are stored as symmetry
representatives. A counterexample is rebuilt by replaying the model from an initial state and,
at each step, taking a transition whose successor reduces to the next fingerprint on the path.
The result is a concrete run in the model's own identities, as short as BFS found it. Liveness
violations (lassos: a stem, then a cycle repeated forever) are replayed the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .bfs import FoundProblem
from .derived import action_problems, initial_states, named_action_property, transitions
from .expand import Expander
from .fingerprint import fingerprint
from .liveness import LivenessViolation
from .model import Model, Transition
from .replay import property_details

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


class _Replay(Generic[S]):
    """Replaying a model along recorded keys: the search's key of a state's class, with one
    expander remembering the parts of the states it has keyed."""

    def __init__(self, model: Model[S]) -> None:
        self.model = model
        self._keys: Expander[S] = Expander(model)

    def matches(self, state: S, target: int) -> bool:
        return self._keys.key_of_state(state) == target

    def initial_state(self, target: int) -> S:
        """The initial state whose key (the search's name for its class) is `target`."""
        for state in initial_states(self.model):
            if self.matches(state, target):
                return state
        raise ReplayError("no initial state has the path's first fingerprint")

    def leading_to(self, state: S, target: int) -> list[Transition[S]]:
        """The steps from `state` to the class named `target`."""
        return [t for t in transitions(self.model, state) if self.matches(t.state, target)]


def _violation_rank(
    model: Model[S], before: S, transition: Transition[S], found: FoundProblem
) -> int:
    """0 when the step breaks the action property with the recorded detail, 1 when it breaks
    it otherwise (the representative named clients differently), 2 when it does not."""
    problem = found.problem
    action_property = named_action_property(model, problem.property_name)
    if action_property is None:
        return 2
    details = action_problems(model, action_property, before, transition)
    return 0 if problem.detail in details else 1 if details else 2


def reconstruct(model: Model[S], found: FoundProblem) -> Counterexample[S]:
    """The concrete run from an initial state along `found.path`."""
    path = found.path
    replay = _Replay(model)
    initial = replay.initial_state(path[0])
    state = initial
    steps: list[Transition[S]] = []
    for index, target in enumerate(path[1:], start=1):
        candidates = replay.leading_to(state, target)
        if not candidates:
            raise ReplayError(f"step {index}: no transition reaches the recorded state")
        chosen = candidates[0]
        if found.problem.kind == "action" and index == len(path) - 1:
            # Several steps can reach the same state; show one that breaks the property.
            chosen = min(candidates, key=lambda t: _violation_rank(model, state, t, found))
        steps.append(chosen)
        state = chosen.state
    problem = found.problem
    detail = concrete_detail(
        model, problem.kind, problem.property_name, problem.detail, initial, steps
    )
    return Counterexample(problem.kind, problem.property_name, detail, initial, tuple(steps))


def concrete_detail(
    model: Model[S],
    kind: str,
    property_name: str,
    recorded: str,
    initial: S,
    steps: Sequence[Transition[S]],
) -> str:
    """What the property says is wrong at the end of the concrete run, in the run's own names.

    The search judged symmetry representatives, so the recorded detail may name clients the
    concrete run calls otherwise (the representative's c2 is the run's c1): the property is
    judged again on the run, and the recorded text kept only when the run says the same.
    """
    if kind not in ("invariant", "action"):
        return recorded
    details = property_details(model, kind, property_name, initial, steps)
    return recorded if recorded in details or not details else details[0]


@dataclass(frozen=True)
class LassoCounterexample(Generic[S]):
    """A liveness violation as a concrete run: the initial state, the stem, then the cycle.

    For a goal-unreachable violation the cycle is empty and the stem ends in a state from which
    the goal cannot be reached. For a fair cycle, `closes` says whether the concrete cycle ends
    in the very state it starts from, and `rounds` how many passes over the recorded cycle it
    took (more than one when symmetry renamed identities along the way; see
    `reconstruct_lasso`).
    """

    kind: str
    property_name: str
    detail: str
    initial: S
    stem: tuple[Transition[S], ...]
    cycle: tuple[Transition[S], ...]
    closes: bool
    rounds: int


def _step(
    replay: _Replay[S], state: S, target: int, label: str | None, action: str | None, index: int
) -> Transition[S]:
    candidates = replay.leading_to(state, target)
    if not candidates:
        raise ReplayError(f"step {index}: no transition reaches the recorded state")
    # Several steps can reach the same state (self-loops of different RMs, say); the recorded
    # label is the one that makes the cycle fair. Under symmetry the concrete state may name
    # identities differently from the recorded representative, so fall back to the action.
    for wanted, attribute in ((label, "label"), (action, "action")):
        chosen = next((t for t in candidates if getattr(t, attribute) == wanted), None)
        if wanted is not None and chosen is not None:
            return chosen
    return candidates[0]


def reconstruct_lasso(
    model: Model[S], violation: LivenessViolation, max_rounds: int = 64
) -> LassoCounterexample[S]:
    """The concrete run of a liveness violation: its stem, then (for a lasso) its cycle.

    The recorded cycle joins symmetry representatives, so replaying it once from the concrete
    state at its start may end in a renamed copy of that state. The cycle is then replayed again
    from where it ended, up to `max_rounds` times, until a concrete state repeats: the passes
    before the first repeated state join the stem and the passes from it form the concrete
    cycle (`closes` is True). If no state repeats in time, the cycle is one pass and `closes` is
    False; its end state still has the same representative as its start.
    """
    path = violation.path
    replay = _Replay(model)
    initial = replay.initial_state(path[0])
    state = initial
    stem: list[Transition[S]] = []
    for index, target in enumerate(path[1:], start=1):
        stem.append(_step(replay, state, target, None, None, index))
        state = stem[-1].state
    lasso = violation.lasso
    if lasso is None:
        return LassoCounterexample(
            violation.kind,
            violation.property_name,
            violation.detail,
            initial,
            tuple(stem),
            (),
            False,
            0,
        )
    targets = (*lasso.cycle[1:], lasso.cycle[0])
    passes: list[list[Transition[S]]] = []
    starts: dict[int, int] = {fingerprint(state): 0}
    for _ in range(max_rounds):
        one_pass: list[Transition[S]] = []
        for offset, target in enumerate(targets):
            step = _step(
                replay,
                state,
                target,
                lasso.cycle_labels[offset],
                lasso.cycle_actions[offset],
                len(path) + offset,
            )
            one_pass.append(step)
            state = step.state
        passes.append(one_pass)
        # Concrete states (not representatives) are compared: a renamed copy does not close.
        seen_at = starts.setdefault(fingerprint(state), len(passes))
        if seen_at != len(passes):
            stem.extend(step for earlier in passes[:seen_at] for step in earlier)
            cycle = [step for later in passes[seen_at:] for step in later]
            return LassoCounterexample(
                violation.kind,
                violation.property_name,
                violation.detail,
                initial,
                tuple(stem),
                tuple(cycle),
                True,
                len(passes) - seen_at,
            )
    return LassoCounterexample(
        violation.kind,
        violation.property_name,
        violation.detail,
        initial,
        tuple(stem),
        tuple(passes[0]),
        False,
        1,
    )
