"""Bulk trace validation on Spark: one verdict per trace, written as Parquet, and a summary.

A corpus is either many trace files (a directory of `*.jsonl`, or a glob) or one Parquet dataset
of trace lines with the columns `trace` (string, names the trace), `line` (integer, 1 for the
header) and `text` (the line's JSON). Each trace is validated whole by one task, exactly as
`groupspec validate` validates it (`validate_lines`); the verdict rows are written by the
executors, and the driver only receives the small summary, so its memory does not grow with the
corpus. A trace that is bad input gets the verdict `bad-input` with its error; it does not stop
the run. Running the tasks and writing the table is checker/spark's (`tables.py`); this module
says what a trace's row is.
"""

from __future__ import annotations

import functools
import glob
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupspec.checker.spark.jobs import cores
from groupspec.checker.spark.tables import (
    Column,
    MissingColumns,
    map_groups_to_parquet,
    map_to_parquet,
)

from .tracker import OracleSettings
from .validate import TraceInputError, validate_lines, validate_trace

BAD_INPUT = "bad-input"
# The verdict table's columns and their Spark types, in `verdict_row` order.
VERDICT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("trace", "string"),
    ("status", "string"),
    ("events", "long"),
    ("responses_checked", "long"),
    ("skipped_requests", "long"),
    ("max_hypotheses", "long"),
    ("cut_at_line", "long"),
    ("divergence_line", "long"),
    ("divergence_api", "string"),
    ("reason", "string"),
    ("observed", "string"),
    ("allowed", "string"),
    ("error", "string"),
    ("elapsed_s", "double"),
)


class CorpusError(Exception):
    """A corpus that names no traces, or a Parquet dataset without the expected columns."""


@dataclass(frozen=True)
class BulkSummary:
    """What a bulk run found: traces per status, events, and where the verdicts went."""

    traces: int
    by_status: dict[str, int]
    events: int
    elapsed_s: float
    out: Path
    diverged: tuple[tuple[str, int, str], ...]

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON object."""
        return {
            "traces": self.traces,
            "by_status": self.by_status,
            "events": self.events,
            "elapsed_s": round(self.elapsed_s, 3),
            "verdicts": str(self.out),
            "diverged": [{"trace": t, "line": n, "api": a} for t, n, a in self.diverged],
        }


def trace_files(pattern: str) -> list[str]:
    """The trace files a directory (its `*.jsonl`, recursively) or a glob names, sorted."""
    path = Path(pattern)
    if path.is_dir():
        files = sorted(str(p) for p in path.rglob("*.jsonl"))
    else:
        files = sorted(glob.glob(pattern, recursive=True))
    if not files:
        raise CorpusError(f"{pattern}: no trace files (*.jsonl) there")
    return files


def is_parquet(pattern: str) -> bool:
    """Whether `pattern` is a Parquet dataset (a .parquet file, or a directory of them)."""
    path = Path(pattern)
    return pattern.endswith(".parquet") or (path.is_dir() and any(path.rglob("*.parquet")))


def verdict_row(verdict_json: dict[str, Any]) -> tuple[Any, ...]:
    """A verdict of `validate_trace`, as a row of the verdict table."""
    divergence = verdict_json.get("divergence") or {}
    return (
        verdict_json["trace"],
        verdict_json["status"],
        verdict_json["events"],
        verdict_json["responses_checked"],
        verdict_json["skipped_requests"],
        verdict_json["max_hypotheses"],
        verdict_json["cut_at_line"],
        divergence.get("line"),
        divergence.get("api"),
        divergence.get("reason") or verdict_json.get("note") or None,
        json.dumps(divergence["observed"]) if divergence else None,
        json.dumps(divergence["allowed"]) if divergence else None,
        None,
        verdict_json["elapsed_s"],
    )


def bad_input_row(trace: str, error: str) -> tuple[Any, ...]:
    """The verdict row of a trace that could not be validated."""
    return (trace, BAD_INPUT, 0, 0, 0, 0, None, None, None, None, None, None, error, 0.0)


def validate_file_row(
    path: str, overrides: dict[str, Any], settings: OracleSettings
) -> tuple[Any, ...]:
    """Validate one trace file (on an executor); its verdict row, never an exception."""
    try:
        return verdict_row(validate_trace(path, overrides, settings, shrink=False).to_json())
    except TraceInputError as error:
        return bad_input_row(path, str(error))


def validate_rows_row(
    trace: str,
    lines: Iterable[tuple[int, str]],
    overrides: dict[str, Any],
    settings: OracleSettings,
) -> tuple[Any, ...]:
    """Validate one trace given as (line number, text) rows (on an executor)."""
    numbered = sorted((int(number), text) for number, text in lines)
    ordered = [text if text.endswith("\n") else text + "\n" for _, text in numbered]

    def open_lines() -> Iterator[str]:
        return iter(ordered)

    try:
        return verdict_row(
            validate_lines(open_lines, trace, overrides, settings, shrink=False).to_json()
        )
    except TraceInputError as error:
        return bad_input_row(trace, str(error))


def spark_validate(
    context: Any,
    corpus: str,
    out: Path,
    overrides: dict[str, Any] | None = None,
    settings: OracleSettings | None = None,
) -> BulkSummary:
    """Validate every trace of `corpus` on Spark; verdicts to the Parquet dataset `out`."""
    started = time.perf_counter()
    overrides = dict(overrides or {})
    settings = settings or OracleSettings()
    columns = [
        Column(name, kind, nullable=name not in ("trace", "status"))
        for name, kind in VERDICT_COLUMNS
    ]
    if is_parquet(corpus):
        try:
            table = map_groups_to_parquet(
                context,
                corpus,
                key="trace",
                order="line",
                value="text",
                function=functools.partial(
                    validate_rows_row, overrides=overrides, settings=settings
                ),
                columns=columns,
                out=out,
            )
        except MissingColumns as error:
            raise CorpusError(
                f"{corpus}: a trace dataset needs the columns trace, line, text; "
                f"missing {error.missing}"
            ) from None
    else:
        files = trace_files(corpus)
        table = map_to_parquet(
            context,
            functools.partial(validate_file_row, overrides=overrides, settings=settings),
            files,
            columns,
            out,
            tasks=max(1, min(len(files), 4 * cores(context))),
        )
    counts = table.count_by("status")
    events = table.total("events") or 0
    # The first few divergences are worth printing; the full list is in the Parquet dataset.
    diverged = tuple(
        table.first(
            ("trace", "divergence_line", "divergence_api"),
            where={"status": "diverged"},
            order_by="trace",
            limit=20,
        )
    )
    return BulkSummary(
        sum(counts.values()), counts, int(events), time.perf_counter() - started, out, diverged
    )
