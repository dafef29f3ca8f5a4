"""What an explorable model offers the engines: initial states, transitions, properties.

Every engine (breadth-first search in one or many processes, simulation, Spark) explores a
`Model`. A model is a finite transition system whose states are immutable values with a
deterministic `repr` (frozen dataclasses, tuples, strings, numbers, enums; never sets or dicts,
whose order is not canonical), which is what fingerprints are computed from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

S = TypeVar("S")


@dataclass(frozen=True)
class Transition(Generic[S]):
    """One enabled step: a label people read, the action kind counted for coverage, the result.

    `rules` are the specification rules the step fired, for rule coverage.
    """

    label: str
    action: str
    state: S
    rules: tuple[str, ...] = ()


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


class Model(Protocol[S]):
    """A finite transition system with properties, explorable by every engine."""

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
