"""A preset's check as `groupspec check` runs it, and its result document (`--json`).

`check_preset` runs `checker.check.check` on the chosen engine and keeps what Ctrl-C leaves:
the search explored so far, marked interrupted, with the phase it cut short. `check_document`
is the JSON every consumer of a check reads (`groupspec check --json`, the swarm's report,
`groupspec replay`): the search's figures, rule and action coverage, the counterexamples, the
liveness results, and digests that tell an edited document.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from groupspec.checker.bfs import Limits
from groupspec.checker.check import CheckResult, check
from groupspec.checker.check_report import liveness_json, result_json, with_digests
from groupspec.checker.interrupt import SearchInterrupted
from groupspec.models.preset_models import LoadedModel

from .engines import EngineChoice, search_engine


@dataclass(frozen=True)
class PresetCheck:
    """A check of a preset: its result, and the phase Ctrl-C cut short (None if it did not)."""

    loaded: LoadedModel
    checked: CheckResult[Any]
    interrupted_in: str | None = None


def check_preset(
    loaded: LoadedModel,
    *,
    choice: EngineChoice | None = None,
    limits: Limits | None = None,
    liveness: bool = True,
    progress: Callable[..., None] | None = None,
) -> PresetCheck:
    """Check every property of the preset `loaded` on the engine `choice` (this process by
    default); after Ctrl-C, what was explored, as a check stopped by a limit would report it.
    SparkError when the Spark engine cannot run."""
    try:
        checked = check(
            loaded.model,
            limits=limits,
            liveness=liveness,
            engine=search_engine(loaded, choice or EngineChoice()),
            progress=progress,
        )
    except SearchInterrupted as stop:
        return PresetCheck(loaded, CheckResult(stop.result, interrupted=True), stop.phase)
    return PresetCheck(loaded, checked)


def check_document(loaded: LoadedModel, checked: CheckResult[Any]) -> dict[str, Any]:
    """The `groupspec check --json` document of a check of `loaded`, liveness included."""
    document = result_json(
        loaded.model,
        checked.search,
        verdict=checked.verdict,
        preset=loaded.preset,
        preset_file=str(loaded.path),
        overrides=loaded.overrides,
        parameters=loaded.parameters,
        known_rules=loaded.known_rules,
        known_actions=loaded.known_actions,
    )
    document["liveness"] = liveness_json(loaded.model, checked.liveness)
    return with_digests(document)
