"""A mutation campaign over spec/: the exhaustive checks of the killer presets judge each mutant.

A mutant is checked with the presets whose unmutated check runs its code, cheapest first, and
the first preset that does not pass kills it: by a **property** (an invariant, an action
property or liveness fails), by a **crash** (the mutated spec raises, on import or in a step;
a worker that dies without a word counts here too), or by a **timeout** (a preset's search
spends more than `Budget.factor` times the unmutated run's seconds, plus `Budget.slack_s`, or
explores more than `factor` times its states; cosmic-ray and mutmut likewise count a timeout as
a kill and report it apart). A mutant that every preset passes **survives**; one whose code no
preset runs survives without a check.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from .baseline import Baseline, PresetBaseline, measure_baseline
from .faults import HandFault
from .infection import Infection, infection
from .mutant_run import PresetBudget, WorkerRun, check_copy
from .mutant_worker import CRASH, FAIL, INCOMPLETE, ISOLATION_ERROR
from .mutants import SPEC_DIR, Draw, Mutant, draw_mutants, generate_mutants, pick_mutants

# How a mutant ends.
PROPERTY, TIMEOUT, SURVIVED = "property", "timeout", "survived"
KILL_KINDS = (PROPERTY, CRASH, TIMEOUT)
# What a worker process may spend starting and importing, beyond its presets' budgets.
STARTUP_S = 30.0


class MutationRunError(RuntimeError):
    """The machinery failed (a worker checked the wrong copy): the run measures nothing."""


@dataclass(frozen=True)
class Budget:
    """What a mutant may spend on a preset: `factor` times the unmutated run, plus slack."""

    factor: float = 5.0
    slack_s: float = 10.0

    def for_preset(self, preset: PresetBaseline) -> PresetBudget:
        """The preset's time and state budgets."""
        return PresetBudget(
            preset.name,
            max_seconds=self.factor * preset.seconds + self.slack_s,
            max_states=int(self.factor * preset.distinct_states) + 1,
        )


C = TypeVar("C", Mutant, HandFault)


@dataclass(frozen=True)
class MutantResult(Generic[C]):
    """How one mutant ended: kill kind or survived, the preset that decided it and why.

    `checked_by` lists the presets that run the mutant's code (empty: none does); `changed`
    lists those a survivor passed with other counts of states or transitions than the
    unmutated spec (its behaviour changed and no property noticed); `infection` says, for a
    survivor whose code a preset runs, whether its mutated expression ever computed another
    value in those presets' runs (mutation/infection.py; None when not measured)."""

    mutant: C
    kind: str
    checked_by: tuple[str, ...]
    seconds: float
    killer: str | None = None
    detail: str = ""
    changed: tuple[str, ...] = ()
    infection: Infection | None = None

    @property
    def killed(self) -> bool:
        """Whether a preset killed the mutant."""
        return self.kind != SURVIVED


@dataclass(frozen=True)
class Campaign:
    """A sampled campaign: what was generated and drawn, the baseline, and each mutant's end."""

    generated: int
    in_annotations: int
    stillborn: tuple[Mutant, ...]
    sample_size: int
    seed: int
    baseline: Baseline
    budget: Budget
    workers: int
    baseline_seconds: float
    seconds: float
    results: tuple[MutantResult[Mutant], ...]
    # The mutants were named (--mutant), not drawn.
    chosen: bool = False

    @property
    def population(self) -> int:
        """The mutants the sample was drawn from (generated, less those in annotations)."""
        return self.generated - self.in_annotations


def judge(
    mutant: C,
    baseline: Baseline,
    budget: Budget,
    spec_dir: Path = SPEC_DIR,
    *,
    probe_survivors: bool = False,
) -> MutantResult[C]:
    """Check `mutant` with the presets that run its code, cheapest first, until one kills it;
    with `probe_survivors`, ask of a generated mutant that survives whether its mutated
    expression ever computed another value in those presets' runs."""
    plan = baseline.running(mutant)
    if not plan:
        return MutantResult(mutant, SURVIVED, (), 0.0, detail="no killer preset runs this code")
    budgets = [budget.for_preset(preset) for preset in plan]
    deadline = sum(item.max_seconds or 0.0 for item in budgets) + STARTUP_S
    run = check_copy(budgets, mutant=mutant, deadline_s=deadline, spec_dir=spec_dir)
    result = classify(mutant, plan, run)
    if probe_survivors and not result.killed and isinstance(mutant, Mutant):
        found = infection(mutant, tuple(budgets), deadline, spec_dir)
        result = replace(result, infection=found, seconds=result.seconds + found.seconds)
    return result


