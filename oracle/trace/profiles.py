"""Deviation profiles: named tolerances for the systematic ways a coordinator departs from Kafka.

A real implementation may deviate in small, known ways that a user decides not to count against
it. A profile names those deviations; the oracle then accepts them, counts every occurrence and
lists it in the report (a tolerated deviation is never hidden). The tolerances
(docs/oracle.md, "Deviation profiles"):

- `first-generation`: a group's first generation (Kafka's 1) may carry another number; the
  coordinator's numbering is adopted (`adopt.generation`) and later generations must follow it.
- `no-member-id-required`: a dynamic member's first JoinGroup v4+ may be handled as at v3, with
  no MEMBER_ID_REQUIRED round (KIP-394).
- `error:API:SENT=KAFKA`: where Kafka answers API with the error KAFKA (a name such as
  `NONE`), the coordinator may send SENT instead; the rest of the state follows Kafka.

A profile is chosen with `validate --tolerate NAME` (repeatable) or written as TOML
(`validate --profile FILE`):

    name = "my-broker"
    tolerate = ["first-generation", "error:SyncGroup:INVALID_REQUEST=NONE"]

    [coordinator]              # broker settings, as `--set` takes them
    group_initial_rebalance_delay_ms = 0
    kafka_version = "3.x"      # the release judged against, as `--kafka-version` takes it
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from groupspec.spec.config import KAFKA_VERSIONS, CoordinatorConfig
from groupspec.vocabulary.errors import ErrorCode
from groupspec.wire.trace_format import API_KEYS

FIRST_GENERATION = "first-generation"
NO_MEMBER_ID_REQUIRED = "no-member-id-required"
ERROR_PREFIX = "error:"

TOLERANCES: dict[str, str] = {
    FIRST_GENERATION: "a group's first generation may carry another number than Kafka's 1",
    NO_MEMBER_ID_REQUIRED: "a dynamic member's first JoinGroup v4+ may skip MEMBER_ID_REQUIRED",
    "error:API:SENT=KAFKA": "error SENT may stand where Kafka answers API with error KAFKA",
}


class ProfileError(Exception):
    """A profile that cannot be used: names the file and line, or the option."""


@dataclass(frozen=True)
class ErrorSubstitution:
    """Error `sent` may stand where Kafka answers `api_key` with error `kafka`."""

    name: str
    api_key: int
    sent: int
    kafka: int


@dataclass(frozen=True)
class DeviationProfile:
    """The deviations a validation tolerates, and the broker settings it assumes."""

    name: str = ""
    first_generation: bool = False
    no_member_id_required: bool = False
    errors: tuple[ErrorSubstitution, ...] = ()
    coordinator: tuple[tuple[str, int | str], ...] = ()

    @property
    def tolerances(self) -> tuple[str, ...]:
        """The names of the tolerances in force."""
        named = [FIRST_GENERATION] if self.first_generation else []
        named += [NO_MEMBER_ID_REQUIRED] if self.no_member_id_required else []
        return (*named, *(e.name for e in self.errors))

    def with_tolerance(self, name: str) -> DeviationProfile:
        """This profile with the tolerance `name` (ValueError naming it if unknown)."""
        if name == FIRST_GENERATION:
            return replace(self, first_generation=True)
        if name == NO_MEMBER_ID_REQUIRED:
            return replace(self, no_member_id_required=True)
        if name.startswith(ERROR_PREFIX):
            return replace(self, errors=(*self.errors, _error_substitution(name)))
        raise ValueError(f"unknown tolerance {name!r}; known: {', '.join(TOLERANCES)}")

    def to_json(self) -> dict[str, Any]:
        """The profile as a JSON object."""
        return {
            "name": self.name,
            "tolerate": list(self.tolerances),
            "coordinator": dict(self.coordinator),
        }


def _error_substitution(name: str) -> ErrorSubstitution:
    _, api, codes = name.split(":", 2) if name.count(":") >= 2 else (name, "", "")
    sent, equals, kafka = codes.partition("=")
    if api not in API_KEYS or not equals:
        raise ValueError(
            f"tolerance {name!r}: expected error:API:SENT=KAFKA with API one of "
            f"{', '.join(sorted(API_KEYS))} and error names such as NONE, INVALID_REQUEST"
        )
    return ErrorSubstitution(name, API_KEYS[api], _error_code(name, sent), _error_code(name, kafka))


def _error_code(name: str, error: str) -> int:
    try:
        return int(ErrorCode[error])
    except KeyError:
        raise ValueError(f"tolerance {name!r}: unknown error name {error!r}") from None


def coordinator_setting_names() -> frozenset[str]:
    """The broker settings a trace header, `--set` or a profile may give."""
    return frozenset(f.name for f in fields(CoordinatorConfig)) - {"write_failures"}


@dataclass
class ProfileReading:
    """A profile file's text, for naming the line of what is wrong in it."""

    path: Path
    text: str = ""
    lines: list[str] = field(default_factory=list)

    def where(self, needle: str) -> str:
        """`path:line` of the first line holding `needle` (the file alone if none does)."""
        for number, line in enumerate(self.lines, start=1):
            if needle in line:
                return f"{self.path}:{number}"
        return str(self.path)


