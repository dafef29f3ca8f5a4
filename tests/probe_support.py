"""What the probe tests share: run probes against a target and judge every trace once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from groupspec.oracle.trace.validate import PASS, Verdict, validate_trace
from groupspec.record.workload.probes import PROBES, ProbeResult, run_probes_against


@dataclass(frozen=True)
class Judged:
    """A probe's run and its trace's verdict."""

    result: ProbeResult
    verdict: Verdict


def run_and_judge(target: str, trace_dir: Path) -> dict[str, Judged]:
    """Every probe against target `target` (a `make_target` name), each trace judged."""
    results = run_probes_against(target, trace_dir)
    return {r.name: Judged(r, validate_trace(r.trace, shrink=False)) for r in results}


def problems(judged: Judged, expected_rules: frozenset[str] | None = None) -> list[str]:
    """What is wrong with a probe's run: it stopped, its trace did not pass with every event
    judged, or it did not exercise the rules it is written for (`expected_rules`, default
    the probe's own)."""
    found = []
    if judged.result.error is not None:
        found.append(f"stopped: {judged.result.error}")
    verdict = judged.verdict
    if verdict.status != PASS or verdict.judged_fraction != 1.0:
        reasons = [f"line {d.line} {d.api}: {d.reason} {d.observed}" for d in verdict.divergences]
        found.append(f"{verdict.status}, {verdict.judged_fraction:.1%} judged: {reasons}")
    wanted = (
        frozenset(PROBES[judged.result.name].rules) if expected_rules is None else expected_rules
    )
    missing = sorted(wanted - verdict.rules)
    if missing:
        found.append(f"rules not exercised: {missing}")
    return found
