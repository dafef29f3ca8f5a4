"""What the checker derives from a model's one interface (checker/model.py).

The engine needs each property as *labels*: functions of a few slots it can remember by the
components they read. Counterexamples, replays, random walks and diagrams need the plain view of
a model: a state's transitions, its representative, whether it may end, and each property
judged on a whole state object. Both come from the model's groups and its one declaration of
each property; a model's author writes neither.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from .model import (
    ActionProperty,
    Components,
    Cut,
    GroupStep,
    Invariant,
    LivenessProperty,
    Model,
    Part,
    Transition,
    TransitionGroup,
)
from .plain import PlainModel

S = TypeVar("S")


class UndeclaredPropertyError(ValueError):
    """A step reported a finding under a name no action property of the model declares (the
    finding would otherwise be silently dropped)."""


class PropertyDeclarationError(ValueError):
    """A property declared in a way the engine cannot judge (it would never be checked)."""


def check_declarations(model: Model[Any]) -> None:
    """Raise `PropertyDeclarationError` for a declaration the engine would not judge: an action
    property with a `check` on a model that is not a `PlainModel` (its steps are remembered by
    the components they read, so nothing sees the whole states of a step: such a model's steps
    report their findings themselves)."""
    if isinstance(model, PlainModel):
        return
    for prop in action_properties(model):
        if prop.check is not None:
            raise PropertyDeclarationError(
                f"model {model.name!r}: action property {prop.name!r} has a check, but a model"
                " of transition groups judges its steps where it computes them: report the"
                " property's findings from the steps (GroupStep.findings) and declare it"
                " without a check"
            )


# -- the properties, by kind -------------------------------------------------------------------


def invariants(model: Model[Any]) -> tuple[Invariant[Any], ...]:
    """The model's invariants, in declaration order."""
    return tuple(prop for prop in model.properties if isinstance(prop, Invariant))


def action_properties(model: Model[Any]) -> tuple[ActionProperty[Any], ...]:
    """The model's action properties, in declaration order."""
    return tuple(prop for prop in model.properties if isinstance(prop, ActionProperty))


def liveness_properties(model: Model[Any]) -> tuple[LivenessProperty[Any], ...]:
    """The model's liveness properties, in declaration order."""
    return tuple(prop for prop in model.properties if isinstance(prop, LivenessProperty))


def action_property_names(model: Model[Any]) -> tuple[str, ...]:
    """The names a step's findings may carry, each once, in declaration order."""
    return tuple(dict.fromkeys(prop.name for prop in action_properties(model)))


def check_findings(model: Model[Any], group: str, step: GroupStep) -> None:
    """Raise `UndeclaredPropertyError` if `step` (of `group`) reports an undeclared name."""
    declared = action_property_names(model)
    for name, _ in step.findings:
        if name not in declared:
            raise UndeclaredPropertyError(
                f"a step of {group!r} in model {model.name!r} reports a finding of {name!r},"
                f" which none of its action properties declares (declared: {', '.join(declared)})"
            )


# -- labels: what the engine evaluates and remembers ------------------------------------------


@dataclass(frozen=True)
class Label:
    """A function of a few slots the engine evaluates, remembered by the components in
    `reads` unless `cached` is false: an invariant's part (returns its problems) or a liveness
    atom (returns a bool)."""

    name: str
    reads: tuple[int, ...]
    evaluate: Callable[..., Any]
    cached: bool = True


@dataclass(frozen=True)
class LivenessLabels:
    """A liveness property's atoms as labels, and the bounds whose cut steps mark a state as
    cut short (`LivenessProperty.cut_short_by`)."""

    prop: LivenessProperty[Any]
    goal: Label
    applies: Label
    cut_bounds: frozenset[str] = frozenset()


def _whole_state_label(model: Model[Any], name: str, function: Callable[[Any], Any]) -> Label:
    """A check of the whole state object as a label: on the one slot of a one-slot model
    (remembered by the state), otherwise over every slot (never remembered)."""
    slots = len(model.slot_names)
    if slots == 1:
        return Label(name, (0,), function)
    state_of = model.state_of
    return Label(
        name, tuple(range(slots)), lambda *components: function(state_of(components)), False
    )


def _label(model: Model[Any], name: str, atom: Part | Callable[[Any], Any]) -> Label:
    if isinstance(atom, Part):
        return Label(name, atom.reads, atom.evaluate, atom.cached)
    return _whole_state_label(model, name, atom)


def invariant_labels(model: Model[Any]) -> tuple[Label, ...]:
    """Every invariant's parts (or whole-state check) as labels, in declaration order."""
    labels: list[Label] = []
    for invariant in invariants(model):
        if invariant.check is not None:
            labels.append(_whole_state_label(model, invariant.name, invariant.check))
        else:
            labels += [_label(model, invariant.name, part) for part in invariant.parts]
    return tuple(labels)


def liveness_labels(model: Model[Any]) -> tuple[LivenessLabels, ...]:
    """Every liveness property's goal and applies atoms as labels."""
    return tuple(
        LivenessLabels(
            prop,
            _label(model, prop.name, prop.goal),
            _label(model, prop.name, prop.applies),
            prop.cut_short_by,
        )
        for prop in liveness_properties(model)
    )