def classify(mutant: C, plan: Sequence[PresetBaseline], run: WorkerRun) -> MutantResult[C]:
    """The end of a mutant checked by the presets of `plan` in the worker run `run`."""
    names = tuple(preset.name for preset in plan)
    for record in run.records:
        if record.outcome == ISOLATION_ERROR:
            raise MutationRunError(f"{mutant.ident}: {record.error}")
        if record.outcome == FAIL:
            return MutantResult(
                mutant, PROPERTY, names, run.seconds, record.preset, ", ".join(record.failed)
            )
        if record.outcome == CRASH:
            return MutantResult(
                mutant, CRASH, names, run.seconds, record.preset, record.error or ""
            )
        if record.outcome == INCOMPLETE:
            detail = f"over its {record.stopped_by} budget"
            return MutantResult(mutant, TIMEOUT, names, run.seconds, record.preset, detail)
    unfinished = names[len(run.records)] if len(run.records) < len(names) else None
    if run.timed_out:
        return MutantResult(
            mutant, TIMEOUT, names, run.seconds, unfinished, "the worker outlived its deadline"
        )
    if unfinished is not None:
        detail = f"the worker exited with code {run.exit_code}: {run.stderr.strip()[-200:]}"
        return MutantResult(mutant, CRASH, names, run.seconds, unfinished, detail)
    changed = tuple(
        record.preset
        for record, preset in zip(run.records, plan, strict=True)
        if (record.distinct_states, record.transitions)
        != (preset.distinct_states, preset.transitions)
    )
    return MutantResult(mutant, SURVIVED, names, run.seconds, changed=changed)


ProgressCallback = Callable[[int, int, MutantResult[Any]], None]


def run_campaign(
    presets: Sequence[str],
    *,
    sample: int,
    seed: int,
    workers: int = 1,
    budget: Budget | None = None,
    progress: ProgressCallback | None = None,
    spec_dir: Path = SPEC_DIR,
    probe_survivors: bool = True,
    chosen: Sequence[str] = (),
) -> Campaign:
    """Generate every mutant of spec/, draw `sample` of them (seeded) or take the `chosen` ones
    (by `Mutant.ident`), measure the unmutated presets, and judge each mutant; `workers`
    mutants are checked at once; with `probe_survivors`, each survivor whose code a preset runs
    is probed for infection."""
    budget = budget or Budget()
    started = time.monotonic()
    mutants = generate_mutants(spec_dir)
    draw = (
        Draw(pick_mutants(mutants.runnable, chosen), ())
        if chosen
        else draw_mutants(mutants.runnable, sample, seed, spec_dir)
    )
    drawn = draw.mutants
    baseline = measure_baseline(presets, workers=workers, spec_dir=spec_dir)
    baseline_seconds = time.monotonic() - started
    ends: dict[Mutant, MutantResult[Mutant]] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [
            pool.submit(judge, mutant, baseline, budget, spec_dir, probe_survivors=probe_survivors)
            for mutant in drawn
        ]
        try:
            for future in as_completed(futures):
                result = future.result()
                ends[result.mutant] = result
                if progress is not None:
                    progress(len(ends), len(drawn), result)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return Campaign(
        generated=mutants.total,
        in_annotations=len(mutants.in_annotations),
        stillborn=draw.stillborn,
        sample_size=len(drawn),
        seed=seed,
        baseline=baseline,
        budget=budget,
        workers=workers,
        baseline_seconds=baseline_seconds,
        seconds=time.monotonic() - started,
        results=tuple(ends[mutant] for mutant in drawn),
        chosen=bool(chosen),
    )


@dataclass(frozen=True)
class FaultCampaign:
    """The hand-written faults (mutation/faults.py), each judged like a mutant."""

    baseline: Baseline
    budget: Budget
    workers: int
    seconds: float
    results: tuple[MutantResult[HandFault], ...]


def run_fault_campaign(
    presets: Sequence[str],
    faults: Sequence[HandFault],
    *,
    workers: int = 1,
    budget: Budget | None = None,
    progress: ProgressCallback | None = None,
    spec_dir: Path = SPEC_DIR,
) -> FaultCampaign:
    """Measure the unmutated presets, then judge each hand-written fault as a mutant is judged."""
    budget = budget or Budget()
    started = time.monotonic()
    baseline = measure_baseline(presets, workers=workers, spec_dir=spec_dir)
    ends: dict[str, MutantResult[HandFault]] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(judge, fault, baseline, budget, spec_dir) for fault in faults]
        try:
            for future in as_completed(futures):
                result = future.result()
                ends[result.mutant.ident] = result
                if progress is not None:
                    progress(len(ends), len(faults), result)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return FaultCampaign(
        baseline,
        budget,
        workers,
        time.monotonic() - started,
        tuple(ends[fault.ident] for fault in faults),
    )