def read_toml(
    path: Path, what: str, error_type: type[Exception]
) -> tuple[ProfileReading, dict[str, Any]]:
    """The TOML document in `path`, with its text for naming lines; `error_type` naming the
    file (and line, for malformed TOML) if it cannot be read or parsed."""
    reading = ProfileReading(path)
    try:
        reading.text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise error_type(f"{path}: cannot read the {what}: {error}") from None
    reading.lines = reading.text.splitlines()
    try:
        return reading, tomllib.loads(reading.text)
    except tomllib.TOMLDecodeError as error:
        raise error_type(f"{path}: malformed TOML: {error}") from None


def read_profile(path: Path, base: DeviationProfile | None = None) -> DeviationProfile:
    """The profile in the TOML file `path`, added to `base`; ProfileError naming the file and
    line of what is wrong."""
    reading, document = read_toml(path, "profile", ProfileError)
    profile = base or DeviationProfile()
    unknown = sorted(set(document) - {"name", "tolerate", "coordinator"})
    if unknown:
        raise ProfileError(
            f"{reading.where(unknown[0])}: unknown key {unknown[0]!r}; "
            "a profile has name, tolerate and [coordinator]"
        )
    name = document.get("name", path.stem)
    if not isinstance(name, str):
        raise ProfileError(f"{reading.where('name')}: name must be a string")
    profile = replace(profile, name=name)
    tolerate = document.get("tolerate", [])
    if not isinstance(tolerate, list) or not all(isinstance(t, str) for t in tolerate):
        raise ProfileError(f"{reading.where('tolerate')}: tolerate must be a list of names")
    for tolerance in tolerate:
        try:
            profile = profile.with_tolerance(tolerance)
        except ValueError as error:
            raise ProfileError(f"{reading.where(tolerance)}: {error}") from None
    settings = document.get("coordinator", {})
    if not isinstance(settings, dict):
        raise ProfileError(f"{reading.where('coordinator')}: [coordinator] must be a table")
    known = coordinator_setting_names()
    for key, value in settings.items():
        if key not in known:
            raise ProfileError(
                f"{reading.where(key)}: unknown coordinator setting {key!r}; known: {sorted(known)}"
            )
        if key == "kafka_version":
            if value not in KAFKA_VERSIONS:
                raise ProfileError(
                    f"{reading.where(key)}: kafka_version must be one of "
                    f"{', '.join(KAFKA_VERSIONS)}, got {value!r}"
                )
        elif not isinstance(value, int) or isinstance(value, bool):
            raise ProfileError(f"{reading.where(key)}: {key} must be an integer")
    return replace(profile, coordinator=(*profile.coordinator, *settings.items()))
