"""Swarm spaces: TOML files that declare the configurations `groupspec swarm` draws and checks.

A space names one or more base presets and, per parameter, the values to draw from; each
configuration is one preset with one value of every listed parameter, checked within the
space's budget (docs/swarm.md):

```toml
[swarm]
description = "two reference worlds with their bounds and budgets varied"
preset = ["eager-2", "static-2"]     # a preset name or file, or a list of them

[budget]                             # per configuration; at least one of the two
max_states = 20000
max_seconds = 60

[parameters]                         # the values to draw from, per parameter
max_generation = { min = 1, max = 3 }        # an inclusive range of ints
evictions = [0, 1]                           # a list of values of the parameter's type
assignors = [["range"], ["cooperative-sticky"]]  # a list parameter: a list of lists
fault = ["", "KAFKA-2555"]                   # fault switches are parameters too
```

Every value is checked when the space is read, against the declaration the presets' own
parameters are checked against (models/parameters.py): its type, that `--set` can say it, and
that it is possible with at least one of the space's presets, the preset's other parameters
unchanged. Combinations can still be impossible (two static clients in a world of one); the
drawing skips them (`parameters_with`). Anything wrong raises `SpaceError`, whose message names
the file and the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from math import prod
from pathlib import Path
from typing import Any

from .parameters import Parameter, ParameterError, coerce, parse_override
from .presets import KINDS, Preset, PresetError, named_file, names_in, read_preset, toml_document

# Resolved: an editable install reaches this module through a link tree.
SPACE_DIRECTORY = Path(__file__).resolve().parent / "swarms"
DEFAULT_SPACE = "default"
_TABLES = ("swarm", "budget", "parameters")
_SWARM_KEYS = ("description", "preset")
_BUDGET_KEYS = ("max_states", "max_seconds")
_RANGE_KEYS = ("min", "max")
# Values one range may hold (each is checked against every preset of the space).
MAX_RANGE = 1000


class SpaceError(PresetError):
    """A swarm space that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Budget:
    """What one configuration's check may spend: distinct states, seconds (None: no limit)."""

    max_states: int | None = None
    max_seconds: float | None = None


@dataclass(frozen=True)
class Dimension:
    """One parameter of a space: the values drawn from, and each as `--set` writes it."""

    key: str
    values: tuple[object, ...]
    texts: tuple[str, ...]


@dataclass(frozen=True)
class Space:
    """A loaded space: its base presets (with the names `check` takes), the parameters to vary,
    and the per-configuration budget."""

    name: str
    path: Path
    description: str
    presets: tuple[Preset, ...]
    preset_names: tuple[str, ...]
    dimensions: tuple[Dimension, ...]
    budget: Budget

    @property
    def size(self) -> int:
        """How many combinations (preset and one value per parameter) the space holds,
        possible or not."""
        return len(self.presets) * prod(len(item.values) for item in self.dimensions)


def space_names() -> tuple[str, ...]:
    """The spaces shipped in models/swarms, sorted."""
    return names_in(SPACE_DIRECTORY)


