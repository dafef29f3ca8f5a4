"""A trace campaign driven by rule coverage: seeds × scenarios of simulated-consumer traces of
the impl, each judged by the oracle, and the smallest set of them found that exercises every
specification rule any of them did.

The checker's presets are chosen for the rules their exhaustive checks reach
(docs/coverage.md); this does the same for traces: a trace counts for the rules the oracle's
accepted hypotheses fired while judging it (`Verdict.rules`), and traces are kept greedily, the
one adding the most rules first, until none adds any.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from groupspec.oracle.trace.tracker import OracleSettings
from groupspec.oracle.trace.validate import Verdict, validate_lines

from .impl_traces import SCENARIOS, Scenario, write_impl_trace

T = TypeVar("T")

# The hard cases the campaign is for: rules plain churn never reached (issue 19, item 6).
HARD_CASES: dict[str, str] = {
    "join.static_replacement.completing_rebalances": "a static replacement during "
    "CompletingRebalance",
    "timer.pending_member_expired": "a pending member's expiry",
    "rebalance.leader_reelected": "a join completing with a leader that had not rejoined",
}


@dataclass(frozen=True)
class CampaignTrace:
    """One trace of the campaign: how it was made, its text, and the oracle's verdict."""

    scenario: str
    seed: int
    text: str
    verdict: Verdict

    @property
    def name(self) -> str:
        """`scenario-seed`, the trace's file name without `.jsonl`."""
        return f"{self.scenario}-{self.seed}"

    @property
    def rules(self) -> frozenset[str]:
        """The specification rules the trace exercised."""
        return self.verdict.rules


@dataclass(frozen=True)
class Campaign:
    """Every trace run and the ones kept for coverage, in the order they were kept."""

    traces: tuple[CampaignTrace, ...]
    kept: tuple[CampaignTrace, ...]

    @property
    def union(self) -> frozenset[str]:
        """The rules some trace exercised."""
        return frozenset().union(*(trace.rules for trace in self.traces))

    def by_scenario(self) -> dict[str, frozenset[str]]:
        """The rules each scenario's traces exercised together."""
        found: dict[str, frozenset[str]] = {}
        for trace in self.traces:
            found[trace.scenario] = found.get(trace.scenario, frozenset()) | trace.rules
        return found

    def failed(self) -> tuple[CampaignTrace, ...]:
        """The traces that did not pass (the simulated coordinator departed from the spec)."""
        return tuple(trace for trace in self.traces if not trace.verdict.passed)


def run_campaign(
    scenarios: Sequence[Scenario] = tuple(SCENARIOS.values()),
    seeds: Iterable[int] = range(3),
    *,
    duration_ms: int = 10 * 60_000,
    consumers: int = 4,
    settings: OracleSettings | None = None,
    progress: Callable[[CampaignTrace], None] | None = None,
) -> Campaign:
    """Write and judge a trace per scenario and seed; keep the fewest that cover their union."""
    traces = []
    for seed in seeds:
        for scenario in scenarios:
            out = io.StringIO()
            write_impl_trace(
                out, seed=seed, duration_ms=duration_ms, consumers=consumers, scenario=scenario
            )
            text = out.getvalue()
            name = f"{scenario.name}-{seed}"
            verdict = validate_lines(_reader(text), name, None, settings, False)
            trace = CampaignTrace(scenario.name, seed, text, verdict)
            traces.append(trace)
            if progress is not None:
                progress(trace)
    return Campaign(tuple(traces), greedy_cover(traces, lambda trace: trace.rules))


def _reader(text: str) -> Callable[[], Iterator[str]]:
    """What `validate_lines` reads a trace through: its lines, afresh each call."""
    lines = text.splitlines()
    return lambda: iter(lines)


def greedy_cover(items: Sequence[T], rules: Callable[[T], frozenset[str]]) -> tuple[T, ...]:
    """Items taken one at a time, each adding the most `rules` not yet covered (the earliest
    on a tie), until none adds any: together they cover what all of `items` do."""
    kept: list[T] = []
    covered: frozenset[str] = frozenset()
    left = list(items)
    while left:
        best = max(left, key=lambda item: len(rules(item) - covered))
        if not rules(best) - covered:
            break
        kept.append(best)
        covered |= rules(best)
        left.remove(best)
    return tuple(kept)
