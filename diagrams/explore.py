"""Small breadth-first explorations for diagrams: every step seen, and shortest runs to a goal.

The model-checking engine (`bfs.py`) keeps fingerprints only and judges properties; diagrams
need something else: a look at every explored step together with the state it leaves (to
project it onto a state machine), and concrete runs to states that satisfy a goal (to draw a
scenario). Both explore symmetry representatives in the same deterministic order as the
engine, one process, no limits: the presets that diagrams use are small.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from groupspec.checker.fingerprint import fingerprint
from groupspec.checker.model import Model, Transition

S = TypeVar("S")

# A goal is judged on a step: the state it leaves and the transition (whose `.state` it enters).
StepGoal = Callable[[S, Transition[S]], bool]


@dataclass(frozen=True)
class Exploration:
    """What an exhaustive exploration saw: how many distinct states and explored steps."""

    states: int
    transitions: int


def explore(model: Model[S], visit: Callable[[S, Transition[S]], None]) -> Exploration:
    """Explore every reachable state breadth-first, calling `visit(state, step)` on every step.

    `state` is the symmetry representative the step leaves; every step from every distinct
    representative is visited once, as the model-checking engine counts transitions.
    """
    initial = [model.representative(state) for state in model.initial_states()]
    seen = {fingerprint(state) for state in initial}
    queue = deque(initial)
    transitions = 0
    while queue:
        state = queue.popleft()
        for step in model.transitions(state):
            transitions += 1
            visit(state, step)
            representative = model.representative(step.state)
            key = fingerprint(representative)
            if key not in seen:
                seen.add(key)
                queue.append(representative)
    return Exploration(len(seen), transitions)


@dataclass(frozen=True)
class Run(Generic[S]):
    """A concrete run: the state it starts in and each step taken, in order."""

    initial: S
    steps: tuple[Transition[S], ...]

    @property
    def final(self) -> S:
        """The state the run ends in."""
        return self.steps[-1].state if self.steps else self.initial


class GoalNotFoundError(RuntimeError):
    """No reachable state satisfies the goal (within the model's bounds and allowed steps)."""


def shortest_run(
    model: Model[S],
    start: S,
    goal: StepGoal[S],
    allowed: Callable[[Transition[S]], bool] | None = None,
) -> Run[S]:
    """The shortest run from `start` whose last step satisfies `goal`, over `allowed` steps.

    Breadth-first over symmetry representatives, so the first step found that satisfies `goal`
    ends a shortest run; ties go to the model's transition order. The run is then replayed from
    `start` concretely (as counterexamples are), so client names stay the same all along.
    """
    root = model.representative(start)
    parents: dict[int, tuple[int, int] | None] = {fingerprint(root): None}
    queue = deque([root])
    while queue:
        state = queue.popleft()
        key = fingerprint(state)
        for position, step in enumerate(model.transitions(state)):
            if allowed is not None and not allowed(step):
                continue
            if goal(state, step):
                return _replay(model, start, allowed, goal, _path(parents, key))
            representative = model.representative(step.state)
            successor = fingerprint(representative)
            if successor not in parents:
                parents[successor] = (key, position)
                queue.append(representative)
    raise GoalNotFoundError("no reachable state satisfies the goal")


def _path(parents: dict[int, tuple[int, int] | None], key: int) -> list[int]:
    """Fingerprints from the root's successor to `key` (the root itself excluded)."""
    path: list[int] = []
    while (link := parents[key]) is not None:
        path.append(key)
        key = link[0]
    path.reverse()
    return path


def _replay(
    model: Model[S],
    start: S,
    allowed: Callable[[Transition[S]], bool] | None,
    goal: StepGoal[S],
    path: Sequence[int],
) -> Run[S]:
    """Follow `path` (fingerprints of representatives) from `start`, then a goal step."""
    state = start
    steps: list[Transition[S]] = []
    for index in range(len(path) + 1):
        candidates = [step for step in model.transitions(state) if allowed is None or allowed(step)]
        if index == len(path):
            chosen = next((step for step in candidates if goal(state, step)), None)
        else:
            chosen = next(
                (
                    s
                    for s in candidates
                    if fingerprint(model.representative(s.state)) == path[index]
                ),
                None,
            )
        if chosen is None:
            raise GoalNotFoundError(f"step {index + 1} of the shortest run could not be replayed")
        steps.append(chosen)
        state = chosen.state
    return Run(start, tuple(steps))