def set_text(value: object) -> str:
    """A parameter value as `--set name=<text>` writes it (lists comma-separated)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(str(item) for item in value)
    return str(value)


def parameters_with(preset: Preset, values: Mapping[str, object]) -> Any:
    """The preset's parameters with `values` set; ParameterError or ValueError when the
    combination is impossible (the check `read_preset` makes of `--set` overrides)."""
    parameters = replace(preset.parameters, **values)
    KINDS[preset.kind].validate(parameters)
    return parameters


def read_space(name_or_path: str | Path) -> Space:
    """The space (by name in models/swarms, or by path), every key and value checked; raises
    PresetError (SpaceError for the space's own keys) naming the file and the key."""
    path = named_file(name_or_path, SPACE_DIRECTORY, "swarm space")
    if not path.exists():
        raise SpaceError(path, None, "no such swarm space file")
    document = toml_document(path, "swarm space")
    _check_tables(path, document)
    swarm, budget = document["swarm"], document.get("budget", {})
    description = swarm.get("description", "")
    if not isinstance(description, str) or not description.strip():
        raise SpaceError(path, "[swarm] description", f"expected a sentence, got {description!r}")
    names, presets = _presets(path, swarm.get("preset"))
    declared = KINDS[presets[0].kind].parameters
    dimensions = tuple(
        _dimension(path, declared, presets, key, given)
        for key, given in document.get("parameters", {}).items()
    )
    return Space(path.stem, path, description, presets, names, dimensions, _budget(path, budget))


def _check_tables(path: Path, document: Mapping[str, Any]) -> None:
    for table in document:
        if table not in _TABLES:
            raise SpaceError(
                path, table, "unknown table; a space has [swarm], [budget] and [parameters]"
            )
        if not isinstance(document[table], dict):
            raise SpaceError(path, f"[{table}]", "must be a table")
    for table, keys in (("swarm", _SWARM_KEYS), ("budget", _BUDGET_KEYS)):
        if table not in document:
            raise SpaceError(path, f"[{table}]", "missing")
        for key in document[table]:
            if key not in keys:
                raise SpaceError(path, f"[{table}] {key}", f"unknown key; known: {', '.join(keys)}")


def _presets(path: Path, given: object) -> tuple[tuple[str, ...], tuple[Preset, ...]]:
    where = "[swarm] preset"
    names = [given] if isinstance(given, str) else given
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise SpaceError(path, where, f"expected a preset name or a list of them, got {given!r}")
    if len(set(names)) != len(names):
        raise SpaceError(path, where, f"presets repeat: {names}")
    presets = []
    for name in names:
        try:
            preset = read_preset(name)
        except PresetError as error:
            raise SpaceError(path, where, str(error)) from None
        if not KINDS[preset.kind].exhaustive:
            raise SpaceError(
                path, where, f"{name} is a {preset.kind} world, unbounded: it cannot be checked"
            )
        presets.append(preset)
    kinds = sorted({preset.kind for preset in presets})
    if len(kinds) > 1:
        raise SpaceError(path, where, f"mixes kinds of models ({', '.join(kinds)})")
    return tuple(names), tuple(presets)


def _dimension(
    path: Path,
    declared: Mapping[str, Parameter],
    presets: Sequence[Preset],
    key: str,
    given: object,
) -> Dimension:
    where = f"[parameters] {key}"
    if isinstance(given, dict):
        given = _range(path, declared, key, given)
    if not isinstance(given, list) or not given:
        raise SpaceError(path, where, f"expected a list of values or a range, got {given!r}")
    values: list[object] = []
    texts: list[str] = []
    for item in given:
        try:
            value = coerce(declared, key, item)
        except ParameterError as error:
            raise SpaceError(path, where, error.message) from None
        if value in values:
            raise SpaceError(path, where, f"the value {item!r} repeats")
        text = set_text(value)
        if parse_override(declared, key, text) != value:
            raise SpaceError(path, where, f"{item!r} cannot be written as --set {key}={text}")
        _possible(path, presets, key, value)
        values.append(value)
        texts.append(text)
    return Dimension(key, tuple(values), tuple(texts))


def _range(
    path: Path, declared: Mapping[str, Parameter], key: str, given: Mapping[str, object]
) -> list[object]:
    where = f"[parameters] {key}"
    if key in declared and declared[key].kind != "int":
        raise SpaceError(
            path, where, f"a range needs an int parameter; {key} is a {declared[key].kind}"
        )
    low, high = given.get("min"), given.get("max")
    if set(given) != set(_RANGE_KEYS) or type(low) is not int or type(high) is not int:
        raise SpaceError(path, where, f"a range is {{ min = <int>, max = <int> }}, got {given!r}")
    if low > high:
        raise SpaceError(path, where, f"an empty range: min {low} is above max {high}")
    if high - low >= MAX_RANGE:
        raise SpaceError(path, where, f"a range of more than {MAX_RANGE:,} values")
    return list(range(low, high + 1))


def _possible(path: Path, presets: Sequence[Preset], key: str, value: object) -> None:
    """Raise SpaceError when `value` of `key` is impossible with every preset of the space."""
    reasons = []
    for preset in presets:
        try:
            parameters_with(preset, {key: value})
            return
        except ParameterError as error:
            reasons.append(f"{preset.name}: {error.key}: {error.message}")
        except ValueError as error:
            reasons.append(f"{preset.name}: {error}")
    raise SpaceError(
        path, f"[parameters] {key}", f"{set_text(value)!r} is impossible ({'; '.join(reasons)})"
    )


def _budget(path: Path, table: Mapping[str, object]) -> Budget:
    states, seconds = table.get("max_states"), table.get("max_seconds")
    if states is None and seconds is None:
        raise SpaceError(path, "[budget]", "needs max_states, max_seconds or both")
    if states is not None and (type(states) is not int or states < 1):
        raise SpaceError(
            path, "[budget] max_states", f"expected a count of at least 1, got {states!r}"
        )
    if seconds is not None and (
        isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0
    ):
        raise SpaceError(
            path, "[budget] max_seconds", f"expected a positive number, got {seconds!r}"
        )
    return Budget(states, None if seconds is None else float(seconds))
