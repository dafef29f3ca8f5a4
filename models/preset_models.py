"""The model of every checkable preset, by name or file: group worlds, random-clients worlds
and the two-phase commit calibration model, each with what reports say about it.

A preset is a TOML file in `models/presets/`. Its `[model] kind` says which model it builds:
"group" (the default: the coordinator, consumers, network and faults of `group_world.py`) or
"two-phase" (Lamport's two-phase commit, for comparing the engine with TLC and Stateright),
"kip848" (Java consumers and the KIP-848 coordinator of `kip848_world.py`);
`presets.py` reads every kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from groupspec.checker.model import Model
from groupspec.spec.config import KAFKA_4X
from groupspec.spec.consumer.rules import CONSUMER_RULE_IDS
from groupspec.spec.kip848.consumer.rules import KIP848_CONSUMER_RULE_IDS
from groupspec.spec.kip848.rules import KIP848_RULES
from groupspec.spec.rules import REACHABLE_RULE_IDS, reachable_rule_ids

from .fault_names import ALL_FAULTS
from .kip848_world import world_actions
from .parameters import Parameter
from .presets import (
    CLIENTS_KIND,
    GROUP_KIND,
    KINDS,
    KIP848_KIND,
    TWO_PHASE_KIND,
    Expected,
    PresetError,
    preset_names,
    read_preset,
)

TWO_PHASE_ACTIONS = (
    "TMCommit",
    "TMAbort",
    "TMRcvPrepared",
    "RMPrepare",
    "RMChooseToAbort",
    "RMRcvCommitMsg",
    "RMRcvAbortMsg",
)


# `LoadedModel.kind` of a model a factory of the user's made (`check --model`, factory_models.py).
FACTORY_KIND = "factory"


class ModelLoadError(ValueError):
    """A preset that cannot be turned into a model; the message names the file and key."""


@dataclass(frozen=True)
class LoadedModel:
    """A model ready to check, with what reports need to say about it."""

    preset: str
    path: Path
    overrides: Mapping[str, str]
    description: str
    model: Model[Any]
    parameters: Mapping[str, object]
    known_rules: tuple[str, ...] = ()
    known_actions: tuple[str, ...] = ()
    # What the preset file says checking it gives; None with overrides (they change it).
    expected: Expected | None = None
    kind: str = GROUP_KIND
    # Whether `check` can explore it all (random-clients worlds are for `simulate` only).
    exhaustive: bool = True
    # The parameters a factory declares (`check --model`); None for a preset (its kind's).
    declared: Mapping[str, Parameter] | None = None


@dataclass(frozen=True)
class ParameterChange:
    """A parameter that `--set` or `--fault` gave: its value, the preset's own, its meaning."""

    name: str
    value: object
    preset_value: object
    meaning: str


def parameter_changes(loaded: LoadedModel) -> list[ParameterChange]:
    """The parameters the overrides set, in the order given, each with the preset's own value
    and what it means (for `fault`, what the named bug does)."""
    if not loaded.overrides:
        return []
    if loaded.declared is not None:
        # A factory's model: its parameters' defaults stand where a preset's values would.
        declared = loaded.declared
        own = {name: parameter.default for name, parameter in declared.items()}
    else:
        own = asdict(read_preset(loaded.path).parameters)
        declared = KINDS[loaded.kind].parameters
    changes = []
    for name in loaded.overrides:
        value = loaded.parameters.get(name)
        if name == "fault":
            meaning = ALL_FAULTS.get(str(value), "no fault: the correct protocol")
        else:
            meaning = declared[name].doc if name in declared else ""
        changes.append(ParameterChange(name, value, own.get(name), meaning))
    return changes


def model_names() -> tuple[str, ...]:
    """Every preset shipped in models/presets, sorted."""
    return preset_names()


def group_preset_names() -> tuple[str, ...]:
    """The shipped group-world presets (the reference presets), sorted."""
    return preset_names(GROUP_KIND)


def kip848_preset_names() -> tuple[str, ...]:
    """The shipped KIP-848 worlds, sorted."""
    return preset_names(KIP848_KIND)


def random_clients_preset_names() -> tuple[str, ...]:
    """The shipped random-clients worlds (what `simulate` walks by default), sorted."""
    return preset_names(CLIENTS_KIND)


def group_world_rules(kafka_version: str = KAFKA_4X) -> tuple[str, ...]:
    """The rules a group world of the `kafka_version` coordinator can be expected to reach, sorted:
    that release's coordinator rules, defensive ones excepted, and every consumer rule."""
    return tuple(sorted(reachable_rule_ids(kafka_version) | CONSUMER_RULE_IDS))


def kip848_world_rules() -> tuple[str, ...]:
    """The rules a KIP-848 world can be expected to reach, sorted: the coordinator's, defensive
    ones excepted, and every rule of the KIP-848 consumer."""
    coordinator = {rule.rule_id for rule in KIP848_RULES if not rule.defensive}
    return tuple(sorted(coordinator | KIP848_CONSUMER_RULE_IDS))


def load_model(name_or_path: str | Path, overrides: Mapping[str, str] | None = None) -> LoadedModel:
    """The model of a preset (by name or path) with `--set` overrides applied."""
    overrides = dict(overrides or {})
    try:
        preset = read_preset(name_or_path, overrides)
    except PresetError as error:
        raise ModelLoadError(str(error)) from None
    model = preset.model()
    if preset.kind == TWO_PHASE_KIND:
        rules: tuple[str, ...] = ()
        actions: tuple[str, ...] = TWO_PHASE_ACTIONS
    elif preset.kind == KIP848_KIND:
        rules = kip848_world_rules()
        actions = tuple(world_actions())
    elif preset.kind == CLIENTS_KIND:
        rules = tuple(sorted(REACHABLE_RULE_IDS))
        actions = ()
    else:
        # A world of another Kafka release counts the rules of that release's coordinator.
        rules = group_world_rules(getattr(preset.parameters, "kafka_version", KAFKA_4X))
        actions = tuple(getattr(model, "action_kinds", ()))
    return LoadedModel(
        preset.name,
        preset.path.resolve(),
        overrides,
        preset.description,
        model,
        asdict(preset.parameters),
        rules,
        actions,
        None if overrides else preset.expected,
        preset.kind,
        KINDS[preset.kind].exhaustive,
    )
