"""The one interface every engine explores: a model's states, its steps, its properties.

A model is a finite transition system. Its states are held as a fixed tuple of *components*,
one per *slot* (a coordinator, each client, a clock, a budget), each an immutable value with a
deterministic `repr` (frozen dataclasses, tuples, strings, numbers, enums; never sets or dicts,
whose order is not canonical). Its steps come in *transition groups*: a group reads a few slots
and writes a few, and its step function sees only the components it reads, so the engine
remembers a group's steps by those components and calls the model only the first time it meets
them (LTSmin's PINS). A model with nothing to gain from slots is written as a `PlainModel`
(checker/plain.py): one slot holding the whole state, its steps a function of the state.

Properties are declared once, in the model's `properties`: each `Invariant`, `ActionProperty`
and `LivenessProperty` has its name, a description, the slots it reads where that matters (its
`Part`s) and its check. Everything else (the engine's remembered labels, judging a whole state
for a counterexample or a random walk) is derived from that declaration by the checker
(checker/derived.py), never written a second time by the model's author.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

S = TypeVar("S")
Components = tuple[Any, ...]
# A finding of an action property: (property name, what is wrong).
Finding = tuple[str, str]


@dataclass(frozen=True, init=False)
class Transition(Generic[S]):
    """One enabled step: a label people read, the action kind counted for coverage, the
    successor state, the specification rules it fired (for rule coverage), and the findings of
    the action properties it broke ((name, detail) pairs, empty when the step is correct)."""

    label: str
    action: str
    state: S
    rules: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()

    def __init__(
        self,
        label: str,
        action: str,
        state: S,
        rules: tuple[str, ...] = (),
        findings: tuple[Finding, ...] = (),
    ) -> None:
        # Models build millions of these; filling the instance dict directly costs a third of
        # the generated frozen __init__ (one object.__setattr__ per field).
        fields = self.__dict__
        fields["label"] = label
        fields["action"] = action
        fields["state"] = state
        fields["rules"] = rules
        fields["findings"] = findings


# -- steps ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cut:
    """A step the model leaves out because it would break a bound (`bound` names it)."""

    bound: str


@dataclass(frozen=True)
class GroupStep:
    """One step of a transition group: what people read, the action kind, the new components of
    the group's `writes` (in order), updates of other slots, the spec rules it fired, and the
    findings of the action properties the model's steps report."""

    label: str
    action: str
    written: Components
    rules: tuple[str, ...] = ()
    updates: tuple[tuple[int, Hashable], ...] = ()
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class TransitionGroup:
    """A transition group: the slots it reads, the slots it writes (a subset of what it reads,
    or slots whose new component does not depend on the old one), and its step function, called
    with the components of `reads` in order. A step may also *update* other slots (append a
    response to a client's inbound queue, say): a hashable description the model's
    `apply_update` applies to whatever that slot holds. `cached` false means the engine calls
    the model every time (a group that reads nearly everything would only fill memory)."""

    name: str
    reads: tuple[int, ...]
    writes: tuple[int, ...]
    step: Callable[..., Sequence[GroupStep | Cut]]
    cached: bool = True


