"""What an explorable model offers the engines: initial states, transitions, properties.

Every engine (breadth-first search in one or many processes, simulation, Spark) explores a
`Model`. A model is a finite transition system whose states are immutable values with a
deterministic `repr` (frozen dataclasses, tuples, strings, numbers, enums; never sets or dicts,
whose order is not canonical), which is what fingerprints are computed from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

S = TypeVar("S")


@dataclass(frozen=True, init=False)
class Transition(Generic[S]):
    """One enabled step: a label people read, the action kind counted for coverage, the result.

    `rules` are the specification rules the step fired, for rule coverage.
    """

    label: str
    action: str
    state: S
    rules: tuple[str, ...] = ()

    def __init__(self, label: str, action: str, state: S, rules: tuple[str, ...] = ()) -> None:
        # Models build millions of these; filling the instance dict directly costs a third of
        # the generated frozen __init__ (one object.__setattr__ per field).
        fields = self.__dict__
        fields["label"] = label
        fields["action"] = action
        fields["state"] = state
        fields["rules"] = rules


@dataclass(frozen=True)
class Invariant(Generic[S]):
    """A named property every reachable state must have; `check` returns what is wrong."""

    name: str
    check: Callable[[S], Sequence[str]]


@dataclass(frozen=True)
class ActionProperty(Generic[S]):
    """A named property of every step; `check(before, transition)` returns what is wrong."""

    name: str
    check: Callable[[S, Transition[S]], Sequence[str]]


def _always(state: Any) -> bool:
    return True


def _never(state: Any) -> bool:
    return False


@dataclass(frozen=True)
class LivenessProperty(Generic[S]):
    """A named leads-to property: `applies` leads to `goal` under weak fairness.

    From every state where `applies` holds, `goal` must be reachable, and every infinite run that
    is weakly fair to the steps whose action kind is in `fair_actions` must reach it. With
    `fair_per_label` each label (one action on particular arguments, such as one RM's receive) is
    its own fairness class, like TLA+'s `\\A r: WF_vars(A(r))`; otherwise all steps of one action
    kind form a single class. `goal` and `applies` see symmetry representatives, so they must not
    depend on which interchangeable identity is which. `applies` should stay true once true (for
    example "every fault has been used"); states before it are only the way in.

    `cut_short` marks states where the model's bounds cut the run (for example the next
    rebalance would exceed the generation bound): what a real system does after them is outside
    the model, so a run reaching one is neither a success nor a failure. They are counted, so a
    bound too tight to show anything is visible.
    """

    name: str
    goal: Callable[[S], bool]
    applies: Callable[[S], bool] = _always
    fair_actions: frozenset[str] = frozenset()
    fair_per_label: bool = True
    cut_short: Callable[[S], bool] = _never


class Model(Protocol[S]):
    """A finite transition system with properties, explorable by every engine.

    A model may also have a `liveness_properties` attribute, a sequence of `LivenessProperty`;
    it is optional (read it with `liveness_properties`), so models without it work unchanged.
    """

    @property
    def name(self) -> str:
        """A short name shown in reports."""
        ...

    def initial_states(self) -> Sequence[S]:
        """The states exploration starts from."""
        ...

    def transitions(self, state: S) -> Sequence[Transition[S]]:
        """Every step enabled in `state`, in a deterministic order."""
        ...

    def representative(self, state: S) -> S:
        """The canonical member of `state`'s symmetry class (the state itself without symmetry)."""
        ...

    def is_terminal(self, state: S) -> bool:
        """Whether `state` may legitimately have no enabled step (otherwise it is a deadlock)."""
        ...

    @property
    def invariants(self) -> Sequence[Invariant[S]]:
        """Properties of every reachable state."""
        ...

    @property
    def action_properties(self) -> Sequence[ActionProperty[S]]:
        """Properties of every explored step."""
        ...


def liveness_properties(model: Model[S]) -> Sequence[LivenessProperty[S]]:
    """The model's liveness properties, or none when it declares no `liveness_properties`."""
    return tuple(getattr(model, "liveness_properties", ()))
