"""The unmutated run a mutation campaign measures against: each killer preset's time, size and
the lines of spec/ its check runs.

Each preset is checked twice on an unmutated copy of spec/, each time in a process of its own
(`mutant_run.check_copy`): once plainly, for its seconds (the mutants' time budgets are
multiples of them), and once under coverage.py, for the lines it runs, imports included. A
mutant whose lines a preset never runs behaves there exactly as the unmutated spec, so the
campaign checks a mutant only with the presets that run its lines (mutmut likewise runs only
the tests that reach the mutated function). The unmutated spec must pass every preset.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from groupspec.models.preset_models import load_model

from .mutant_run import PresetBudget, WorkerRun, check_copy
from .mutant_worker import PASS
from .mutants import SPEC_DIR, SpecChange

# No budget for the unmutated run: an hour is a hang, not a measurement.
BASELINE_DEADLINE_S = 3600.0


class BaselineError(RuntimeError):
    """The unmutated spec does not pass a killer preset, so no mutant can be judged by it."""


@dataclass(frozen=True)
class PresetBaseline:
    """One killer preset on the unmutated spec."""

    name: str
    seconds: float
    distinct_states: int
    transitions: int
    lines: Mapping[str, frozenset[int]]
    rules_reached: frozenset[str]

    def runs(self, mutant: SpecChange) -> bool:
        """Whether this preset's check runs any line of the mutant's code."""
        executed = self.lines.get(mutant.module, frozenset())
        return any(line in executed for line in mutant.lines)


@dataclass(frozen=True)
class Baseline:
    """The killer presets on the unmutated spec, cheapest first."""

    presets: tuple[PresetBaseline, ...]

    def running(self, mutant: SpecChange) -> tuple[PresetBaseline, ...]:
        """The presets whose check runs the mutant's code, cheapest first."""
        return tuple(preset for preset in self.presets if preset.runs(mutant))

    @property
    def rules_reached(self) -> frozenset[str]:
        """The rules any killer preset's check fires (as the preset files record them)."""
        return frozenset().union(*(preset.rules_reached for preset in self.presets))

    def preset(self, name: str) -> PresetBaseline:
        """The baseline of the preset called `name`."""
        return next(preset for preset in self.presets if preset.name == name)


def measure_baseline(
    presets: Sequence[str], *, workers: int = 1, spec_dir: Path = SPEC_DIR
) -> Baseline:
    """Check each preset on the unmutated spec, plainly and under coverage, `workers` at once."""
    jobs = [(name, with_coverage) for name in presets for with_coverage in (False, True)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        runs = list(
            pool.map(
                lambda job: check_copy(
                    [PresetBudget(job[0])],
                    deadline_s=BASELINE_DEADLINE_S,
                    coverage=job[1],
                    spec_dir=spec_dir,
                ),
                jobs,
            )
        )
    by_job = dict(zip(jobs, runs, strict=True))
    measured = [_preset_baseline(name, by_job[name, False], by_job[name, True]) for name in presets]
    return Baseline(tuple(sorted(measured, key=lambda preset: (preset.seconds, preset.name))))


def _preset_baseline(name: str, plain: WorkerRun, covered: WorkerRun) -> PresetBaseline:
    for run in (plain, covered):
        if len(run.records) != 1 or run.records[0].outcome != PASS:
            found = run.records[0].outcome if run.records else f"no result ({run.stderr.strip()})"
            detail = run.records[0].error if run.records and run.records[0].error else ""
            raise BaselineError(f"the unmutated spec does not pass {name}: {found} {detail}")
    timed, lines = plain.records[0], covered.records[0].lines
    expected = load_model(name).expected
    reached = expected.rules_reached if expected is not None else None
    return PresetBaseline(
        name=name,
        seconds=timed.seconds,
        distinct_states=timed.distinct_states or 0,
        transitions=timed.transitions or 0,
        lines=lines,
        rules_reached=frozenset(reached or ()),
    )
