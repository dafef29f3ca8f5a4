"""A swarm's report: each configuration's line, the union coverage, every violation, one verdict.

The union coverage is `coverage.reached`'s (`Matrix`, `totals_line`, `never_lines`) over the
configurations' rules. A configuration stopped by its budget counts for what it explored, and
never as a pass: the swarm's verdict is `fail` when a property failed somewhere, else
`incomplete` when a budget stopped some configuration, else `pass`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupspec.coverage.presets import recorded
from groupspec.coverage.reached import Matrix, never_lines, totals_line
from groupspec.models.presets import GROUP_KIND
from groupspec.models.swarm_space import Budget, Space

from .draw import Draw
from .run import ConfigResult, Violation

JSON_FORMAT_VERSION = 1


@dataclass(frozen=True)
class Plan:
    """What a swarm run checks, known before any check: the space, the seed and what it drew,
    the budget, whether liveness is checked, and where the checks run."""

    space: Space
    seed: int
    drawn: Draw
    budget: Budget
    liveness: bool
    # Where the checks run: "local, 2 processes", "spark local[2], one task per configuration".
    engine: str
    # The rules the reference presets record reaching (group worlds; see `reference_rules`).
    reference: frozenset[str] = frozenset()


@dataclass(frozen=True)
class SwarmReport:
    """Everything a swarm run found, in configuration order."""

    plan: Plan
    results: tuple[ConfigResult, ...]
    elapsed_s: float
    # Ctrl-C stopped the swarm: `results` are the configurations checked before it.
    interrupted: bool = False

    @property
    def matrix(self) -> Matrix:
        """The rules each configuration reached (by number) against the rules it could."""
        known: dict[str, None] = {}
        for result in self.results:
            known.update(dict.fromkeys(result.known_rules))
        reached = {str(r.configuration.number): frozenset(r.rules) for r in self.results}
        return Matrix(tuple(known), reached)

    @property
    def verdict(self) -> str:
        """ "fail" when a configuration failed, else "incomplete" when a budget stopped one,
        else "pass"."""
        verdicts = {result.verdict for result in self.results}
        if self.interrupted:
            verdicts.add("incomplete")
        for verdict in ("fail", "incomplete"):
            if verdict in verdicts:
                return verdict
        return "pass"

    def beyond_reference(self) -> tuple[str, ...]:
        """The rules the configurations reached that no reference preset reaches, in the known
        rules' order (none when there is no reference)."""
        if not self.plan.reference:
            return ()
        union = self.matrix.union
        return tuple(r for r in self.matrix.known if r in union and r not in self.plan.reference)

    def violations(self) -> list[tuple[ConfigResult, Violation]]:
        """Every violation found, with the configuration it was found in."""
        return [(result, found) for result in self.results for found in result.violations]


def reference_rules(space: Space) -> frozenset[str]:
    """The rules the shipped presets' exhaustive checks reach, as their files record them (for a
    space of group worlds; none for other kinds of models)."""
    if space.presets[0].kind != GROUP_KIND:
        return frozenset()
    return recorded().union


def budget_text(budget: Budget) -> str:
    """`20,000 states or 60 s`: a budget as people read it."""
    parts = []
    if budget.max_states is not None:
        parts.append(f"{budget.max_states:,} states")
    if budget.max_seconds is not None:
        parts.append(f"{budget.max_seconds:g} s")
    return " or ".join(parts) or "none"


def header_lines(plan: Plan) -> list[str]:
    """What is about to be checked: the space, what was drawn from it, the budget, the engine."""
    space, drawn = plan.space, plan.drawn
    shown = (
        space.path.relative_to(Path.cwd()) if space.path.is_relative_to(Path.cwd()) else space.path
    )
    lines = [f"swarm {space.name} ({shown}): {space.description}"]
    drew = (
        f"drew {len(drawn.configurations)} configurations of {space.size:,} combinations "
        f"with seed {plan.seed}"
    )
    if drawn.impossible:
        drew += f" ({drawn.impossible:,} impossible combinations skipped)"
    lines.append(drew)
    if drawn.exhausted:
        lines.append("the space holds no other possible configuration: all of them are checked")
    checked = "safety and liveness" if plan.liveness else "safety only"
    lines.append(
        f"budget per configuration: {budget_text(plan.budget)}; {checked}; engine {plan.engine}"
    )
    return lines


# The heading of the configuration lines (`configuration_line`).
COLUMNS = f"{'#':>3}  {'verdict':<10}  {'states':>9}  {'seconds':>7}  reproduce with"


def configuration_line(result: ConfigResult) -> str:
    """One configuration's number, verdict, states and seconds, and its `check` command."""
    configuration = result.configuration
    return (
        f"{configuration.number:>3}  {result.verdict:<10}  {result.distinct_states:>9,}  "
        f"{result.elapsed_s:>7.2f}  {configuration.command()}"
    )


