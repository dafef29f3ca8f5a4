"""The result of a model check as people and programs read it: summary, counterexamples, JSON.

A counterexample is printed as numbered steps. A model may explain its steps (who sent what,
which response, what changed) by offering `explain(before, transition) -> Sequence[str]`;
otherwise each step shows its label.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from hashlib import blake2b
from typing import Any, TypeVar

from .bfs import SearchResult
from .counterexample import Counterexample, reconstruct, reconstruct_lasso
from .interrupt import INTERRUPTED
from .liveness import LivenessResult
from .model import Model, Transition

S = TypeVar("S")

JSON_FORMAT_VERSION = 1
# The key of a `--json` document holding a digest of each of its other fields.
DIGESTS_KEY = "digests"


def counterexamples(model: Model[S], result: SearchResult[S]) -> list[Counterexample[S]]:
    """Every violation of `result` replayed into concrete steps."""
    return [reconstruct(model, found) for found in result.problems]


def explain_steps(model: Model[S], example: Counterexample[S]) -> list[list[str]]:
    """For each step of `example`, the lines that describe it (the label when unexplained)."""
    explain = getattr(model, "explain", None)
    described: list[list[str]] = []
    before = example.initial
    for step in example.steps:
        lines = list(explain(before, step)) if explain else []
        described.append(lines or [step.label])
        before = step.state
    return described


def format_counterexample(model: Model[S], example: Counterexample[S]) -> str:
    """A counterexample as numbered steps, ending with the violated property."""
    lines = [f"{example.kind} {example.property_name} violated: {example.detail}"]
    lines.append(f"  shortest trace: {len(example.steps)} steps")
    for number, described in enumerate(explain_steps(model, example), start=1):
        lines.append(f"  {number:3}. {described[0]}")
        lines.extend(f"       {line}" for line in described[1:])
    return "\n".join(lines)


def coverage_json(
    result: SearchResult[S], known_rules: Sequence[str], known_actions: Sequence[str] = ()
) -> dict[str, Any]:
    """How often each action and rule fired, and which known ones never did."""
    return {
        "actions": dict(sorted(result.action_counts.items())),
        "actions_never_taken": sorted(set(known_actions) - set(result.action_counts)),
        "rules": dict(sorted(result.rule_counts.items())),
        "rules_never_fired": sorted(set(known_rules) - set(result.rule_counts)),
    }


def result_json(
    model: Model[S],
    result: SearchResult[S],
    *,
    preset: str,
    preset_file: str,
    overrides: Mapping[str, str],
    parameters: Mapping[str, object],
    known_rules: Sequence[str] = (),
    known_actions: Sequence[str] = (),
    verdict: str | None = None,
) -> dict[str, Any]:
    """The `--json` document of a check (format version 1); `verdict` is the whole check's
    (with liveness), the search's own by default."""
    violations = []
    for found, example in zip(result.problems, counterexamples(model, result), strict=True):
        violations.append(
            {
                "property": example.property_name,
                "kind": example.kind,
                "detail": example.detail,
                "trace": [
                    {"step": number, "label": step.label, "action": step.action, "explain": lines}
                    for number, (step, lines) in enumerate(
                        zip(example.steps, explain_steps(model, example), strict=True), start=1
                    )
                ],
                "fingerprints": [f"{fp & 0xFFFFFFFFFFFFFFFF:016x}" for fp in found.path],
            }
        )
    rate = result.distinct_states / result.elapsed_s if result.elapsed_s > 0 else 0.0
    return {
        "format": JSON_FORMAT_VERSION,
        "preset": preset,
        "preset_file": preset_file,
        "overrides": dict(overrides),
        "model": result.model,
        "parameters": dict(parameters),
        "verdict": verdict or result.verdict,
        "complete": result.complete,
        "stopped_by": result.stopped_by,
        "distinct_states": result.distinct_states,
        "transitions": result.transitions,
        "depth": result.depth,
        "elapsed_s": round(result.elapsed_s, 3),
        "states_per_second": round(rate, 1),
        "workers": result.workers,
        "violations": violations,
        "coverage": coverage_json(result, known_rules, known_actions),
        "groups": groups_json(result),
    }


def with_digests(document: Mapping[str, Any]) -> dict[str, Any]:
    """`document` with a digest of each field under DIGESTS_KEY, so a reader can tell which
    field was edited after it was written (see `edited_fields`)."""
    fields = {key: value for key, value in document.items() if key != DIGESTS_KEY}
    return {**fields, DIGESTS_KEY: {key: _digest(value) for key, value in fields.items()}}


