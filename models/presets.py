"""Presets: TOML files in `models/presets/`, read by one parser for every kind of model.

A preset states what it changes from the documented defaults, and what checking it gives:

```toml
[model]
kind = "group"                 # "group" (the default), "two-phase", "random-clients", "kip848"
description = "two dynamic consumers with the range assignor"

[parameters]                   # only what differs from the defaults (docs/checking.md)
max_in_flight = 1
check_convergence = true

[expected]                     # what `groupspec check` reports with no --set (a test keeps it)
verdict = "pass"
distinct_states = 36174
transitions = 100850
depth = 41
```

The kind says which model the parameters build: "group" is the closed group world of
`group_world.py` (parameters: `WorldParameters`), "two-phase" Lamport's two-phase commit, the
calibration model (parameters: `TwoPhaseModel`'s fields), "random-clients" protocol clients
sending any request, stale and wrong ones too, for random walks only (`ClientsParameters`; its
state space is unbounded, so it has no [expected] table and `check` refuses it), "kip848" Java
consumers and the KIP-848 coordinator (`Kip848Parameters`, models/kip848_world.py). Every key of `[parameters]` is
checked against the kind's declared parameters (models/parameters.py), and a `--set name=value`
override is parsed by the same declaration. Anything wrong (malformed TOML, an unknown table or
key, a value of the wrong type, an impossible bound) raises `PresetError`, whose message names
the file and the key (and for malformed TOML the line).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from groupspec.checker.atomic_file import write_bytes_atomically
from groupspec.checker.model import Model
from groupspec.spec.consumer.rules import CONSUMER_RULE_IDS
from groupspec.spec.kip848.consumer.rules import KIP848_CONSUMER_RULE_IDS
from groupspec.spec.kip848.rules import KIP848_RULES
from groupspec.spec.rules import RULE_IDS

from .group_world import GroupWorld
from .kip848_params import Kip848Parameters
from .kip848_world import Kip848World
from .parameters import Parameter, ParameterError, coerce, parse_override, schema
from .random_clients import ClientsParameters, RandomClientsWorld
from .two_phase import TwoPhaseModel
from .world_params import WorldParameters, validate

# Resolved: an editable install reaches this module through a link tree.
PRESET_DIRECTORY = Path(__file__).resolve().parent / "presets"
GROUP_KIND = "group"
TWO_PHASE_KIND = "two-phase"
CLIENTS_KIND = "random-clients"
KIP848_KIND = "kip848"
_TABLES = ("model", "parameters", "expected")
_MODEL_KEYS = ("description", "kind")
VERDICTS = ("pass", "fail")


class PresetError(ValueError):
    """A preset that cannot be loaded; the message names the file and the key."""

    def __init__(self, path: Path | str, key: str | None, message: str) -> None:
        where = f"{path}: {key}" if key else str(path)
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.key = key


@dataclass(frozen=True)
class ModelKind:
    """A kind of model a preset can build: its parameters' dataclass and how to build it."""

    name: str
    parameters_type: type
    build: Callable[[Any, str], Model[Any]]
    validate: Callable[[Any], None]
    # Whether its state space is finite, so `check` can explore it all (else: `simulate`).
    exhaustive: bool = True

    @property
    def parameters(self) -> Mapping[str, Parameter]:
        """The kind's declared parameters."""
        return schema(self.parameters_type)


def _checked_on_creation(parameters: object) -> None:
    del parameters  # the dataclass's __post_init__ checks its bounds


KINDS: Mapping[str, ModelKind] = {
    GROUP_KIND: ModelKind(
        GROUP_KIND, WorldParameters, lambda p, name: GroupWorld(p, name=name), validate
    ),
    TWO_PHASE_KIND: ModelKind(
        TWO_PHASE_KIND, TwoPhaseModel, lambda p, name: p, _checked_on_creation
    ),
    CLIENTS_KIND: ModelKind(
        CLIENTS_KIND,
        ClientsParameters,
        lambda p, name: RandomClientsWorld(p, name),
        _checked_on_creation,
        exhaustive=False,
    ),
    KIP848_KIND: ModelKind(
        KIP848_KIND,
        Kip848Parameters,
        lambda p, name: Kip848World(p, name),
        _checked_on_creation,
    ),
}