# -- the plain view: whole state objects ------------------------------------------------------


def initial_states(model: Model[S]) -> list[S]:
    """The model's initial states as state objects (not yet canonical)."""
    return [model.state_of(components) for components in model.initial_components()]


def group_steps(
    model: Model[Any], group: TransitionGroup, components: Components
) -> Sequence[GroupStep | Cut]:
    """A group's steps on a state's components."""
    return group.step(*[components[slot] for slot in group.reads])


def apply_step(
    model: Model[Any], components: Components, group: TransitionGroup, step: GroupStep
) -> Components:
    """The components after a group step (writes, then updates)."""
    new = list(components)
    for slot, value in zip(group.writes, step.written, strict=True):
        new[slot] = value
    for slot, update in step.updates:
        new[slot] = model.apply_update(slot, new[slot], update)
    return tuple(new)


def transitions_and_cuts(model: Model[S], state: S) -> tuple[list[Transition[S]], frozenset[str]]:
    """Every step of `state`, in group order, as transitions to (not yet canonical) state
    objects with their findings, and the bounds that cut a step; steps that change nothing
    where the model leaves those out are not listed (as the engine leaves them out)."""
    components = model.components_of(state)
    found: list[Transition[S]] = []
    bounds: set[str] = set()
    for group in model.groups:
        for step in group_steps(model, group, components):
            if isinstance(step, Cut):
                bounds.add(step.bound)
                continue
            successor = model.after_step(apply_step(model, components, group, step))
            if not model.omits_self_loops or successor != components:
                found.append(
                    Transition(
                        step.label,
                        step.action,
                        model.state_of(successor),
                        step.rules,
                        step.findings,
                    )
                )
    return found, frozenset(bounds)


def transitions(model: Model[S], state: S) -> list[Transition[S]]:
    """Every step of `state` (see `transitions_and_cuts`)."""
    return transitions_and_cuts(model, state)[0]


def cuts(model: Model[Any], state: Any) -> frozenset[str]:
    """The bounds that cut some step of `state`."""
    components = model.components_of(state)
    return frozenset(
        step.bound
        for group in model.groups
        for step in group_steps(model, group, components)
        if isinstance(step, Cut)
    )


def representative(model: Model[S], state: S) -> S:
    """The canonical member of `state`'s symmetry class."""
    return model.state_of(model.canonical(model.components_of(state)))


def is_end(model: Model[S], state: S) -> bool:
    """Whether `state` may legitimately have no enabled step."""
    return model.is_terminal(model.components_of(state), cuts(model, state))


def _evaluate(model: Model[Any], atom: Part | Callable[[Any], Any], state: Any) -> Any:
    if isinstance(atom, Part):
        components = model.components_of(state)
        return atom.evaluate(*[components[slot] for slot in atom.reads])
    return atom(state)


def invariant_problems(model: Model[S], invariant: Invariant[S], state: S) -> list[str]:
    """What is wrong with `state` by `invariant` (empty when it holds)."""
    if invariant.check is not None:
        return list(invariant.check(state))
    return [problem for part in invariant.parts for problem in _evaluate(model, part, state)]


def action_problems(
    model: Model[S], prop: ActionProperty[S], before: S, transition: Transition[S]
) -> list[str]:
    """What is wrong with the step `transition` from `before` by `prop` (empty when it holds)."""
    if prop.check is not None:
        return list(prop.check(before, transition))
    return [detail for name, detail in transition.findings if name == prop.name]


def holds(model: Model[S], atom: Part | Callable[[S], bool], state: S) -> bool:
    """Whether a liveness atom (a goal, where it applies) holds in `state`."""
    return bool(_evaluate(model, atom, state))


def is_cut_short(model: Model[S], prop: LivenessProperty[S], state: S) -> bool:
    """Whether the model's bounds cut the runs of `state` for `prop`."""
    return bool(prop.cut_short_by & cuts(model, state))


def named_invariant(model: Model[S], name: str) -> Invariant[S] | None:
    """The invariant called `name`, if the model declares one."""
    return next((prop for prop in invariants(model) if prop.name == name), None)


def named_action_property(model: Model[S], name: str) -> ActionProperty[S] | None:
    """The action property called `name`, if the model declares one."""
    return next((prop for prop in action_properties(model) if prop.name == name), None)


def on_whole_states(
    model: Model[S],
) -> tuple[Invariant[S] | ActionProperty[S] | LivenessProperty[S], ...]:
    """The model's properties judged on whole state objects, for a model that wraps this one's
    states in a slot of its own (a view). Action properties the steps report stay reported:
    the transitions of `transitions` carry their findings."""
    whole: list[Invariant[S] | ActionProperty[S] | LivenessProperty[S]] = []
    for prop in model.properties:
        if isinstance(prop, Invariant):
            whole.append(
                Invariant(prop.name, prop.description, partial(invariant_problems, model, prop))
            )
        elif isinstance(prop, LivenessProperty):
            whole.append(
                LivenessProperty(
                    prop.name,
                    prop.description,
                    partial(holds, model, prop.goal),
                    partial(holds, model, prop.applies),
                    prop.fair_actions,
                    prop.fair_per_label,
                    prop.cut_short_by,
                )
            )
        else:
            whole.append(prop)
    return tuple(whole)
