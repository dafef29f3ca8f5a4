"""State vectors and transition groups: the interface the engine explores (LTSmin's PINS).

A model's state is a fixed-length vector of *components* (a coordinator, each client, a clock,
a budget), each an immutable value. Its steps are partitioned into *transition groups*; a group
reads a few slots of the vector and writes a few, and its step function sees only the values it
reads. Because a group's steps depend on nothing else, the engine remembers them by the
projection of the vector on the slots the group reads, and calls the model only the first time
it meets a projection. Most steps of a large state space are steps of a few parts seen before,
so the model's own code runs a small fraction of the times the search takes a step.

A group's step says what it writes: a new value for every slot in `writes`, and optionally
*updates* of other slots (append a response to a client's inbound queue, say): a hashable
description applied by the model's `apply_update` to whatever that slot holds, remembered by
(slot value, update) in turn. So a coordinator step can deliver a response to any client
without reading every client.

Properties have read sets too (`Label`), so an invariant of the coordinator alone is judged once
per coordinator, not once per state. Canonical forms (symmetry, renaming) are the model's
`canonical`, working on the vector of components; it may remember what it likes by component.

Any `Model` that offers only the plain interface of `checker.model` is explored through
`plain_vector_model`: a vector of one slot (the whole state) with one group.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, cast

from .fingerprint import fingerprint
from .model import (
    LivenessProperty,
    Model,
    Transition,
    liveness_properties,
)

S = TypeVar("S")
Values = tuple[Any, ...]


@dataclass(frozen=True)
class Cut:
    """A step the model leaves out because it would break a bound (`bound` names it)."""

    bound: str


@dataclass(frozen=True)
class GroupStep:
    """One step of a group: what people read, the action kind, the new values of the group's
    `writes` (in order), updates of other slots, the spec rules it fired, and the findings of
    action properties on it: (property name, detail) pairs, empty when the step is correct."""

    label: str
    action: str
    written: Values
    rules: tuple[str, ...] = ()
    updates: tuple[tuple[int, Hashable], ...] = ()
    findings: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Group:
    """A transition group: the slots it reads, the slots it writes (a subset of what it reads
    or slots whose new value does not depend on the old one), and its step function, called
    with the values of `reads` in order. `cached` false means the engine calls the model every
    time (a group that reads nearly everything would only fill memory)."""

    name: str
    reads: tuple[int, ...]
    writes: tuple[int, ...]
    step: Callable[..., Sequence[GroupStep | Cut]]
    cached: bool = True


@dataclass(frozen=True)
class Label:
    """A function of a few slots: an invariant (returns its problems) or a liveness atom
    (returns a bool), remembered by the projection of the vector on `reads` unless `cached` is
    false (a label over most of the vector would only fill memory)."""

    name: str
    reads: tuple[int, ...]
    evaluate: Callable[..., Any]
    cached: bool = True


@dataclass(frozen=True)
class LivenessLabels:
    """A liveness property's atoms as labels; `cut_bounds` names the bounds whose cut steps
    mark a state as cut short (see `LivenessProperty.cut_short`)."""

    prop: LivenessProperty[Any]
    goal: Label
    applies: Label
    cut_bounds: frozenset[str] = frozenset()
    cut_label: Label | None = None


class CanonicalForm(Protocol):
    """How a model's vectors become canonical piece by piece, so that the engine remembers
    every piece by component instead of canonicalizing whole states (symmetry on the vector,
    as LTSmin does it). Three kinds of pieces, each a pure function of one component (and a
    small key):

    - names a step leaves arbitrary (member ids): every component of `renamed_slots` says
      which names it holds; the union of those names determines a renaming (`renaming`), which
      `rename` applies to each of those components. This is part of a step (`after_step`).
    - per-slot normal forms (a client's correlation ids renumbered): `normal` gives each slot
      of `normalized_slots` its normal form and a token saying how references to it are
      renamed; `retarget` renames the references held by each slot of `referring_slots`.
    - symmetry: the slots of each of `classes` are interchangeable; they are sorted by
      `order_key` (of their normal forms), and `permute` renames the references the
      `referring_slots` hold when slots move. When two slots of a class have equal keys, the
      engine asks the model's `canonical` for the whole vector instead.

    `derived` slots hold a function of other slots (kept in the vector so that a group can read
    it instead of them); the engine recomputes each after a step from the slots it reads.
    """

    renamed_slots: tuple[int, ...]
    normalized_slots: tuple[int, ...]
    referring_slots: tuple[int, ...]
    classes: tuple[tuple[int, ...], ...]
    derived: tuple[tuple[int, tuple[int, ...], Callable[..., Any]], ...]

    def names(self, slot: int, value: Any) -> frozenset[str]:
        """The arbitrary names a component holds."""
        ...

    def renaming(self, names: frozenset[str]) -> Hashable:
        """The renaming (a hashable description) of a state whose names are `names`."""
        ...

    def rename(self, slot: int, value: Any, renaming: Hashable) -> Any:
        """A component with a renaming applied."""
        ...

    def normal(self, slot: int, value: Any) -> tuple[Any, Hashable | None]:
        """A slot's normal form, and the token that renames references to it (None: none)."""
        ...

    def retarget(self, slot: int, value: Any, tokens: tuple[Hashable | None, ...]) -> Any:
        """A referring slot's component with the normalized slots' tokens applied."""
        ...

    def order_key(self, value: Any) -> Any:
        """How interchangeable components sort (of normal forms)."""
        ...

    def permute(self, slot: int, value: Any, order: tuple[int, ...]) -> Any:
        """A referring slot's component after the vector's slots were permuted: the new
        vector's slot j holds the old vector's slot `order[j]`."""
        ...


class VectorModel(Protocol[S]):
    """A model whose states are vectors of components and whose steps come in groups.

    It is also a `checker.model.Model` over its state objects (`state_of` builds one from the
    component values), which counterexamples, diagrams and properties read.
    """

    @property
    def slot_names(self) -> tuple[str, ...]:
        """One name per slot of the vector, for reports."""
        ...

    @property
    def groups(self) -> Sequence[Group]:
        """Every transition group, in the order their steps are listed."""
        ...

    def initial_vectors(self) -> Sequence[Values]:
        """The component values of each initial state (not yet canonical)."""
        ...

    def state_of(self, values: Values) -> S:
        """The state object of a vector of component values."""
        ...

    def vector_of(self, state: S) -> Values:
        """The component values of a state object."""
        ...

    def apply_update(self, slot: int, value: Any, update: Hashable) -> Any:
        """`value` (of `slot`) after `update`, one of a group step's updates."""
        ...

    def after_step(self, values: Values) -> Values:
        """A successor as the model's steps leave it: renaming that belongs to the step (the
        group world renumbers member ids) applied; the vector itself for most models."""
        ...

    def canonical(self, values: Values) -> Values:
        """The canonical vector of the state's class (the vector itself without symmetry)."""
        ...

    @property
    def omits_self_loops(self) -> bool:
        """Whether a step whose successor (after `after_step`) is the state itself is left out."""
        ...

    @property
    def renames_after_step(self) -> bool:
        """Whether `after_step` may change a vector (else the engine never calls it)."""
        ...

    @property
    def reduces(self) -> bool:
        """Whether `canonical` may change a vector (symmetry; else the engine never calls it)."""
        ...

    def component_digest(self, value: Any) -> int:
        """A stable 64-bit digest of a component value (equal values, equal digests)."""
        ...

    def is_terminal_vector(self, values: Values, cuts: frozenset[str]) -> bool:
        """Whether a state with no step may legitimately end there (`cuts`: bounds that cut)."""
        ...

    @property
    def invariant_labels(self) -> Sequence[Label]:
        """The invariants, each over the slots it reads."""
        ...

    @property
    def canonical_form(self) -> CanonicalForm | None:
        """The pieces of `after_step` and `canonical`, for the engine to remember one by one
        (None: the engine calls them on whole vectors)."""
        ...

    @property
    def liveness_labels(self) -> Sequence[LivenessLabels]:
        """The liveness properties' atoms, over the slots they read."""
        ...

    @property
    def action_property_names(self) -> Sequence[str]:
        """The action properties whose findings the groups report, in report order."""
        ...


_VECTOR_INTERFACE = (
    "slot_names",
    "groups",
    "initial_vectors",
    "state_of",
    "vector_of",
    "canonical",
    "invariant_labels",
)


def is_vector_model(model: object) -> bool:
    """Whether `model`'s class offers the state-vector interface (else it is a plain Model;
    a wrapper that forwards attributes to a vector model is not one)."""
    kind = type(model)
    return all(hasattr(kind, name) for name in _VECTOR_INTERFACE)


@dataclass
class PlainVectorModel(Generic[S]):
    """A plain `Model` as a vector of one slot, its whole (representative) state, with one
    group: the model's transitions, judged by its action properties. Nothing is remembered
    across states (each state is expanded once), so this costs what the model costs."""

    model: Model[S]
    slot_names: tuple[str, ...] = ("state",)
    groups: tuple[Group, ...] = field(init=False)
    invariant_labels: tuple[Label, ...] = field(init=False)
    liveness_labels: tuple[LivenessLabels, ...] = field(init=False)
    action_property_names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        model = self.model
        self.groups = (Group("transitions", (0,), (0,), self._steps, cached=False),)
        self.invariant_labels = tuple(
            Label(invariant.name, (0,), invariant.check) for invariant in model.invariants
        )
        self.action_property_names = tuple(prop.name for prop in model.action_properties)
        self.liveness_labels = tuple(
            LivenessLabels(
                prop,
                Label(prop.name, (0,), prop.goal),
                Label(prop.name, (0,), prop.applies),
                cut_label=Label(prop.name, (0,), prop.cut_short),
            )
            for prop in liveness_properties(model)
        )

    @property
    def name(self) -> str:
        """The model's name."""
        return self.model.name

    def _steps(self, state: S) -> list[GroupStep | Cut]:
        steps: list[GroupStep | Cut] = []
        properties = self.model.action_properties
        for transition in self.model.transitions(state):
            findings = tuple(
                (prop.name, detail)
                for prop in properties
                for detail in prop.check(state, transition)
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

    def initial_vectors(self) -> list[Values]:
        """Each initial state as a vector of one slot."""
        return [(state,) for state in self.model.initial_states()]

    def state_of(self, values: Values) -> S:
        """The state itself."""
        return cast(S, values[0])

    def vector_of(self, state: S) -> Values:
        """The state in a vector of one slot."""
        return (state,)

    def apply_update(self, slot: int, value: Any, update: Hashable) -> Any:
        """A plain model has no updates."""
        raise TypeError("a plain model's steps have no updates")

    def after_step(self, values: Values) -> Values:
        """The model's transitions already give their successors as they are."""
        return values

    def canonical(self, values: Values) -> Values:
        """The model's representative."""
        return (self.model.representative(values[0]),)

    omits_self_loops = False
    renames_after_step = False
    reduces = True
    canonical_form = None

    def component_digest(self, value: Any) -> int:
        """The state's fingerprint (so keys are the fingerprints of representatives)."""
        return fingerprint(value)

    def is_terminal_vector(self, values: Values, cuts: frozenset[str]) -> bool:
        """The model's own judgement."""
        return self.model.is_terminal(values[0])


def vector_model(model: Model[S]) -> VectorModel[S]:
    """`model`'s state-vector interface: its own, or one slot holding the whole state."""
    if is_vector_model(model):
        return cast("VectorModel[S]", model)
    return cast("VectorModel[S]", PlainVectorModel(model))


def transitions_of_groups(model: VectorModel[S], state: S) -> list[Transition[S]]:
    """The plain `Model.transitions` of a vector model: every group's steps on the state's
    components, as transitions to (not yet canonical) state objects, in group order; steps that
    change nothing are left out, as the engine leaves them out."""
    values = model.vector_of(state)
    transitions: list[Transition[S]] = []
    for group in model.groups:
        for step in group.step(*[values[slot] for slot in group.reads]):
            if isinstance(step, Cut):
                continue
            successor = model.after_step(apply_step(model, values, group, step))
            if not model.omits_self_loops or successor != values:
                transitions.append(
                    Transition(step.label, step.action, model.state_of(successor), step.rules)
                )
    return transitions


def apply_step(model: VectorModel[Any], values: Values, group: Group, step: GroupStep) -> Values:
    """The vector of component values after a group step (writes, then updates)."""
    new = list(values)
    for slot, value in zip(group.writes, step.written, strict=True):
        new[slot] = value
    for slot, update in step.updates:
        new[slot] = model.apply_update(slot, new[slot], update)
    return tuple(new)


def cuts_of(model: VectorModel[Any], values: Values) -> frozenset[str]:
    """The bounds that cut some step of the state with these component values."""
    return frozenset(
        step.bound
        for group in model.groups
        for step in group.step(*[values[slot] for slot in group.reads])
        if isinstance(step, Cut)
    )