@dataclass(frozen=True)
class Expected:
    """What checking a preset with no overrides reports; None where the file does not say."""

    verdict: str
    distinct_states: int | None = None
    transitions: int | None = None
    depth: int | None = None
    # The rule ids the exhaustive check fires, sorted (`groupspec coverage --record` writes it).
    rules_reached: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Preset:
    """A loaded preset: where it came from, its kind, what it says it is, its parameters."""

    name: str
    path: Path
    kind: str
    description: str
    parameters: Any
    stated: Mapping[str, object]
    expected: Expected | None = None

    def model(self) -> Model[Any]:
        """The model these parameters describe."""
        return KINDS[self.kind].build(self.parameters, self.name)

    def world(self) -> GroupWorld:
        """The group world of a group preset."""
        model = self.model()
        if not isinstance(model, GroupWorld):
            raise PresetError(self.path, "[model] kind", f"{self.kind!r} is not a group world")
        return model


def toml_document(path: Path, what: str = "preset") -> dict[str, Any]:
    """The TOML document in `path` (a `what` file); PresetError naming the file when it cannot be
    read or is not TOML."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise PresetError(path, None, f"cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        line = path.read_bytes()[: error.start].count(b"\n") + 1
        raise PresetError(
            path, f"line {line}", f"not UTF-8 text (is this a {what} file?)"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PresetError(path, None, f"malformed TOML: {error}") from None
    except RecursionError:
        raise PresetError(path, None, "malformed TOML: nested too deeply") from None
    except ValueError:
        # Python's limit on an integer's digits (tomllib's only other ValueError).
        raise PresetError(
            path, None, "malformed TOML: an integer of more than 4300 digits"
        ) from None


def preset_kind(path: Path) -> str:
    """The `[model] kind` of a preset file ("group" when absent)."""
    model = toml_document(path).get("model", {})
    kind = model.get("kind", GROUP_KIND) if isinstance(model, dict) else GROUP_KIND
    if kind not in KINDS:
        raise PresetError(path, "[model] kind", f"unknown kind {kind!r}; known: {', '.join(KINDS)}")
    return str(kind)


def preset_names(kind: str | None = None) -> tuple[str, ...]:
    """The presets shipped in models/presets (of `kind`, if given), sorted."""
    names = names_in(PRESET_DIRECTORY)
    return tuple(
        name
        for name in names
        if kind is None or preset_kind(PRESET_DIRECTORY / f"{name}.toml") == kind
    )


def names_in(directory: Path) -> tuple[str, ...]:
    """The names of the `*.toml` files in `directory`, sorted: what can be given by name."""
    return tuple(sorted(path.stem for path in directory.glob("*.toml")))


def preset_path(name_or_path: str | Path) -> Path:
    """The file of a preset given by name or by path."""
    return named_file(name_or_path, PRESET_DIRECTORY, "preset")


def named_file(name_or_path: str | Path, directory: Path, what: str) -> Path:
    """The file of a `what` given by path, or by name (`directory/<name>.toml`); PresetError
    listing the known names when there is no such name."""
    candidate = Path(name_or_path)
    if candidate.suffix == ".toml" or candidate.exists():
        return candidate
    path = directory / f"{name_or_path}.toml"
    if not path.exists():
        known = ", ".join(names_in(directory))
        raise PresetError(path, None, f"no {what} named {str(name_or_path)!r}; known: {known}")
    return path


def read_preset(name_or_path: str | Path, overrides: Mapping[str, str] | None = None) -> Preset:
    """The preset's kind, description, parameters and expected results, with `overrides`
    ("name" -> "value") applied."""
    path = preset_path(name_or_path)
    if not path.exists():
        raise PresetError(path, None, "no such preset file")
    document = toml_document(path)
    for table in document:
        if table not in _TABLES:
            raise PresetError(
                path, table, "unknown table; a preset has [model], [parameters] and [expected]"
            )
    for table in _TABLES:
        if not isinstance(document.get(table, {}), dict):
            raise PresetError(path, table, "must be a table")
    if "model" not in document:
        raise PresetError(path, "[model]", "missing: a preset says what it is in [model]")
    model = document["model"]
    for key in model:
        if key not in _MODEL_KEYS:
            raise PresetError(path, f"[model] {key}", "unknown key; known: description, kind")
    kind_name = preset_kind(path)
    description = model.get("description", "")
    if not isinstance(description, str) or not description.strip():
        raise PresetError(path, "[model] description", f"expected a sentence, got {description!r}")
    kind = KINDS[kind_name]
    declared = kind.parameters
    stated: dict[str, object] = {}
    for key, value in document.get("parameters", {}).items():
        try:
            stated[key] = coerce(declared, key, value)
        except ParameterError as error:
            raise PresetError(path, f"[parameters] {error.key}", error.message) from None
    values = dict(stated)
    for key, text in (overrides or {}).items():
        try:
            values[key] = parse_override(declared, key, text)
        except ParameterError as error:
            raise PresetError(path, f"--set {error.key}", error.message) from None
    try:
        parameters = kind.parameters_type(**values)
        kind.validate(parameters)
    except ParameterError as error:
        origin = "--set " if error.key in (overrides or {}) else "[parameters] "
        raise PresetError(path, origin + error.key, error.message) from None
    except ValueError as error:
        raise PresetError(path, "[parameters]", str(error)) from None
    expected = _expected(path, document.get("expected"))
    return Preset(path.stem, path, kind_name, description, parameters, stated, expected)


def _expected(path: Path, table: dict[str, Any] | None) -> Expected | None:
    if table is None:
        return None
    known = {item.name for item in fields(Expected)}
    for key in table:
        if key not in known:
            raise PresetError(
                path, f"[expected] {key}", f"unknown key; known: {', '.join(sorted(known))}"
            )
    verdict = table.get("verdict")
    if verdict not in VERDICTS:
        raise PresetError(path, "[expected] verdict", f"expected pass or fail, got {verdict!r}")
    counts: dict[str, int | None] = {}
    for key in ("distinct_states", "transitions", "depth"):
        value = table.get(key)
        if value is not None and (type(value) is not int or value < 0):
            raise PresetError(path, f"[expected] {key}", f"expected a count, got {value!r}")
        counts[key] = value
    return Expected(verdict, **counts, rules_reached=_rules_reached(path, table))


# The rules a KIP-848 preset may record: its coordinator's and its consumer's.
_KIP848_RULE_IDS = frozenset(rule.rule_id for rule in KIP848_RULES) | KIP848_CONSUMER_RULE_IDS


def _rules_reached(path: Path, table: dict[str, Any]) -> tuple[str, ...] | None:
    rules = table.get("rules_reached")
    if rules is None:
        return None
    where = "[expected] rules_reached"
    if not isinstance(rules, list) or not all(isinstance(rule, str) for rule in rules):
        raise PresetError(path, where, f"expected a list of rule ids, got {rules!r}")
    unknown = sorted(set(rules) - RULE_IDS - CONSUMER_RULE_IDS - _KIP848_RULE_IDS)
    if unknown:
        raise PresetError(path, where, f"unknown rule ids {unknown}")
    if rules != sorted(set(rules)):
        raise PresetError(path, where, "must be sorted, each rule once")
    return tuple(rules)


_RULES_COMMENT = "# The rules this check fires (`groupspec coverage --record` writes this list)."


def record_rules_reached(path: Path, rules: Iterable[str]) -> None:
    """Write `rules` as the [expected] rules_reached list of the preset file at `path`,
    replacing the list it has; the rest of the file, comments included, is left as it is."""
    lines = path.read_text(encoding="utf-8").splitlines()
    headers = [i for i, line in enumerate(lines) if line.strip().startswith("[")]
    tables = [lines[i].strip() for i in headers]
    if "[expected]" not in tables:
        raise PresetError(path, "[expected]", "missing: nothing to record the rules in")
    if tables[-1] != "[expected]":
        raise PresetError(path, "[expected]", "must be the file's last table to record rules")
    start = next(
        (i for i, line in enumerate(lines) if line.strip().startswith("rules_reached")), None
    )
    if start is not None:
        end = start
        while "]" not in lines[end]:
            end += 1
        if start > 0 and lines[start - 1] == _RULES_COMMENT:
            start -= 1
        del lines[start : end + 1]
    while lines and not lines[-1].strip():
        lines.pop()
    block = [_RULES_COMMENT, "rules_reached = ["]
    block += [f'    "{rule}",' for rule in sorted(set(rules))]
    block.append("]")
    write_bytes_atomically(path, ("\n".join([*lines, *block]) + "\n").encode("utf-8"))


def load_preset(name_or_path: str | Path, overrides: Mapping[str, str] | None = None) -> GroupWorld:
    """The group world of a preset (by name or path), with `--set` overrides applied."""
    return read_preset(name_or_path, overrides).world()
