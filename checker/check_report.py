"""The result of a model check as people and programs read it: summary, counterexamples, JSON.

A counterexample is printed as numbered steps, each followed by what it changed in the state
(checker/describe.py describes states and computes the changes for any model); `full` prints
every state whole instead, its changed lines starred. The step where the violation is found is
marked ✗, and the parts of the state the violated property reads are printed after the run.
A model may also explain its steps (who sent what, which response) by offering
`explain(before, transition) -> Sequence[str]`; otherwise each step shows its label. The JSON
holds every state as structured data, each step's changes, and the violating step.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from hashlib import blake2b
from typing import Any, TypeVar

from .bfs import SearchResult
from .counterexample import Counterexample, LassoCounterexample, reconstruct, reconstruct_lasso
from .describe import (
    DescribedRun,
    describe_run,
    format_change,
    format_description,
    read_sections,
    violating_step,
)
from .interrupt import INTERRUPTED
from .liveness import LivenessResult
from .model import Model, Transition

S = TypeVar("S")

JSON_FORMAT_VERSION = 1
# The key of a `--json` document holding a digest of each of its other fields.
DIGESTS_KEY = "digests"
# Marks the step where a violation is found.
VIOLATION_MARK = "✗"
# How far a step's details are indented under its number.
_DETAIL = " " * 7


def counterexamples(model: Model[S], result: SearchResult[S]) -> list[Counterexample[S]]:
    """Every violation of `result` replayed into concrete steps."""
    return [reconstruct(model, found) for found in result.problems]


def explain_steps(model: Model[S], example: Counterexample[S]) -> list[list[str]]:
    """For each step of `example`, the lines that describe it (the label when unexplained)."""
    return _explained(model, example.initial, example.steps)


def _explained(model: Model[S], before: S, steps: Sequence[Transition[S]]) -> list[list[str]]:
    explain = getattr(model, "explain", None)
    described: list[list[str]] = []
    for step in steps:
        lines = list(explain(before, step)) if explain else []
        described.append(lines or [step.label])
        before = step.state
    return described


def run_lines(
    model: Model[S],
    initial: S,
    steps: Sequence[Transition[S]],
    *,
    full: bool = False,
    marked: int | None = None,
    cycle_start: int | None = None,
    run: DescribedRun[S] | None = None,
) -> list[str]:
    """A run as numbered steps, each followed by what it changed (`full`: the initial state and
    every state after a step whole, changed lines starred); step `marked` gets the violation
    mark, and a line announces the cycle before step `cycle_start`."""
    described = run or describe_run(model, initial, steps)
    lines: list[str] = []
    if full:
        lines.append("  initial state:")
        lines += format_description(described.initial, _DETAIL)
    for number, (explained, step) in enumerate(
        zip(_explained(model, initial, steps), described.steps, strict=True), start=1
    ):
        if number == cycle_start:
            lines.append(f"{_DETAIL}-- the cycle below repeats forever --")
        mark = VIOLATION_MARK if number == marked else ""
        lines.append(f"{mark:>2}{number:3}. {explained[0]}")
        lines += [f"{_DETAIL}{line}" for line in explained[1:]]
        if full:
            changed = frozenset(change.path for change in step.changes)
            lines += format_description(step.state, _DETAIL + "  ", changed=changed)
        else:
            lines += [f"{_DETAIL}  {format_change(change)}" for change in step.changes]
    return lines


def _judged_lines(
    model: Model[S], kind: str, property_name: str, run: DescribedRun[S], number: int
) -> list[str]:
    """The parts of the state after step `number` that the violated property reads."""
    state = run.state(number)
    last = run.steps[number - 1].changes if number else ()
    sections = read_sections(model, state, kind, property_name, last)
    if not sections:
        return []
    where = "the initial state" if number == 0 else f"step {number}"
    if kind == "action":
        heading = f"  what {property_name} judges ({', '.join(sections)}), after {where}:"
    else:
        heading = f"  what {property_name} reads ({', '.join(sections)}), after {where}:"
    return [heading, *format_description({name: state[name] for name in sections}, _DETAIL)]


def format_counterexample(
    model: Model[S], example: Counterexample[S], *, full: bool = False
) -> str:
    """A counterexample as numbered steps with what each changed (`full`: whole states), the
    violating step marked, ending with the parts of the state the property reads."""
    run = describe_run(model, example.initial, example.steps)
    marked = violating_step(example.kind, len(example.steps))
    lines = [f"{example.kind} {example.property_name} violated: {example.detail}"]
    lines.append(
        f"  shortest trace: {len(example.steps)} steps, each with what it changed"
        f" ({'whole states, changes starred' if full else '--full: whole states'});"
        f" {VIOLATION_MARK} marks where it is violated"
    )
    lines += run_lines(model, example.initial, example.steps, full=full, marked=marked, run=run)
    if marked is not None:
        lines += _judged_lines(model, example.kind, example.property_name, run, marked)
    return "\n".join(lines)


def _trace_json(
    run: DescribedRun[Any],
    steps: Sequence[Transition[Any]],
    explained: Sequence[Sequence[str]],
    marked: int | None,
    cycle_start: int | None = None,
) -> list[dict[str, Any]]:
    """Each step as JSON: label, action, explanation, the state after it, its changes, and
    whether the violation is found there (or the step is in the cycle)."""
    trace = []
    for step, lines, described in zip(steps, explained, run.steps, strict=True):
        entry: dict[str, Any] = {
            "step": described.number,
            "label": step.label,
            "action": step.action,
            "explain": list(lines),
            "state": described.state,
            "changes": [change.as_json() for change in described.changes],
            "violating": described.number == marked,
        }
        if cycle_start is not None:
            entry["in_cycle"] = described.number >= cycle_start
        trace.append(entry)
    return trace


def _reads_json(
    model: Model[Any], run: DescribedRun[Any], kind: str, name: str, marked: int | None
) -> list[str]:
    if marked is None:
        return list(read_sections(model, run.initial, kind, name, ()))
    last = run.steps[marked - 1].changes if marked else ()
    return list(read_sections(model, run.state(marked), kind, name, last))


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
        run = describe_run(model, example.initial, example.steps)
        marked = violating_step(example.kind, len(example.steps))
        violations.append(
            {
                "property": example.property_name,
                "kind": example.kind,
                "detail": example.detail,
                "initial_state": run.initial,
                "trace": _trace_json(run, example.steps, explain_steps(model, example), marked),
                "violating_step": marked,
                "reads": _reads_json(model, run, example.kind, example.property_name, marked),
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


def _lasso_run(
    model: Model[S], example: LassoCounterexample[S]
) -> tuple[tuple[Transition[S], ...], int | None, int | None]:
    """A liveness counterexample's steps (stem, then cycle), the step where the goal is found
    unreachable (None for a cycle) and the first step of the cycle (None without one)."""
    steps = (*example.stem, *example.cycle)
    cycle_start = len(example.stem) + 1 if example.cycle else None
    return steps, violating_step(example.kind, len(example.stem)), cycle_start


def format_liveness(model: Model[S], item: LivenessResult, *, full: bool = False) -> str:
    """A liveness verdict, with the stem and cycle of each violation as numbered steps, each
    with what it changed (`full`: whole states); a goal found unreachable is marked."""
    lines = [
        f"liveness {item.property_name}: {item.verdict}"
        + (f" ({item.reason})" if item.reason else ""),
        f"  applies in {item.applicable_states} states, {item.cut_states} of them cut short by"
        f" a bound; {item.goal_states} goal states; {item.stuck_states} states cannot reach the"
        f" goal; {item.fair_components} of {item.cyclic_components} goal-avoiding cycles fair",
    ]
    for violation in item.violations:
        example = reconstruct_lasso(model, violation)
        steps, marked, cycle_start = _lasso_run(model, example)
        lines.append(f"  {violation.kind}: {violation.detail}")
        run = describe_run(model, example.initial, steps)
        lines += run_lines(
            model,
            example.initial,
            steps,
            full=full,
            marked=marked,
            cycle_start=cycle_start,
            run=run,
        )
        if marked is not None:
            lines += _judged_lines(model, violation.kind, item.property_name, run, marked)
    return "\n".join(lines)


def liveness_json(model: Model[S], results: Sequence[LivenessResult]) -> list[dict[str, Any]]:
    """The liveness part of the `--json` document."""
    documents: list[dict[str, Any]] = []
    for item in results:
        violations = []
        for violation in item.violations:
            example = reconstruct_lasso(model, violation)
            steps, marked, cycle_start = _lasso_run(model, example)
            run = describe_run(model, example.initial, steps)
            violations.append(
                {
                    "kind": violation.kind,
                    "detail": violation.detail,
                    "stem": [step.label for step in example.stem],
                    "cycle": [step.label for step in example.cycle],
                    "cycle_closes": example.closes,
                    "initial_state": run.initial,
                    "trace": _trace_json(
                        run,
                        steps,
                        _explained(model, example.initial, steps),
                        marked,
                        cycle_start,
                    ),
                    "violating_step": marked,
                    "reads": _reads_json(model, run, violation.kind, item.property_name, marked),
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
