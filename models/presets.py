"""Preset group worlds: data files `models/presets/<name>.toml` with named parameters.

A preset file has two tables:

```toml
[model]
description = "two dynamic consumers with the range assignor"

[parameters]
clients = 2
assignors = ["range"]
max_generation = 3
```

`[model] kind` may say "group" (the default; models/catalog.py knows the other kinds). Every
key of `[parameters]` is a parameter of `WorldParameters` (world_params.py); keys left
out take their defaults. `load_preset(name_or_path, overrides)` reads a preset by name (or a
path to any such file), applies `--set name=value` overrides, parsed by the parameter's declared
type, and builds the `GroupWorld`. Anything wrong (malformed TOML, an unknown table or key, a
value of the wrong type, an impossible bound) raises `PresetError`, whose message names the
file and the key (and for malformed TOML the line).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .group_world import GroupWorld
from .world_params import ParameterError, WorldParameters, build, coerce, parse_override

PRESET_DIRECTORY = Path(__file__).parent / "presets"
_MODEL_KEYS = ("description", "kind")
# `[model] kind` says which model a preset builds (models/catalog.py); this module builds "group".
GROUP_KIND = "group"


class PresetError(ValueError):
    """A preset that cannot be loaded; the message names the file and the key."""

    def __init__(self, path: Path | str, key: str | None, message: str) -> None:
        where = f"{path}: {key}" if key else str(path)
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.key = key


@dataclass(frozen=True)
class Preset:
    """A loaded preset: where it came from, what it says it is, and its parameters."""

    name: str
    path: Path
    description: str
    parameters: WorldParameters

    def world(self) -> GroupWorld:
        """The group world these parameters describe."""
        return GroupWorld(self.parameters, name=self.name)


def _kind(path: Path) -> object:
    try:
        model = tomllib.loads(path.read_text(encoding="utf-8")).get("model", {})
    except (OSError, tomllib.TOMLDecodeError):
        return GROUP_KIND  # reading it properly reports the problem
    return model.get("kind", GROUP_KIND) if isinstance(model, dict) else GROUP_KIND


def preset_names() -> tuple[str, ...]:
    """The names of the group-world presets shipped in models/presets, sorted."""
    return tuple(
        sorted(path.stem for path in PRESET_DIRECTORY.glob("*.toml") if _kind(path) == GROUP_KIND)
    )


def preset_path(name_or_path: str | Path) -> Path:
    """The file of a preset given by name or by path."""
    candidate = Path(name_or_path)
    if candidate.suffix == ".toml" or candidate.exists():
        return candidate
    path = PRESET_DIRECTORY / f"{name_or_path}.toml"
    if not path.exists():
        raise PresetError(
            path, None, f"no preset named {str(name_or_path)!r}; known: {', '.join(preset_names())}"
        )
    return path


def read_preset(name_or_path: str | Path, overrides: Mapping[str, str] | None = None) -> Preset:
    """The preset's description and parameters, with `overrides` ("name" -> "value") applied."""
    path = preset_path(name_or_path)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise PresetError(path, None, f"cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise PresetError(path, None, f"malformed TOML: {error}") from None
    for table in document:
        if table not in ("model", "parameters"):
            raise PresetError(path, table, "unknown table; a preset has [model] and [parameters]")
    model = document.get("model", {})
    parameters = document.get("parameters", {})
    for table, value in (("model", model), ("parameters", parameters)):
        if not isinstance(value, dict):
            raise PresetError(path, table, "must be a table")
    for key in model:
        if key not in _MODEL_KEYS:
            raise PresetError(path, f"[model] {key}", "unknown key; known: description, kind")
    kind = model.get("kind", GROUP_KIND)
    if kind != GROUP_KIND:
        raise PresetError(path, "[model] kind", f"{kind!r} is not a group world ({GROUP_KIND!r})")
    description = model.get("description", "")
    if not isinstance(description, str):
        raise PresetError(path, "[model] description", f"expected str, got {description!r}")
    values: dict[str, object] = {}
    for key, value in parameters.items():
        try:
            values[key] = coerce(key, value)
        except ParameterError as error:
            raise PresetError(path, f"[parameters] {error.key}", error.message) from None
    for key, text in (overrides or {}).items():
        try:
            values[key] = parse_override(key, text)
        except ParameterError as error:
            raise PresetError(path, f"--set {error.key}", error.message) from None
    try:
        world_parameters = build(values)
    except ParameterError as error:
        origin = "--set " if error.key in (overrides or {}) else "[parameters] "
        raise PresetError(path, origin + error.key, error.message) from None
    return Preset(path.stem, path, description, world_parameters)


def load_preset(name_or_path: str | Path, overrides: Mapping[str, str] | None = None) -> GroupWorld:
    """The group world of a preset (by name or path), with `--set` overrides applied."""
    return read_preset(name_or_path, overrides).world()


def parse_set_options(options: list[str]) -> dict[str, str]:
    """`--set name=value` options as a mapping; raises ParameterError for a missing "="."""
    overrides: dict[str, str] = {}
    for option in options:
        key, separator, value = option.partition("=")
        if not separator or not key.strip():
            raise ParameterError(option, "expected name=value")
        overrides[key.strip()] = value
    return overrides
