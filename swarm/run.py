"""Checking one configuration: the pure function both engines map over the configurations.

`check_configuration` loads the configuration's model, checks it within its budget (safety,
and liveness when asked) and returns plain data: the figures, the rules reached, and each
violation's counterexample as `groupspec check` prints it and as its `--json` records it. A
counterexample can only be rebuilt where the search ran (it replays the search's fingerprints),
so it is rebuilt here, on the worker or the Spark executor, and only text travels back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from groupspec.checker.bfs import Limits
from groupspec.checker.check import check
from groupspec.checker.check_report import (
    counterexamples,
    format_counterexample,
    format_liveness,
)
from groupspec.models.preset_models import load_model
from groupspec.verify.preset_check import check_document

from .configuration import Configuration


@dataclass(frozen=True)
class Violation:
    """A property a configuration's check found violated, with its shortest counterexample."""

    property_name: str
    kind: str
    # The counterexample as `groupspec check` prints it (numbered steps).
    text: str
    # The violation as `groupspec check --json` records it (trace, stem and cycle).
    document: dict[str, Any]


@dataclass(frozen=True)
class ConfigResult:
    """What checking one configuration found; plain data, the same from either engine but for
    the seconds."""

    configuration: Configuration
    verdict: str
    distinct_states: int
    # The rule ids some explored step fired, sorted, and those the model could fire.
    rules: tuple[str, ...]
    known_rules: tuple[str, ...]
    violations: tuple[Violation, ...]
    # The check as `groupspec check --json` writes it (liveness included), which
    # `groupspec replay` reads.
    document: dict[str, Any]
    # The whole of it: loading, searching, liveness, counterexamples.
    elapsed_s: float


def check_configuration(configuration: Configuration) -> ConfigResult:
    """Check `configuration` exhaustively within its budget, as its `command()` does."""
    started = time.perf_counter()
    loaded = load_model(configuration.preset, dict(configuration.overrides))
    model = loaded.model
    budget = configuration.budget
    checked = check(
        model,
        limits=Limits(budget.max_states, budget.max_seconds),
        liveness=configuration.liveness,
    )
    result = checked.search
    document = check_document(loaded, checked)
    violations = [
        Violation(example.property_name, example.kind, format_counterexample(model, example), doc)
        for example, doc in zip(counterexamples(model, result), document["violations"], strict=True)
    ]
    for item, doc in zip(checked.liveness, document["liveness"], strict=True):
        if item.verdict == "fail":
            kind = item.violations[0].kind if item.violations else "liveness"
            violations.append(
                Violation(item.property_name, kind, format_liveness(model, item), doc)
            )
    return ConfigResult(
        configuration,
        checked.verdict,
        result.distinct_states,
        tuple(sorted(result.rule_counts)),
        loaded.known_rules,
        tuple(violations),
        document,
        time.perf_counter() - started,
    )
