"""Check one copy of the specification, mutated or not, in a process of its own.

Each run copies `spec/` into a fresh temporary folder as `groupspec/spec`, writes the mutated
module there (cosmic-ray's text, `mutants.mutated_source`), and starts `mutant_worker` with
that folder first on its path. The worktree's `spec/` is never written, so a crash or a kill
cannot leave it mutated; the folder goes away with the run. The run is killed when it outlives
its deadline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .mutants import SPEC_DIR, SpecChange

WORKER_MODULE = "groupspec.mutation.mutant_worker"


@dataclass(frozen=True)
class PresetBudget:
    """A preset to check and what it may spend before it counts as a timeout."""

    name: str
    max_seconds: float | None = None
    max_states: int | None = None


@dataclass(frozen=True)
class PresetRecord:
    """What checking one preset gave (`mutant_worker`'s outcomes: pass, fail, incomplete,
    crash, isolation-error), with the lines of spec/ it ran when they were recorded."""

    preset: str
    outcome: str
    seconds: float
    failed: tuple[str, ...] = ()
    error: str | None = None
    stopped_by: str | None = None
    distinct_states: int | None = None
    transitions: int | None = None
    lines: Mapping[str, frozenset[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkerRun:
    """One worker process: a record per preset it finished, and how the process ended."""

    records: tuple[PresetRecord, ...]
    seconds: float
    timed_out: bool
    exit_code: int | None
    stderr: str


def check_copy(
    presets: Sequence[PresetBudget],
    *,
    mutant: SpecChange | None = None,
    deadline_s: float,
    coverage: bool = False,
    spec_dir: Path = SPEC_DIR,
    environment: Mapping[str, str] | None = None,
) -> WorkerRun:
    """Check `presets` in order on a copy of spec/ (with `mutant` applied), in a new process
    that is killed after `deadline_s` seconds; with `coverage`, record the lines each runs;
    `environment` adds variables to the worker's environment."""
    with tempfile.TemporaryDirectory(prefix="groupspec-mutant-") as scratch:
        root = Path(scratch)
        copy = root / "groupspec" / "spec"
        shutil.copytree(spec_dir, copy, ignore=shutil.ignore_patterns("__pycache__"))
        if mutant is not None:
            (copy / mutant.module).write_text(mutant.source(spec_dir), encoding="utf-8")
        results = root / "results.jsonl"
        job = {
            "spec_root": str(root),
            "results": str(results),
            "coverage": coverage,
            "presets": [
                {"name": p.name, "max_seconds": p.max_seconds, "max_states": p.max_states}
                for p in presets
            ],
        }
        inherited = os.environ.get("PYTHONPATH")
        path = str(root) if not inherited else os.pathsep.join([str(root), inherited])
        env = dict(os.environ, **(environment or {}), PYTHONPATH=path, PYTHONHASHSEED="0")
        started = time.monotonic()
        timed_out, exit_code, stderr = False, None, ""
        try:
            completed = subprocess.run(
                [sys.executable, "-P", "-m", WORKER_MODULE],
                input=json.dumps(job),
                capture_output=True,
                text=True,
                env=env,
                cwd=root,
                timeout=deadline_s,
                check=False,
            )
            exit_code, stderr = completed.returncode, completed.stderr
        except subprocess.TimeoutExpired:
            timed_out = True
        seconds = time.monotonic() - started
        records = _read_records(results)
    return WorkerRun(records, seconds, timed_out, exit_code, stderr[-2000:])


def _read_records(results: Path) -> tuple[PresetRecord, ...]:
    if not results.exists():
        return ()
    return tuple(
        _record(json.loads(line))
        for line in results.read_text(encoding="utf-8").splitlines()
        if line.strip()
    )


def _record(raw: Mapping[str, Any]) -> PresetRecord:
    return PresetRecord(
        preset=raw["preset"],
        outcome=raw["outcome"],
        seconds=float(raw.get("seconds", 0.0)),
        failed=tuple(raw.get("failed", ())),
        error=raw.get("error"),
        stopped_by=raw.get("stopped_by"),
        distinct_states=raw.get("distinct_states"),
        transitions=raw.get("transitions"),
        lines={module: frozenset(lines) for module, lines in raw.get("lines", {}).items()},
    )
