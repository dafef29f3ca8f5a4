"""The process that checks one copy of the specification: `python -P -m groupspec.mutation.mutant_worker`.

`mutant_run` starts it with a copy of `spec/` (mutated or not) first on PYTHONPATH, so
`groupspec.spec` is the copy while the checker and the models are the installed ones. It reads
a job (JSON) on standard input: the copy's folder, the result file, and the presets to check in
order, each with its state and time budget, and whether to record which lines of the copy run.
For each preset it appends one JSON line to the result file and stops after the first preset
that does not pass. Nothing of groupspec is imported before the coverage recorder starts, so
the lines a module runs when it is imported count too.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

# The outcomes of one preset's check.
PASS, FAIL, INCOMPLETE, CRASH = "pass", "fail", "incomplete", "crash"
# The copy that was imported is not the one the job named: the run measures nothing.
ISOLATION_ERROR = "isolation-error"


def main() -> int:
    """Run the job on standard input; exit 0 (outcomes are in the result file)."""
    job = json.load(sys.stdin)
    spec_root = Path(job["spec_root"]).resolve()
    results = Path(job["results"])
    for preset in job["presets"]:
        record = _check_preset(preset, spec_root, bool(job.get("coverage")))
        with results.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
        if record["outcome"] != PASS:
            break
    return 0


def _check_preset(preset: dict[str, Any], spec_root: Path, with_coverage: bool) -> dict[str, Any]:
    record: dict[str, Any] = {"preset": preset["name"]}
    recorder = _start_coverage(spec_root) if with_coverage else None
    started = time.monotonic()
    try:
        import groupspec.spec

        imported = Path(groupspec.spec.__file__).resolve()
        if not imported.is_relative_to(spec_root):
            record.update(outcome=ISOLATION_ERROR, error=f"groupspec.spec is {imported}")
            return record
        record.update(_check(preset))
    except Exception as error:  # the mutated spec raised: that is the outcome
        record.update(outcome=CRASH, error=_last_frame(error))
    record["seconds"] = time.monotonic() - started
    if recorder is not None:
        recorder.stop()
        record["lines"] = _executed_lines(recorder, spec_root)
    return record


def _check(preset: dict[str, Any]) -> dict[str, Any]:
    from groupspec.checker.bfs import Limits
    from groupspec.checker.check import check
    from groupspec.models.preset_models import load_model

    loaded = load_model(preset["name"])
    limits = Limits(max_states=preset.get("max_states"), max_seconds=preset.get("max_seconds"))
    result = check(loaded.model, limits=limits)
    search = result.search
    return {
        "outcome": {"pass": PASS, "fail": FAIL}.get(result.verdict, INCOMPLETE),
        "failed": list(result.failed),
        "stopped_by": search.stopped_by,
        "distinct_states": search.distinct_states,
        "transitions": search.transitions,
        "depth": search.depth,
    }


def _start_coverage(spec_root: Path) -> Any:
    # coverage.py. By name, because groupspec's own `coverage/` folder shadows it wherever the
    # checkout is on the path (mypy's, `python -m` in the checkout); this process runs with -P.
    coverage_py = importlib.import_module("coverage")
    recorder = coverage_py.Coverage(data_file=None, include=[f"{spec_root}/*"], branch=False)
    recorder.start()
    return recorder


def _executed_lines(recorder: Any, spec_root: Path) -> dict[str, list[int]]:
    data = recorder.get_data()
    root = spec_root / "groupspec" / "spec"
    executed: dict[str, list[int]] = {}
    for measured in data.measured_files():
        path = Path(measured).resolve()
        if path.is_relative_to(root):
            executed[path.relative_to(root).as_posix()] = sorted(data.lines(measured) or ())
    return executed


def _last_frame(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return f"{type(error).__name__}: {error}"[:300] + where


if __name__ == "__main__":
    sys.exit(main())
