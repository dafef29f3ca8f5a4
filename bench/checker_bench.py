"""`groupspec bench checker`: how fast the breadth-first engine explores the reference presets.

For each preset the benchmark runs one complete search in one process and one with every core,
and reports distinct states, transitions, wall seconds, states and transitions per second,
the bytes each stored state costs, and the speedup of all cores over one. Both runs must agree
on states, transitions and depth (the engine guarantees it); a disagreement is reported.

Bytes per stored state are measured, not estimated from tracemalloc (which slows the search
several times): after the search, the bytes of the seen set (keys and parents in arrays, and
the filter in front of them; `VisitedStore.nbytes`) divided by the number of states. States
themselves are not kept once expanded, so this is the memory that grows with the state space
(the recorded graph, when asked for, is separate).

For two-phase commit the benchmark also runs a hand-written breadth-first search of the same
model (`two_phase_baseline`), in the same run and right before each engine run, and reports the
engine's time as a ratio of it: the machines are shared, so only a ratio measured side by side
means anything. Every other preset (the classic group worlds and the KIP-848 worlds) is
measured against the same yardstick: the hand-written search of two-phase commit with
`YARDSTICK_RESOURCE_MANAGERS` resource managers runs right before each engine run, and the
preset's states/s is reported as a fraction of that loop's states/s. The models differ, so the
fraction is not an overhead; it is a rate that a busy or a faster machine scales with the
yardstick, which makes figures of different runs comparable.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from groupspec.checker.bfs import search
from groupspec.checker.store import VisitedStore

from .two_phase_baseline import two_phase_bfs

# Besides the group-world presets (models.preset_models.group_preset_names), the calibration model.
CALIBRATION_PRESET = "two-phase:8"
# The hand-written two-phase search timed before each run of any other preset (50,816 states).
YARDSTICK_RESOURCE_MANAGERS = 6
# The quick mode's two-phase commit (6 RMs: 50,816 states) keeps smoke tests short.
QUICK_PRESETS = ("static-2", "two-phase:6")
TWO_PHASE = "two-phase"


@dataclass(frozen=True)
class Run:
    """One search: its size, its wall time and the rates derived from them."""

    workers: int
    distinct_states: int
    transitions: int
    depth: int
    verdict: str
    seconds: float
    states_per_s: float
    transitions_per_s: float
    bytes_per_state: float
    # Two-phase commit only: the hand-written search's seconds, measured just before.
    baseline_seconds: float | None = None
    # Every other preset: the states/s of the hand-written two-phase search (the yardstick),
    # measured just before.
    yardstick_states_per_s: float | None = None

    @property
    def baseline_ratio(self) -> float | None:
        """The engine's time over the hand-written search's."""
        return None if self.baseline_seconds is None else self.seconds / self.baseline_seconds

    @property
    def yardstick_ratio(self) -> float | None:
        """The preset's states/s as a fraction of the yardstick's, measured in the same run."""
        if self.yardstick_states_per_s is None:
            return None
        return self.states_per_s / self.yardstick_states_per_s


@dataclass(frozen=True)
class PresetBench:
    """A preset's runs, one per worker count, and how much faster the last is than the first."""

    preset: str
    overrides: Mapping[str, str]
    runs: tuple[Run, ...]
    speedup: float
    consistent: bool


def parse_preset(spec: str) -> tuple[str, dict[str, str]]:
    """A benchmark preset spec: a preset name, or "two-phase:N" for N resource managers."""
    name, _, count = spec.partition(":")
    if name == TWO_PHASE and count:
        return name, {"resource_managers": count}
    if count:
        raise ValueError(f"{spec!r}: only two-phase takes a size (two-phase:N)")
    return name, {}


def seen_set_bytes(parents: Mapping[int, int | None]) -> int:
    """Bytes held by a BFS seen set: the engine's store reports its own; for a plain dict, the
    dict and every distinct int object in it."""
    if isinstance(parents, VisitedStore):
        return parents.nbytes()
    objects = {id(key): key for key in parents}
    objects.update((id(value), value) for value in parents.values() if value is not None)
    return sys.getsizeof(parents) + sum(sys.getsizeof(value) for value in objects.values())


def default_presets() -> tuple[str, ...]:
    """Every group-world preset, every KIP-848 preset, then two-phase commit with 8 resource
    managers."""
    # models import the checker, not back
    from groupspec.models.preset_models import KIP848_KIND, group_preset_names
    from groupspec.models.presets import preset_names

    return (*group_preset_names(), *preset_names(KIP848_KIND), CALIBRATION_PRESET)