def coverage_lines(report: SwarmReport, *, verbose: bool) -> list[str]:
    """The rules the configurations reached together, and those none reached."""
    matrix = report.matrix
    if not matrix.known:
        return []
    union = matrix.union
    lines = [f"union of {len(report.results)} configurations: " + totals_line(matrix.known, union)]
    lines.extend(never_lines(matrix.known, union, verbose=verbose))
    reference = report.plan.reference
    if reference:
        beyond = report.beyond_reference()
        lines.append(
            f"reached beyond the {len(reference)} rules the reference presets reach: "
            f"{len(beyond) or 'none'}"
        )
        lines.extend(f"  {rule_id}" for rule_id in beyond)
    return lines


def violation_lines(report: SwarmReport) -> list[str]:
    """Every violation: where it was found, the command that reproduces it, its counterexample."""
    lines: list[str] = []
    for result, found in report.violations():
        configuration = result.configuration
        lines.append(
            f"configuration {configuration.number} fails; reproduce with: {configuration.command()}"
        )
        lines.extend(found.text.splitlines())
    return lines


def summary_lines(report: SwarmReport) -> list[str]:
    """The verdict with how many configurations passed, failed and were stopped, and the time."""
    counts = {verdict: 0 for verdict in ("fail", "incomplete", "pass")}
    for result in report.results:
        counts[result.verdict] += 1
    spent = sum(result.elapsed_s for result in report.results)
    states = sum(result.distinct_states for result in report.results)
    checked = f"{len(report.results)} configurations"
    if report.interrupted:
        drawn = len(report.plan.drawn.configurations)
        checked = f"{len(report.results)} of {drawn} configurations: interrupted (Ctrl-C)"
    return [
        *stopped_lines(report),
        f"verdict: {report.verdict} ({counts['fail']} failed, {counts['incomplete']} incomplete, "
        f"{counts['pass']} passed of {checked})",
        f"distinct states: {states:,} in all   elapsed: {report.elapsed_s:.2f} s "
        f"({spent:.2f} s of checks) on {report.plan.engine}",
    ]


def stopped_lines(report: SwarmReport) -> list[str]:
    """Which configurations their budget stopped before they were done (each with the limit
    that stopped it), if any: their verdict is no pass."""
    stopped = [result for result in report.results if result.verdict == "incomplete"]
    if not stopped:
        return []
    which = ", ".join(
        f"#{result.configuration.number} ({result.document.get('stopped_by') or 'stopped'})"
        for result in stopped
    )
    return [
        f"incomplete: {len(stopped)} of {len(report.results)} configurations stopped at their "
        f"budget ({budget_text(report.plan.budget)}) before exploring every state: {which}; "
        "raise --max-states or --max-seconds to finish them"
    ]


def report_lines(report: SwarmReport, *, verbose: bool) -> list[str]:
    """The report after the configuration lines: coverage, violations, summary."""
    return [
        *coverage_lines(report, verbose=verbose),
        *violation_lines(report),
        *summary_lines(report),
    ]


def _configuration_json(result: ConfigResult) -> dict[str, Any]:
    configuration = result.configuration
    return {
        "number": configuration.number,
        "preset": configuration.preset,
        "overrides": dict(configuration.overrides),
        "command": configuration.command(),
        "verdict": result.verdict,
        "distinct_states": result.distinct_states,
        "elapsed_s": round(result.elapsed_s, 3),
        "rules": list(result.rules),
        "check": result.document,
    }


def _violations_json(report: SwarmReport) -> list[dict[str, Any]]:
    return [
        {
            "configuration": result.configuration.number,
            "command": result.configuration.command(),
            "preset": result.configuration.preset,
            "overrides": dict(result.configuration.overrides),
            **found.document,
            "property": found.property_name,
            "kind": found.kind,
            "text": found.text,
        }
        for result, found in report.violations()
    ]


def report_json(report: SwarmReport) -> dict[str, Any]:
    """The whole report as the `--json` document (format 1)."""
    plan, matrix = report.plan, report.matrix
    totals: Any = matrix.as_json()["totals"]
    return {
        "format": JSON_FORMAT_VERSION,
        "space": plan.space.name,
        "space_file": str(plan.space.path),
        "seed": plan.seed,
        "combinations": plan.space.size,
        "examined": plan.drawn.examined,
        "impossible": plan.drawn.impossible,
        "exhausted": plan.drawn.exhausted,
        "budget": {"max_states": plan.budget.max_states, "max_seconds": plan.budget.max_seconds},
        "liveness": plan.liveness,
        "engine": plan.engine,
        "verdict": report.verdict,
        "interrupted": report.interrupted,
        "elapsed_s": round(report.elapsed_s, 3),
        "configurations": [_configuration_json(result) for result in report.results],
        "coverage": {
            "totals": totals,
            "reached": sorted(matrix.union),
            "never_reached": list(matrix.unreached()),
            "beyond_reference_presets": list(report.beyond_reference()),
        },
        "violations": _violations_json(report),
    }
