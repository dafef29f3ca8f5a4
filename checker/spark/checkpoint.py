"""Checkpoints of the Spark engine's search: one directory per complete level, resumable.

A checkpoint directory holds `run.json` (what is being checked, so a resume cannot continue a
different model) and, for every level k the search completed, `level-<k>/` with

- `parents-<i>.pkl`: (fingerprint, BFS parent, label of the step that found it) of the level's
  states in partition i; the visited set is rebuilt from these;
- `states-<i>.pkl`: the level's states in partition i with their discovery paths, the
  frontier to expand next (kept for the newest level only: older ones are deleted once a newer
  level is complete);
- `summary.pkl`: what the driver knew after the level: counts, problems found, and this
  level's liveness edges and parents when the graph is recorded.

The executors write their partitions' files in the task that forms the level (no extra Spark
job), each to a temporary file renamed into place, so a retried task overwrites a file whole.
The level is written into `level-<k>.partial/`, which the driver renames to `level-<k>/` once
every task and the summary are written, so a run killed at any point leaves only complete
levels behind (and perhaps a `.partial` directory, which the next run deletes). The directory
must be visible at the same path to the driver and every executor: a local directory in local
mode, a shared mount on a cluster.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groupspec.checker.atomic_file import write_bytes_atomically
from groupspec.checker.bfs import FoundProblem

from .session import SparkError

if TYPE_CHECKING:
    from .tasks import GraphRecord

FORMAT = 1
RUN_FILE = "run.json"
SUMMARY_FILE = "summary.pkl"
_LEVEL = re.compile(r"^level-(\d{5})$")


class CheckpointError(SparkError, ValueError):
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
        write_bytes_atomically(run_file, (json.dumps(self.identity, indent=2) + "\n").encode())
        return None

    def level_path(self, level: int) -> Path:
        """The directory of a complete level."""
        return self.directory / f"level-{level:05d}"

    def begin(self, level: int) -> str:
        """Start writing `level`: the (empty) directory its parts go to, as executors see it."""
        partial = self.level_path(level).with_name(f"level-{level:05d}.partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        return str(partial)

    def commit(self, summary: LevelSummary) -> None:
        """Finish level `summary.level` (begun with `begin`, its parts written)."""
        final = self.level_path(summary.level)
        partial = final.with_name(final.name + ".partial")
        write_bytes_atomically(partial / SUMMARY_FILE, pickle.dumps(summary))
        os.replace(partial, final)
        for level in self.levels():
            if level < summary.level:
                for path in self.level_path(level).glob("states-*.pkl"):
                    path.unlink()

    def abandon(self, level: int) -> None:
        """Drop a begun level that turned out empty (the search is over)."""
        # Tasks of a cancelled level may still be writing into it: what they leave, `open`
        # removes next time.
        shutil.rmtree(
            self.level_path(level).with_name(f"level-{level:05d}.partial"), ignore_errors=True
        )

    def summaries(self, upto: int) -> list[LevelSummary]:
        """The summaries of levels 0 to `upto`, in order."""
        return [
            pickle.loads((self.level_path(level) / SUMMARY_FILE).read_bytes())
            for level in range(upto + 1)
        ]

    def state_files(self, level: int) -> list[str]:
        """The files of level `level`'s states (only the newest level keeps them)."""
        return sorted(str(path) for path in self.level_path(level).glob("states-*.pkl"))

    def parent_files(self, upto: int) -> list[tuple[int, str]]:
        """(depth, file) of the parents of levels 0 to `upto`."""
        return [
            (level, str(path))
            for level in range(upto + 1)
            for path in sorted(self.level_path(level).glob("parents-*.pkl"))
        ]


def write_part(directory: str, index: int, states: list[Any], parents: list[Any]) -> None:
    """Write partition `index`'s states and parents of a level begun in `directory`."""
    folder = Path(directory)
    write_bytes_atomically(folder / f"states-{index:05d}.pkl", pickle.dumps(states))
    write_bytes_atomically(folder / f"parents-{index:05d}.pkl", pickle.dumps(parents))


def read_part(path: str) -> list[Any]:
    """The records of one part file."""
    return pickle.loads(Path(path).read_bytes())
