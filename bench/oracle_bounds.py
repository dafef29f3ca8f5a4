"""Ceilings on the oracle's speed, for `groupspec bench oracle --bounds`.

A trace is judged twice more, from events parsed beforehand: once as is (what reading and
parsing the JSON lines cost is left out), and once with every specification step replayed
from a recording of the first run, in call order, at no cost. The second is the speed any
cache of specification steps could reach at best, however good its keys: what is left is the
oracle's own bookkeeping (hypotheses, queues, id bindings, response comparison).
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from pathlib import Path

from groupspec.oracle.trace.oracle import Oracle
from groupspec.oracle.trace.profiles import DeviationProfile
from groupspec.oracle.trace.tracker import OracleSettings
from groupspec.oracle.trace.validate import coordinator_config
from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.coordinator import GroupCoordinatorSpec, Input
from groupspec.spec.state import CoordinatorState
from groupspec.spec.step import Outcome
from groupspec.wire.trace_format import TraceEvent, TraceReading, read_trace

# One recorded step: the kind of event and the time it was asked at (to catch a replay that
# drifted out of step with the recording), and the outcomes.
Recorded = tuple[type, int, tuple[Outcome, ...]]


class ReplayMismatch(Exception):
    """A replayed run asked for another step than the recorded run did at the same place."""


@dataclass(frozen=True)
class OracleBounds:
    """CPU seconds of the judgement from parsed events, with real and with replayed steps."""

    events: int
    steps: int
    parsed_cpu_s: float
    free_step_cpu_s: float


class _RecordingSpec(GroupCoordinatorSpec):
    """The specification, keeping each step's outcomes in call order."""

    def __init__(self, config: CoordinatorConfig) -> None:
        super().__init__(config)
        self.tape: list[Recorded] = []

    def step(self, state: CoordinatorState, event: Input, now_ms: int = 0) -> tuple[Outcome, ...]:
        """The specification's outcomes, recorded."""
        outcomes = super().step(state, event, now_ms)
        self.tape.append((type(event), now_ms, outcomes))
        return outcomes


class _ReplayingSpec(GroupCoordinatorSpec):
    """Answers each step with the recorded outcomes of the same place in the call order."""

    def __init__(self, config: CoordinatorConfig, tape: list[Recorded]) -> None:
        super().__init__(config)
        self.tape = tape
        self.used = 0

    def step(self, state: CoordinatorState, event: Input, now_ms: int = 0) -> tuple[Outcome, ...]:
        """The recorded outcomes; ReplayMismatch if the call differs from the recorded one."""
        if self.used >= len(self.tape):
            raise ReplayMismatch(f"step {self.used + 1} was never recorded")
        kind, at, outcomes = self.tape[self.used]
        if kind is not type(event) or at != now_ms:
            raise ReplayMismatch(
                f"step {self.used + 1}: recorded {kind.__name__} at {at} ms, asked "
                f"{type(event).__name__} at {now_ms} ms"
            )
        self.used += 1
        return outcomes


@dataclass(frozen=True)
class ParsedTrace:
    """A trace's events read beforehand, and the configuration its header gives."""

    config: CoordinatorConfig
    events: tuple[TraceEvent, ...]


def parse_trace(path: Path) -> ParsedTrace:
    """Read the trace at `path` (TraceFormatError naming the line of a bad one)."""
    reading = TraceReading()
    events = tuple(read_trace(path, reading))
    return ParsedTrace(coordinator_config(reading.header, {}, str(path)), events)


def record_steps(trace: ParsedTrace, settings: OracleSettings) -> list[Recorded]:
    """Judge `trace`, keeping every specification step's outcomes in call order."""
    recording = _RecordingSpec(trace.config)
    _judge(trace, settings, recording)
    return recording.tape


def replay_steps(
    trace: ParsedTrace, settings: OracleSettings, tape: list[Recorded]
) -> tuple[float, int]:
    """Judge `trace` with each step answered from `tape`: CPU seconds and divergences found.
    ReplayMismatch if the judgement asks for other steps than the tape holds."""
    replaying = _ReplayingSpec(trace.config, tape)
    cpu, divergences = _judge(trace, settings, replaying)
    if replaying.used != len(tape):
        raise ReplayMismatch(f"the replay took {replaying.used} of {len(tape)} recorded steps")
    return cpu, divergences


def measure_bounds(path: Path, settings: OracleSettings, repeat: int) -> OracleBounds:
    """Judge the trace at `path` from parsed events, with real and with replayed steps, each
    `repeat` times alternately; the best CPU time of each. ReplayMismatch if the replay does
    not follow the recording step for step, or does not find the same divergences."""
    trace = parse_trace(path)
    tape = record_steps(trace, settings)
    parsed = free = float("inf")
    # The events and the tape held in memory would otherwise be walked by every full garbage
    # collection while judging, a cost `validate`, which reads as it goes, does not have.
    gc.collect()
    gc.freeze()
    try:
        for _ in range(repeat):
            cpu, divergences = _judge(trace, settings, None)
            parsed = min(parsed, cpu)
            cpu, replayed = replay_steps(trace, settings, tape)
            free = min(free, cpu)
            if replayed != divergences:
                raise ReplayMismatch(f"the replay found {replayed} divergences, not {divergences}")
    finally:
        gc.unfreeze()
    return OracleBounds(len(trace.events), len(tape), parsed, free)


def _judge(
    trace: ParsedTrace, settings: OracleSettings, spec: GroupCoordinatorSpec | None
) -> tuple[float, int]:
    """What `validate` does with a trace's events, without reading them: CPU seconds taken and
    divergences found."""
    oracle = Oracle(trace.config, settings, DeviationProfile())
    if spec is not None:
        oracle.tracker.spec = spec
    started = time.process_time()
    for line, event in enumerate(trace.events, start=2):
        oracle.observe(event, line)
    if trace.events:
        oracle.finish(trace.events[-1].ts_ms)
    return time.process_time() - started, len(oracle.divergences)
