"""States as people read them: each state as structured data, what changed between two states,
and which parts of a state a violated property reads.

A model may describe its states itself with `describe_state(state) -> Mapping[str, Any]`: plain
data (dicts with string keys, lists, strings, numbers, booleans, None) with one top-level
*section* per slot it describes, named after the slot (`Model.slot_names`), so that the sections
a property reads can be picked out by the slots its parts read. A model without that hook is
described generically: each slot's component (derived slots left out), dataclasses and named
tuples as dicts of their fields, tuples as lists, enums by their value.

What changed between two states is computed here, on the descriptions alone, for every model:
a dict is compared key by key, anything else as a whole value.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .derived import action_properties, invariants, liveness_properties
from .liveness import FAIR_CYCLE, GOAL_UNREACHABLE
from .model import LivenessProperty, Model, Part, Transition

S = TypeVar("S")

# How a change is named (in JSON and in the explorer).
ADDED, REMOVED, CHANGED = "added", "removed", "changed"


def describe_state(model: Model[S], state: S) -> dict[str, Any]:
    """`state` as plain data, one section per slot: the model's own `describe_state` when it
    offers one, else each non-derived slot's component as generic plain data."""
    describe = getattr(model, "describe_state", None)
    if describe is not None:
        return {str(key): plain_data(value) for key, value in describe(state).items()}
    form = model.canonical_form
    derived = {slot for slot, _, _ in form.derived} if form is not None else set()
    components = model.components_of(state)
    return {
        name: plain_data(value)
        for slot, (name, value) in enumerate(zip(model.slot_names, components, strict=True))
        if slot not in derived
    }


def plain_data(value: Any) -> Any:
    """`value` as JSON-ready data: scalars as they are, dataclasses and named tuples as dicts of
    their fields, sequences as lists, sets sorted, enums by value, bytes by length."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return plain_data(value.value)
    if isinstance(value, bytes):
        return f"{len(value)} bytes"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: plain_data(getattr(value, field.name))
            for field in dataclasses.fields(value)
        }
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: plain_data(item) for name, item in zip(value._fields, value, strict=True)}
    if isinstance(value, Mapping):
        return {str(key): plain_data(item) for key, item in value.items()}
    if isinstance(value, (frozenset, set)):
        return [plain_data(item) for item in sorted(value, key=repr)]
    if isinstance(value, (tuple, list)):
        return [plain_data(item) for item in value]
    return str(value)


# -- changes ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One difference between two descriptions: where (the keys from the top), what kind
    (added, removed, changed) and the values before and after (None where absent)."""

    path: tuple[str, ...]
    kind: str
    before: Any = None
    after: Any = None

    @property
    def section(self) -> str:
        """The top-level section the change is in."""
        return self.path[0]

    def as_json(self) -> dict[str, Any]:
        """The change as JSON data."""
        document: dict[str, Any] = {"path": list(self.path), "kind": self.kind}
        if self.kind != ADDED:
            document["before"] = self.before
        if self.kind != REMOVED:
            document["after"] = self.after
        return document


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[Change, ...]:
    """What differs from `before` to `after` (two descriptions), in the order of their keys:
    dicts compared key by key, other values as a whole."""
    return tuple(_changes(before, after, ()))


def _changes(
    before: Mapping[str, Any], after: Mapping[str, Any], prefix: tuple[str, ...]
) -> list[Change]:
    found: list[Change] = []
    for key, value in after.items():
        path = (*prefix, key)
        if key not in before:
            found.append(Change(path, ADDED, None, value))
        elif isinstance(value, dict) and isinstance(before[key], dict):
            found += _changes(before[key], value, path)
        elif value != before[key]:
            found.append(Change(path, CHANGED, before[key], value))
    found += [
        Change((*prefix, key), REMOVED, value, None)
        for key, value in before.items()
        if key not in after
    ]
    return found


# -- text ---------------------------------------------------------------------------------------


def format_value(value: Any) -> str:
    """A described value on one line: lists joined by commas, dicts in braces, None as '-'."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(format_value(item) for item in value) if value else "none"
    if isinstance(value, dict):
        if not value:
            return "none"
        shown = [f"{key}: {format_value(item)}" for key, item in value.items() if item is not None]
        return "{" + ", ".join(shown) + "}"
    if value == "":
        return '""'
    return str(value)


def format_change(change: Change) -> str:
    """One change on one line: `path: before → after`."""
    where = ".".join(change.path)
    if change.kind == ADDED:
        return f"{where}: added {format_value(change.after)}"
    if change.kind == REMOVED:
        return f"{where}: removed (was {format_value(change.before)})"
    return f"{where}: {format_value(change.before)} → {format_value(change.after)}"


@dataclass(frozen=True)
class DescriptionLine:
    """One line of a description printed as a tree: its depth, its text (`key: value`, or
    `key:` above a nested dict) and whether its path is one that changed."""

    depth: int
    text: str
    changed: bool


def description_lines(
    description: Mapping[str, Any],
    changed: frozenset[tuple[str, ...]] = frozenset(),
    path: tuple[str, ...] = (),
) -> list[DescriptionLine]:
    """A description as a tree of lines: a non-empty dict under its key, anything else on the
    key's line; a line is marked changed when its path, or a path above it, is in `changed`."""
    lines: list[DescriptionLine] = []
    for key, value in description.items():
        where = (*path, key)
        marked = any(where[: len(p)] == p for p in changed)
        if isinstance(value, dict) and value:
            lines.append(DescriptionLine(len(path), f"{key}:", marked))
            lines += description_lines(value, changed, where)
        else:
            lines.append(DescriptionLine(len(path), f"{key}: {format_value(value)}", marked))
    return lines