# -- properties -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """A piece of a property's check: a function of the components in `reads`, remembered by
    them unless `cached` is false (a part over most of the state would only fill memory). An
    invariant's part returns what is wrong (a sequence of strings); a liveness atom's returns a
    bool. A property made of several parts holds where every part does."""

    reads: tuple[int, ...]
    evaluate: Callable[..., Any]
    cached: bool = True


@dataclass(frozen=True)
class Invariant(Generic[S]):
    """A property every reachable state must have.

    Either `check` judges the whole state object (what is wrong, one string each; empty when it
    holds), or `parts` judge a few components each, which lets the engine judge each part once
    per combination of the components it reads instead of once per state.
    """

    name: str
    description: str
    check: Callable[[S], Sequence[str]] | None = None
    parts: tuple[Part, ...] = ()

    def __post_init__(self) -> None:
        if (self.check is None) == (not self.parts):
            raise ValueError(f"invariant {self.name}: give either check or parts, not both")


@dataclass(frozen=True)
class ActionProperty(Generic[S]):
    """A property of every step.

    With `check`, the checker judges each step: `check(before, transition)` returns what is
    wrong. Without it, the model's own steps report it: a step that breaks it carries
    `(name, detail)` findings (`GroupStep.findings`), which is how a model judges a step by
    what the step produced (responses, callbacks) that the successor state does not keep. The
    engine refuses a finding whose name no action property declares.

    `reads` names the slots the judgement is about, for reports (a counterexample shows them
    after the step that broke the property, besides what the step changed); the engine does not
    use it.
    """

    name: str
    description: str
    check: Callable[[S, Transition[S]], Sequence[str]] | None = None
    reads: tuple[int, ...] = ()


def _always(state: Any) -> bool:
    return True


@dataclass(frozen=True)
class LivenessProperty(Generic[S]):
    """A leads-to property: `applies` leads to `goal` under weak fairness.

    From every state where `applies` holds, `goal` must be reachable, and every infinite run that
    is weakly fair to the steps whose action kind is in `fair_actions` must reach it. With
    `fair_per_label` each label (one action on particular arguments, such as one RM's receive) is
    its own fairness class, like TLA+'s `\\A r: WF_vars(A(r))`; otherwise all steps of one action
    kind form a single class. `goal` and `applies` are functions of the state object or `Part`s
    of a few slots; they see canonical states, so they must not depend on which interchangeable
    identity is which. `applies` should stay true once true (for example "every fault has been
    used"); states before it are only the way in.

    `cut_short_by` names bounds of the model: a state where one of them cut a step is where the
    model's bounds cut the run (the next rebalance would exceed the generation bound, say), so
    what a real system does after it is outside the model, and a run reaching it is neither a
    success nor a failure. Such states are counted, so a bound too tight to show anything is
    visible.
    """

    name: str
    description: str
    goal: Callable[[S], bool] | Part
    applies: Callable[[S], bool] | Part = _always
    fair_actions: frozenset[str] = frozenset()
    fair_per_label: bool = True
    cut_short_by: frozenset[str] = field(default_factory=frozenset)


Property = Invariant[Any] | ActionProperty[Any] | LivenessProperty[Any]


# -- canonical forms --------------------------------------------------------------------------


class CanonicalForm(Protocol):
    """How a model's states become canonical piece by piece, so that the engine remembers every
    piece by component instead of canonicalizing whole states (symmetry on the components, as
    LTSmin does it). Three kinds of pieces, each a pure function of one component (and a small
    key):

    - names a step leaves arbitrary (member ids): every component of `renamed_slots` says
      which names it holds; the union of those names determines a renaming (`renaming`), which
      `rename` applies to each of those components. This is part of a step (`after_step`).
    - per-slot normal forms (a client's correlation ids renumbered): `normal` gives each slot
      of `normalized_slots` its normal form and a token saying how references to it are
      renamed; `retarget` renames the references held by each slot of `referring_slots`.
    - symmetry: the slots of each of `classes` are interchangeable; they are sorted by
      `order_key` (of their normal forms), and `permute` renames the references the
      `referring_slots` hold when slots move. When two slots of a class have equal keys, the
      engine asks the model's `canonical` for the whole state instead.

    `derived` slots hold a function of other slots (kept so that a group can read it instead of
    them); the engine recomputes each after a step from the slots it reads.
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
        """A referring slot's component after the slots were permuted: the new state's slot j
        holds the old state's slot `order[j]`."""
        ...


# -- the model --------------------------------------------------------------------------------


class Model(Protocol[S]):
    """A finite transition system with properties, explorable by every engine.

    `state_of` and `components_of` convert between the state objects people, properties and
    counterexamples read and the components the engine stores; everything a plain exploration
    needs (a state's transitions, its canonical representative, whether it may end there) is
    derived from the groups by checker/derived.py.
    """

    @property
    def name(self) -> str:
        """A short name shown in reports."""
        ...

    @property
    def slot_names(self) -> tuple[str, ...]:
        """One name per slot, for reports."""
        ...

    @property
    def groups(self) -> Sequence[TransitionGroup]:
        """Every transition group, in the order their steps are listed."""
        ...

    @property
    def properties(self) -> Sequence[Property]:
        """Every property, each declared once: invariants, action properties, liveness."""
        ...

    def initial_components(self) -> Sequence[Components]:
        """The components of each initial state (not yet canonical)."""
        ...

    def state_of(self, components: Components) -> S:
        """The state object of a tuple of components."""
        ...

    def components_of(self, state: S) -> Components:
        """The components of a state object."""
        ...

    def apply_update(self, slot: int, value: Any, update: Hashable) -> Any:
        """`value` (of `slot`) after `update`, one of a group step's updates."""
        ...

    def after_step(self, components: Components) -> Components:
        """A successor as the model's steps leave it: renaming that belongs to the step (the
        group world renumbers member ids) applied; the components themselves for most models."""
        ...

    def canonical(self, components: Components) -> Components:
        """The canonical components of the state's class (themselves without symmetry)."""
        ...

    @property
    def omits_self_loops(self) -> bool:
        """Whether a step whose successor (after `after_step`) is the state itself is left out."""
        ...

    @property
    def renames_after_step(self) -> bool:
        """Whether `after_step` may change a state (else the engine never calls it)."""
        ...

    @property
    def reduces(self) -> bool:
        """Whether `canonical` may change a state (symmetry; else the engine never calls it)."""
        ...

    def component_digest(self, value: Any) -> int:
        """A stable 64-bit digest of a component (equal values, equal digests)."""
        ...

    def is_terminal(self, components: Components, cuts: frozenset[str]) -> bool:
        """Whether a state with no step may legitimately end there (`cuts`: bounds that cut one
        of its steps); otherwise it is a deadlock."""
        ...

    @property
    def canonical_form(self) -> CanonicalForm | None:
        """The pieces of `after_step` and `canonical`, for the engine to remember one by one
        (None: the engine calls them on whole states)."""
        ...
