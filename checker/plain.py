"""A model written as a function from a state to its steps: one slot holding the whole state.

Most small models (a graph in a test, a view of another model, a run of one coordinator) gain
nothing from slots. A `PlainModel` subclass writes `initial_states`, `transitions` and, where
it has them, `representative` (symmetry), `is_end` and `properties`; this base turns that into
the one `Model` interface: one slot, one transition group that the engine never remembers (each
state is expanded once, so it costs what the model costs), and state keys that are the
fingerprints of representatives.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from typing import Any, Generic, TypeVar, cast

from .fingerprint import fingerprint
from .model import (
    ActionProperty,
    CanonicalForm,
    Components,
    Cut,
    GroupStep,
    Property,
    Transition,
    TransitionGroup,
)

S = TypeVar("S")


class PlainModel(ABC, Generic[S]):
    """The base of a model whose state is one value and whose steps are a function of it.

    Subclasses give `name`, `initial_states` and `transitions` (which may list `Cut(bound)`
    for a step a bound leaves out), and override `representative`, `is_end` and `properties`
    where they need to. Action properties with a `check` are judged here on every step, as the
    engine judges any step's findings.
    """

    name: str = "model"
    slot_names: tuple[str, ...] = ("state",)
    properties: Sequence[Property] = ()

    @abstractmethod
    def initial_states(self) -> Sequence[S]:
        """The states exploration starts from."""

    @abstractmethod
    def transitions(self, state: S) -> Sequence[Transition[S] | Cut]:
        """Every step enabled in `state`, in a deterministic order, and the bounds that cut."""

    def representative(self, state: S) -> S:
        """The canonical member of `state`'s symmetry class (the state itself by default)."""
        return state

    def is_end(self, state: S) -> bool:
        """Whether `state` may legitimately have no enabled step (never, by default)."""
        return False

    # -- the Model interface ------------------------------------------------------------------

    @property
    def groups(self) -> tuple[TransitionGroup, ...]:
        """One group: the model's transitions, with the findings of checked action properties."""
        return (TransitionGroup("transitions", (0,), (0,), self._steps, cached=False),)

    def _steps(self, state: S) -> list[GroupStep | Cut]:
        checked = [
            prop
            for prop in self.properties
            if isinstance(prop, ActionProperty) and prop.check is not None
        ]
        steps: list[GroupStep | Cut] = []
        for transition in self.transitions(state):
            if isinstance(transition, Cut):
                steps.append(transition)
                continue
            findings = transition.findings + tuple(
                (prop.name, detail)
                for prop in checked
                for detail in prop.check(state, transition)  # type: ignore[misc]
            )
            steps.append(
                GroupStep(
                    transition.label,
                    transition.action,
                    (transition.state,),
                    transition.rules,
                    findings=findings,
                )
            )
        return steps

    def initial_components(self) -> list[Components]:
        """Each initial state in a tuple of one component."""
        return [(state,) for state in self.initial_states()]

    def state_of(self, components: Components) -> S:
        """The state itself."""
        return cast(S, components[0])

    def components_of(self, state: S) -> Components:
        """The state in a tuple of one component."""
        return (state,)

    def apply_update(self, slot: int, value: Any, update: Hashable) -> Any:
        """A plain model's steps have no updates."""
        raise TypeError("a plain model's steps have no updates")

    def after_step(self, components: Components) -> Components:
        """The transitions already give their successors as they are."""
        return components

    def canonical(self, components: Components) -> Components:
        """The representative."""
        return (self.representative(components[0]),)

    omits_self_loops = False
    renames_after_step = False
    reduces = True
    canonical_form: CanonicalForm | None = None

    def component_digest(self, value: Any) -> int:
        """The state's fingerprint (so keys are the fingerprints of representatives)."""
        return fingerprint(value)

    def is_terminal(self, components: Components, cuts: frozenset[str]) -> bool:
        """A state a bound cut, or one the model says may end."""
        return bool(cuts) or self.is_end(components[0])