def format_description(
    description: Mapping[str, Any],
    indent: str = "",
    *,
    changed: frozenset[tuple[str, ...]] = frozenset(),
) -> list[str]:
    """A description as indented lines (see `description_lines`); a changed line is starred in
    the margin, so starred and plain lines stay aligned."""
    formatted = []
    for line in description_lines(description, changed):
        inner = indent + "  " * line.depth
        if line.changed:
            inner = (inner[:-2] if len(inner) >= 2 else "") + "* "
        formatted.append(inner + line.text)
    return formatted


# -- what a property reads ----------------------------------------------------------------------


# A liveness property's `applies` when it applies everywhere: it reads nothing.
_APPLIES_EVERYWHERE = next(
    field.default for field in dataclasses.fields(LivenessProperty) if field.name == "applies"
)


def _slots_of(model: Model[Any], atom: Part | object) -> tuple[int, ...]:
    if isinstance(atom, Part):
        return atom.reads
    return tuple(range(len(model.slot_names)))


def property_slots(model: Model[Any], kind: str, name: str) -> tuple[int, ...]:
    """The slots the property `name` (of `kind`) reads, each once in slot order: its parts'
    (every slot for a check of the whole state), or an action property's declared `reads`."""
    slots: list[int] = []
    if kind == "invariant":
        for invariant in invariants(model):
            if invariant.name == name:
                atoms: Sequence[Part | object] = invariant.parts or (invariant.check,)
                for atom in atoms:
                    slots += _slots_of(model, atom)
    elif kind in ("liveness", GOAL_UNREACHABLE, FAIR_CYCLE):
        for prop in liveness_properties(model):
            if prop.name == name:
                slots += _slots_of(model, prop.goal)
                if prop.applies is not _APPLIES_EVERYWHERE:
                    slots += _slots_of(model, prop.applies)
    elif kind == "action":
        for action in action_properties(model):
            if action.name == name:
                slots += action.reads
    return tuple(sorted(set(slots)))


def read_sections(
    model: Model[Any],
    description: Mapping[str, Any],
    kind: str,
    name: str,
    last_changes: Sequence[Change] = (),
) -> tuple[str, ...]:
    """The sections of `description` the property reads: those named after the slots its parts
    read; for an action property (judged on a step), its declared slots and the sections the
    violating step changed (`last_changes`)."""
    names = {model.slot_names[slot] for slot in property_slots(model, kind, name)}
    if kind == "action":
        names |= {change.section for change in last_changes}
    return tuple(section for section in description if section in names)


# -- a run, described ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DescribedStep:
    """One step of a run: its number (from 1), label, action kind, the state after it and what
    changed from the state before."""

    number: int
    label: str
    action: str
    state: dict[str, Any]
    changes: tuple[Change, ...]


@dataclass(frozen=True)
class DescribedRun(Generic[S]):
    """A run with every state described: the initial state, then each step."""

    initial: dict[str, Any]
    steps: tuple[DescribedStep, ...]

    def state(self, number: int) -> dict[str, Any]:
        """The state after step `number` (0: the initial state)."""
        return self.steps[number - 1].state if number else self.initial


def describe_run(model: Model[S], initial: S, steps: Sequence[Transition[S]]) -> DescribedRun[S]:
    """The run `initial`, `steps` of `model` with each state described and each step's
    changes."""
    described: list[DescribedStep] = []
    before = describe_state(model, initial)
    first = before
    for number, step in enumerate(steps, start=1):
        after = describe_state(model, step.state)
        described.append(
            DescribedStep(number, step.label, step.action, after, changes(before, after))
        )
        before = after
    return DescribedRun(first, tuple(described))


def violating_step(kind: str, steps: int) -> int | None:
    """The number of the step a violation of `kind` is found at, in a run of `steps` steps
    (0: the initial state): the last, for an invariant, an action property, a deadlock or a
    state from which a liveness goal is unreachable; None for a fair cycle (no one step)."""
    if kind == FAIR_CYCLE:
        return None
    return steps
