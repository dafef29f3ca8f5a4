"""Explorations for diagrams, on the checker's one engine: every step seen, shortest runs.

Diagrams need two things the model check does not: a look at every explored step together
with the state it leaves (to project it onto a state machine), and concrete runs to states that
satisfy a goal (to draw a scenario). Both are `checker.bfs.search` over a view of the model
(`checker.views.ModelView`): judging nothing and observing every step, or with the goal as the
one action property whose first violation is a shortest run to it, replayed concretely like a
counterexample.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from groupspec.checker.bfs import Limits, search
from groupspec.checker.counterexample import ReplayError, reconstruct
from groupspec.checker.model import Model, Transition
from groupspec.checker.views import ModelView

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

    def observe(parent: int, state: S, step: Transition[S], successor: int, new: bool) -> None:
        del parent, successor, new
        visit(state, step)

    result = search(ModelView(model, judged=False), observer=observe)
    return Exploration(result.distinct_states, result.transitions)


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
    view = ModelView(model, initial=(start,), allowed=allowed, goal=goal)
    result = search(view, limits=Limits())
    if not result.problems:
        raise GoalNotFoundError("no reachable state satisfies the goal")
    try:
        example = reconstruct(view, result.problems[0])
    except ReplayError as error:
        raise GoalNotFoundError(f"the shortest run could not be replayed: {error}") from None
    return Run(example.initial, example.steps)
