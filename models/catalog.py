"""Every checkable preset by name: group worlds and the two-phase commit calibration model.

A preset is a TOML file in `models/presets/`. Its `[model] kind` says which model it builds:
"group" (the default: the coordinator, consumers, network and faults of `group_world.py`) or
"two-phase" (Lamport's two-phase commit, for comparing the engine with TLC and Stateright).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from groupspec.checker.model import Model
from groupspec.spec.consumer.rules import CONSUMER_RULE_IDS
from groupspec.spec.rules import DEFENSIVE_RULE_IDS, RULE_IDS

from .presets import PRESET_DIRECTORY, PresetError, preset_path, read_preset
from .two_phase import TwoPhaseModel

GROUP_KIND = "group"
TWO_PHASE_KIND = "two-phase"
TWO_PHASE_ACTIONS = (
    "TMCommit",
    "TMAbort",
    "TMRcvPrepared",
    "RMPrepare",
    "RMChooseToAbort",
    "RMRcvCommitMsg",
    "RMRcvAbortMsg",
)


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


def model_names() -> tuple[str, ...]:
    """Every preset shipped in models/presets, sorted."""
    return tuple(sorted(path.stem for path in PRESET_DIRECTORY.glob("*.toml")))


def group_preset_names() -> tuple[str, ...]:
    """The shipped group-world presets (the reference presets), sorted."""
    return tuple(name for name in model_names() if preset_kind(preset_path(name)) == GROUP_KIND)


def preset_kind(path: Path) -> str:
    """The `[model] kind` of a preset file ("group" when absent)."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ModelLoadError(f"{path}: cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ModelLoadError(f"{path}: malformed TOML: {error}") from None
    model = document.get("model", {})
    kind = model.get("kind", GROUP_KIND) if isinstance(model, dict) else GROUP_KIND
    if kind not in (GROUP_KIND, TWO_PHASE_KIND):
        raise ModelLoadError(
            f"{path}: [model] kind: unknown kind {kind!r}; known: {GROUP_KIND}, {TWO_PHASE_KIND}"
        )
    return str(kind)


def load_model(name_or_path: str | Path, overrides: Mapping[str, str] | None = None) -> LoadedModel:
    """The model of a preset (by name or path) with `--set` overrides applied."""
    try:
        path = preset_path(name_or_path)
    except PresetError as error:
        raise ModelLoadError(str(error)) from None
    if not path.exists():
        raise ModelLoadError(f"{path}: no such preset file")
    overrides = dict(overrides or {})
    if preset_kind(path) == TWO_PHASE_KIND:
        return _load_two_phase(path, overrides)
    try:
        preset = read_preset(path, overrides)
    except PresetError as error:
        raise ModelLoadError(str(error)) from None
    world = preset.world()
    return LoadedModel(
        preset.name,
        path.resolve(),
        overrides,
        preset.description,
        world,
        asdict(preset.parameters),
        tuple(sorted((RULE_IDS - DEFENSIVE_RULE_IDS) | CONSUMER_RULE_IDS)),
        tuple(getattr(world, "action_kinds", ())),
    )


def _load_two_phase(path: Path, overrides: Mapping[str, str]) -> LoadedModel:
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    model_table = document.get("model", {})
    values: dict[str, object] = dict(document.get("parameters", {}))
    known = {field.name: field.type for field in fields(TwoPhaseModel)}
    for key, text in overrides.items():
        values[key] = _parse_value(path, key, text, known)
    for key, value in values.items():
        if key not in known:
            raise ModelLoadError(
                f"{path}: [parameters] {key}: unknown parameter; known: {', '.join(known)}"
            )
        expected = bool if known[key] in (bool, "bool") else int
        if type(value) is not expected:
            raise ModelLoadError(
                f"{path}: [parameters] {key}: expected {expected.__name__}, got {value!r}"
            )
    try:
        model = TwoPhaseModel(**values)  # type: ignore[arg-type]
    except ValueError as error:
        raise ModelLoadError(f"{path}: [parameters] {error}") from None
    return LoadedModel(
        path.stem,
        path.resolve(),
        dict(overrides),
        str(model_table.get("description", "")),
        model,
        {field.name: getattr(model, field.name) for field in fields(model)},
        (),
        TWO_PHASE_ACTIONS,
    )


def _parse_value(path: Path, key: str, text: str, known: Mapping[str, object]) -> object:
    if key not in known:
        raise ModelLoadError(f"{path}: --set {key}: unknown parameter; known: {', '.join(known)}")
    if known[key] in (bool, "bool"):
        if text.lower() not in ("true", "false"):
            raise ModelLoadError(f"{path}: --set {key}: expected true or false, got {text!r}")
        return text.lower() == "true"
    try:
        return int(text)
    except ValueError:
        raise ModelLoadError(f"{path}: --set {key}: expected an integer, got {text!r}") from None
