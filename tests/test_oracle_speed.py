"""The oracle's optimized path judges exactly as its plain one (`OracleSettings.optimized`):
the same verdicts, divergences, tolerated deviations, counts and judged fractions, on traces
of the impl with seeded faults, with a harmless deviation and with responses left out."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_impl_conformance import MUTATIONS
from test_oracle_resync import first_generation_zero

from groupspec.bench.oracle_bounds import (
    ReplayMismatch,
    parse_trace,
    record_steps,
    replay_steps,
)
from groupspec.checker.rewrite import RewriteMemo, rewrite_strings
from groupspec.cli.main import main
from groupspec.conformance.impl_traces import write_impl_trace
from groupspec.oracle.trace.tracker import OracleSettings
from groupspec.oracle.trace.validate import validate_trace

MINUTES = 60_000
OPTIMIZED = OracleSettings()
REFERENCE = replace(OPTIMIZED, optimized=False)


def judgement(path: Path, oracle_settings: OracleSettings) -> dict[str, Any]:
    """Everything a verdict says but how long it took."""
    document = validate_trace(path, settings=oracle_settings, shrink=False).to_json()
    del document["elapsed_s"]
    return document


def without_some_responses(source: Path, target: Path, seed: int, share: float) -> Path:
    """The trace with a seeded share of its responses removed (requests left unanswered)."""
    rng = random.Random(seed)
    with source.open() as lines, target.open("w") as out:
        for number, line in enumerate(lines):
            if number and json.loads(line)["dir"] == "response" and rng.random() < share:
                continue
            out.write(line)
    return target


@settings(max_examples=8, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 10_000),
    consumers=st.integers(1, 5),
    churn=st.booleans(),
    faults=st.sets(st.sampled_from(sorted(MUTATIONS)), max_size=2),
    generation_zero=st.booleans(),
    dropped=st.sampled_from((0.0, 0.01)),
)
def test_the_optimized_oracle_judges_as_the_reference(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    consumers: int,
    churn: bool,
    faults: set[str],
    generation_zero: bool,
    dropped: float,
) -> None:
    folder = tmp_path_factory.mktemp("trace")
    path = folder / "t.jsonl"
    with pytest.MonkeyPatch.context() as patch:
        for fault in faults:
            owner, attribute, replacement = MUTATIONS[fault]
            patch.setattr(owner, attribute, replacement)
        with path.open("w") as out:
            write_impl_trace(
                out, seed=seed, duration_ms=2 * MINUTES, consumers=consumers, churn=churn
            )
    if generation_zero:
        path = first_generation_zero(path, folder / "zero.jsonl")
    if dropped:
        path = without_some_responses(path, folder / "dropped.jsonl", seed, dropped)
    assert judgement(path, OPTIMIZED) == judgement(path, REFERENCE)


def test_the_comparison_sees_a_difference_in_judgement(tmp_path: Path) -> None:
    # The property above compares whole verdicts: a trace with a fault and the same trace
    # without it are told apart, so equal judgements mean equal verdicts.
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    with good.open("w") as out:
        write_impl_trace(out, seed=3, duration_ms=2 * MINUTES, consumers=3)
    without_some_responses(good, bad, seed=3, share=0.05)
    assert judgement(good, OPTIMIZED) != judgement(bad, OPTIMIZED)
    assert judgement(bad, OPTIMIZED)["divergence_count"] > 0


@dataclass(frozen=True)
class Pair:
    left: Any
    right: Any


NAMES = st.sampled_from(("a", "b", "c", "d"))
VALUES = st.recursive(
    NAMES | st.integers(0, 3) | st.none(),
    lambda inner: (
        st.tuples(inner, inner) | st.builds(Pair, inner, inner) | st.frozensets(NAMES, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(values=st.lists(VALUES, min_size=1, max_size=4), renamed=st.dictionaries(NAMES, NAMES))
def test_a_memo_changes_nothing_a_rewrite_returns(values: list[Any], renamed: dict[str, str]):
    # One memo across values that share parts, as the oracle uses it across states.
    memo: RewriteMemo = {}
    shared = [Pair(value, values[0]) for value in values]
    for value in [*values, *shared, *values]:
        assert rewrite_strings(value, renamed, memo) == rewrite_strings(value, renamed)


def test_bench_bounds_replay_every_step_and_judge_alike(tmp_path: Path, capsys) -> None:
    """`bench oracle --bounds` judges each trace again from parsed events, with real steps and
    with the recorded ones replayed: the replay takes every recorded step, and the figures
    come with their ratios to the optimized path. A divergent copy of each trace is judged
    against it."""
    code = main(["bench", "oracle", "--events", "400", "--bounds", "--no-baseline", "--json", "-"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)["traces"]
    assert [row["trace"] for row in rows] == ["steady", "churn"]
    for row in rows:
        bounds = row["bounds"]
        assert bounds["steps"] > 0
        assert bounds["parsed_events_per_cpu_s"] > 0 and bounds["free_step_events_per_cpu_s"] > 0
        assert bounds["free_step_ratio"] > 0 and bounds["parsed_ratio"] > 0
        # The divergent copy is as long as the trace, diverges, and is timed against it.
        divergent = row["divergent"]
        assert divergent["status"] == "diverged" and divergent["events"] == row["events"]
        assert divergent["ratio"] > 0 and divergent["kinds"] == sum(divergent["excerpts"].values())


def test_a_replay_that_drifts_from_its_recording_is_refused(tmp_path: Path) -> None:
    """A recording replayed against another trace asks for other steps: ReplayMismatch, never
    figures for a run that judged something else."""
    paths = []
    for seed in (1, 2):
        path = tmp_path / f"{seed}.jsonl"
        with path.open("w") as out:
            write_impl_trace(out, seed=seed, duration_ms=2 * MINUTES, consumers=3, churn=True)
        paths.append(path)
    tape = record_steps(parse_trace(paths[0]), OPTIMIZED)
    assert replay_steps(parse_trace(paths[0]), OPTIMIZED, tape)[1] == 0
    with pytest.raises(ReplayMismatch):
        replay_steps(parse_trace(paths[1]), OPTIMIZED, tape)