def edited_fields(document: Mapping[str, Any]) -> list[str]:
    """The fields of a document written by `with_digests` whose value changed or went missing
    since, sorted; [] when it has no digests to compare with. (A field without a digest is not
    compared: a writer may add fields after the digests were taken.)"""
    digests = document.get(DIGESTS_KEY)
    if not isinstance(digests, dict):
        return []
    return sorted(
        name
        for name, digest in digests.items()
        if name not in document or digest != _digest(document[name])
    )


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def groups_json(result: SearchResult[S]) -> list[dict[str, Any]]:
    """Each transition group's memory: lookups answered from it, and the model's calls."""
    return [
        {
            "group": stats.name,
            "hits": stats.hits,
            "misses": stats.misses,
            "hit_rate": round(stats.hit_rate, 4),
        }
        for stats in result.group_stats
    ]


def group_lines(result: SearchResult[S]) -> list[str]:
    """Each transition group's hit rate, one line each (for `check --stats`)."""
    if not result.group_stats:
        return ["transition groups: no figures (the search ran on another engine's executors)"]
    width = max(len(stats.name) for stats in result.group_stats)
    lines = ["transition groups (steps from memory / model calls):"]
    for stats in result.group_stats:
        lines.append(
            f"  {stats.name:<{width}}  hit rate {stats.hit_rate:6.1%}  "
            f"{stats.hits:>10,} hits  {stats.misses:>8,} model calls"
        )
    return lines


def summary_lines(result: SearchResult[S], verdict: str | None = None) -> list[str]:
    """The final summary of a check, one fact per line; `verdict` is the whole check's (with
    liveness), the search's own by default."""
    rate = result.distinct_states / result.elapsed_s if result.elapsed_s > 0 else 0.0
    shown = verdict or result.verdict
    if result.stopped_by == INTERRUPTED:
        shown += f": {INTERRUPTED} (Ctrl-C)"
    elif result.stopped_by:
        shown += f" (stopped by {result.stopped_by})"
    lines = [
        f"verdict: {shown}",
        f"distinct states: {result.distinct_states:,}   transitions: {result.transitions:,}   "
        f"depth: {result.depth}",
        f"elapsed: {result.elapsed_s:.2f} s   {rate:,.0f} states/s   workers: {result.workers}",
    ]
    return lines


def _explained(model: Model[S], before: S, steps: Sequence[Transition[S]]) -> list[list[str]]:
    explain = getattr(model, "explain", None)
    described: list[list[str]] = []
    for step in steps:
        lines = list(explain(before, step)) if explain else []
        described.append(lines or [step.label])
        before = step.state
    return described


def format_liveness(model: Model[S], item: LivenessResult) -> str:
    """A liveness verdict, with the stem and cycle of each violation as numbered steps."""
    lines = [
        f"liveness {item.property_name}: {item.verdict}"
        + (f" ({item.reason})" if item.reason else ""),
        f"  applies in {item.applicable_states} states, {item.cut_states} of them cut short by"
        f" a bound; {item.goal_states} goal states; {item.stuck_states} states cannot reach the"
        f" goal; {item.fair_components} of {item.cyclic_components} goal-avoiding cycles fair",
    ]
    for violation in item.violations:
        example = reconstruct_lasso(model, violation)
        lines.append(f"  {violation.kind}: {violation.detail}")
        stem = _explained(model, example.initial, example.stem)
        before_cycle = example.stem[-1].state if example.stem else example.initial
        cycle = _explained(model, before_cycle, example.cycle)
        for number, described in enumerate(stem, start=1):
            lines.append(f"  {number:3}. {described[0]}")
            lines.extend(f"       {line}" for line in described[1:])
        if cycle:
            lines.append("       -- the cycle below repeats forever --")
        for number, described in enumerate(cycle, start=len(stem) + 1):
            lines.append(f"  {number:3}. {described[0]}")
            lines.extend(f"       {line}" for line in described[1:])
    return "\n".join(lines)


def liveness_json(model: Model[S], results: Sequence[LivenessResult]) -> list[dict[str, Any]]:
    """The liveness part of the `--json` document."""
    documents: list[dict[str, Any]] = []
    for item in results:
        violations = []
        for violation in item.violations:
            example = reconstruct_lasso(model, violation)
            violations.append(
                {
                    "kind": violation.kind,
                    "detail": violation.detail,
                    "stem": [step.label for step in example.stem],
                    "cycle": [step.label for step in example.cycle],
                    "cycle_closes": example.closes,
                }
            )
        documents.append(
            {
                "property": item.property_name,
                "verdict": item.verdict,
                "reason": item.reason,
                "applicable_states": item.applicable_states,
                "goal_states": item.goal_states,
                "cut_states": item.cut_states,
                "stuck_states": item.stuck_states,
                "fair_components": item.fair_components,
                "elapsed_s": round(item.elapsed_s, 3),
                "violations": violations,
            }
        )
    return documents
