"""Checkpoints of the Spark engine's search: one directory per complete level, resumable.

A checkpoint directory holds `run.json` (what is being checked, so a resume cannot continue a
different model) and, for every level k the search completed, `level-<k>/` with

- `parents/`: (fingerprint, BFS parent, label of the step that found it) of the level's states,
  written by the executors (Spark pickle files); the visited set is rebuilt from these;
- `states/`: the level's states with their discovery paths, the frontier to expand next (kept
  for the newest level only: older ones are deleted once a newer level is complete);
- `summary.pkl`: what the driver knew after the level: counts, problems found, and this
  level's liveness edges and parents when the graph is recorded.

A level is written into `level-<k>.partial/` and renamed to `level-<k>/` once everything in it
is complete, and `summary.pkl` itself is written to a temporary file first, so a run killed at
any point leaves only complete levels behind (and perhaps a `.partial` directory, which the
next run deletes). The directory must be visible at the same path to the driver and every
executor: a local directory in local mode, a shared mount on a cluster.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bfs import FoundProblem
from .spark_tasks import GraphRecord

FORMAT = 1
RUN_FILE = "run.json"
SUMMARY_FILE = "summary.pkl"
_LEVEL = re.compile(r"^level-(\d{5})$")


class CheckpointError(ValueError):
    """A checkpoint directory that cannot be used as asked; the message says why."""


@dataclass
class LevelSummary:
    """What the driver knows once level `level` is complete (see the module docstring)."""

    level: int
    distinct_states: int
    transitions: int
    depth: int
    action_counts: dict[str, int]
    rule_counts: dict[str, int]
    problems: list[FoundProblem]
    graph: list[GraphRecord] = field(default_factory=list)
    parents: list[tuple[int, int]] = field(default_factory=list)


def _write_bytes_atomically(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class Checkpoint:
    """A checkpoint directory for one run, identified by `identity` (JSON-able values)."""

    def __init__(self, directory: Path, identity: Mapping[str, object]) -> None:
        self.directory = directory.resolve()
        self.identity = json.loads(json.dumps({"format": FORMAT, **identity}, default=str))

    def levels(self) -> list[int]:
        """The complete levels in the directory, in order."""
        if not self.directory.is_dir():
            return []
        found = (_LEVEL.match(path.name) for path in self.directory.iterdir() if path.is_dir())
        return sorted(int(match.group(1)) for match in found if match)

    def open(self, resume: bool) -> int | None:
        """Make the directory ready; returns the newest complete level to resume from, if any.

        Raises `CheckpointError` when the directory holds levels and `resume` is false, or
        holds the levels of a different run.
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        for stale in self.directory.glob("level-*.partial"):
            shutil.rmtree(stale)
        levels = self.levels()
        run_file = self.directory / RUN_FILE
        if levels:
            if not resume:
                raise CheckpointError(
                    f"{self.directory} holds levels 0-{levels[-1]} of an earlier run; "
                    "pass --resume to continue it, or use an empty directory"
                )
            recorded = json.loads(run_file.read_text(encoding="utf-8"))
            if recorded != self.identity:
                raise CheckpointError(
                    f"{self.directory} is the checkpoint of a different run "
                    f"({recorded.get('preset', '?')} with {recorded.get('overrides', {})}); "
                    "use an empty directory"
                )
            return levels[-1]
        _write_bytes_atomically(run_file, (json.dumps(self.identity, indent=2) + "\n").encode())
        return None

    def level_path(self, level: int) -> Path:
        """The directory of a complete level."""
        return self.directory / f"level-{level:05d}"

    def save(self, summary: LevelSummary, states: Any, parents: Any) -> None:
        """Write level `summary.level`: its `states` and `parents` RDDs and the summary."""
        final = self.level_path(summary.level)
        partial = final.with_name(final.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        states.saveAsPickleFile((partial / "states").as_uri())
        parents.saveAsPickleFile((partial / "parents").as_uri())
        _write_bytes_atomically(partial / SUMMARY_FILE, pickle.dumps(summary))
        os.replace(partial, final)
        for level in self.levels():
            if level < summary.level:
                shutil.rmtree(self.level_path(level) / "states", ignore_errors=True)

    def summaries(self, upto: int) -> list[LevelSummary]:
        """The summaries of levels 0 to `upto`, in order."""
        return [
            pickle.loads((self.level_path(level) / SUMMARY_FILE).read_bytes())
            for level in range(upto + 1)
        ]

    def states_uri(self, level: int) -> str:
        """Where level `level`'s states are (only the newest level keeps them)."""
        return (self.level_path(level) / "states").as_uri()

    def parents_uris(self, upto: int) -> list[str]:
        """Where the parents of levels 0 to `upto` are."""
        return [(self.level_path(level) / "parents").as_uri() for level in range(upto + 1)]