def yardstick_states_per_s() -> float:
    """States/s of the hand-written two-phase search with the yardstick's size, timed now."""
    started = time.perf_counter()
    states, _ = two_phase_bfs(YARDSTICK_RESOURCE_MANAGERS)
    return round(states / max(time.perf_counter() - started, 1e-9), 1)


def bench_preset(spec: str, worker_counts: Sequence[int]) -> PresetBench:
    """Search the preset once per worker count and compare the runs."""
    from groupspec.models.preset_models import load_model  # models import the checker, not back

    name, overrides = parse_preset(spec)
    model = load_model(name, overrides).model
    runs = []
    for workers in worker_counts:
        baseline = yardstick = None
        if name == TWO_PHASE:
            started = time.perf_counter()
            two_phase_bfs(int(overrides.get("resource_managers", "3")))
            baseline = round(time.perf_counter() - started, 3)
        else:
            yardstick = yardstick_states_per_s()
        result = search(model, workers=workers)
        seconds = max(result.elapsed_s, 1e-9)
        runs.append(
            Run(
                workers,
                result.distinct_states,
                result.transitions,
                result.depth,
                result.verdict,
                round(seconds, 3),
                round(result.distinct_states / seconds, 1),
                round(result.transitions / seconds, 1),
                round(seen_set_bytes(result.parents) / max(1, result.distinct_states), 1),
                baseline,
                yardstick,
            )
        )
    first, last = runs[0], runs[-1]
    consistent = all(
        (run.distinct_states, run.transitions, run.depth)
        == (first.distinct_states, first.transitions, first.depth)
        for run in runs
    )
    return PresetBench(
        spec, overrides, tuple(runs), round(first.seconds / last.seconds, 2), consistent
    )


def bench_checker(
    presets: Sequence[str] | None = None,
    workers: Sequence[int] | None = None,
    quick: bool = False,
) -> list[PresetBench]:
    """Benchmark every preset single-process and with all cores (or the given worker counts)."""
    chosen = tuple(presets) if presets else (QUICK_PRESETS if quick else default_presets())
    counts = tuple(workers) if workers else tuple(sorted({1, os.cpu_count() or 1}))
    return [bench_preset(spec, counts) for spec in chosen]


def bench_json(results: Sequence[PresetBench]) -> dict[str, object]:
    """The benchmark as a JSON-ready dict."""
    return {
        "cores": os.cpu_count(),
        "presets": [
            {
                **asdict(bench),
                "overrides": dict(bench.overrides),
                "runs": [
                    {
                        **asdict(r),
                        "baseline_ratio": r.baseline_ratio,
                        "yardstick_ratio": r.yardstick_ratio,
                    }
                    for r in bench.runs
                ],
            }
            for bench in results
        ],
    }


def _versus_hand_written(run: Run) -> str:
    """Two-phase commit: the engine's time as a multiple of the hand-written search's; any
    other preset: its states/s as a fraction of the hand-written two-phase search's."""
    if run.baseline_ratio is not None:
        return f"{run.baseline_ratio:.2f}x of {run.baseline_seconds:.2f} s"
    if run.yardstick_ratio is not None:
        return f"rate {run.yardstick_ratio:.3f} of {run.yardstick_states_per_s:,.0f}/s"
    return ""


def format_table(results: Sequence[PresetBench]) -> str:
    """The benchmark as an aligned text table, one line per run."""
    header = (
        "preset", "workers", "states", "transitions", "depth", "seconds",
        "states/s", "transitions/s", "B/state", "speedup", "vs hand-written",
    )  # fmt: skip
    rows = [header]
    for bench in results:
        for run in bench.runs:
            last = run is bench.runs[-1] and len(bench.runs) > 1
            rows.append(
                (
                    bench.preset,
                    str(run.workers),
                    f"{run.distinct_states:,}",
                    f"{run.transitions:,}",
                    str(run.depth),
                    f"{run.seconds:.2f}",
                    f"{run.states_per_s:,.0f}",
                    f"{run.transitions_per_s:,.0f}",
                    f"{run.bytes_per_state:.0f}",
                    (f"{bench.speedup:.2f}x" if last else "")
                    + ("" if bench.consistent else " MISMATCH"),
                    _versus_hand_written(run),
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    )
