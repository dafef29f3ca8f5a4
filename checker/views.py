"""Views of a model for explorations other than a check: another start, fewer steps, a goal.

Diagrams and conformance vectors explore models with the one engine (`bfs.search`) too. What
they need differently is a view of the model: start from a given state, take only some steps,
judge nothing (they are not checks), or stop at the first step that reaches a goal, which is
an action property that fails there (as TLC finds a scenario by asserting it never happens).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .derived import is_end, on_whole_states, representative, transitions_and_cuts
from .model import ActionProperty, Cut, Model, Property, Transition
from .plain import PlainModel

S = TypeVar("S")

GOAL = "Goal"


class ModelView(PlainModel[S]):
    """`model` seen with other initial states, a step filter, and its own properties: a plain
    model whose state is the viewed model's state object.

    With `judged` false the view has no properties at all (and never deadlocks); with `judging`
    it has only the named ones (and never deadlocks either: a deadlock is no named property); a
    `goal` (judged on a step: the state it leaves and the transition) becomes the one action
    property "Goal", whose first violation ends a shortest run to it.
    """

    def __init__(
        self,
        model: Model[S],
        *,
        initial: Sequence[S] | None = None,
        allowed: Callable[[Transition[S]], bool] | None = None,
        judged: bool = True,
        goal: Callable[[S, Transition[S]], bool] | None = None,
        judging: frozenset[str] | None = None,
    ) -> None:
        self.model = model
        self._judging = judging
        self._initial = tuple(initial) if initial is not None else None
        self._allowed = allowed
        self._judged = judged and goal is None
        self._goal = goal

    @property
    def name(self) -> str:  # type: ignore[override]
        """The model's name."""
        return self.model.name

    def initial_states(self) -> Sequence[S]:
        """The given start, or the model's initial states."""
        if self._initial is not None:
            return self._initial
        model = self.model
        return [model.state_of(components) for components in model.initial_components()]

    def transitions(self, state: S) -> Sequence[Transition[S] | Cut]:
        """The model's steps that the filter allows (without their findings when the view judges
        none of the model's properties)."""
        steps, cuts = transitions_and_cuts(self.model, state)
        allowed = self._allowed
        kept: list[Transition[S] | Cut] = [
            step if self._judged or not step.findings else _without_findings(step)
            for step in steps
            if allowed is None or allowed(step)
        ]
        if self._judging is not None:
            kept = [
                _with_findings(step, self._judging) if isinstance(step, Transition) else step
                for step in kept
            ]
        return kept + [Cut(bound) for bound in sorted(cuts)]

    def representative(self, state: S) -> S:
        """The model's representative."""
        return representative(self.model, state)

    def is_end(self, state: S) -> bool:
        """The model's ends; any state, when nothing is judged."""
        return not self._judged or self._judging is not None or is_end(self.model, state)

    @property
    def properties(self) -> Sequence[Property]:  # type: ignore[override]
        """The model's properties when judged (its action properties re-read from each step's
        findings); the goal, when there is one."""
        goal = self._goal
        if goal is not None:
            return (
                ActionProperty(
                    GOAL,
                    "the step reaches the goal",
                    lambda s, t: ["reached"] if goal(s, t) else [],
                ),
            )
        if not self._judged:
            return ()
        judged = on_whole_states(self.model)
        if self._judging is None:
            return judged
        return tuple(item for item in judged if item.name in self._judging)

    def __getattr__(self, name: str) -> Any:
        # Whatever else the model offers (explain, action_kinds, ...), the view offers too.
        return getattr(self.model, name)


def _with_findings(step: Transition[S], names: frozenset[str]) -> Transition[S]:
    """`step` with only the findings of the named action properties."""
    kept = tuple(finding for finding in step.findings if finding[0] in names)
    if kept == step.findings:
        return step
    return Transition(step.label, step.action, step.state, step.rules, kept)


def _without_findings(step: Transition[S]) -> Transition[S]:
    """`step` with no findings: a view that declares none of the model's action properties
    must not report them."""
    return Transition(step.label, step.action, step.state, step.rules)
