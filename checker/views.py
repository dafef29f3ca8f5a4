"""Views of a model for explorations other than a check: another start, fewer steps, a goal.

Diagrams and conformance vectors explore models with the one engine (`bfs.search`) too. What
they need differently is a view of the model: start from a given state, take only some steps,
judge nothing (they are not checks), or stop at the first step that reaches a goal, which is
an action property that fails there (as TLC finds a scenario by asserting it never happens).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from .model import ActionProperty, Invariant, LivenessProperty, Model, Transition

S = TypeVar("S")

GOAL = "Goal"


class ModelView(Generic[S]):
    """`model` seen with other initial states, a step filter, and its own properties.

    With `judged` false the view has no properties at all (and never deadlocks); a `goal`
    (judged on a step: the state it leaves and the transition) becomes the one action property
    "Goal", whose first violation ends a shortest run to it.
    """

    def __init__(
        self,
        model: Model[S],
        *,
        initial: Sequence[S] | None = None,
        allowed: Callable[[Transition[S]], bool] | None = None,
        judged: bool = True,
        goal: Callable[[S, Transition[S]], bool] | None = None,
    ) -> None:
        self.model = model
        self._initial = tuple(initial) if initial is not None else None
        self._allowed = allowed
        self._judged = judged and goal is None
        self._goal = goal

    @property
    def name(self) -> str:
        """The model's name."""
        return self.model.name

    def initial_states(self) -> Sequence[S]:
        """The given start, or the model's initial states."""
        return self._initial if self._initial is not None else self.model.initial_states()

    def transitions(self, state: S) -> Sequence[Transition[S]]:
        """The model's steps that the filter allows."""
        steps = self.model.transitions(state)
        allowed = self._allowed
        return steps if allowed is None else [step for step in steps if allowed(step)]

    def representative(self, state: S) -> S:
        """The model's representative."""
        return self.model.representative(state)

    def is_terminal(self, state: S) -> bool:
        """The model's ends; any state, when nothing is judged."""
        return not self._judged or self.model.is_terminal(state)

    @property
    def invariants(self) -> Sequence[Invariant[S]]:
        """The model's invariants, when judged."""
        return self.model.invariants if self._judged else ()

    @property
    def action_properties(self) -> Sequence[ActionProperty[S]]:
        """The model's action properties when judged; the goal, when there is one."""
        goal = self._goal
        if goal is not None:
            return (ActionProperty(GOAL, lambda s, t: ["reached"] if goal(s, t) else []),)
        return self.model.action_properties if self._judged else ()

    @property
    def liveness_properties(self) -> Sequence[LivenessProperty[S]]:
        """The model's liveness properties, when judged."""
        return tuple(getattr(self.model, "liveness_properties", ())) if self._judged else ()

    def __getattr__(self, name: str) -> Any:
        # Whatever else the model offers (explain, action_kinds, ...), the view offers too.
        return getattr(self.model, name)
